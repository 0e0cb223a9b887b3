/* mega_pwm_dir_pid: an encoder odometry robot on an Arduino Mega 2560, written for the
 * HIL robot sim in the style of the public Mega PID robots (our own code).
 *
 * Hardware (robot.yaml): a PWM+DIR motor driver per wheel (Cytron style), a
 * single-channel encoder per wheel on an external interrupt (the direction is the
 * one the wheel was last driven in), a PID per wheel at 20 Hz. The host talks on
 * Serial1 (pins 19 RX, 18 TX) at 57600 baud; Serial (the USB port) only gets the boot
 * banner and the errors, at 115200. A command is a line ended by \n or \r:
 *
 *   V L R   hold the wheel speeds L and R (encoder counts a second), "OK"
 *   P L R   raw PWM -255..255 to each motor, no PID, "OK"
 *   E       encoder counts, "E <left> <right>"
 *   Z       both counts to 0, "OK"
 *   S       stop, "OK"
 *
 * Without a V or P command for COMMAND_TIMEOUT_MS the motors stop. Tabs: this one (the
 * command loop), motors.ino, encoders.ino, pid.ino.
 */
#define HOST_BAUD 57600
#define USB_BAUD 115200
#define PID_INTERVAL_MS 50
#define COMMAND_TIMEOUT_MS 2000UL
#define LINE_CHARS 32

enum { LEFT = 0, RIGHT = 1 };

static char line[LINE_CHARS + 1];
static uint8_t line_length = 0;
static unsigned long last_pid_ms = 0;
static unsigned long last_drive_ms = 0;

static void run_line() {
  char letter = line[0];
  long left = 0, right = 0;
  if (letter == 'V' || letter == 'P') {
    char *end;
    left = strtol(line + 1, &end, 10);
    right = strtol(end, NULL, 10);
    last_drive_ms = millis();
  }
  switch (letter) {
    case 'V':
      pid_targets(left, right);
      break;
    case 'P':
      pid_off();
      motor_set(LEFT, (int)left);
      motor_set(RIGHT, (int)right);
      break;
    case 'E':
      Serial1.print(F("E "));
      Serial1.print(encoder_count(LEFT));
      Serial1.print(' ');
      Serial1.println(encoder_count(RIGHT));
      return;
    case 'Z':
      encoders_zero();
      pid_off();
      break;
    case 'S':
      pid_off();
      motors_stop();
      break;
    default:
      Serial1.println(F("ERR"));
      Serial.print(F("unknown command: "));
      Serial.println(line);
      return;
  }
  Serial1.println(F("OK"));
}

void setup() {
  Serial.begin(USB_BAUD);
  Serial.println(F("mega_pwm_dir_pid ready: commands on Serial1 at 57600"));
  Serial1.begin(HOST_BAUD);
  motors_begin();
  encoders_begin();
  pid_off();
}

void loop() {
  while (Serial1.available() > 0) {
    char c = Serial1.read();
    if (c == '\n' || c == '\r') {
      line[line_length] = '\0';
      if (line_length > 0) {
        run_line();
      }
      line_length = 0;
    } else if (line_length < LINE_CHARS) {
      line[line_length++] = c;
    }
  }
  unsigned long now = millis();
  if (now - last_pid_ms >= PID_INTERVAL_MS) {
    last_pid_ms += PID_INTERVAL_MS;
    pid_update(PID_INTERVAL_MS / 1000.0);
  }
  if (now - last_drive_ms > COMMAND_TIMEOUT_MS) {
    pid_off();
    motors_stop();
    last_drive_ms = now;
  }
}
