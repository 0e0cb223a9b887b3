const int SENSOR_PINS[] = {A0, A1, A2};
const int THRESHOLD = 512;
const int LOST = 99;

void setupSensors() {
  for (int i = 0; i < 3; i++) {
    pinMode(SENSOR_PINS[i], INPUT);
  }
}

int lineError() {
  bool left = onLine(0), middle = onLine(1), right = onLine(2);
  if (middle) return 0;
  if (left) return -1;
  if (right) return 1;
  return LOST;
}

bool onLine(int sensor) {
  return analogRead(SENSOR_PINS[sensor]) > THRESHOLD;
}

bool lost(int error) {
  return error == LOST;
}

void stopMotors() {
  analogWrite(LEFT_PWM, 0);
  analogWrite(RIGHT_PWM, 0);
}
