/* A serial link on two ordinary pins, read and written at the bit level
 * (--softuart RX:TX:BAUD:FD): what SoftwareSerial, AltSoftSerial or a hand-written
 * bit-banged UART speaks to a Bluetooth module or a GPS.
 *
 * RX and TX are the firmware's (SoftwareSerial(rx, tx)): the harness drives RX and reads
 * TX, 8N1, idle high, at BAUD, in AVR cycles.
 *   - TX -> pty: a falling edge while idle starts a frame; the pin is sampled mid-bit
 *     from that edge's cycle, as a UART receiver does: the start bit at 0.5 bit (high
 *     again: a glitch, ignored), the data bits at 1.5 .. 8.5 (least significant first)
 *     and the stop bit at 9.5. A low stop bit is a framing error: the byte is dropped
 *     and counted (softuartN_framing_errors).
 *   - pty -> RX: each byte the pty brings is sent on the pin, back to back: the start
 *     bit low, 8 data bits, the stop bit high, each edge at start + k x bit time
 *     (rounded to the cycle, so no drift accumulates). The pin idles high from the
 *     start. Bytes that come faster than the baud rate wait (8 KiB, then in the pty).
 * A reset of the AVR does not reset the other end: a frame under way goes on. */
#include "softuart.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sim_cycle_timers.h>

#include "harness.h"
#include "pins.h"
#include "queue.h"

#define MAX_SOFT_UARTS 4
#define MIN_BAUD 300
#define MAX_BAUD 250000

typedef struct {
    int index, rx, tx, fd;
    double baud, bit; /* bit: AVR cycles per bit */
    queue_t in, out;
    /* decoding TX */
    uint8_t level, decoding, byte;
    int sample;
    uint64_t start;
    /* driving RX */
    uint8_t sending, send_byte;
    int send_bit;
    uint64_t send_start;
    uint64_t rx_bytes, tx_bytes, framing_errors, tx_dropped;
} soft_uart;

static soft_uart links[MAX_SOFT_UARTS];
static int link_count;

static uint64_t at_bit(uint64_t start, double bits, double bit) { return start + (uint64_t)(bits * bit + 0.5); }

static avr_cycle_count_t tx_sample(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)when;
    soft_uart *u = param;
    uint8_t level = pins_level(u->tx);
    if (u->sample == 0 && level) {
        u->decoding = 0; /* high again at mid start bit: a glitch */
        return 0;
    }
    if (u->sample >= 1 && u->sample <= 8) {
        u->byte = (uint8_t)(u->byte | level << (u->sample - 1));
    }
    if (u->sample == 9) {
        if (level) {
            u->tx_bytes++;
            if (!queue_push(&u->out, u->byte)) {
                u->tx_dropped++;
            }
        } else {
            u->framing_errors++;
        }
        u->decoding = 0;
        return 0;
    }
    u->sample++;
    uint64_t next = at_bit(u->start, u->sample + 0.5, u->bit);
    return next > avr->cycle ? next : avr->cycle + 1;
}

static void on_tx_pin(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    soft_uart *u = param;
    uint8_t level = value & 1, before = u->level;
    u->level = level;
    if (level || !before || u->decoding || !pins_is_output(u->tx)) {
        return;
    }
    avr_t *avr = harness_avr();
    u->decoding = 1;
    u->sample = 0;
    u->byte = 0;
    u->start = avr->cycle;
    avr_cycle_timer_register(avr, at_bit(0, 0.5, u->bit), tx_sample, u);
}

static avr_cycle_count_t rx_edge(avr_t *avr, avr_cycle_count_t when, void *param);

static void start_frame(soft_uart *u, uint64_t start) {
    avr_t *avr = harness_avr();
    u->send_byte = queue_pop(&u->in);
    u->sending = 1;
    u->send_bit = 0;
    u->send_start = start;
    pins_drive(u->rx, 0);
    uint64_t next = at_bit(start, 1, u->bit);
    avr_cycle_timer_register(avr, next > avr->cycle ? next - avr->cycle : 1, rx_edge, u);
}

