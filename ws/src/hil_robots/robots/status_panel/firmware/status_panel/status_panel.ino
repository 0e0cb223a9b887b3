// A status panel in the style of educational robots' factory firmware: a mode knob on
// A7 (analogRead), a start button on pin 2 (INPUT_PULLUP, debounced the millis() way),
// an NEC IR remote on pin 3 (decoded by timing its pulses), a passive buzzer on pin 8
// (tone()), one WS2812 LED on pin 6 (bit-banged as the LED libraries do). Each press
// beeps 880 Hz for 100 ms and lights the LED green; an IR key prints its code and
// lights the LED red for command 0x45, blue for any other; the mode prints on change;
// the button's edges are counted by an interrupt (its bounce shows there).
// Serial at 9600 baud; lines "a <pin> <value>" (analogWrite, the value unchecked, as
// sketches that forget constrain() do) and "d <pin> <level>" (digitalWrite) drive the
// motor pins, each answered "ok". Shipped as the example of a user's panel in scenarios.

#define BUTTON_PIN 2
#define IR_PIN 3
#define LED_PIN 6  // PORTD bit 6
#define BUZZER_PIN 8
#define MODE_PIN A7
#define DEBOUNCE_MS 20

int stable = HIGH, lastReading = HIGH;
unsigned long lastChange = 0;
unsigned int presses = 0;
int mode = -1;
unsigned long lastModeRead = 0;
volatile unsigned int edges = 0;
char line[24];
byte used = 0;

void countEdge() {
  edges++;
}

void command(char *text) {
  char *rest = text + 1;
  long pin = strtol(rest, &rest, 10);
  long value = strtol(rest, &rest, 10);
  if (text[0] == 'a') {
    analogWrite(pin, value);
  } else if (text[0] == 'd') {
    pinMode(pin, OUTPUT);
    digitalWrite(pin, value ? HIGH : LOW);
  } else {
    Serial.println("?");
    return;
  }
  Serial.println("ok");
}

// One byte to the LED, most significant bit first: each bit a high pulse of 6 cycles
// (a 0) or 13 cycles (a 1) at 16 MHz, timed by counted instructions.
static void sendByte(uint8_t value) {
  uint8_t high = PORTD | _BV(6), low = PORTD & ~_BV(6);
  for (uint8_t bit = 0; bit < 8; bit++) {
    asm volatile(
        "out %[port], %[high]\n\t"
        "nop\n\tnop\n\tnop\n\tnop\n\t"
        "sbrs %[value], 7\n\t"
        "out %[port], %[low]\n\t"
        "nop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\t"
        "out %[port], %[low]\n\t"
        :
        : [port] "I"(_SFR_IO_ADDR(PORTD)), [high] "r"(high), [low] "r"(low), [value] "r"(value));
    value <<= 1;
  }
}

void showColour(uint8_t r, uint8_t g, uint8_t b) {
  noInterrupts();
  sendByte(g);
  sendByte(r);
  sendByte(b);
  interrupts();
  delayMicroseconds(60);  // the LED latches
}

// How long the IR pin stays at level (us), at most limit.
unsigned long lasting(int level, unsigned long limit) {
  unsigned long start = micros();
  while (digitalRead(IR_PIN) == level) {
    if (micros() - start > limit) {
      return limit;
    }
  }
  return micros() - start;
}

// An NEC frame: a 9 ms mark, a 4.5 ms space, 32 bits least significant first (a
// 560 us mark, then a 560 us space for a 0 or 1690 us for a 1).
void readRemote() {
  if (lasting(LOW, 12000) < 7000 || lasting(HIGH, 6000) < 3500) {
    return;
  }
  uint32_t bits = 0;
  for (uint8_t i = 0; i < 32; i++) {
    lasting(LOW, 1000);
    if (lasting(HIGH, 2500) > 1100) {
      bits |= (uint32_t)1 << i;
    }
  }
  uint8_t address = bits, command = bits >> 16;
  if ((uint8_t)(bits >> 24) != (uint8_t)~command) {
    Serial.println("ir bad");
    return;
  }
  Serial.print("ir ");
  Serial.print(address);
  Serial.print(' ');
  Serial.println(command);
  if (command == 0x45) {
    showColour(255, 0, 0);
  } else {
    showColour(0, 0, 255);
  }
}

void setup() {
  Serial.begin(9600);
  pinMode(BUTTON_PIN, INPUT_PULLUP);
  pinMode(IR_PIN, INPUT);
  pinMode(LED_PIN, OUTPUT);
  digitalWrite(LED_PIN, LOW);
  showColour(0, 0, 0);
  attachInterrupt(digitalPinToInterrupt(BUTTON_PIN), countEdge, CHANGE);
  Serial.println("status_panel ready");
}

void loop() {
  int reading = digitalRead(BUTTON_PIN);
  if (reading != lastReading) {
    lastChange = millis();
    lastReading = reading;
  }
  if (millis() - lastChange > DEBOUNCE_MS && reading != stable) {
    stable = reading;
    if (stable == LOW) {
      presses++;
      Serial.print("press ");
      Serial.print(presses);
      Serial.print(" edges ");
      Serial.println(edges);
      tone(BUZZER_PIN, 880, 100);
      showColour(0, 255, 0);
    }
  }
  if (digitalRead(IR_PIN) == LOW) {
    readRemote();
  }
  while (Serial.available() > 0) {
    char c = Serial.read();
    if (c == '\r' || c == '\n') {
      line[used] = 0;
      if (used > 0) {
        command(line);
      }
      used = 0;
    } else if (used < sizeof(line) - 1) {
      line[used++] = c;
    }
  }
  if (millis() - lastModeRead >= 20) {
    lastModeRead = millis();
    int now = analogRead(MODE_PIN) / 205;  // five levels of the 0..5 V knob
    if (now != mode) {
      mode = now;
      Serial.print("mode ");
      Serial.println(mode);
    }
  }
}
