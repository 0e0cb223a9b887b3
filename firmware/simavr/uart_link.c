/* The command link on UART0. */
#include "uart_link.h"

#include <inttypes.h>
#include <stdio.h>

#include <avr_uart.h>

#include "harness.h"
#include "queue.h"

static struct {
    int fd;
    queue_t in, out;
    uint8_t xon;
    uint64_t rx, tx, tx_dropped;
} uart = {.fd = -1};

static void on_output(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)param;
    uart.tx++;
    if (!queue_push(&uart.out, (uint8_t)value)) {
        uart.tx_dropped++;
    }
}

static void on_xon(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)value;
    (void)param;
    uart.xon = 1;
}

static void on_xoff(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)value;
    (void)param;
    uart.xon = 0;
}

/* Read what the pty holds and hand the AVR's RX FIFO as much as it takes. */
static void uart_poll(void) {
    queue_read(&uart.in, uart.fd);
    avr_irq_t *input = avr_io_getirq(harness_avr(), AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
    while (uart.xon && uart.in.length > 0) {
        avr_raise_irq(input, queue_pop(&uart.in));
        uart.rx++;
    }
}

static void uart_flush(void) { queue_flush(&uart.out, uart.fd, &uart.tx_dropped); }

static void uart_stats(FILE *out) {
    fprintf(out,
            ", \"uart_rx\": %" PRIu64 ", \"uart_tx\": %" PRIu64 ", \"uart_tx_dropped\": %" PRIu64
            ", \"uart_rx_waiting\": %zu",
            uart.rx, uart.tx, uart.tx_dropped, uart.in.length);
}

void uart_link_open(int fd) {
    uart.fd = fd;
    harness_nonblocking(fd, "command-fd");
    harness_add_link(fd, uart_poll, uart_flush);
    harness_add_stats(uart_stats);
}

void uart_link_attach(void) {
    avr_t *avr = harness_avr();
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), on_output, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON), on_xon, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF), on_xoff, NULL);
    /* No console echo of UART lines, no sleeping when the firmware polls the UART. */
    uint32_t flags = 0;
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
}
