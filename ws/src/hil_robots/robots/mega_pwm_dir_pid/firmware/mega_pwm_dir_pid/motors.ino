/* Two sign-magnitude (PWM + DIR) motor drivers: DIR low drives forward, high back;
 * the PWM duty is the magnitude. Each command's sign is what the encoders count with. */
const uint8_t PWM_PIN[2] = {5, 6};
const uint8_t DIR_PIN[2] = {4, 7};

void motors_begin() {
  for (uint8_t m = 0; m < 2; m++) {
    pinMode(PWM_PIN[m], OUTPUT);
    pinMode(DIR_PIN[m], OUTPUT);
  }
  motors_stop();
}

void motor_set(uint8_t m, int pwm) {
  pwm = constrain(pwm, -255, 255);
  if (pwm != 0) {
    encoder_direction(m, pwm > 0 ? 1 : -1); /* a stopped wheel keeps its last direction */
  }
  digitalWrite(DIR_PIN[m], pwm < 0 ? HIGH : LOW);
  analogWrite(PWM_PIN[m], abs(pwm));
}

void motors_stop() {
  motor_set(LEFT, 0);
  motor_set(RIGHT, 0);
}
