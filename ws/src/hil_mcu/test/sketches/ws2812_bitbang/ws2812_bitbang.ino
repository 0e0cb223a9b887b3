// WS2812 LEDs bit-banged on pin 6 of an UNO (PORTD bit 6) at 16 MHz, as the popular
// LED libraries do it: interrupts off, each bit a high pulse of 6 cycles (0.375 us,
// a 0) or 13 cycles (0.81 us, a 1) timed by counted instructions, about 20 cycles a
// bit; GRB order, most significant bit first; a low of more than 50 us latches.
//
// WIDE_ONES 1 holds a 1 high for 19 cycles (1.19 us), beyond the datasheet's 0.95 us.
//
// Commands on Serial (115200 baud), each answered "ok":
//   s <led> <r> <g> <b>   set an LED of the buffer (0..9)
//   w <count>             send the first <count> LEDs of the buffer
// Written for the tests of the firmware-in-the-loop harness.

#define LEDS 10
#ifndef WIDE_ONES
#define WIDE_ONES 0
#endif

uint8_t grb[LEDS * 3];

// One byte, most significant bit first. Each bit: "out" (1 cycle) raises the pin; a 0
// lowers it 6 cycles later; a 1 makes "sbrs" skip that "out" and lowers it 13 cycles
// after the start; the rest of the loop is the low time.
static void sendByte(uint8_t value) {
  uint8_t high = PORTD | _BV(6), low = PORTD & ~_BV(6);
  for (uint8_t bit = 0; bit < 8; bit++) {
    asm volatile(
        "out %[port], %[high]\n\t"
        "nop\n\tnop\n\tnop\n\tnop\n\t"
        "sbrs %[value], 7\n\t"
        "out %[port], %[low]\n\t"
        "nop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\t"
#if WIDE_ONES
        "nop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\t"
#endif
        "out %[port], %[low]\n\t"
        :
        : [port] "I"(_SFR_IO_ADDR(PORTD)), [high] "r"(high), [low] "r"(low), [value] "r"(value));
    value <<= 1;
  }
}

void show(uint8_t count) {
  noInterrupts();
  for (uint8_t i = 0; i < count * 3; i++) {
    sendByte(grb[i]);
  }
  interrupts();
  delayMicroseconds(60);  // the reset: the LEDs latch
}

char line[40];
byte used = 0;

void setup() {
  Serial.begin(115200);
  pinMode(6, OUTPUT);
  digitalWrite(6, LOW);
}

void loop() {
  while (Serial.available() > 0) {
    char c = Serial.read();
    if (c != '\n') {
      if (used < sizeof(line) - 1) {
        line[used++] = c;
      }
      continue;
    }
    line[used] = 0;
    used = 0;
    char *rest = line + 1;
    long first = strtol(rest, &rest, 10);
    if (line[0] == 's' && first >= 0 && first < LEDS) {
      long r = strtol(rest, &rest, 10), g = strtol(rest, &rest, 10), b = strtol(rest, &rest, 10);
      grb[3 * first] = g;
      grb[3 * first + 1] = r;
      grb[3 * first + 2] = b;
    } else if (line[0] == 'w') {
      show(first > LEDS ? LEDS : first);
    }
    Serial.println("ok");
  }
}
