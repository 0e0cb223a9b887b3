/* hil_simavr: a compiled Arduino firmware (ELF) in simavr, coupled to the HIL simulator.
 *
 * The harness plays the robot's hardware around an ATmega328P running the real
 * firmware (DESIGN.md "Firmware in the loop"):
 *
 *   - UART0 is the command link: bytes go both ways through a pty master the caller
 *     passes as a file descriptor (--command-fd). simavr times received bytes at the
 *     baud rate the firmware set; transmitted bytes leave when the firmware writes UDR.
 *   - The pins are the signal link, spoken on a second pty (--signal-fd) exactly as a
 *     bridge board speaks it (hil_protocol's codec): every period (5 ms of AVR time)
 *     one frame of the "in" signals (PWM duty measured from the timer's compare
 *     outputs, pin levels), and every frame received sets the "out" signals (input
 *     pin levels, ADC millivolts, the HC-SR04 echo pulse timed in cycles from the
 *     trigger's falling edge, an HMC5883L on the TWI bus).
 *   - The radio link (--radio-fd, optional): an SC16IS750 I2C-to-UART bridge on the
 *     TWI bus at 7-bit address 0x4D, whose UART side is a third pty. Registers (the
 *     address byte is reg << 3): RHR/THR 0, FCR 2 (bits 1, 2 reset the FIFOs), LCR 3
 *     (bit 7 maps DLL/DLH at 0/1), LSR 5 (bit 0 data ready, 1 overrun, 5 THR empty,
 *     6 transmitter empty), SPR 7, TXLVL 8, RXLVL 9; a register pointer that does not
 *     advance (repeated RHR reads pop the FIFO, repeated THR writes fill it). Bytes
 *     move at 115200 baud (10 bits) each way through 64-byte FIFOs; a byte arriving
 *     at a full receive FIFO, or written to a full transmit FIFO, is lost and counted
 *     (radio_rx_overflow, radio_tx_overflow). Without --radio-fd nothing answers at
 *     0x4D, as on a robot without the bridge.
 *   - Time: --lockstep reads "run <cycle>" lines on stdin and answers "ok <cycle>" once
 *     the AVR has reached that cycle (the simulator's step); otherwise the AVR is paced
 *     to the wall clock (--rtf scales it), and a JSON stats line goes to stdout every
 *     --stats-period seconds. "stats" on stdin (lockstep) prints one at once.
 *
 * The coupling file (--coupling, written by hil_sim.core.simavr from the device set
 * and the robot's wiring) lists the signals in frame order:
 *
 *   period_us <microseconds>
 *   in  <id> <min> <max> pwm <arduino pin>
 *   in  <id> <min> <max> level <arduino pin>
 *   out <id> int|float <min> <max> <default> level <arduino pin>
 *   out <id> int|float <min> <max> <default> adc <channel> <millivolts per unit>
 *   out <id> int|float <min> <max> <default> echo <trigger pin> <echo pin>
 *   out <id> int|float <min> <max> <default> hmc5883l <7-bit address>
 *
 * Errors in the arguments or the coupling file name what is wrong and exit 2; a
 * firmware that crashes the AVR exits 3. Nothing is written to stdout but the
 * protocol above (simavr's own messages go to stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <avr_adc.h>
#include <avr_extint.h>
#include <avr_ioport.h>
#include <avr_timer.h>
#include <avr_twi.h>
#include <avr_uart.h>
#include <sim_avr.h>
#include <sim_cycle_timers.h>
#include <sim_elf.h>
#include <sim_irq.h>

#include "hil_signal.h"

#define MAX_SIGNALS 64
#define QUEUE_SIZE 8192
/* How often (AVR time) the ptys are polled: the latency a received byte can gain. */
#define POLL_US 100
/* Real time: how far behind the wall clock the AVR may fall before the backlog is
 * given up (counted), so a stall does not become a burst of fast-forwarded time. */
#define MAX_BEHIND_S 0.25
/* The SC16IS750 bridge of the radio link. */
#define RADIO_ADDRESS 0x4D
#define RADIO_BAUD 115200
#define RADIO_FIFO 64
enum { SC_RHR = 0, SC_FCR = 2, SC_LCR = 3, SC_LSR = 5, SC_SPR = 7, SC_TXLVL = 8, SC_RXLVL = 9 };

enum kind { K_PWM, K_LEVEL, K_ADC, K_ECHO, K_HMC5883L };

typedef struct {
    uint8_t level;
    uint64_t last_rise, last_fall, last_edge, period;
    uint8_t have_rise;
    double duty; /* of the last whole period, -1 before one was seen */
} pwm_meter;

typedef struct signal_s {
    uint8_t id;
    uint8_t output; /* 1: simulator -> MCU ("out"), 0: MCU -> simulator ("in") */
    uint8_t is_float;
    double min, max, value;
    enum kind kind;
    int pin, pin2;      /* arduino pins (echo: trigger, echo) */
    int channel;        /* adc channel */
    double mv_per_unit; /* adc */
    int address;        /* hmc5883l, 7-bit */
    /* pwm: which timer comparator drives the pin, and its COM bits */
    char timer;
    int comp;
    uint16_t com_reg;
    uint8_t com_shift;
    pwm_meter meter;
    /* echo */
    uint8_t trigger_level, echoing;
} signal_t;

typedef struct {
    uint8_t data[QUEUE_SIZE];
    size_t head, length;
} queue_t;

typedef struct {
    uint8_t data[RADIO_FIFO];
    uint8_t head, length;
} fifo_t;