/* Edge k (1..9: data bits, then the stop bit; 10: the frame's end) of the byte on RX. */
static avr_cycle_count_t rx_edge(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)when;
    soft_uart *u = param;
    int k = ++u->send_bit;
    if (k <= 8) {
        pins_drive(u->rx, u->send_byte >> (k - 1) & 1);
    } else if (k == 9) {
        pins_drive(u->rx, 1);
        u->rx_bytes++;
    } else {
        u->sending = 0;
        if (u->in.length > 0) {
            start_frame(u, at_bit(u->send_start, 10, u->bit));
        }
        return 0;
    }
    uint64_t next = at_bit(u->send_start, k + 1, u->bit);
    return next > avr->cycle ? next : avr->cycle + 1;
}

static void soft_poll(void *param) {
    soft_uart *u = param;
    queue_read(&u->in, u->fd);
    if (!u->sending && u->in.length > 0) {
        start_frame(u, harness_avr()->cycle);
    }
}

static void soft_flush(void *param) {
    soft_uart *u = param;
    queue_flush(&u->out, u->fd, &u->tx_dropped);
}

static void soft_stats(FILE *out) {
    for (int i = 0; i < link_count; i++) {
        const soft_uart *u = &links[i];
        fprintf(out,
                ", \"softuart%d_rx\": %" PRIu64 ", \"softuart%d_tx\": %" PRIu64
                ", \"softuart%d_framing_errors\": %" PRIu64 ", \"softuart%d_tx_dropped\": %" PRIu64
                ", \"softuart%d_rx_waiting\": %zu",
                i, u->rx_bytes, i, u->tx_bytes, i, u->framing_errors, i, u->tx_dropped, i, u->in.length);
    }
}

void softuart_open(const char *spec) {
    int rx, tx, fd, consumed = 0;
    double baud;
    if (link_count == MAX_SOFT_UARTS) {
        harness_fail(2, "--softuart %s: at most %d", spec, MAX_SOFT_UARTS);
    }
    if (sscanf(spec, "%d:%d:%lf:%d%n", &rx, &tx, &baud, &fd, &consumed) != 4 || spec[consumed] != 0) {
        harness_fail(2, "--softuart %s: expected RX:TX:BAUD:FD (the firmware's RX and TX pins)", spec);
    }
    const char *wrong = pins_check(rx) ? pins_check(rx) : pins_check(tx);
    if (wrong || rx == tx) {
        harness_fail(2, "--softuart %s: RX and TX must be two different pins, each %s", spec,
                     pins_check(-1));
    }
    if (!(baud >= MIN_BAUD && baud <= MAX_BAUD)) {
        harness_fail(2, "--softuart %s: baud %g outside %d..%d", spec, baud, MIN_BAUD, MAX_BAUD);
    }
    for (int i = 0; i < link_count; i++) {
        int pins[] = {links[i].rx, links[i].tx};
        for (int k = 0; k < 2; k++) {
            if (pins[k] == rx || pins[k] == tx) {
                harness_fail(2, "--softuart %s: pin %d is already another soft UART's", spec, pins[k]);
            }
        }
    }
    soft_uart *u = &links[link_count];
    memset(u, 0, sizeof *u);
    u->index = link_count++;
    u->rx = rx;
    u->tx = tx;
    u->fd = fd;
    u->baud = baud;
    u->bit = harness_frequency() / baud;
    harness_nonblocking(fd, "softuart");
    harness_add_link(fd, soft_poll, soft_flush, u);
    if (link_count == 1) {
        harness_add_stats(soft_stats);
    }
}

void softuart_attach(void) {
    for (int i = 0; i < link_count; i++) {
        soft_uart *u = &links[i];
        avr_irq_register_notify(pins_irq(u->tx), on_tx_pin, u);
        u->level = 1;
        pins_drive(u->rx, 1); /* idle */
    }
}
