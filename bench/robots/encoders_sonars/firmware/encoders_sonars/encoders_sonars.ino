/* encoders_sonars: the benchmark robot's sketch (bench/robots/encoders_sonars).
 *
 * Drives ahead at DRIVE_PWM, counts two quadrature encoders on pin-change interrupts
 * (left A/B on 2/3: PCINT18/19; right A/B on A4/A5: PCINT12/13), pings the three
 * HC-SR04 in turn (pulseIn) and turns on the spot while the front one reads less than
 * TURN_CM. Prints "<left> <right> <left cm> <front cm> <right cm>" every STATUS_MS at
 * 115200 baud. L298N: ENA 5, IN1 7, IN2 8; ENB 6, IN3 9, IN4 10.
 */
#define DRIVE_PWM 200
#define TURN_PWM 150
#define TURN_CM 40
#define STATUS_MS 200UL
#define ECHO_TIMEOUT_US 12000UL

static const uint8_t TRIG[3] = {4, 12, A0};
static const uint8_t ECHO[3] = {11, 13, A1};
static long cm[3] = {200, 200, 200};
static uint8_t next_sonar = 0;
static unsigned long next_status = 0;

static volatile long counts[2] = {0, 0};
static volatile uint8_t states[2] = {0, 0};
static const int8_t STEP[16] = {0, 1, -1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 0, -1, 1, 0};

ISR(PCINT2_vect) {
  uint8_t state = (PIND >> PD2) & 0x03;
  counts[0] += STEP[(states[0] << 2) | state];
  states[0] = state;
}

ISR(PCINT1_vect) {
  uint8_t state = (PINC >> PC4) & 0x03;
  counts[1] += STEP[(states[1] << 2) | state];
  states[1] = state;
}

static void motor(uint8_t enable, uint8_t in1, uint8_t in2, int speed) {
  digitalWrite(in1, speed > 0 ? HIGH : LOW);
  digitalWrite(in2, speed < 0 ? HIGH : LOW);
  analogWrite(enable, speed < 0 ? -speed : speed);
}

static long ping(uint8_t sonar) {
  digitalWrite(TRIG[sonar], HIGH);
  delayMicroseconds(10);
  digitalWrite(TRIG[sonar], LOW);
  unsigned long echo_us = pulseIn(ECHO[sonar], HIGH, ECHO_TIMEOUT_US);
  return echo_us == 0 ? 200 : (long)(echo_us / 58UL);
}

void setup() {
  Serial.begin(115200);
  for (uint8_t pin = 5; pin <= 10; pin++) {
    pinMode(pin, OUTPUT);
  }
  for (uint8_t i = 0; i < 3; i++) {
    pinMode(TRIG[i], OUTPUT);
    pinMode(ECHO[i], INPUT);
  }
  PORTD |= _BV(PD2) | _BV(PD3);
  PORTC |= _BV(PC4) | _BV(PC5);
  states[0] = (PIND >> PD2) & 0x03;
  states[1] = (PINC >> PC4) & 0x03;
  PCMSK2 |= _BV(PCINT18) | _BV(PCINT19);
  PCMSK1 |= _BV(PCINT12) | _BV(PCINT13);
  PCICR |= _BV(PCIE2) | _BV(PCIE1);
  Serial.println("encoders_sonars ready");
}

void loop() {
  cm[next_sonar] = ping(next_sonar);
  next_sonar = (next_sonar + 1) % 3;
  if (cm[1] < TURN_CM) {
    motor(5, 7, 8, TURN_PWM);
    motor(6, 9, 10, -TURN_PWM);
  } else {
    motor(5, 7, 8, DRIVE_PWM);
    motor(6, 9, 10, DRIVE_PWM);
  }
  if ((long)(millis() - next_status) >= 0) {
    next_status += STATUS_MS;
    noInterrupts();
    long left = counts[0], right = counts[1];
    interrupts();
    Serial.print(left);
    Serial.print(' ');
    Serial.print(right);
    for (uint8_t i = 0; i < 3; i++) {
      Serial.print(' ');
      Serial.print(cm[i]);
    }
    Serial.println();
  }
}
