/* The pwm signal kind: the duty a pin shows, computed from its timer's registers while
 * the timer's comparator drives it, measured from the pin's edges otherwise. */
#ifndef HIL_SIMAVR_PWM_H
#define HIL_SIMAVR_PWM_H

#include "signal_link.h"

extern const signal_kind pwm_kind;

#endif
