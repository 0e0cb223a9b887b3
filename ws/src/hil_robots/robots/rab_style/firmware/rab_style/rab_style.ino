/* rab_style: a differential-drive base on a serial command protocol, written for the
 * HIL robot sim in the style of the ROSArduinoBridge firmware that ROS 2 users pair
 * with the diffdrive_arduino ros2_control plugin (our own code, not a copy of it).
 *
 * Hardware (robot.yaml): an Arduino UNO, an L298N with ENA/ENB jumpered to 5 V and PWM
 * on IN1..IN4, two quadrature wheel encoders on pin-change interrupts. Serial at
 * 57600 baud; a command is one letter and up to two integers, ended by CR:
 *
 *   e         encoder counts, "<left> <right>"
 *   r         reset both counts to 0, "OK"
 *   m L R     hold the wheel speeds L and R (encoder counts per PID frame, 30 frames
 *             a second) with a PID each; 0 0 stops, "OK"
 *   o L R     raw PWM -255..255 to each motor, no PID, "OK"
 *   b         the baud rate
 *   u P D I O set the PID gains (Kp, Kd, Ki, output divisor), "OK"
 *
 * Without a motor command for AUTO_STOP_MS the motors stop (a lost host stops the
 * robot). Tabs: this one (the command loop), commands.h, encoders.ino, motors.ino,
 * pid.ino.
 */
#include "commands.h"

#define BAUD 57600
#define PID_RATE_HZ 30
#define AUTO_STOP_MS 2000UL
#define MAX_ARG_CHARS 16

static const unsigned long PID_INTERVAL_MS = 1000UL / PID_RATE_HZ;
static unsigned long next_pid_ms = 0;
static unsigned long last_motor_command_ms = 0;

/* The command being read: its letter, its arguments as text, which argument. */
static char command = 0;
static char args[4][MAX_ARG_CHARS + 1];
static uint8_t arg_index = 0;
static uint8_t arg_length = 0;

static void clear_command() {
  command = 0;
  arg_index = 0;
  arg_length = 0;
  for (uint8_t i = 0; i < 4; i++) {
    args[i][0] = '\0';
  }
}

static long arg(uint8_t i) { return atol(args[i]); }

static void run_command() {
  switch (command) {
    case CMD_READ_ENCODERS:
      Serial.print(read_encoder(LEFT));
      Serial.print(' ');
      Serial.println(read_encoder(RIGHT));
      break;
    case CMD_RESET_ENCODERS:
      reset_encoders();
      reset_pid();
      Serial.println("OK");
      break;
    case CMD_MOTOR_SPEEDS:
      last_motor_command_ms = millis();
      if (arg(0) == 0 && arg(1) == 0) {
        set_motor_speeds(0, 0);
        reset_pid();
        pid_moving = false;
      } else {
        pid_moving = true;
      }
      set_pid_targets(arg(0), arg(1));
      Serial.println("OK");
      break;
    case CMD_MOTOR_RAW_PWM:
      last_motor_command_ms = millis();
      reset_pid();
      pid_moving = false; /* the raw command holds until the next one */
      set_motor_speeds((int)arg(0), (int)arg(1));
      Serial.println("OK");
      break;
    case CMD_GET_BAUDRATE:
      Serial.println(BAUD);
      break;
    case CMD_UPDATE_PID:
      set_pid_gains((int)arg(0), (int)arg(1), (int)arg(2), (int)arg(3));
      Serial.println("OK");
      break;
    default:
      Serial.println("Invalid Command");
      break;
  }
}

void setup() {
  Serial.begin(BAUD);
  init_encoders();
  init_motors();
  reset_pid();
  clear_command();
}

void loop() {
  while (Serial.available() > 0) {
    char c = Serial.read();
    if (c == '\r') {
      if (command != 0) {
        run_command();
      }
      clear_command();
    } else if (c == ' ') {
      if (command != 0 && arg_length > 0 && arg_index < 3) {
        arg_index++;
        arg_length = 0;
      }
    } else if (command == 0) {
      command = c;
    } else if (arg_length < MAX_ARG_CHARS) {
      args[arg_index][arg_length++] = c;
      args[arg_index][arg_length] = '\0';
    }
  }
  unsigned long now = millis();
  if ((long)(now - next_pid_ms) >= 0) {
    next_pid_ms = now + PID_INTERVAL_MS;
    update_pid();
  }
  if (now - last_motor_command_ms > AUTO_STOP_MS) {
    set_motor_speeds(0, 0);
    pid_moving = false;
  }
}
