// A 3-pin ultrasonic ranger (Parallax PING))) or mBot style): one signal pin, driven
// as the trigger pulse, then made an input and read with pulseIn.
// Prints "us <duration> cm <duration / 29 / 2>" every 60 ms.

#ifndef SIG_PIN
#define SIG_PIN 7
#endif

void setup() {
  Serial.begin(115200);
}

void loop() {
  pinMode(SIG_PIN, OUTPUT);
  digitalWrite(SIG_PIN, LOW);
  delayMicroseconds(2);
  digitalWrite(SIG_PIN, HIGH);
  delayMicroseconds(5);
  digitalWrite(SIG_PIN, LOW);
  pinMode(SIG_PIN, INPUT);
  long duration = pulseIn(SIG_PIN, HIGH);
  Serial.print("us ");
  Serial.print(duration);
  Serial.print(" cm ");
  Serial.println(duration / 29 / 2);
  delay(60);
}
