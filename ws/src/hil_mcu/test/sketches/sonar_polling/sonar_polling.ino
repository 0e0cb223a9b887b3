// HC-SR04 read without pulseIn, in the style of timer-polling libraries (NewPing):
//   POLL_TIMER 0: after the trigger, loop polling the echo pin against micros()
//                 (wait for the echo to start, then for it to end, each with a timeout);
//   POLL_TIMER 1: a Timer2 compare interrupt every 24 us polls the echo pin and counts
//                 the ticks it is high; loop() only starts pings and prints results.
// Prints "us <echo width>" after every ping (every 60 ms), "us 0" for no echo; the loop
// also prints " after <us from the trigger to the echo>". RETRIGGER 1 (loop) triggers
// again while the echo is high, which the module must ignore.

#ifndef TRIG_PIN
#define TRIG_PIN 4
#endif
#ifndef ECHO_PIN
#define ECHO_PIN 9
#endif
#ifndef POLL_TIMER
#define POLL_TIMER 0
#endif
#ifndef RETRIGGER
#define RETRIGGER 0
#endif

#define MAX_ECHO_US 40000UL
#define TICK_US 24

volatile uint8_t *echoInput;
uint8_t echoBit;

void trigger() {
  digitalWrite(TRIG_PIN, LOW);
  delayMicroseconds(4);
  digitalWrite(TRIG_PIN, HIGH);
  delayMicroseconds(10);
  digitalWrite(TRIG_PIN, LOW);
}

#if POLL_TIMER
volatile bool waiting = false, done = false, started = false;
volatile unsigned long ticks = 0, waited = 0;

ISR(TIMER2_COMPA_vect) {
  if (!waiting) {
    return;
  }
  bool high = (*echoInput & echoBit) != 0;
  if (high) {
    started = true;
    ticks++;
  } else if (started) {
    waiting = false;
    done = true;
  }
  if (++waited > MAX_ECHO_US / TICK_US + 100) {
    waiting = false;
    done = true;
    ticks = 0;
  }
}

void startTimer() {
  // Timer2 in CTC mode, prescaler 8: 2 MHz, a compare match every 48 counts = 24 us.
  noInterrupts();
  TCCR2A = _BV(WGM21);
  TCCR2B = _BV(CS21);
  OCR2A = 2 * TICK_US - 1;
  TCNT2 = 0;
  TIMSK2 |= _BV(OCIE2A);
  interrupts();
}
#endif

unsigned long lastPing = 0;

void setup() {
  Serial.begin(115200);
  pinMode(TRIG_PIN, OUTPUT);
  pinMode(ECHO_PIN, INPUT);
  echoInput = portInputRegister(digitalPinToPort(ECHO_PIN));
  echoBit = digitalPinToBitMask(ECHO_PIN);
#if POLL_TIMER
  startTimer();
#endif
}

void loop() {
#if POLL_TIMER
  if (done) {
    done = false;
    Serial.print("us ");
    Serial.println(ticks * TICK_US);
  }
  if (millis() - lastPing >= 60 && !waiting) {
    lastPing = millis();
    trigger();
    noInterrupts();
    ticks = 0;
    waited = 0;
    started = false;
    waiting = true;
    interrupts();
  }
#else
  if (millis() - lastPing < 60) {
    return;
  }
  lastPing = millis();
  trigger();
  unsigned long start = micros();  // the trigger's falling edge, within a few us
  while (!(*echoInput & echoBit)) {  // wait for the echo to start
    if (micros() - start > MAX_ECHO_US) {
      Serial.println("us 0");
      return;
    }
  }
  unsigned long rise = micros();
#if RETRIGGER
  trigger();
#endif
  while (*echoInput & echoBit) {  // wait for it to end
    if (micros() - rise > MAX_ECHO_US) {
      Serial.println("us 0");
      return;
    }
  }
  unsigned long fall = micros();
  Serial.print("us ");
  Serial.print(fall - rise);
  Serial.print(" after ");
  Serial.println(rise - start);
#endif
}
