/* L298N: PWM on ENA/ENB sets the speed, IN1/IN2 (IN3/IN4) the direction. */
#define LEFT_ENABLE 9
#define LEFT_IN1 8
#define LEFT_IN2 7
#define RIGHT_ENABLE 10
#define RIGHT_IN3 12
#define RIGHT_IN4 11

static void motor(uint8_t enable, uint8_t forward, uint8_t back, int speed) {
  digitalWrite(forward, speed > 0 ? HIGH : LOW);
  digitalWrite(back, speed < 0 ? HIGH : LOW);
  analogWrite(enable, constrain(abs(speed), 0, 255));
}

void motors_init() {
  pinMode(LEFT_ENABLE, OUTPUT);
  pinMode(LEFT_IN1, OUTPUT);
  pinMode(LEFT_IN2, OUTPUT);
  pinMode(RIGHT_ENABLE, OUTPUT);
  pinMode(RIGHT_IN3, OUTPUT);
  pinMode(RIGHT_IN4, OUTPUT);
  drive(0, 0);
}

void drive(int left, int right) {
  motor(LEFT_ENABLE, LEFT_IN1, LEFT_IN2, left);
  motor(RIGHT_ENABLE, RIGHT_IN3, RIGHT_IN4, right);
}
