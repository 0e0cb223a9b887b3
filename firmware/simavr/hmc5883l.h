/* The HMC5883L compass on the TWI bus (coupling: out ... hmc5883l <7-bit address>; the
 * signal's value is the heading in degrees). */
#ifndef HIL_SIMAVR_HMC5883L_H
#define HIL_SIMAVR_HMC5883L_H

#include "signal_link.h"

extern const signal_kind hmc5883l_kind;

#endif
