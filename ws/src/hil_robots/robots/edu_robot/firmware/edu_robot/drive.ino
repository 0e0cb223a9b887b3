/* The board's motor driver: PWM and DIR per motor (DIR low forward, PWM 0 brakes). */
#define LEFT_PWM 5
#define LEFT_DIR 4
#define RIGHT_PWM 6
#define RIGHT_DIR 7

static void motor(uint8_t pwm_pin, uint8_t dir_pin, int speed) {
  digitalWrite(dir_pin, speed < 0 ? HIGH : LOW);
  analogWrite(pwm_pin, min(abs(speed), 255));
}

void drive_begin() {
  pinMode(LEFT_PWM, OUTPUT);
  pinMode(LEFT_DIR, OUTPUT);
  pinMode(RIGHT_PWM, OUTPUT);
  pinMode(RIGHT_DIR, OUTPUT);
  drive(0, 0);
}

void drive(int left, int right) {
  motor(LEFT_PWM, LEFT_DIR, left);
  motor(RIGHT_PWM, RIGHT_DIR, right);
}
