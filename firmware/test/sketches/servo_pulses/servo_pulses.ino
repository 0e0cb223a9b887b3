// Servo pulses: three servos measured by servo_probe, nine more to fill the first timer,
// and a thirteenth that only a board with a second servo timer (the Mega) can drive.
// What the library answers goes to the serial port; the gripper lets go after 200 ms.
#include <Servo.h>

const int PAN_PIN = 9;  // Timer1's own OC1A pin on the UNO: the timer runs servos, not PWM
const int TILT_PIN = 3;
const int GRIPPER_PIN = 12;
const int SPARE_PINS[] = {4, 5, 6, 7, 8, 10, 11, A0, A1};
const int EXTRA_PIN = 13;

Servo pan;
Servo tilt;
Servo gripper;
Servo spares[9];
Servo extra;
Servo unattached;
bool released = false;

void setup() {
  Serial.begin(115200);
  pan.attach(PAN_PIN);
  tilt.attach(TILT_PIN, 1000, 2000);
  gripper.attach(GRIPPER_PIN);
  for (int i = 0; i < 9; i++) {
    spares[i].attach(SPARE_PINS[i]);
  }
  pan.write(0);
  tilt.write(90);
  gripper.write(1800);  // 544 and up is a width in microseconds
  report("pan", pan);
  report("tilt", tilt);
  report("gripper", gripper);
  Serial.print("extra ");
  Serial.println(extra.attach(EXTRA_PIN));
  Serial.print("roundtrip ");
  Serial.println(roundTripErrors());
}

void loop() {
  if (!released && millis() >= 200) {
    gripper.detach();
    released = true;
    Serial.print("gripper attached ");
    Serial.println(gripper.attached());
  }
}

void report(const char *name, Servo &servo) {
  Serial.print(name);
  Serial.print(' ');
  Serial.print(servo.read());
  Serial.print(' ');
  Serial.println(servo.readMicroseconds());
}

int roundTripErrors() {
  int errors = 0;
  for (int angle = 0; angle <= 180; angle++) {
    unattached.write(angle);
    if (unattached.read() != angle) {
      errors++;
    }
  }
  return errors;
}
