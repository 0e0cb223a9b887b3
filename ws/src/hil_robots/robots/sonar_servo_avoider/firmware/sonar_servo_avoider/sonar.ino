/* Three HC-SR04 sonars read with pulseIn: a 10 us trigger pulse, then the echo's high
 * time; 58 us per cm there and back. No echo within ECHO_TIMEOUT_US (about 4 m) reads
 * as MAX_CM. The sonars' numbers (SONAR_LEFT...) are the main tab's. */
#define ECHO_TIMEOUT_US 25000UL
#define MAX_CM 400

static const uint8_t TRIG[3] = {2, A0, A2};
static const uint8_t ECHO[3] = {3, A1, A3};

void sonars_init() {
  for (uint8_t i = 0; i < 3; i++) {
    pinMode(TRIG[i], OUTPUT);
    digitalWrite(TRIG[i], LOW);
    pinMode(ECHO[i], INPUT);
  }
}

long read_cm(uint8_t sonar) {
  digitalWrite(TRIG[sonar], LOW);
  delayMicroseconds(2);
  digitalWrite(TRIG[sonar], HIGH);
  delayMicroseconds(10);
  digitalWrite(TRIG[sonar], LOW);
  unsigned long echo_us = pulseIn(ECHO[sonar], HIGH, ECHO_TIMEOUT_US);
  if (echo_us == 0) {
    return MAX_CM;
  }
  return (long)(echo_us / 58UL);
}
