/* line_follower: three IR line sensors (TCRT5000 modules, digital outputs: HIGH over
 * the dark line) steer a two-wheeled car on an L298N, written for the HIL robot sim in
 * the style of the common hobby line followers.
 *
 * Pins (robot.yaml): sensors left A0, centre A1, right A2; L298N ENA 9, IN1 8, IN2 7
 * (left motor), ENB 10, IN3 12, IN4 11 (right motor). Serial at 9600: a status line
 * every STATUS_MS ("L C R: 0 1 0 -> ahead").
 *
 * Centre sensor on the line: ahead. Left (or right) sensor on it: turn that way, the
 * inner wheel slowed. No sensor on it: turn on the spot towards the side the line was
 * last seen, to find it again. Tabs: this one and motors.ino.
 */
#define SENSOR_LEFT A0
#define SENSOR_CENTRE A1
#define SENSOR_RIGHT A2

#define SPEED_AHEAD 170
#define SPEED_OUTER 170
#define SPEED_INNER 60
#define SPEED_SEARCH 130
#define STATUS_MS 500UL

enum Side { SIDE_LEFT, SIDE_RIGHT };

static Side last_seen = SIDE_LEFT;
static unsigned long next_status_ms = 0;

void setup() {
  Serial.begin(9600);
  pinMode(SENSOR_LEFT, INPUT);
  pinMode(SENSOR_CENTRE, INPUT);
  pinMode(SENSOR_RIGHT, INPUT);
  motors_init();
  Serial.println("line_follower ready");
}

void loop() {
  int left = digitalRead(SENSOR_LEFT);
  int centre = digitalRead(SENSOR_CENTRE);
  int right = digitalRead(SENSOR_RIGHT);
  const char *action;
  if (left && !right) {
    last_seen = SIDE_LEFT;
    drive(SPEED_INNER, SPEED_OUTER);
    action = "left";
  } else if (right && !left) {
    last_seen = SIDE_RIGHT;
    drive(SPEED_OUTER, SPEED_INNER);
    action = "right";
  } else if (centre) {
    drive(SPEED_AHEAD, SPEED_AHEAD);
    action = "ahead";
  } else if (last_seen == SIDE_LEFT) {
    drive(-SPEED_SEARCH, SPEED_SEARCH);
    action = "search left";
  } else {
    drive(SPEED_SEARCH, -SPEED_SEARCH);
    action = "search right";
  }
  if ((long)(millis() - next_status_ms) >= 0) {
    next_status_ms = millis() + STATUS_MS;
    Serial.print("L C R: ");
    Serial.print(left);
    Serial.print(' ');
    Serial.print(centre);
    Serial.print(' ');
    Serial.print(right);
    Serial.print(" -> ");
    Serial.println(action);
  }
}
