/* The harness's core: the AVR, its board and clock, the links it polls, the stats line,
 * and how it fails (DESIGN.md "Firmware in the loop"). Every peripheral emulation keeps
 * its own state in its own file and reaches the AVR through these functions. */
#ifndef HIL_SIMAVR_HARNESS_H
#define HIL_SIMAVR_HARNESS_H

#include <stdint.h>
#include <stdio.h>

#include <sim_avr.h>

#include "board.h"

/* The AVR (NULL until the firmware is loaded). */
avr_t *harness_avr(void);
/* The board the AVR sits on. */
const board_t *harness_board(void);
/* The AVR's clock in Hz. */
double harness_frequency(void);
/* AVR cycles in ``us`` microseconds, rounded (at least 1). */
avr_cycle_count_t harness_cycles_us(double us);

/* Print "hil_simavr: <message>" on stderr and exit with ``status`` (2: bad input,
 * 3: the firmware crashed). */
void harness_fail(int status, const char *format, ...) __attribute__((noreturn, format(printf, 2, 3)));
/* Make a link descriptor non-blocking, or fail naming it. */
void harness_nonblocking(int fd, const char *option);

/* A link on a pty: ``poll`` reads what the pty holds (every 100 us of AVR time),
 * ``flush`` writes what waits for it (after every poll, step and frame); both get
 * ``param``. ``fd`` is waited on in real time while the AVR is ahead of the wall clock. */
void harness_add_link(int fd, void (*poll)(void *), void (*flush)(void *), void *param);
/* Write every link's waiting bytes now. */
void harness_flush_links(void);

/* 1 while the AVR is held in the bootloader after an external reset (the sketch has
 * not started yet). */
int harness_booting(void);

/* Counters in the stats line: ``write`` prints `, "name": value` pairs. */
void harness_add_stats(void (*write)(FILE *out));

#endif
