/* A push button to ground on a pulled-up pin, with contact bounce. */
#ifndef HIL_SIMAVR_BUTTON_H
#define HIL_SIMAVR_BUTTON_H

#include "signal_link.h"

extern const signal_kind button_kind;

#endif
