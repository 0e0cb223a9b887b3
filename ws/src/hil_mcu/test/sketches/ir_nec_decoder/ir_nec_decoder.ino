// NEC remote codes decoded from an IR receiver module (output active low) in the style
// of the IRremote library's classic receiver: a 50 us timer interrupt samples the pin
// and records the length of every mark and space in ticks; a space longer than 5 ms
// ends a frame, which loop() decodes: a 9 ms mark and 4.5 ms space, then 32 bits,
// least significant first, each a 562.5 us mark and a short (0) or long (1) space.
//
// Prints "nec <address> <command>" for each frame whose complements check, "bad
// <marks and spaces>" otherwise. Written for the tests of the firmware-in-the-loop
// harness.

#ifndef IR_PIN
#define IR_PIN 11
#endif

#define TICK_US 50
#define GAP_TICKS 100  // 5 ms of space ends a frame
#define RAW_SIZE 80

enum { IDLE, MARK, SPACE, STOP };
volatile uint8_t state = IDLE, rawLength = 0, ticks = 0;
volatile uint8_t raw[RAW_SIZE];

ISR(TIMER2_COMPA_vect) {
  bool mark = digitalRead(IR_PIN) == LOW;
  if (ticks < 255) {
    ticks++;
  }
  switch (state) {
    case IDLE:  // a mark after a long space starts a frame
      if (mark) {
        if (ticks > GAP_TICKS) {
          rawLength = 0;
          state = MARK;
        }
        ticks = 0;
      }
      break;
    case MARK:
      if (!mark) {
        raw[rawLength++] = ticks;
        ticks = 0;
        state = SPACE;
      }
      break;
    case SPACE:
      if (mark) {
        raw[rawLength++] = ticks;
        ticks = 0;
        state = MARK;
      } else if (ticks > GAP_TICKS) {
        state = STOP;
      }
      break;
    default:  // STOP: loop() has a frame to decode
      if (mark) {
        ticks = 0;
      }
      break;
  }
  if (rawLength >= RAW_SIZE) {
    state = STOP;
  }
}

// Within 25 % of the expected length in microseconds.
bool near(uint8_t measured, long us) {
  long got = (long)measured * TICK_US;
  return got >= us * 3 / 4 && got <= us * 5 / 4;
}

bool decode(uint8_t length, uint8_t *address, uint8_t *command) {
  if (length != 67 || !near(raw[0], 9000) || !near(raw[1], 4500)) {
    return false;
  }
  uint32_t code = 0;
  for (uint8_t bit = 0; bit < 32; bit++) {
    uint8_t mark = raw[2 + 2 * bit], space = raw[3 + 2 * bit];
    if (!near(mark, 562)) {
      return false;
    }
    if (near(space, 1687)) {
      code |= (uint32_t)1 << bit;
    } else if (!near(space, 562)) {
      return false;
    }
  }
  *address = code & 0xFF;
  *command = (code >> 16) & 0xFF;
  return (uint8_t)(code >> 8) == (uint8_t)~*address && (uint8_t)(code >> 24) == (uint8_t)~*command;
}

void setup() {
  Serial.begin(115200);
  pinMode(IR_PIN, INPUT);
  // Timer2 in CTC mode, 16 MHz / 8 / 100: every 50 us
  TCCR2A = _BV(WGM21);
  TCCR2B = _BV(CS21);
  OCR2A = 99;
  TIMSK2 = _BV(OCIE2A);
}

void loop() {
  if (state != STOP) {
    return;
  }
  uint8_t address, command, length = rawLength;
  if (decode(length, &address, &command)) {
    Serial.print("nec ");
    Serial.print(address);
    Serial.print(' ');
    Serial.println(command);
  } else {
    Serial.print("bad ");
    Serial.println(length);
  }
  noInterrupts();
  state = IDLE;  // ticks go on counting the space since the last mark
  interrupts();
}
