// Blink in a pattern, with what -Wall -Wextra points out in many a sketch: the IDE
// builds it all the same.
const int LED = 13;
const byte PATTERN[] = {1, 0, 1, 1, 0, 0};

void setup() {
  int unused;
  pinMode(LED, OUTPUT);
}

void loop() {
  for (int i = 0; i < sizeof(PATTERN); i++) {
    blinkFor(PATTERN[i], 3);
  }
}

void blinkFor(byte on, int times) {
  digitalWrite(LED, on ? HIGH : LOW);
  delay(200);
}
