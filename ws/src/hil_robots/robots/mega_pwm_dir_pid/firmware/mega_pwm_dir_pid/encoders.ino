/* Single-channel wheel encoders, one pin each on an external interrupt (pins 2 and 3:
 * INT4 and INT5 on the Mega), counted on the rising edge. One channel cannot tell the
 * direction: each pulse counts the way the wheel was last driven. */
const uint8_t ENCODER_PIN[2] = {2, 3};

static volatile long counts[2] = {0, 0};
static volatile int8_t directions[2] = {1, 1};

static void left_pulse() { counts[LEFT] += directions[LEFT]; }

static void right_pulse() { counts[RIGHT] += directions[RIGHT]; }

void encoders_begin() {
  pinMode(ENCODER_PIN[LEFT], INPUT_PULLUP);
  pinMode(ENCODER_PIN[RIGHT], INPUT_PULLUP);
  attachInterrupt(digitalPinToInterrupt(ENCODER_PIN[LEFT]), left_pulse, RISING);
  attachInterrupt(digitalPinToInterrupt(ENCODER_PIN[RIGHT]), right_pulse, RISING);
}

void encoder_direction(uint8_t wheel, int8_t direction) { directions[wheel] = direction; }

long encoder_count(uint8_t wheel) {
  noInterrupts();
  long count = counts[wheel];
  interrupts();
  return count;
}

void encoders_zero() {
  noInterrupts();
  counts[LEFT] = 0;
  counts[RIGHT] = 0;
  interrupts();
}
