/* The serial commands (one letter each) and what the tabs share. */
#ifndef RAB_STYLE_COMMANDS_H
#define RAB_STYLE_COMMANDS_H

#include <Arduino.h>

#define CMD_READ_ENCODERS 'e'
#define CMD_RESET_ENCODERS 'r'
#define CMD_MOTOR_SPEEDS 'm'
#define CMD_MOTOR_RAW_PWM 'o'
#define CMD_GET_BAUDRATE 'b'
#define CMD_UPDATE_PID 'u'

#define LEFT 0
#define RIGHT 1

/* encoders.ino */
void init_encoders();
long read_encoder(uint8_t wheel);
void reset_encoders();

/* motors.ino */
void init_motors();
void set_motor_speeds(int left, int right);

/* pid.ino */
extern bool pid_moving;
void reset_pid();
void set_pid_targets(long left, long right);
void set_pid_gains(int kp, int kd, int ki, int ko);
void update_pid();

#endif
