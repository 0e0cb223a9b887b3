const int LEFT_PWM = 5;   // sensors.ino uses them: "drive" comes before "sensors"
const int RIGHT_PWM = 6;
const int GAIN = 40;

void setupMotors() {
  pinMode(LEFT_PWM, OUTPUT);
  pinMode(RIGHT_PWM, OUTPUT);
}

void steer(int error) {
  if (lost(error)) {
    stopMotors();
    return;
  }
  setMotor(LEFT_PWM, baseSpeed + error * GAIN);
  setMotor(RIGHT_PWM, baseSpeed - error * GAIN);
}

void setMotor(int pin, int speed) {
  analogWrite(pin, constrain(speed, 0, 255));
}
