/* Wheel encoders: quadrature (A/B, x4) and single-channel (one pulse per count); the
 * signal is the wheel's position in counts, a wrapping 16-bit value. */
#ifndef HIL_SIMAVR_ENCODER_H
#define HIL_SIMAVR_ENCODER_H

#include "signal_link.h"

extern const signal_kind quadrature_kind, pulses_kind;

#endif
