/* A PI controller per wheel on the measured speed (counts a second over the last PID
 * interval), with a feed-forward from the target; the integral is clamped so a stalled
 * wheel cannot wind it up. The output keeps the target's sign (0 at most the other way):
 * the encoders count the way the wheel is driven, so a wheel slowed by driving it
 * backwards would count down while it still turns forward. */
#define KF 0.25  /* PWM per count a second */
#define KP 0.3
#define KI 1.5
#define INTEGRAL_LIMIT 120.0

static bool pid_on = false;
static long targets[2] = {0, 0};
static long last_counts[2] = {0, 0};
static float integrals[2] = {0, 0};

void pid_off() {
  pid_on = false;
  targets[LEFT] = targets[RIGHT] = 0;
  integrals[LEFT] = integrals[RIGHT] = 0;
}

void pid_targets(long left, long right) {
  pid_on = left != 0 || right != 0;
  targets[LEFT] = left;
  targets[RIGHT] = right;
  if (!pid_on) {
    motors_stop();
  }
}

void pid_update(float dt) {
  for (uint8_t w = 0; w < 2; w++) {
    long count = encoder_count(w);
    float speed = (count - last_counts[w]) / dt;
    last_counts[w] = count;
    if (!pid_on) {
      continue;
    }
    float error = targets[w] - speed;
    integrals[w] = constrain(integrals[w] + KI * error * dt, -INTEGRAL_LIMIT, INTEGRAL_LIMIT);
    int pwm = (int)(KF * targets[w] + KP * error + integrals[w]);
    motor_set(w, targets[w] > 0 ? max(pwm, 0) : min(pwm, 0));
  }
}
