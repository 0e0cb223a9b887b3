/* Pulses the firmware drives, timed from the pin's edges: a hobby servo's command
 * (kind servo: the high pulse's width in us) and a buzzer's tone (kind tone: Hz). */
#ifndef HIL_SIMAVR_PULSE_METER_H
#define HIL_SIMAVR_PULSE_METER_H

#include "signal_link.h"

extern const signal_kind servo_kind, tone_kind;

#endif
