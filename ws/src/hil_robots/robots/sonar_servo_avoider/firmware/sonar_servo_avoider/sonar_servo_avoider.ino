/* sonar_servo_avoider: an obstacle-avoiding car with three HC-SR04 sonars, the front
 * one on a servo that sweeps it from side to side, written for the HIL robot sim in
 * the style of the common L298N + HC-SR04 hobby avoiders (pulseIn, Servo.h, prints at
 * 9600 baud).
 *
 * Pins (robot.yaml): L298N ENA 5, IN1 7, IN2 8 (left motor), ENB 6, IN3 11, IN4 12
 * (right motor); the servo on 9; sonars left (TRIG 2, ECHO 3), front on the servo
 * (A0, A1), right (A2, A3). Servo.h takes Timer1, which stops analogWrite on pins 9
 * and 10: the motor enables are on 5 and 6 (Timer0), not on 9 and 10 as on the
 * avoiders without a servo.
 *
 * Each step the servo moves SWEEP_STEP degrees between SWEEP_MIN and SWEEP_MAX and the
 * three sonars are read. Something within STOP_CM ahead (or within SIDE_CM on a side):
 * back up briefly and turn towards the side with more room; else drive ahead. Every
 * reading goes to the serial port: "F 123 L 45 R 67 -> ahead". Tabs: this one,
 * sonar.ino, motors.ino.
 */
#include <Servo.h>

/* The sonars, as sonar.ino numbers them. */
#define SONAR_LEFT 0
#define SONAR_FRONT 1
#define SONAR_RIGHT 2

#define SERVO_PIN 9
#define SWEEP_MIN 45
#define SWEEP_MAX 135
#define SWEEP_STEP 15
#define SETTLE_MS 60
#define STOP_CM 25
#define SIDE_CM 15
#define SPEED 180
#define TURN_SPEED 160
#define BACK_MS 250
#define TURN_MS 350

Servo pan;
static int angle = 90;
static int sweep = SWEEP_STEP;

void setup() {
  Serial.begin(9600);
  sonars_init();
  motors_init();
  pan.attach(SERVO_PIN);
  pan.write(angle);
  delay(300);
  Serial.println("sonar_servo_avoider ready");
}

void loop() {
  angle += sweep;
  if (angle >= SWEEP_MAX || angle <= SWEEP_MIN) {
    sweep = -sweep;
  }
  pan.write(angle);
  delay(SETTLE_MS);
  long front = read_cm(SONAR_FRONT);
  long left = read_cm(SONAR_LEFT);
  long right = read_cm(SONAR_RIGHT);
  const char *action = "ahead";
  if (front < STOP_CM || left < SIDE_CM || right < SIDE_CM) {
    drive(-SPEED, -SPEED);
    delay(BACK_MS);
    if (left > right) {
      drive(-TURN_SPEED, TURN_SPEED);
      action = "turn left";
    } else {
      drive(TURN_SPEED, -TURN_SPEED);
      action = "turn right";
    }
    delay(TURN_MS);
  } else {
    drive(SPEED, SPEED);
  }
  Serial.print("F ");
  Serial.print(front);
  Serial.print(" L ");
  Serial.print(left);
  Serial.print(" R ");
  Serial.print(right);
  Serial.print(" @");
  Serial.print(angle);
  Serial.print(" -> ");
  Serial.println(action);
}
