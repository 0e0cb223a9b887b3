/* The firmware's hardware UARTs on ptys, and the command link's open watch. */
#define _GNU_SOURCE
#include "uart_link.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <avr_uart.h>

#include "harness.h"
#include "queue.h"

#define MAX_UARTS 4

typedef struct {
    int number; /* 0..3: UART0..3, Serial..Serial3 */
    int fd;
    queue_t in, out;
    uint8_t xon;
    uint64_t rx, tx, tx_dropped, rx_dropped;
    uint64_t fd_read, fd_written; /* bytes taken from and given to the pty, ever */
} uart_t;

static uart_t uarts[MAX_UARTS];
static int uart_count;

/* The open watch: an inotify descriptor on the slave side of the command link's pty. */
static struct {
    int fd;
    int readers;    /* opens minus closes seen since the watch was made */
    uint8_t opened; /* a first reader came since the last uart_link_take_open */
    uint64_t opens; /* first opens (0 -> 1 readers) */
} watch = {.fd = -1};

static avr_irq_t *irq_of(const uart_t *u, int which) {
    return avr_io_getirq(harness_avr(), AVR_IOCTL_UART_GETIRQ('0' + u->number), which);
}

static void on_output(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    uart_t *u = param;
    u->tx++;
    if (!queue_push(&u->out, (uint8_t)value)) {
        u->tx_dropped++;
    }
}

static void on_xon(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)value;
    ((uart_t *)param)->xon = 1;
}

static void on_xoff(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)value;
    ((uart_t *)param)->xon = 0;
}

/* Everything received and not yet taken by the AVR is lost (counted). */
static void drop_input(uart_t *u) {
    do {
        u->rx_dropped += u->in.length;
        u->in.head = u->in.length = 0;
        u->fd_read += queue_read(&u->in, u->fd);
    } while (u->in.length > 0);
}

/* Read what the pty holds and hand the AVR's RX FIFO as much as it takes; while the
 * bootloader runs, what arrives is lost. */
static void uart_poll(void *param) {
    uart_t *u = param;
    if (harness_booting()) {
        drop_input(u);
        return;
    }
    u->fd_read += queue_read(&u->in, u->fd);
    avr_irq_t *input = irq_of(u, UART_IRQ_INPUT);
    while (u->xon && u->in.length > 0) {
        avr_raise_irq(input, queue_pop(&u->in));
        u->rx++;
    }
}

static void uart_flush(void *param) {
    uart_t *u = param;
    u->fd_written += queue_flush(&u->out, u->fd, &u->tx_dropped);
}

void uart_link_report(FILE *out) {
    for (int i = 0; i < uart_count; i++) {
        fprintf(out, " uart%d %" PRIu64 " %" PRIu64, uarts[i].number, uarts[i].fd_read, uarts[i].fd_written);
    }
}

static void uart_stats(FILE *out) {
    for (int i = 0; i < uart_count; i++) {
        const uart_t *u = &uarts[i];
        fprintf(out,
                ", \"uart%d_rx\": %" PRIu64 ", \"uart%d_tx\": %" PRIu64 ", \"uart%d_tx_dropped\": %" PRIu64
                ", \"uart%d_rx_dropped\": %" PRIu64 ", \"uart%d_rx_waiting\": %zu",
                u->number, u->rx, u->number, u->tx, u->number, u->tx_dropped, u->number, u->rx_dropped, u->number,
                u->in.length);
    }
    if (watch.fd >= 0) {
        fprintf(out, ", \"command_opens\": %" PRIu64 ", \"command_readers\": %d", watch.opens, watch.readers);
    }
}

void uart_link_open(int number, int fd) {
    int count = harness_board()->uarts;
    if (number < 0 || number >= count) {
        harness_fail(2, "--uart %d:%d: the %s has UART 0%s%.0d", number, fd, harness_board()->name,
                     count > 1 ? ".." : "", count - 1);
    }
    for (int i = 0; i < uart_count; i++) {
        if (uarts[i].number == number) {
            harness_fail(2, "--uart %d: given twice", number);
        }
    }
    uart_t *u = &uarts[uart_count++];
    memset(u, 0, sizeof *u);
    u->number = number;
    u->fd = fd;
    harness_nonblocking(fd, "uart");
    harness_add_link(fd, uart_poll, uart_flush, u);
    if (uart_count == 1) {
        harness_add_stats(uart_stats);
    }
}

int uart_link_has(int number) {
    for (int i = 0; i < uart_count; i++) {
        if (uarts[i].number == number) {
            return 1;
        }
    }
    return 0;
}

void uart_link_watch_opens(int fd) {
    watch.fd = fd;
    harness_nonblocking(fd, "reset-on-open");
}

int uart_link_take_open(void) {
    if (watch.fd < 0) {
        return 0;
    }
    /* struct inotify_event is followed by a name (none for a watched file). */
    char buffer[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(watch.fd, buffer, sizeof buffer)) > 0) {
        for (char *at = buffer; at < buffer + n;) {
            const struct inotify_event *event = (const struct inotify_event *)at;
            if (event->mask & IN_OPEN) {
                if (++watch.readers == 1) {
                    watch.opened = 1;
                    watch.opens++;
                }
            }
            if ((event->mask & IN_CLOSE) && watch.readers > 0) {
                watch.readers--;
            }
            at += sizeof *event + event->len;
        }
    }
    uint8_t opened = watch.opened;
    watch.opened = 0;
    return opened;
}

void uart_link_attach(void) {
    avr_t *avr = harness_avr();
    for (int i = 0; i < uart_count; i++) {
        uart_t *u = &uarts[i];
        avr_irq_register_notify(irq_of(u, UART_IRQ_OUTPUT), on_output, u);
        avr_irq_register_notify(irq_of(u, UART_IRQ_OUT_XON), on_xon, u);
        avr_irq_register_notify(irq_of(u, UART_IRQ_OUT_XOFF), on_xoff, u);
        /* No console echo of UART lines, no sleeping when the firmware polls the UART. */
        uint32_t flags = 0;
        avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0' + u->number), &flags);
    }
}

void uart_link_reset(void) {
    for (int i = 0; i < uart_count; i++) {
        uart_t *u = &uarts[i];
        uart_flush(u); /* sent before the reset */
        drop_input(u);
        u->xon = 0; /* until the firmware enables its receiver again */
    }
}
