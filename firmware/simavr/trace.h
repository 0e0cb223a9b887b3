/* The pin trace: the levels of chosen pins as a Value Change Dump (IEEE 1364 section 18,
 * as logic analysers write it; GTKWave and PulseView read it), timed in AVR cycles
 * (--trace FILE, --trace-pin NAME=PIN..., --trace-limit BYTES). trace.c says how each
 * line is drawn. */
#ifndef HIL_SIMAVR_TRACE_H
#define HIL_SIMAVR_TRACE_H

#include <stdint.h>

/* --trace-pin NAME=PIN: trace digital pin PIN as NAME (``device.signal``: the variable
 * ``signal`` in the scope ``device``; a name without a dot is in the scope ``pins``). */
void trace_add(const char *spec);
/* --trace FILE and --trace-limit BYTES (0: the default, 100 MB). */
void trace_file(const char *path, uint64_t limit);
/* The AVR exists: check the pins, open the file, write its header and the levels at
 * cycle 0, and follow the pins from now on (exits 2 naming what is wrong). */
void trace_attach(void);
/* The AVR was reset: every line is looked at again (its registers are cleared). */
void trace_after_reset(void);

#endif
