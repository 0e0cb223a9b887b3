// A single-channel wheel encoder (a slotted disc and one sensor) on an external
// interrupt pin, counted on its rising edges: the direction is not on the wire, so the
// count follows the motor command's sign, as such robot sketches do.
//
// Commands on Serial (115200 baud), each answered "ok":
//   d <1|-1>   the motor's direction from now on
//   e          print "e <signed count> <pulses>"
// Written for the tests of the firmware-in-the-loop harness.

#ifndef PIN_ENC
#define PIN_ENC 2
#endif

volatile long count = 0, pulses = 0;
volatile int8_t direction = 1;

void onPulse() {
  count += direction;
  pulses++;
}

char line[32];
byte used = 0;

void setup() {
  Serial.begin(115200);
  pinMode(PIN_ENC, INPUT);
  attachInterrupt(digitalPinToInterrupt(PIN_ENC), onPulse, RISING);
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
    if (line[0] == 'd') {
      direction = atoi(line + 1) < 0 ? -1 : 1;
    } else if (line[0] == 'e') {
      noInterrupts();
      long signedCount = count, all = pulses;
      interrupts();
      Serial.print("e ");
      Serial.print(signedCount);
      Serial.print(' ');
      Serial.println(all);
    }
    Serial.println("ok");
  }
}
