/* WS2812 RGB LEDs on one pin: the colours decoded from the bit timing. */
#ifndef HIL_SIMAVR_WS2812_H
#define HIL_SIMAVR_WS2812_H

#include "signal_link.h"

extern const signal_kind ws2812_kind;

#endif
