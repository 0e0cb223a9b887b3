/* The firmware's hardware UARTs on ptys (--uart N:FD, one per UART that reaches a pty;
 * --command-fd FD is --uart 0:FD): UART0 on the UNO and Nano, UART0..3 on the Mega 2560
 * (Serial, Serial1 on pins 18/19, Serial2 16/17, Serial3 14/15). simavr times received
 * bytes at the baud rate the firmware set on that UART (its RX FIFO takes bytes while it
 * signals XON) and the firmware's writes at the same rate (UDRE comes back a byte time
 * after a write); a transmitted byte reaches the pty when the firmware writes UDR.
 *
 * The open watch (--reset-on-open FD): an inotify descriptor watching the slave side of
 * the command link's pty (made by the caller when it made the pty, so every open
 * counts). Opens minus closes count its readers; a first reader (0 -> 1) is what DTR
 * does on a real board: the harness resets the AVR. */
#ifndef HIL_SIMAVR_UART_LINK_H
#define HIL_SIMAVR_UART_LINK_H

#include <stdio.h>

/* UART ``number`` on the pty master ``fd``; registers its stats (exits 2 for a UART the
 * board does not have, or one given twice). */
void uart_link_open(int number, int fd);
/* 1 if UART ``number`` is on a pty (a peer holds its lines). */
int uart_link_has(int number);
/* The open watch on ``fd`` (an inotify descriptor). */
void uart_link_watch_opens(int fd);
/* 1 if a first reader has opened the command link since the last call (read the watch). */
int uart_link_take_open(void);
/* The AVR exists: connect the UARTs (no console echo, no sleeping on UART polls). */
void uart_link_attach(void);
/* The AVR was reset: what waits to be sent is sent, what was received and not taken is
 * lost (counted in uartN_rx_dropped), and no byte goes in until the firmware enables
 * its receiver again. */
void uart_link_reset(void);
/* Lockstep: " uartN <read> <written>" for each UART: the bytes taken from its pty and
 * written to it so far, appended to the "ok" line, so a reader of the other side of the
 * pty in the caller's process can tell how many bytes it is owed (and a writer when the
 * harness has taken its bytes). */
void uart_link_report(FILE *out);

#endif
