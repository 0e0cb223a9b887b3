// A buzzer played with tone() and noTone(), as sketches beep.
//
// Commands on Serial (115200 baud), each answered "ok":
//   t <hz> <ms>   tone(BUZZER_PIN, hz, ms); ms 0: until noTone
//   n             noTone(BUZZER_PIN)
// Written for the tests of the firmware-in-the-loop harness.

#ifndef BUZZER_PIN
#define BUZZER_PIN 8
#endif

char line[32];
byte used = 0;

void setup() {
  Serial.begin(115200);
  pinMode(BUZZER_PIN, OUTPUT);
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
    unsigned int hz = (unsigned int)strtol(rest, &rest, 10);
    unsigned long ms = strtoul(rest, &rest, 10);
    if (line[0] == 't') {
      if (ms > 0) {
        tone(BUZZER_PIN, hz, ms);
      } else {
        tone(BUZZER_PIN, hz);
      }
    } else if (line[0] == 'n') {
      noTone(BUZZER_PIN);
    }
    Serial.println("ok");
  }
}