static struct {
    avr_t *avr;
    double frequency;
    int command_fd, signal_fd;
    int checked;
    uint32_t period_us;
    signal_t signals[MAX_SIGNALS];
    int count;
    uint8_t in_ids[MAX_SIGNALS], out_ids[MAX_SIGNALS];
    signal_t *ins[MAX_SIGNALS], *outs[MAX_SIGNALS];
    int n_in, n_out;
    hil_frame_encoder encoder;
    hil_frame_decoder decoder;
    uint8_t decode_buffer[HIL_FRAME_SIZE(MAX_SIGNALS, 1)];
    queue_t uart_in, uart_out, signal_out;
    uint8_t uart_xon;
    /* hmc5883l */
    signal_t *compass;
    uint8_t compass_regs[13], compass_pointer, compass_selected, compass_index;
    /* the SC16IS750 of the radio link (radio_fd >= 0) */
    int radio_fd;
    queue_t radio_in, radio_out; /* the pty's side of its UART: bytes waiting for the wire, bytes sent */
    fifo_t radio_rx_fifo, radio_tx_fifo;
    uint8_t radio_regs[16], radio_dl[2], radio_pointer, radio_selected, radio_index, radio_overrun;
    uint64_t radio_rx, radio_tx, radio_rx_overflow, radio_tx_overflow, radio_tx_dropped;
    /* counters */
    uint64_t uart_rx, uart_tx, uart_tx_dropped, signal_tx_dropped, frames_sent, echoes, i2c_reads;
    double behind_dropped_s;
    volatile sig_atomic_t stop;
} h;

static void fail(int status, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    fputs("hil_simavr: ", stderr);
    vfprintf(stderr, format, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(status);
}

static void logger(avr_t *avr, const int level, const char *format, va_list ap) {
    (void)avr;
    if (level <= LOG_WARNING) {
        vfprintf(stderr, format, ap);
    }
}

/* --- byte queues --------------------------------------------------------------------- */

static int queue_push(queue_t *q, uint8_t byte) {
    if (q->length == QUEUE_SIZE) {
        return 0;
    }
    q->data[(q->head + q->length) % QUEUE_SIZE] = byte;
    q->length++;
    return 1;
}

static uint8_t queue_pop(queue_t *q) {
    uint8_t byte = q->data[q->head];
    q->head = (q->head + 1) % QUEUE_SIZE;
    q->length--;
    return byte;
}

/* Write what the queue holds to fd without blocking; what a full tty refuses is
 * dropped and counted, as a UART's bytes are lost when nobody reads them. */
static void queue_flush(queue_t *q, int fd, uint64_t *dropped) {
    while (q->length > 0) {
        size_t chunk = q->length;
        if (q->head + chunk > QUEUE_SIZE) {
            chunk = QUEUE_SIZE - q->head;
        }
        ssize_t n = write(fd, q->data + q->head, chunk);
        if (n <= 0) {
            *dropped += q->length;
            q->head = 0;
            q->length = 0;
            return;
        }
        q->head = (q->head + (size_t)n) % QUEUE_SIZE;
        q->length -= (size_t)n;
    }
}

/* --- pins ---------------------------------------------------------------------------- */

/* Arduino UNO/Nano pin -> port letter and bit (0..7 PORTD, 8..13 PORTB, 14..19 PORTC). */
static int pin_port(int pin, char *port, int *bit) {
    if (pin >= 0 && pin <= 7) {
        *port = 'D';
        *bit = pin;
    } else if (pin >= 8 && pin <= 13) {
        *port = 'B';
        *bit = pin - 8;
    } else if (pin >= 14 && pin <= 19) {
        *port = 'C';
        *bit = pin - 14;
    } else {
        return 0;
    }
    return 1;
}

static avr_irq_t *pin_irq(int pin) {
    char port = 0;
    int bit = 0;
    pin_port(pin, &port, &bit);
    return avr_io_getirq(h.avr, AVR_IOCTL_IOPORT_GETIRQ(port), bit);
}

/* ATmega328P data-space addresses of PINx (PINx, DDRx, PORTx follow each other). */
static uint16_t pin_register(char port) { return port == 'B' ? 0x23 : port == 'C' ? 0x26 : 0x29; }

/* The level the pin shows: PORT for an output, PIN (what drives it) for an input. */
static uint8_t pin_level(int pin) {
    char port = 0;
    int bit = 0;
    pin_port(pin, &port, &bit);
    uint16_t base = pin_register(port);
    uint8_t ddr = h.avr->data[base + 1];
    uint8_t value = (ddr >> bit & 1) ? h.avr->data[base + 2] : h.avr->data[base];
    return value >> bit & 1;
}

/* Drive an input pin from outside. The level is also set as the port's external
 * drive, so the firmware's writes to the port (a pull-up) cannot override it. */
static void drive_pin(int pin, uint8_t level) {
    static uint8_t masks[3], values[3]; /* per port B, C, D: simavr keeps one set per port */
    char port = 0;
    int bit = 0;
    pin_port(pin, &port, &bit);
    int p = port - 'B';
    masks[p] |= (uint8_t)(1 << bit);
    values[p] = (uint8_t)((values[p] & ~(1 << bit)) | (level << bit));
    avr_ioport_external_t external = {.name = (unsigned long)port, .mask = masks[p], .value = values[p]};
    avr_ioctl(h.avr, AVR_IOCTL_IOPORT_SET_EXTERNAL(port), &external);
    avr_raise_irq(pin_irq(pin), level);
}

/* Timer comparator outputs: OC0A 6, OC0B 5, OC1A 9, OC1B 10, OC2A 11, OC2B 3. */
static int pwm_pin(signal_t *s) {
    static const struct {
        int pin;
        char timer;
        int comp;
        uint16_t tccra;
    } table[] = {{6, '0', 0, 0x44}, {5, '0', 1, 0x44}, {9, '1', 0, 0x80},
                 {10, '1', 1, 0x80}, {11, '2', 0, 0xB0}, {3, '2', 1, 0xB0}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (table[i].pin == s->pin) {
            s->timer = table[i].timer;
            s->comp = table[i].comp;
            s->com_reg = table[i].tccra;
            s->com_shift = (uint8_t)(table[i].comp == 0 ? 6 : 4);
            return 1;
        }
    }
    return 0;
}

static uint8_t pwm_connected(const signal_t *s) { return (h.avr->data[s->com_reg] >> s->com_shift) & 3; }

/* The pin's level: the comparator's waveform while its COM bits connect it, else PORT.
 * Only valid outside simavr's notifications: an IRQ's value changes after its hooks ran. */
static uint8_t pwm_level(signal_t *s) {
    if (pwm_connected(s)) {
        return avr_io_getirq(h.avr, AVR_IOCTL_TIMER_GETIRQ(s->timer), TIMER_IRQ_OUT_COMP + s->comp)->value & 1;
    }
    return pin_level(s->pin);
}

static void pwm_edge(signal_t *s, uint8_t level) {
    pwm_meter *m = &s->meter;
    uint64_t now = h.avr->cycle;
    if (level == m->level) {
        return;
    }
    m->level = level;
    m->last_edge = now;
    if (level) {
        if (m->have_rise && m->last_fall > m->last_rise && now > m->last_rise) {
            m->period = now - m->last_rise;
            m->duty = (double)(m->last_fall - m->last_rise) / (double)m->period;
        }
        m->last_rise = now;
        m->have_rise = 1;
    } else {
        m->last_fall = now;
    }
}

/* The comparator's output changed (the new level is the argument, not yet its value). */
static void on_pwm_comp(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    signal_t *s = (signal_t *)param;
    if (pwm_connected(s)) {
        pwm_edge(s, value & 1);
    }
}

/* A port write: the level while the comparator is disconnected (analogWrite 0 or 255). */
static void on_pwm_pin(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)value;
    signal_t *s = (signal_t *)param;
    if (!pwm_connected(s)) {
        pwm_edge(s, pin_level(s->pin));
    }
}

