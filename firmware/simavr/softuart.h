/* Serial links on two ordinary pins, decoded and driven at the bit level
 * (--softuart RX:TX:BAUD:FD, see softuart.c): SoftwareSerial's, on any two pins. */
#ifndef HIL_SIMAVR_SOFTUART_H
#define HIL_SIMAVR_SOFTUART_H

/* A link from its option's text "RX:TX:BAUD:FD" (the board must be known); exits 2
 * naming what is wrong. */
void softuart_open(const char *spec);
/* The AVR exists: watch every TX pin, drive every RX pin idle (high). */
void softuart_attach(void);

#endif
