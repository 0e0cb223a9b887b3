/* The pwm signal kind: the duty a pin shows, computed from its timer's registers while
 * the timer's comparator drives it, measured from the pin's edges otherwise. */
#ifndef HIL_SIMAVR_PWM_H
#define HIL_SIMAVR_PWM_H

#include "signal_link.h"

extern const signal_kind pwm_kind;

/* While a running timer's comparator drives ``pin`` in a PWM mode: 1, with the high
 * time and the period of its wave in AVR cycles, from the timer's registers (simavr
 * does not run every mode). Else 0. */
int pwm_comparator_pulse(int pin, double *high_cycles, double *period_cycles);

#endif
