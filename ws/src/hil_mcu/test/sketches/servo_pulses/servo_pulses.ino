// Hobby servo pulses from Timer1, the two ways sketches make them:
//   HARDWARE_PWM 0: Timer1 counts in 0.5 us ticks (prescaler 8) and its compare-match A
//                   interrupt raises the pin, then ends the pulse after its width, and
//                   starts the next 20 ms after the last (as Servo.h does, by hand);
//   HARDWARE_PWM 1: Timer1's fast PWM with TOP in ICR1 (20 ms) drives OC1A (pin 9 on
//                   the UNO, 11 on the Mega) high for OCR1A + 1 ticks.
//
// Commands on Serial (115200 baud), each answered "ok":
//   p <us>    the pulse width in microseconds; 0 stops the pulses (the pin stays low)
// Written for the tests of the firmware-in-the-loop harness.

#ifndef SERVO_PIN
#define SERVO_PIN 9
#endif
#ifndef HARDWARE_PWM
#define HARDWARE_PWM 0
#endif

const uint16_t PERIOD_TICKS = 40000;  // 20 ms in 0.5 us ticks
volatile uint16_t widthTicks = 0;     // 0: no pulses
volatile uint16_t periodStart = 0;

#if !HARDWARE_PWM
ISR(TIMER1_COMPA_vect) {
  if (digitalRead(SERVO_PIN) == HIGH) {
    digitalWrite(SERVO_PIN, LOW);
    OCR1A = periodStart + PERIOD_TICKS;
  } else {
    periodStart = OCR1A;
    if (widthTicks > 0) {
      digitalWrite(SERVO_PIN, HIGH);
      OCR1A = periodStart + widthTicks;
    } else {
      OCR1A = periodStart + PERIOD_TICKS;
    }
  }
}
#endif

void setWidth(long us) {
  uint16_t ticks = us > 0 ? (uint16_t)(us * 2) : 0;
#if HARDWARE_PWM
  if (ticks > 0) {
    OCR1A = ticks - 1;
    TCCR1A = _BV(COM1A1) | _BV(WGM11);  // clear OC1A on match, set at BOTTOM
  } else {
    TCCR1A = _BV(WGM11);  // OC1A disconnected: the port's low level
  }
#else
  noInterrupts();
  widthTicks = ticks;
  interrupts();
#endif
}

char line[32];
byte used = 0;

void setup() {
  Serial.begin(115200);
  pinMode(SERVO_PIN, OUTPUT);
  digitalWrite(SERVO_PIN, LOW);
#if HARDWARE_PWM
  ICR1 = PERIOD_TICKS - 1;
  TCCR1A = _BV(WGM11);
  TCCR1B = _BV(WGM13) | _BV(WGM12) | _BV(CS11);  // mode 14, prescaler 8
#else
  TCCR1A = 0;
  TCCR1B = _BV(CS11);  // normal mode, prescaler 8
  OCR1A = TCNT1 + 100;
  TIFR1 = _BV(OCF1A);
  TIMSK1 |= _BV(OCIE1A);
#endif
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
    if (line[0] == 'p') {
      setWidth(atol(line + 1));
    }
    Serial.println("ok");
  }
}