/* Duty of the last whole period; the level itself once the pin has stopped toggling
 * for two periods (analogWrite 0 and 255 are plain digital writes). */
static double pwm_duty(signal_t *s) {
    pwm_meter *m = &s->meter;
    pwm_edge(s, pwm_level(s));
    if (m->duty < 0 || m->period == 0 || h.avr->cycle - m->last_edge > 2 * m->period + 16) {
        return m->level;
    }
    return m->duty;
}

/* --- the HC-SR04 ----------------------------------------------------------------------- */

static avr_cycle_count_t echo_end(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)avr;
    (void)when;
    signal_t *s = (signal_t *)param;
    drive_pin(s->pin2, 0);
    s->echoing = 0;
    return 0;
}

/* The trigger pulse ended: the echo pin goes high for distance x 58.2 us. */
static void on_trigger(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    signal_t *s = (signal_t *)param;
    uint8_t level = value & 1;
    if (s->trigger_level && !level && !s->echoing) {
        double us = s->value * 58.2;
        avr_cycle_count_t cycles = (avr_cycle_count_t)(us * h.frequency / 1e6 + 0.5);
        s->echoing = 1;
        h.echoes++;
        drive_pin(s->pin2, 1);
        avr_cycle_timer_register(h.avr, cycles > 0 ? cycles : 1, echo_end, s);
    }
    s->trigger_level = level;
}

/* --- the HMC5883L on TWI ---------------------------------------------------------------- */

static void compass_update(void) {
    double radians = h.compass->value * (M_PI / 180.0);
    int16_t x = (int16_t)(cos(radians) * 1000.0);
    int16_t y = (int16_t)(sin(radians) * 1000.0);
    h.compass_regs[3] = (uint8_t)((uint16_t)x >> 8);
    h.compass_regs[4] = (uint8_t)((uint16_t)x & 0xFF);
    h.compass_regs[5] = 0;
    h.compass_regs[6] = 0;
    h.compass_regs[7] = (uint8_t)((uint16_t)y >> 8);
    h.compass_regs[8] = (uint8_t)((uint16_t)y & 0xFF);
}

/* The slave side of simavr's TWI messages, as its i2c_eeprom part does it: the
 * first written byte sets the register pointer, later ones the config registers;
 * reads return registers from the pointer on, which advances (wrapping at 13). */
static void compass_twi(avr_twi_msg_irq_t v, avr_irq_t *reply) {
    if (v.u.twi.msg & TWI_COND_STOP) {
        h.compass_selected = 0;
    }
    if (v.u.twi.msg & TWI_COND_START) {
        h.compass_selected = 0;
        h.compass_index = 0;
        if ((v.u.twi.addr >> 1) == h.compass->address) {
            h.compass_selected = v.u.twi.addr;
            avr_raise_irq(reply, avr_twi_irq_msg(TWI_COND_ACK, h.compass_selected, 1));
        }
    }
    if (!h.compass_selected) {
        return;
    }
    if (v.u.twi.msg & TWI_COND_WRITE) {
        avr_raise_irq(reply, avr_twi_irq_msg(TWI_COND_ACK, h.compass_selected, 1));
        if (h.compass_index == 0) {
            h.compass_pointer = v.u.twi.data % 13;
        } else {
            if (h.compass_pointer < 3) {
                h.compass_regs[h.compass_pointer] = v.u.twi.data;
            }
            h.compass_pointer = (uint8_t)((h.compass_pointer + 1) % 13);
        }
        h.compass_index++;
    }
    if (v.u.twi.msg & TWI_COND_READ) {
        uint8_t data = h.compass_regs[h.compass_pointer];
        h.compass_pointer = (uint8_t)((h.compass_pointer + 1) % 13);
        h.i2c_reads++;
        avr_raise_irq(reply, avr_twi_irq_msg(TWI_COND_READ, h.compass_selected, data));
    }
}

