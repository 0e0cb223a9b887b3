// Two quadrature wheel encoders counted by pin-change interrupts, in the style of
// ROSArduinoBridge-like robot firmwares: each interrupt shifts the encoder's two pin
// levels into a 4-bit history and adds the step a lookup table gives for it.
//
// Pins (A, B): the UNO's left encoder on 2, 3 (port D, PCINT2) and right on A4, A5
// (port C, PCINT1); the Mega's left on 50, 51 and right on 10, 11 (all port B,
// PCINT0), or as LEFT_A... define them. Counting up, A leads B.
//
// Commands on Serial (115200 baud), each answered "ok":
//   e        print "e <left count> <right count>"
//   r        reset both counts to 0
// Written for the tests of the firmware-in-the-loop harness.

#ifndef LEFT_A
#if defined(__AVR_ATmega2560__)
#define LEFT_A 50
#define LEFT_B 51
#define RIGHT_A 10
#define RIGHT_B 11
#else
#define LEFT_A 2
#define LEFT_B 3
#define RIGHT_A A4
#define RIGHT_B A5
#endif
#endif

// step[(previous << 2) | now], a state being (B << 1) | A: counting up goes
// 0 -> 1 -> 3 -> 2 -> 0 (A rises first), counting down the other way.
const int8_t STEP[16] = {0, 1, -1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 0, -1, 1, 0};

struct Encoder {
  volatile uint8_t *in;
  uint8_t maskA, maskB;
  uint8_t history;
  volatile long count;
};

Encoder left, right;

void setUp(Encoder &e, int pinA, int pinB) {
  pinMode(pinA, INPUT_PULLUP);
  pinMode(pinB, INPUT_PULLUP);
  e.in = portInputRegister(digitalPinToPort(pinA));
  e.maskA = digitalPinToBitMask(pinA);
  e.maskB = digitalPinToBitMask(pinB);
  *digitalPinToPCMSK(pinA) |= _BV(digitalPinToPCMSKbit(pinA));
  *digitalPinToPCMSK(pinB) |= _BV(digitalPinToPCMSKbit(pinB));
  *digitalPinToPCICR(pinA) |= _BV(digitalPinToPCICRbit(pinA));
  *digitalPinToPCICR(pinB) |= _BV(digitalPinToPCICRbit(pinB));
}

static inline void update(Encoder &e) {
  uint8_t port = *e.in;
  uint8_t state = ((port & e.maskB) ? 2 : 0) | ((port & e.maskA) ? 1 : 0);
  e.history = ((e.history << 2) | state) & 0x0F;
  e.count += STEP[e.history];
}

// Whichever port changed, both encoders are looked at (one that did not move adds 0).
ISR(PCINT0_vect) {
  update(left);
  update(right);
}
ISR(PCINT1_vect, ISR_ALIASOF(PCINT0_vect));
ISR(PCINT2_vect, ISR_ALIASOF(PCINT0_vect));

char line[32];
byte used = 0;

long read(Encoder &e) {
  noInterrupts();
  long count = e.count;
  interrupts();
  return count;
}

void setup() {
  Serial.begin(115200);
  setUp(left, LEFT_A, LEFT_B);
  setUp(right, RIGHT_A, RIGHT_B);
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
    if (line[0] == 'e') {
      Serial.print("e ");
      Serial.print(read(left));
      Serial.print(' ');
      Serial.println(read(right));
    } else if (line[0] == 'r') {
      noInterrupts();
      left.count = right.count = 0;
      interrupts();
    }
    Serial.println("ok");
  }
}
