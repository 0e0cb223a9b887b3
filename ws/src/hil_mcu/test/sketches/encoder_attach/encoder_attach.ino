// A quadrature wheel encoder counted by attachInterrupt on both pins (CHANGE), the
// external interrupts of pins 2 and 3 (INT0 and INT1 on the UNO, INT4 and INT5 on the
// Mega): each interrupt reads both pins and decodes the transition from the last state.
// Counting up, A leads B.
//
// Commands on Serial (115200 baud), each answered "ok":
//   e        print "e <count>"
// Written for the tests of the firmware-in-the-loop harness.

const uint8_t PIN_A = 2, PIN_B = 3;

volatile long count = 0;
volatile uint8_t last = 0;
volatile uint8_t *inA, *inB;
uint8_t maskA, maskB;

static inline uint8_t state() {
  // Gray code as a number 0..3 along the forward sequence (A, B) = 00, 10, 11, 01
  uint8_t a = (*inA & maskA) ? 1 : 0;
  uint8_t b = (*inB & maskB) ? 1 : 0;
  return b ? (a ? 2 : 3) : (a ? 1 : 0);
}

void onEdge() {
  uint8_t now = state();
  uint8_t change = (now - last) & 3;  // 1: a step forward, 3: a step back
  if (change == 1) {
    count++;
  } else if (change == 3) {
    count--;
  }
  last = now;
}

char line[32];
byte used = 0;

void setup() {
  Serial.begin(115200);
  pinMode(PIN_A, INPUT_PULLUP);
  pinMode(PIN_B, INPUT_PULLUP);
  inA = portInputRegister(digitalPinToPort(PIN_A));
  inB = portInputRegister(digitalPinToPort(PIN_B));
  maskA = digitalPinToBitMask(PIN_A);
  maskB = digitalPinToBitMask(PIN_B);
  last = state();
  attachInterrupt(digitalPinToInterrupt(PIN_A), onEdge, CHANGE);
  attachInterrupt(digitalPinToInterrupt(PIN_B), onEdge, CHANGE);
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
      noInterrupts();
      long now = count;
      interrupts();
      Serial.print("e ");
      Serial.println(now);
    }
    Serial.println("ok");
  }
}