/* --- the SC16IS750 of the radio link ---------------------------------------------------- */

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

static uint8_t radio_register(uint8_t reg) {
    uint8_t divisor = h.radio_regs[SC_LCR] & 0x80;
    switch (reg) {
    case SC_RHR:
        return divisor ? h.radio_dl[0] : fifo_pop(&h.radio_rx_fifo);
    case 1:
        return divisor ? h.radio_dl[1] : h.radio_regs[1];
    case SC_LSR: {
        uint8_t lsr = (uint8_t)((h.radio_rx_fifo.length > 0 ? 0x01 : 0) | (h.radio_overrun ? 0x02 : 0) |
                                (h.radio_tx_fifo.length == 0 ? 0x60 : 0));
        h.radio_overrun = 0; /* cleared by reading LSR, as on the chip */
        return lsr;
    }
    case SC_TXLVL:
        return (uint8_t)(RADIO_FIFO - h.radio_tx_fifo.length);
    case SC_RXLVL:
        return h.radio_rx_fifo.length;
    default:
        return h.radio_regs[reg & 15];
    }
}

static void radio_write_register(uint8_t reg, uint8_t value) {
    uint8_t divisor = h.radio_regs[SC_LCR] & 0x80;
    if (reg == SC_RHR && !divisor) {
        if (!fifo_push(&h.radio_tx_fifo, value)) {
            h.radio_tx_overflow++;
        }
    } else if (reg <= 1 && divisor) {
        h.radio_dl[reg] = value;
    } else if (reg == SC_FCR) {
        if (value & 0x02) {
            h.radio_rx_fifo.length = 0;
        }
        if (value & 0x04) {
            h.radio_tx_fifo.length = 0;
        }
        h.radio_regs[SC_FCR] = value;
    } else if (reg != SC_LSR && reg != SC_TXLVL && reg != SC_RXLVL) {
        h.radio_regs[reg & 15] = value;
    }
}

/* The bridge's slave side: the first written byte is the register address byte
 * (reg << 3, channel bits 0), later ones are written to that register; reads return
 * it. The pointer stays: RHR and THR stream through the FIFOs. */
static void radio_twi(avr_twi_msg_irq_t v, avr_irq_t *reply) {
    if (v.u.twi.msg & TWI_COND_STOP) {
        h.radio_selected = 0;
    }
    if (v.u.twi.msg & TWI_COND_START) {
        h.radio_selected = 0;
        h.radio_index = 0;
        if ((v.u.twi.addr >> 1) == RADIO_ADDRESS) {
            h.radio_selected = v.u.twi.addr;
            avr_raise_irq(reply, avr_twi_irq_msg(TWI_COND_ACK, h.radio_selected, 1));
        }
    }
    if (!h.radio_selected) {
        return;
    }
    if (v.u.twi.msg & TWI_COND_WRITE) {
        avr_raise_irq(reply, avr_twi_irq_msg(TWI_COND_ACK, h.radio_selected, 1));
        if (h.radio_index == 0) {
            h.radio_pointer = (uint8_t)((v.u.twi.data >> 3) & 15);
        } else {
            radio_write_register(h.radio_pointer, v.u.twi.data);
        }
        h.radio_index++;
    }
    if (v.u.twi.msg & TWI_COND_READ) {
        avr_raise_irq(reply, avr_twi_irq_msg(TWI_COND_READ, h.radio_selected, radio_register(h.radio_pointer)));
    }
}

/* One byte time of the bridge's UART: a byte from the pty's side into the receive
 * FIFO (lost if full: an overrun), and one from the transmit FIFO out to the pty. */
static avr_cycle_count_t radio_timer(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)avr;
    (void)param;
    if (h.radio_in.length > 0) {
        uint8_t byte = queue_pop(&h.radio_in);
        h.radio_rx++;
        if (!fifo_push(&h.radio_rx_fifo, byte)) {
            h.radio_rx_overflow++;
            h.radio_overrun = 1;
        }
    }
    if (h.radio_tx_fifo.length > 0) {
        h.radio_tx++;
        if (!queue_push(&h.radio_out, fifo_pop(&h.radio_tx_fifo))) {
            h.radio_tx_dropped++;
        }
    }
    return when + (avr_cycle_count_t)(10.0 * h.frequency / RADIO_BAUD + 0.5);
}

/* Every TWI message goes to the parts on the bus; each answers its own address. */
static void on_twi(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)param;
    avr_twi_msg_irq_t v;
    avr_irq_t *reply = avr_io_getirq(h.avr, AVR_IOCTL_TWI_GETIRQ(0), TWI_IRQ_INPUT);
    v.u.v = value;
    if (h.compass) {
        compass_twi(v, reply);
    }
    if (h.radio_fd >= 0) {
        radio_twi(v, reply);
    }
}

/* --- signals ---------------------------------------------------------------------------- */

