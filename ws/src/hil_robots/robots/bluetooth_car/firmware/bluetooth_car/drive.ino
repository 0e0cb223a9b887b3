/* The L298N with ENA/ENB jumpered high: only the IN levels, no PWM. For each motor
 * IN1 high and IN2 low turn it forward, the other way round back, both low stop it. */
#define IN1 4
#define IN2 7
#define IN3 12
#define IN4 13

static void motor(uint8_t forward_pin, uint8_t back_pin, int8_t way) {
  digitalWrite(forward_pin, way > 0 ? HIGH : LOW);
  digitalWrite(back_pin, way < 0 ? HIGH : LOW);
}

void drive_begin() {
  pinMode(IN1, OUTPUT);
  pinMode(IN2, OUTPUT);
  pinMode(IN3, OUTPUT);
  pinMode(IN4, OUTPUT);
  drive(0, 0);
}

/* -1 back, 0 stop, 1 forward, for each side. */
void drive(int8_t left, int8_t right) {
  motor(IN1, IN2, left);
  motor(IN3, IN4, right);
}
