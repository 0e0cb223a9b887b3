/* L298N: PWM on ENA/ENB (pins 5 and 6, Timer0: the servo has Timer1), direction on the
 * IN pins. */
#define LEFT_ENABLE 5
#define LEFT_IN1 7
#define LEFT_IN2 8
#define RIGHT_ENABLE 6
#define RIGHT_IN3 11
#define RIGHT_IN4 12

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