static void apply_output(signal_t *s) {
    switch (s->kind) {
    case K_LEVEL:
        drive_pin(s->pin, s->value > (s->min + s->max) / 2);
        break;
    case K_ADC: {
        /* Rounded up: simavr truncates mV x 1023 / 5000, so a reading of n counts
         * comes back as n exactly. */
        double mv = ceil(s->value * s->mv_per_unit - 1e-9);
        avr_raise_irq(avr_io_getirq(h.avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_ADC0 + s->channel),
                      (uint32_t)(mv < 0 ? 0 : mv));
        break;
    }
    case K_HMC5883L:
        compass_update();
        break;
    default:
        break; /* echo: read when the next trigger ends */
    }
}

static void send_frame(void) {
    int16_t raw[MAX_SIGNALS];
    uint8_t frame[HIL_FRAME_SIZE(MAX_SIGNALS, 1)];
    for (int i = 0; i < h.n_in; i++) {
        signal_t *s = h.ins[i];
        double fraction = s->kind == K_PWM ? pwm_duty(s) : pin_level(s->pin);
        double value = s->min + fraction * (s->max - s->min);
        raw[i] = s->is_float ? hil_float_to_raw(value, s->min, s->max, (uint8_t)h.checked)
                             : hil_int_to_raw((int32_t)floor(value + 0.5), (int32_t)s->min, (int32_t)s->max,
                                              (uint8_t)h.checked);
    }
    uint16_t size = hil_frame_encode(&h.encoder, h.in_ids, raw, (uint16_t)h.n_in, frame);
    for (uint16_t i = 0; i < size; i++) {
        if (!queue_push(&h.signal_out, frame[i])) {
            h.signal_tx_dropped++;
        }
    }
    h.frames_sent++;
}

static void take_frames(const uint8_t *data, ssize_t n) {
    int16_t raw[MAX_SIGNALS];
    for (ssize_t i = 0; i < n; i++) {
        if (!hil_frame_feed(&h.decoder, data[i], raw)) {
            continue;
        }
        for (int k = 0; k < h.n_out; k++) {
            signal_t *s = h.outs[k];
            s->value = s->is_float ? hil_raw_to_float(raw[k], s->min, s->max)
                                   : hil_raw_to_int(raw[k], (int32_t)s->min, (int32_t)s->max, (uint8_t)h.checked);
            apply_output(s);
        }
    }
}

/* --- the UART ----------------------------------------------------------------------------- */

static void on_uart_output(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)param;
    h.uart_tx++;
    if (!queue_push(&h.uart_out, (uint8_t)value)) {
        h.uart_tx_dropped++;
    }
}

static void on_uart_xon(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)value;
    (void)param;
    h.uart_xon = 1;
}

static void on_uart_xoff(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)value;
    (void)param;
    h.uart_xon = 0;
}

static void uart_feed(void) {
    avr_irq_t *input = avr_io_getirq(h.avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
    while (h.uart_xon && h.uart_in.length > 0) {
        avr_raise_irq(input, queue_pop(&h.uart_in));
        h.uart_rx++;
    }
}

/* Read what the ptys hold (never blocking; a hung-up pty reads nothing). */
static void poll_links(void) {
    uint8_t buffer[4096];
    ssize_t n;
    size_t room = QUEUE_SIZE - h.uart_in.length;
    if (room > sizeof buffer) {
        room = sizeof buffer;
    }
    if (room > 0 && (n = read(h.command_fd, buffer, room)) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            queue_push(&h.uart_in, buffer[i]);
        }
    }
    if (h.signal_fd >= 0) {
        while ((n = read(h.signal_fd, buffer, sizeof buffer)) > 0) {
            take_frames(buffer, n);
        }
    }
    if (h.radio_fd >= 0) {
        /* What the module wrote waits here for the wire (the rest in the tty). */
        room = QUEUE_SIZE - h.radio_in.length;
        if (room > sizeof buffer) {
            room = sizeof buffer;
        }
        if (room > 0 && (n = read(h.radio_fd, buffer, room)) > 0) {
            for (ssize_t i = 0; i < n; i++) {
                queue_push(&h.radio_in, buffer[i]);
            }
        }
    }
    uart_feed();
}

static void flush_links(void) {
    queue_flush(&h.uart_out, h.command_fd, &h.uart_tx_dropped);
    if (h.signal_fd >= 0) {
        queue_flush(&h.signal_out, h.signal_fd, &h.signal_tx_dropped);
    }
    if (h.radio_fd >= 0) {
        queue_flush(&h.radio_out, h.radio_fd, &h.radio_tx_dropped);
    }
}

static avr_cycle_count_t poll_timer(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)avr;
    (void)param;
    poll_links();
    return when + (avr_cycle_count_t)(POLL_US * h.frequency / 1e6);
}

static avr_cycle_count_t frame_timer(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)avr;
    (void)param;
    send_frame();
    flush_links();
    return when + (avr_cycle_count_t)(h.period_us * h.frequency / 1e6);
}

/* --- configuration ------------------------------------------------------------------------- */

