/* Ultrasonic rangers: the HC-SR04 (4 pins: trigger and echo, kind echo) and the 3-pin
 * single-signal rangers (Parallax PING))) and mBot style: one pin, kind ping). */
#ifndef HIL_SIMAVR_HCSR04_H
#define HIL_SIMAVR_HCSR04_H

#include "signal_link.h"

extern const signal_kind echo_kind, ping_kind;

#endif
