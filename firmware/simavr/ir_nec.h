/* An IR remote receiver (demodulated, active low) receiving NEC frames. */
#ifndef HIL_SIMAVR_IR_NEC_H
#define HIL_SIMAVR_IR_NEC_H

#include "signal_link.h"

extern const signal_kind nec_kind;

#endif