static void parse_coupling(const char *path) {
    FILE *file = fopen(path, "r");
    char line[512];
    int number = 0;
    if (!file) {
        fail(2, "--coupling %s: %s", path, strerror(errno));
    }
    h.period_us = 5000;
    while (fgets(line, sizeof line, file)) {
        char direction[8], type[8], kind[16];
        int id, consumed = 0;
        double min, max, fallback = 0;
        number++;
        char *hash = strchr(line, '#');
        if (hash) {
            *hash = 0;
        }
        if (strspn(line, " \t\r\n") == strlen(line)) {
            continue;
        }
        if (sscanf(line, " period_us %" SCNu32, &h.period_us) == 1) {
            if (h.period_us == 0) {
                fail(2, "%s:%d: period_us must be positive", path, number);
            }
            continue;
        }
        if (h.count == MAX_SIGNALS) {
            fail(2, "%s:%d: more than %d signals", path, number, MAX_SIGNALS);
        }
        signal_t *s = &h.signals[h.count];
        memset(s, 0, sizeof *s);
        s->meter.duty = -1;
        if (sscanf(line, " %7s %d", direction, &id) != 2 || id < 0 || id > 254) {
            fail(2, "%s:%d: expected 'in|out <id 0..254> ...', got: %s", path, number, line);
        }
        s->id = (uint8_t)id;
        if (strcmp(direction, "in") == 0) {
            strcpy(type, "int");
            if (sscanf(line, " in %*d %lf %lf %15s %n", &min, &max, kind, &consumed) != 3) {
                fail(2, "%s:%d: expected 'in <id> <min> <max> <kind> ...'", path, number);
            }
        } else if (strcmp(direction, "out") == 0) {
            s->output = 1;
            if (sscanf(line, " out %*d %7s %lf %lf %lf %15s %n", type, &min, &max, &fallback, kind, &consumed) != 5) {
                fail(2, "%s:%d: expected 'out <id> <int|float> <min> <max> <default> <kind> ...'", path, number);
            }
        } else {
            fail(2, "%s:%d: direction %s is neither in nor out", path, number, direction);
        }
        if (strcmp(type, "int") != 0 && strcmp(type, "float") != 0) {
            fail(2, "%s:%d: type %s is neither int nor float", path, number, type);
        }
        if (!(max > min)) {
            fail(2, "%s:%d: max %g must exceed min %g", path, number, max, min);
        }
        s->is_float = strcmp(type, "float") == 0;
        s->min = min;
        s->max = max;
        s->value = fallback;
        const char *rest = line + consumed;
        char port;
        int bit;
        if (strcmp(kind, "pwm") == 0 && !s->output) {
            s->kind = K_PWM;
            if (sscanf(rest, "%d", &s->pin) != 1 || !pwm_pin(s)) {
                fail(2, "%s:%d: pwm needs a timer output pin (3, 5, 6, 9, 10, 11)", path, number);
            }
        } else if (strcmp(kind, "level") == 0) {
            s->kind = K_LEVEL;
            if (sscanf(rest, "%d", &s->pin) != 1 || !pin_port(s->pin, &port, &bit)) {
                fail(2, "%s:%d: level needs a digital pin 0..19", path, number);
            }
        } else if (strcmp(kind, "adc") == 0 && s->output) {
            s->kind = K_ADC;
            if (sscanf(rest, "%d %lf", &s->channel, &s->mv_per_unit) != 2 || s->channel < 0 || s->channel > 7) {
                fail(2, "%s:%d: adc needs a channel 0..7 and millivolts per unit", path, number);
            }
        } else if (strcmp(kind, "echo") == 0 && s->output) {
            s->kind = K_ECHO;
            if (sscanf(rest, "%d %d", &s->pin, &s->pin2) != 2 || !pin_port(s->pin, &port, &bit) ||
                !pin_port(s->pin2, &port, &bit)) {
                fail(2, "%s:%d: echo needs a trigger pin and an echo pin, 0..19", path, number);
            }
        } else if (strcmp(kind, "hmc5883l") == 0 && s->output) {
            s->kind = K_HMC5883L;
            if (sscanf(rest, "%i", &s->address) != 1 || s->address < 1 || s->address > 127 || h.compass) {
                fail(2, "%s:%d: hmc5883l needs a 7-bit address (one compass)", path, number);
            }
            h.compass = s;
        } else {
            fail(2, "%s:%d: kind %s does not fit an %s signal", path, number, kind, direction);
        }
        if (s->output) {
            h.out_ids[h.n_out] = s->id;
            h.outs[h.n_out++] = s;
        } else {
            h.in_ids[h.n_in] = s->id;
            h.ins[h.n_in++] = s;
        }
        h.count++;
    }
    fclose(file);
}

static void couple(void) {
    static const uint8_t compass_reset[13] = {0x10, 0x20, 0x01, 0, 0, 0, 0, 0, 0, 0x01, 'H', '4', '3'};
    avr_t *avr = h.avr;
    /* simavr polls a low INT0/INT1 pin on every cycle while the pins are in their
     * power-on low-level mode (a timer per notification, kept until the pin goes high):
     * a bumper at rest would slow the AVR four times. Edge detection is unaffected. */
    for (uint8_t i = 0; i < 2; i++) {
        avr_extint_set_strict_lvl_trig(avr, i, 0);
    }
    hil_frame_encoder_init(&h.encoder, (uint8_t)h.checked);
    if (!hil_frame_decoder_init(&h.decoder, h.out_ids, (uint16_t)h.n_out, (uint8_t)h.checked, h.decode_buffer) &&
        h.n_out > 0) {
        fail(2, "the OUTPUT signals' ids must differ (and none be 255)");
    }
    memcpy(h.compass_regs, compass_reset, sizeof compass_reset);
    for (int i = 0; i < h.count; i++) {
        signal_t *s = &h.signals[i];
        if (s->kind == K_PWM) {
            avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_TIMER_GETIRQ(s->timer), TIMER_IRQ_OUT_COMP + s->comp),
                                    on_pwm_comp, s);
            avr_irq_register_notify(pin_irq(s->pin), on_pwm_pin, s);
        } else if (s->kind == K_ECHO) {
            avr_irq_register_notify(pin_irq(s->pin), on_trigger, s);
            drive_pin(s->pin2, 0);
        }
        if (s->output) {
            apply_output(s); /* the default until the first frame */
        }
    }
    if (h.compass || h.radio_fd >= 0) {
        avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_TWI_GETIRQ(0), TWI_IRQ_OUTPUT), on_twi, NULL);
    }
    if (h.radio_fd >= 0) {
        avr_cycle_timer_register(avr, (avr_cycle_count_t)(10.0 * h.frequency / RADIO_BAUD + 0.5), radio_timer, NULL);
    }
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), on_uart_output, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON), on_uart_xon, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF), on_uart_xoff, NULL);
    /* No console echo of UART lines, no sleeping when the firmware polls the UART. */
    uint32_t flags = 0;
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
    avr_cycle_timer_register(avr, (avr_cycle_count_t)(POLL_US * h.frequency / 1e6), poll_timer, NULL);
    if (h.signal_fd >= 0) {
        avr_cycle_timer_register(avr, (avr_cycle_count_t)(h.period_us * h.frequency / 1e6), frame_timer, NULL);
    }
}

