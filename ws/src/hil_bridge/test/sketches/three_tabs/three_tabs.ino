// Line follower kept in three tabs, as the Arduino IDE keeps a sketch: this main tab,
// then "drive" and "sensors" in alphabetical order. No tab declares what another
// defines: the IDE writes the function prototypes, and its tab order makes the
// variables of a tab visible to the tabs after it.

int baseSpeed = 150;  // drive.ino uses it: the main tab comes first

void setup() {
  Serial.begin(9600);
  pinMode(LED_BUILTIN, OUTPUT);
  setupMotors();
  setupSensors();
}

void loop() {
  int error = lineError();
  steer(error);
  showStatus(error);
  delay(10);
}

void showStatus(int error) {
  digitalWrite(LED_BUILTIN, error == 0 ? HIGH : LOW);
  Serial.println(error);
}
