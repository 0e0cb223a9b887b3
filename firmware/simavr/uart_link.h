/* The command link: the firmware's UART0 on a pty (--command-fd). simavr times received
 * bytes at the baud rate the firmware set (its RX FIFO takes bytes while it signals
 * XON); transmitted bytes leave when the firmware writes UDR. */
#ifndef HIL_SIMAVR_UART_LINK_H
#define HIL_SIMAVR_UART_LINK_H

/* The link on ``fd``; registers its stats. */
void uart_link_open(int fd);
/* The AVR exists: connect UART0 (no console echo, no sleeping on UART polls). */
void uart_link_attach(void);

#endif