/* --- running ------------------------------------------------------------------------------- */

static double wall(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void run_until(avr_cycle_count_t target) {
    while (h.avr->cycle < target) {
        int state = avr_run(h.avr);
        if (state == cpu_Done || state == cpu_Crashed) {
            flush_links();
            fail(3, "the firmware %s at cycle %" PRIu64 " (pc 0x%04x)",
                 state == cpu_Crashed ? "crashed" : "stopped (sleep with interrupts off)", (uint64_t)h.avr->cycle,
                 h.avr->pc);
        }
    }
}

static void print_stats(double wall_seconds, double mhz) {
    const hil_frame_decoder *d = &h.decoder;
    printf("{\"cycle\": %" PRIu64 ", \"avr_seconds\": %.6f, \"wall_seconds\": %.3f, \"mhz\": %.3f, "
           "\"uart_rx\": %" PRIu64 ", \"uart_tx\": %" PRIu64 ", \"uart_tx_dropped\": %" PRIu64 ", "
           "\"uart_rx_waiting\": %zu, \"frames_sent\": %" PRIu64 ", \"frames_received\": %u, "
           "\"signal_tx_dropped\": %" PRIu64 ", \"signal_bad_ids\": %u, \"signal_bad_crc\": %u, "
           "\"signal_lost\": %u, \"signal_skipped_bytes\": %" PRIu32 ", \"echoes\": %" PRIu64 ", "
           "\"i2c_reads\": %" PRIu64 ", \"behind_dropped_s\": %.3f, \"radio\": %d, \"radio_rx\": %" PRIu64
           ", \"radio_tx\": %" PRIu64 ", \"radio_rx_overflow\": %" PRIu64 ", \"radio_tx_overflow\": %" PRIu64
           ", \"radio_tx_dropped\": %" PRIu64 ", \"radio_rx_waiting\": %zu}\n",
           (uint64_t)h.avr->cycle, (double)h.avr->cycle / h.frequency, wall_seconds, mhz, h.uart_rx, h.uart_tx,
           h.uart_tx_dropped, h.uart_in.length, h.frames_sent, d->frames, h.signal_tx_dropped, d->bad_ids,
           d->bad_crc, d->lost, d->skipped_bytes, h.echoes, h.i2c_reads, h.behind_dropped_s, h.radio_fd >= 0,
           h.radio_rx, h.radio_tx, h.radio_rx_overflow, h.radio_tx_overflow, h.radio_tx_dropped, h.radio_in.length);
    fflush(stdout);
}

static void run_lockstep(void) {
    char line[128];
    double start = wall();
    while (!h.stop && fgets(line, sizeof line, stdin)) {
        uint64_t target;
        if (sscanf(line, "run %" SCNu64, &target) == 1) {
            run_until(target);
            flush_links();
            printf("ok %" PRIu64 "\n", (uint64_t)h.avr->cycle);
            fflush(stdout);
        } else if (strncmp(line, "stats", 5) == 0) {
            double seconds = wall() - start;
            print_stats(seconds, seconds > 0 ? (double)h.avr->cycle / seconds / 1e6 : 0.0);
        } else {
            printf("error unknown command\n");
            fflush(stdout);
        }
    }
}

static void run_real_time(double rtf, double stats_period) {
    double start = wall(), next_stats = start + stats_period, last_wall = start;
    uint64_t last_cycle = 0;
    double origin = start; /* wall time of cycle 0, moved on when a backlog is given up */
    avr_cycle_count_t slice = (avr_cycle_count_t)(POLL_US * h.frequency / 1e6);
    while (!h.stop) {
        double now = wall();
        double target = (now - origin) * rtf * h.frequency;
        if (target - (double)h.avr->cycle > MAX_BEHIND_S * rtf * h.frequency) {
            double behind = (target - (double)h.avr->cycle) / (rtf * h.frequency) - MAX_BEHIND_S;
            h.behind_dropped_s += behind;
            origin += behind;
            target = (now - origin) * rtf * h.frequency;
        }
        if ((double)h.avr->cycle < target) {
            avr_cycle_count_t goal = h.avr->cycle + slice;
            run_until(goal < (avr_cycle_count_t)target ? goal : (avr_cycle_count_t)target + 1);
            flush_links();
        } else {
            /* Ahead of the wall clock: wait for it, or for bytes (read at the next poll). */
            struct pollfd fds[3] = {{h.command_fd, POLLIN, 0}, {h.signal_fd, POLLIN, 0}, {h.radio_fd, POLLIN, 0}};
            double wait_s = ((double)h.avr->cycle - target) / (rtf * h.frequency);
            int ms = (int)(wait_s * 1000.0);
            if (ms > 0) {
                poll(fds, 3, ms); /* a negative descriptor is skipped */
            }
        }
        if (now >= next_stats) {
            double seconds = now - last_wall;
            print_stats(now - start, seconds > 0 ? (double)(h.avr->cycle - last_cycle) / seconds / 1e6 : 0.0);
            last_wall = now;
            last_cycle = h.avr->cycle;
            next_stats += stats_period;
            if (next_stats < now) {
                next_stats = now + stats_period;
            }
        }
    }
}

static void on_signal(int number) {
    (void)number;
    h.stop = 1;
}

static void usage(void) {
    fputs("usage: hil_simavr --firmware ELF --command-fd N [--signal-fd N --coupling FILE] [--radio-fd N]\n"
          "                  [--checked]\n"
          "                  [--mcu atmega328p] [--frequency 16000000] [--lockstep | --rtf X]\n"
          "                  [--stats-period S]\n",
          stderr);
}

int main(int argc, char **argv) {
    static const struct option options[] = {
        {"firmware", required_argument, 0, 'f'}, {"command-fd", required_argument, 0, 'c'},
        {"signal-fd", required_argument, 0, 's'}, {"coupling", required_argument, 0, 'p'},
        {"checked", no_argument, 0, 'k'},         {"mcu", required_argument, 0, 'm'},
        {"frequency", required_argument, 0, 'F'}, {"lockstep", no_argument, 0, 'l'},
        {"rtf", required_argument, 0, 'r'},       {"stats-period", required_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'},            {"radio-fd", required_argument, 0, 'R'},
        {0, 0, 0, 0}};
    const char *firmware = NULL, *coupling = NULL, *mcu = "atmega328p";
    int lockstep = 0, option;
    double rtf = 1.0, stats_period = 1.0;
    h.frequency = 16e6;
    h.command_fd = -1;
    h.signal_fd = -1;
    h.radio_fd = -1;
    while ((option = getopt_long(argc, argv, "", options, NULL)) != -1) {
        char *end = NULL;
        switch (option) {
        case 'f': firmware = optarg; break;
        case 'c': h.command_fd = (int)strtol(optarg, &end, 10); break;
        case 's': h.signal_fd = (int)strtol(optarg, &end, 10); break;
        case 'R': h.radio_fd = (int)strtol(optarg, &end, 10); break;
        case 'p': coupling = optarg; break;
        case 'k': h.checked = 1; break;
        case 'm': mcu = optarg; break;
        case 'F': h.frequency = strtod(optarg, &end); break;
        case 'l': lockstep = 1; break;
        case 'r': rtf = strtod(optarg, &end); break;
        case 'S': stats_period = strtod(optarg, &end); break;
        case 'h': usage(); return 0;
        default: usage(); return 2;
        }
        if (end && *end) {
            fail(2, "--%s: not a number: %s",
                 option == 'F' ? "frequency" : option == 'R' ? "radio-fd" : option == 'c' ? "command-fd"
                 : option == 's' ? "signal-fd" : option == 'r' ? "rtf" : "stats-period",
                 optarg);
        }
    }
    if (!firmware || h.command_fd < 0) {
        usage();
        fail(2, "--firmware and --command-fd are required");
    }
    if ((h.signal_fd >= 0) != (coupling != NULL)) {
        fail(2, "--signal-fd and --coupling go together");
    }
    if (!(h.frequency >= 1e6 && h.frequency <= 32e6) || !(rtf > 0 && rtf <= 100) || !(stats_period > 0)) {
        fail(2, "--frequency (1e6..32e6), --rtf (0..100] and --stats-period (> 0) out of range");
    }
    if (fcntl(h.command_fd, F_SETFL, O_NONBLOCK) < 0 ||
        (h.signal_fd >= 0 && fcntl(h.signal_fd, F_SETFL, O_NONBLOCK) < 0) ||
        (h.radio_fd >= 0 && fcntl(h.radio_fd, F_SETFL, O_NONBLOCK) < 0)) {
        fail(2, "the link descriptors are not open: %s", strerror(errno));
    }
    if (coupling) {
        parse_coupling(coupling);
    }
    avr_global_logger_set(logger);
    elf_firmware_t elf;
    memset(&elf, 0, sizeof elf);
    if (elf_read_firmware(firmware, &elf) != 0) {
        fail(2, "--firmware %s: not a readable AVR ELF file", firmware);
    }
    snprintf(elf.mmcu, sizeof elf.mmcu, "%s", mcu);
    elf.frequency = (uint32_t)h.frequency;
    h.avr = avr_make_mcu_by_name(elf.mmcu);
    if (!h.avr) {
        fail(2, "--mcu %s: simavr does not know this MCU", mcu);
    }
    avr_init(h.avr);
    h.avr->log = LOG_WARNING;
    avr_load_firmware(h.avr, &elf);
    h.avr->vcc = h.avr->avcc = h.avr->aref = 5000;
    couple();
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    /* The node that started it owns the ptys: if it dies (even by SIGKILL), so does this. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1) {
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    if (lockstep) {
        run_lockstep();
    } else {
        run_real_time(rtf, stats_period);
    }
    flush_links();
    return 0;
}
