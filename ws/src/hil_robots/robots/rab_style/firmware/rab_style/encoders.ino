/* Quadrature wheel encoders on pin-change interrupts, decoded on every edge of A and B.
 *
 * Left: A on pin 2 (PD2), B on pin 3 (PD3): PCINT18/19, the PCINT2 vector.
 * Right: A on A4 (PC4), B on A5 (PC5): PCINT12/13, the PCINT1 vector.
 * Each interrupt looks up the step from the previous and the new A/B state: +1 or -1
 * for a valid transition, 0 for none or a skipped one.
 */
static volatile long counts[2] = {0, 0};
static volatile uint8_t states[2] = {0, 0};

/* index: previous state (2 bits) then new state (2 bits), each (A << 1) | B. */
static const int8_t STEP[16] = {0, 1, -1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 0, -1, 1, 0};

static inline void step(uint8_t wheel, uint8_t state) {
  counts[wheel] += STEP[(states[wheel] << 2) | state];
  states[wheel] = state;
}

ISR(PCINT2_vect) { step(LEFT, (PIND >> PD2) & 0x03); }

ISR(PCINT1_vect) { step(RIGHT, (PINC >> PC4) & 0x03); }

void init_encoders() {
  DDRD &= ~(_BV(PD2) | _BV(PD3));
  PORTD |= _BV(PD2) | _BV(PD3); /* pull-ups, as on open-collector encoder outputs */
  DDRC &= ~(_BV(PC4) | _BV(PC5));
  PORTC |= _BV(PC4) | _BV(PC5);
  states[LEFT] = (PIND >> PD2) & 0x03;
  states[RIGHT] = (PINC >> PC4) & 0x03;
  PCMSK2 |= _BV(PCINT18) | _BV(PCINT19);
  PCMSK1 |= _BV(PCINT12) | _BV(PCINT13);
  PCICR |= _BV(PCIE2) | _BV(PCIE1);
}

long read_encoder(uint8_t wheel) {
  noInterrupts();
  long count = counts[wheel];
  interrupts();
  /* the right wheel's encoder is mounted mirrored: forward counts up on both */
  return wheel == LEFT ? count : -count;
}

void reset_encoders() {
  noInterrupts();
  counts[LEFT] = 0;
  counts[RIGHT] = 0;
  interrupts();
}
