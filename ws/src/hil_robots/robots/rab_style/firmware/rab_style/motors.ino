/* The L298N with ENA/ENB jumpered high: each motor is driven by PWM on one IN pin and 0
 * on the other (IN1 forward, IN2 back), both 0 to stop (the L298 brakes). */
#define LEFT_FORWARD_PIN 10
#define LEFT_BACKWARD_PIN 6
#define RIGHT_FORWARD_PIN 9
#define RIGHT_BACKWARD_PIN 5
#define MAX_PWM 255

static void drive(uint8_t forward_pin, uint8_t backward_pin, int speed) {
  speed = constrain(speed, -MAX_PWM, MAX_PWM);
  if (speed >= 0) {
    analogWrite(backward_pin, 0);
    analogWrite(forward_pin, speed);
  } else {
    analogWrite(forward_pin, 0);
    analogWrite(backward_pin, -speed);
  }
}

void init_motors() {
  pinMode(LEFT_FORWARD_PIN, OUTPUT);
  pinMode(LEFT_BACKWARD_PIN, OUTPUT);
  pinMode(RIGHT_FORWARD_PIN, OUTPUT);
  pinMode(RIGHT_BACKWARD_PIN, OUTPUT);
  set_motor_speeds(0, 0);
}

void set_motor_speeds(int left, int right) {
  drive(LEFT_FORWARD_PIN, LEFT_BACKWARD_PIN, left);
  drive(RIGHT_FORWARD_PIN, RIGHT_BACKWARD_PIN, right);
}
