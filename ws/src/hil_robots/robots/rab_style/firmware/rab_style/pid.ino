/* A PID per wheel on the encoder counts of one frame (1/30 s): the target is counts per
 * frame, the output a PWM value. Derivative on the measurement, not the error, so a
 * new target gives no kick; the integral is clamped so a stalled wheel cannot wind it
 * up beyond full output. */
struct WheelPid {
  long target;     /* counts per frame */
  long last_count; /* encoder count at the last frame */
  int last_speed;  /* counts in the last frame */
  long integral;   /* sum of Ki x error */
  int output;      /* PWM */
};

bool pid_moving = false;
static WheelPid wheels[2];
static int kp = 20, kd = 12, ki = 0, ko = 50;

void reset_pid() {
  for (uint8_t w = 0; w < 2; w++) {
    wheels[w].target = 0;
    wheels[w].last_count = read_encoder(w);
    wheels[w].last_speed = 0;
    wheels[w].integral = 0;
    wheels[w].output = 0;
  }
}

void set_pid_targets(long left, long right) {
  wheels[LEFT].target = left;
  wheels[RIGHT].target = right;
}

void set_pid_gains(int p, int d, int i, int o) {
  kp = p;
  kd = d;
  ki = i;
  ko = o > 0 ? o : 1;
}

static void step_wheel(uint8_t w) {
  WheelPid &pid = wheels[w];
  long count = read_encoder(w);
  int speed = (int)(count - pid.last_count);
  pid.last_count = count;
  long error = pid.target - speed;
  long limit = (long)MAX_PWM * ko;
  pid.integral = constrain(pid.integral + (long)ki * error, -limit, limit);
  long change = ((long)kp * error - (long)kd * (speed - pid.last_speed) + pid.integral) / ko;
  pid.last_speed = speed;
  pid.output = constrain(pid.output + (int)change, -MAX_PWM, MAX_PWM);
}

void update_pid() {
  if (!pid_moving) {
    /* follow the counts, so a later m command starts from where the wheels are */
    for (uint8_t w = 0; w < 2; w++) {
      wheels[w].last_count = read_encoder(w);
      wheels[w].last_speed = 0;
    }
    return;
  }
  step_wheel(LEFT);
  step_wheel(RIGHT);
  set_motor_speeds(wheels[LEFT].output, wheels[RIGHT].output);
}
