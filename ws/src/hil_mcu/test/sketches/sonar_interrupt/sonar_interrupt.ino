// HC-SR04 read by interrupts on the echo pin, both ways sketches do it:
//   USE_PCINT 0: attachInterrupt(digitalPinToInterrupt(ECHO_PIN), onEcho, CHANGE);
//   USE_PCINT 1: the pin-change interrupt of the echo pin, which must be on port B
//                (PCINT0_vect: UNO pins 8..13, Mega pins 10..13 and 50..53).
// The ISR stamps both edges with micros(); loop() pings every 60 ms and prints
// "us <echo width>" for every echo.

#ifndef TRIG_PIN
#define TRIG_PIN 4
#endif
#ifndef ECHO_PIN
#define ECHO_PIN 2
#endif
#ifndef USE_PCINT
#define USE_PCINT 0
#endif

volatile unsigned long riseAt = 0, width = 0;
volatile bool fresh = false;
unsigned long lastPing = 0;

void onEcho() {
  unsigned long now = micros();
  if (digitalRead(ECHO_PIN) == HIGH) {
    riseAt = now;
  } else {
    width = now - riseAt;
    fresh = true;
  }
}

#if USE_PCINT
ISR(PCINT0_vect) {
  onEcho();
}
#endif

void setup() {
  Serial.begin(115200);
  pinMode(TRIG_PIN, OUTPUT);
  pinMode(ECHO_PIN, INPUT);
#if USE_PCINT
  *digitalPinToPCMSK(ECHO_PIN) |= _BV(digitalPinToPCMSKbit(ECHO_PIN));
  *digitalPinToPCICR(ECHO_PIN) |= _BV(digitalPinToPCICRbit(ECHO_PIN));
#else
  attachInterrupt(digitalPinToInterrupt(ECHO_PIN), onEcho, CHANGE);
#endif
}

void loop() {
  if (fresh) {
    noInterrupts();
    unsigned long us = width;
    fresh = false;
    interrupts();
    Serial.print("us ");
    Serial.println(us);
  }
  if (millis() - lastPing >= 60) {
    lastPing = millis();
    digitalWrite(TRIG_PIN, LOW);
    delayMicroseconds(2);
    digitalWrite(TRIG_PIN, HIGH);
    delayMicroseconds(10);
    digitalWrite(TRIG_PIN, LOW);
  }
}
