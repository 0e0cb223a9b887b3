/* The SC16IS750 bridge: registers (the address byte is reg << 3): RHR/THR 0, FCR 2 (bits
 * 1, 2 reset the FIFOs), LCR 3 (bit 7 maps DLL/DLH at 0/1), LSR 5 (bit 0 data ready,
 * 1 overrun, 5 THR empty, 6 transmitter empty), SPR 7, TXLVL 8, RXLVL 9; a register
 * pointer that does not advance (repeated RHR reads pop the FIFO, repeated THR writes
 * fill it). Bytes move at 115200 baud (10 bits) each way through 64-byte FIFOs; a byte
 * arriving at a full receive FIFO, or written to a full transmit FIFO, is lost and
 * counted (radio_rx_overflow, radio_tx_overflow). Without a radio pty nothing answers
 * at 0x4D, as on a robot without the bridge. */
#include "sc16is750.h"

#include <inttypes.h>
#include <stdio.h>

#include <sim_cycle_timers.h>

#include "harness.h"
#include "queue.h"
#include "twi_bus.h"

#define RADIO_ADDRESS 0x4D
#define RADIO_BAUD 115200
#define RADIO_FIFO 64
enum { SC_RHR = 0, SC_FCR = 2, SC_LCR = 3, SC_LSR = 5, SC_SPR = 7, SC_TXLVL = 8, SC_RXLVL = 9 };

typedef struct {
    uint8_t data[RADIO_FIFO];
    uint8_t head, length;
} fifo_t;

static struct {
    int fd;
    queue_t in, out; /* the pty's side of its UART: bytes waiting for the wire, bytes sent */
    fifo_t rx_fifo, tx_fifo;
    uint8_t regs[16], dl[2], overrun;
    twi_registers bus;
    uint64_t rx, tx, rx_overflow, tx_overflow, tx_dropped;
    uint64_t fd_read, fd_written; /* bytes read from and written to the pty */
} radio = {.fd = -1};

static int fifo_push(fifo_t *f, uint8_t byte) {
    if (f->length == RADIO_FIFO) {
        return 0;
    }
    f->data[(f->head + f->length) % RADIO_FIFO] = byte;
    f->length++;
    return 1;
}

static uint8_t fifo_pop(fifo_t *f) {
    uint8_t byte;
    if (f->length == 0) {
        return 0;
    }
    byte = f->data[f->head];
    f->head = (uint8_t)((f->head + 1) % RADIO_FIFO);
    f->length--;
    return byte;
}

static uint8_t read_register(uint8_t reg) {
    uint8_t divisor = radio.regs[SC_LCR] & 0x80;
    switch (reg) {
    case SC_RHR:
        return divisor ? radio.dl[0] : fifo_pop(&radio.rx_fifo);
    case 1:
        return divisor ? radio.dl[1] : radio.regs[1];
    case SC_LSR: {
        uint8_t lsr = (uint8_t)((radio.rx_fifo.length > 0 ? 0x01 : 0) | (radio.overrun ? 0x02 : 0) |
                                (radio.tx_fifo.length == 0 ? 0x60 : 0));
        radio.overrun = 0; /* cleared by reading LSR, as on the chip */
        return lsr;
    }
    case SC_TXLVL:
        return (uint8_t)(RADIO_FIFO - radio.tx_fifo.length);
    case SC_RXLVL:
        return radio.rx_fifo.length;
    default:
        return radio.regs[reg & 15];
    }
}

static void write_register(uint8_t reg, uint8_t value) {
    uint8_t divisor = radio.regs[SC_LCR] & 0x80;
    if (reg == SC_RHR && !divisor) {
        if (!fifo_push(&radio.tx_fifo, value)) {
            radio.tx_overflow++;
        }
    } else if (reg <= 1 && divisor) {
        radio.dl[reg] = value;
    } else if (reg == SC_FCR) {
        if (value & 0x02) {
            radio.rx_fifo.length = 0;
        }
        if (value & 0x04) {
            radio.tx_fifo.length = 0;
        }
        radio.regs[SC_FCR] = value;
    } else if (reg != SC_LSR && reg != SC_TXLVL && reg != SC_RXLVL) {
        radio.regs[reg & 15] = value;
    }
}

/* The bridge's slave side: the first written byte is the register address byte
 * (reg << 3, channel bits 0), later ones are written to that register; reads return
 * it. The pointer stays (no ``next``): RHR and THR stream through the FIFOs. */
static uint8_t radio_select(void *context, uint8_t byte) {
    (void)context;
    return (uint8_t)((byte >> 3) & 15);
}

static void radio_write(void *context, uint8_t reg, uint8_t value) {
    (void)context;
    write_register(reg, value);
}

static uint8_t radio_read(void *context, uint8_t reg) {
    (void)context;
    return read_register(reg);
}

static avr_cycle_count_t byte_cycles(void) { return harness_cycles_us(10.0 * 1e6 / RADIO_BAUD); }

/* One byte time of the bridge's UART: a byte from the pty's side into the receive
 * FIFO (lost if full: an overrun), and one from the transmit FIFO out to the pty. */
static avr_cycle_count_t radio_timer(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)avr;
    (void)param;
    if (radio.in.length > 0) {
        uint8_t byte = queue_pop(&radio.in);
        radio.rx++;
        if (!fifo_push(&radio.rx_fifo, byte)) {
            radio.rx_overflow++;
            radio.overrun = 1;
        }
    }
    if (radio.tx_fifo.length > 0) {
        radio.tx++;
        if (!queue_push(&radio.out, fifo_pop(&radio.tx_fifo))) {
            radio.tx_dropped++;
        }
    }
    return when + byte_cycles();
}

/* What the module wrote waits here for the wire (the rest in the tty). */
static void radio_poll(void *param) {
    (void)param;
    radio.fd_read += queue_read(&radio.in, radio.fd);
}
static void radio_flush(void *param) {
    (void)param;
    radio.fd_written += queue_flush(&radio.out, radio.fd, &radio.tx_dropped);
}

void sc16is750_report(FILE *out) {
    if (radio.fd >= 0) {
        fprintf(out, " radio %" PRIu64 " %" PRIu64, radio.fd_read, radio.fd_written);
    }
}

static void radio_stats(FILE *out) {
    fprintf(out,
            ", \"radio\": %d, \"radio_rx\": %" PRIu64 ", \"radio_tx\": %" PRIu64 ", \"radio_rx_overflow\": %" PRIu64
            ", \"radio_tx_overflow\": %" PRIu64 ", \"radio_tx_dropped\": %" PRIu64 ", \"radio_rx_waiting\": %zu",
            radio.fd >= 0, radio.rx, radio.tx, radio.rx_overflow, radio.tx_overflow, radio.tx_dropped,
            radio.in.length);
}

void sc16is750_open(int fd) {
    radio.fd = fd;
    harness_add_stats(radio_stats);
    if (fd >= 0) {
        harness_nonblocking(fd, "radio-fd");
        harness_add_link(fd, radio_poll, radio_flush, NULL);
    }
}

void sc16is750_attach(void) {
    if (radio.fd < 0) {
        return;
    }
    radio.bus = (twi_registers){.address = RADIO_ADDRESS, .select = radio_select, .write = radio_write,
                                .read = radio_read};
    twi_bus_add_registers(&radio.bus);
    avr_cycle_timer_register(harness_avr(), byte_cycles(), radio_timer, NULL);
}
