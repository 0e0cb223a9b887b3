// HC-SR04 read with pulseIn, as most tutorials do it: a 10 us trigger, then pulseIn on
// the echo pin; the distance both as duration / 58 and as duration * 0.034 / 2.
// Prints "us <duration> cm <duration / 58> cmf <duration * 0.034 / 2>" every 60 ms.
// PULSEIN_QUIET 1 turns interrupts off around pulseIn (millis' interrupt then steals no
// loop iterations from its count); TRIGGER_US sets the trigger pulse (10 us).

#ifndef TRIG_PIN
#define TRIG_PIN 4
#endif
#ifndef ECHO_PIN
#define ECHO_PIN 9
#endif
#ifndef PULSEIN_QUIET
#define PULSEIN_QUIET 0
#endif
#ifndef TRIGGER_US
#define TRIGGER_US 10
#endif

void setup() {
  Serial.begin(115200);
  pinMode(TRIG_PIN, OUTPUT);
  pinMode(ECHO_PIN, INPUT);
}

void loop() {
  digitalWrite(TRIG_PIN, LOW);
  delayMicroseconds(2);
  digitalWrite(TRIG_PIN, HIGH);
  delayMicroseconds(TRIGGER_US);
  digitalWrite(TRIG_PIN, LOW);
#if PULSEIN_QUIET
  noInterrupts();
#endif
  long duration = pulseIn(ECHO_PIN, HIGH);
#if PULSEIN_QUIET
  interrupts();
#endif
  long cm = duration / 58;
  float cmf = duration * 0.034 / 2;
  Serial.print("us ");
  Serial.print(duration);
  Serial.print(" cm ");
  Serial.print(cm);
  Serial.print(" cmf ");
  Serial.println(cmf);
  delay(60);
}
