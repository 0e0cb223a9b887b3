/* edu_robot: the factory firmware of an educational robot kit, written for the HIL
 * robot sim in the style of the public kits' demo sketches (our own code).
 *
 * Hardware (robot.yaml): an Arduino Nano on the kit's board, its on-board PWM+DIR
 * motor driver, two analog IR line sensors under the front, the mode button on A7
 * (an analog-only pin, so read with analogRead: the board pulls it down, the button
 * pulls it to 5 V) and a status LED on 13. At boot it prints a banner on Serial
 * (9600 baud) and follows a line; each press of the button switches between line
 * following and standing still. The LED is on while it follows the line and blinks
 * while it stands. It prints each change of mode and of what its sensors see.
 * Tabs: this one (modes), drive.ino, sensors.ino.
 */
#define STATUS_LED 13
#define STEP_MS 10
#define FORWARD 110
#define TURN_FAST 140
#define TURN_SLOW 20

enum Mode { LINE, STAND };

static Mode mode = LINE;
static unsigned long last_step_ms = 0;
static int8_t last_seen = 0; /* -1 the line was left of us, 1 right, 0 ahead */

static void announce_mode() {
  Serial.print(F("mode: "));
  Serial.println(mode == LINE ? F("line") : F("stand"));
}

static void follow_line() {
  bool left = line_left();
  bool right = line_right();
  int8_t seen = left && !right ? -1 : right && !left ? 1 : 0;
  if (seen != last_seen) {
    last_seen = seen;
    Serial.print(F("line L R: "));
    Serial.print(left);
    Serial.print(' ');
    Serial.println(right);
  }
  if (seen < 0) {
    drive(TURN_SLOW, TURN_FAST); /* the left sensor is over the tape: turn left */
  } else if (seen > 0) {
    drive(TURN_FAST, TURN_SLOW);
  } else {
    drive(FORWARD, FORWARD); /* the tape between the sensors */
  }
}

void setup() {
  Serial.begin(9600);
  pinMode(STATUS_LED, OUTPUT);
  drive_begin();
  Serial.println(F("edu_robot v1 ready: A7 switches modes"));
  announce_mode();
}

void loop() {
  unsigned long now = millis();
  if (now - last_step_ms < STEP_MS) {
    return;
  }
  last_step_ms = now;
  if (button_pressed()) {
    mode = mode == LINE ? STAND : LINE;
    announce_mode();
  }
  if (mode == LINE) {
    digitalWrite(STATUS_LED, HIGH);
    follow_line();
  } else {
    digitalWrite(STATUS_LED, (now / 250) % 2 ? HIGH : LOW);
    drive(0, 0);
  }
}
