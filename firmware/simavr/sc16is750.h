/* The SC16IS750 I2C-to-UART bridge of the radio link (--radio-fd): a TWI slave at 0x4D
 * whose UART side is a pty (DESIGN.md "Firmware in the loop"). */
#ifndef HIL_SIMAVR_SC16IS750_H
#define HIL_SIMAVR_SC16IS750_H

#include <stdio.h>

/* The bridge's UART on ``fd`` (-1: no bridge on the bus); registers its stats. */
void sc16is750_open(int fd);
/* The AVR exists: put the bridge on the bus and start its UART. */
void sc16is750_attach(void);
/* Lockstep: " radio <bytes read from the pty> <bytes written to it>" for the "ok" reply
 * (nothing without a bridge). */
void sc16is750_report(FILE *out);

#endif
