// A push button on a pin with the internal pull-up (pressed reads LOW), read two ways:
// every edge counted by a pin-change interrupt (so contact bounce shows), and debounced
// in loop() in the common millis() style (a level must hold for DEBOUNCE_MS before it
// counts): presses are counted once each.
//
// Commands on Serial (115200 baud), each answered "ok":
//   c     print "c <edges> <presses> <level>"
// Written for the tests of the firmware-in-the-loop harness.

#ifndef BUTTON_PIN
#define BUTTON_PIN 4
#endif
#define DEBOUNCE_MS 20

volatile unsigned long edges = 0;
unsigned long presses = 0;
int stable = HIGH, lastReading = HIGH;
unsigned long lastChange = 0;

ISR(PCINT2_vect) {  // the UNO's pins 0..7
  edges++;
}

char line[16];
byte used = 0;

void setup() {
  Serial.begin(115200);
  pinMode(BUTTON_PIN, INPUT_PULLUP);
  *digitalPinToPCMSK(BUTTON_PIN) |= _BV(digitalPinToPCMSKbit(BUTTON_PIN));
  *digitalPinToPCICR(BUTTON_PIN) |= _BV(digitalPinToPCICRbit(BUTTON_PIN));
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
    }
  }
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
    if (line[0] == 'c') {
      noInterrupts();
      unsigned long all = edges;
      interrupts();
      Serial.print("c ");
      Serial.print(all);
      Serial.print(' ');
      Serial.print(presses);
      Serial.print(' ');
      Serial.println(stable);
    }
    Serial.println("ok");
  }
}
