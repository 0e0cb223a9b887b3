/* The pin trace: chosen pins' levels as a Value Change Dump, timed in AVR cycles.
 *
 * Each traced pin is a line of the file (several names of one pin share it), drawn from
 * what drives the pin:
 *   - the port, or the outside (an input the harness drives: a sensor, a serial link on
 *     ordinary pins): the level as the firmware sees it (pins_level), at the cycle
 *     simavr's I/O port reports the change;
 *   - a timer's comparator (analogWrite; timer modes set by register): the wave computed
 *     from the timer's registers (pwm_wave: WGM, COM, OCR, TOP, prescaler), not simavr's
 *     pin, which is wrong in the modes the Arduino core sets: simavr 1.6 toggles nothing
 *     on pin 9 after analogWrite(9, 64) (Timer1's phase-correct PWM: "avr_timer_write_ocr-1
 *     mode 0 UNSUPPORTED"), and on pin 5 after analogWrite(5, 192) (Timer0's fast PWM)
 *     its edges come at the right rate but with high times of 2328, 1964, 1600... cycles
 *     where the hardware's are 12352. The timer's counter starts at BOTTOM when its mode,
 *     clock select or TOP last changed (or at the trace's start); a new OCR takes effect at
 *     once (on the hardware at the next TOP or BOTTOM); writes to TCNT are not followed;
 *   - a hardware UART, on its TX pin while its transmitter is on (TXEN) and on its RX pin
 *     while its receiver is on (RXEN): the line, idle high, each byte a frame (start bit,
 *     5..9 data bits from the least significant, parity, 1 or 2 stop bits, as UCSRnC
 *     sets them) at the firmware's baud rate (UBRRn, U2Xn), frames back to back from the
 *     cycle the firmware wrote the byte to UDRn (TX) or the harness handed it to the UART
 *     (RX: its frame ends about when simavr has it in UDRn). simavr moves bytes, not bits.
 *     While the UART is off and its pin not an output, a UART on a pty shows its line
 *     idle (high: the peer holds it so, as the USB-serial chip of an UNO, Nano or Mega).
 * I2C (TWI) lines and ADC voltages are not drawn (simavr moves bytes and values, not
 * levels): such pins show their port level.
 *
 * Time: AVR cycles from power-on, in the largest of 100 ns, 10 ns, 1 ns, 100 ps, 10 ps
 * and 1 ps that holds a cycle a whole number of times (16 MHz: 100 ps, 625 a cycle), else
 * in ps, rounded. A reset does not restart it. Computed edges (waves, frames) are
 * written in time order with the others, up to the current cycle, at every change and
 * every SYNC_US of AVR time. In lockstep a run writes the same file every time.
 *
 * Size: once the file would pass its limit it stops with a comment saying so (the
 * stats' trace_cut_at_s, a line on stderr); nothing more is computed after that. */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <avr_uart.h>
#include <sim_cycle_timers.h>
#include <sim_io.h>

#include "harness.h"
#include "pins.h"
#include "pwm.h"
#include "uart_link.h"

#define MAX_LINES 64
#define MAX_NAMES 128
#define MAX_FRAMES 256
#define MAX_TIMERS 8
#define DEFAULT_LIMIT (100ull * 1000 * 1000)
/* How often (AVR time) the computed edges are written when nothing else changes. */
#define SYNC_US 10000
/* Bytes kept below the limit for the comment that says the trace stops. */
#define RESERVE 512
#define NO_EDGE UINT64_MAX

typedef enum { FROM_PORT, FROM_TIMER, FROM_UART } source_t;

/* A UART frame: its bits' levels (the start bit first, in bit 0), each ``bit`` cycles. */
typedef struct {
    uint64_t start;
    uint32_t bit;
    uint8_t count;
    uint16_t bits;
} frame_t;

typedef struct {
    int pin;
    char id[4];    /* the VCD identifier */
    uint8_t level; /* as last written */
    source_t source;
    pwm_wave_t wave; /* FROM_TIMER */
    uint64_t anchor; /* FROM_TIMER: the cycle its timer's counter was at BOTTOM */
    int uart;        /* the UART whose line the pin is, or -1 */
    uint8_t tx;
    frame_t *frames; /* FROM_UART: a ring of MAX_FRAMES */
    int head, count, cursor;
    uint64_t frames_end;
    uint64_t next; /* the cycle of its next computed edge, or NO_EDGE */
} line_t;

typedef struct {
    char full[48], scope[48], var[48];
    int line;
} name_t;

static struct {
    const char *path;
    uint64_t limit;
    FILE *out;
    uint64_t bytes, changes, last_time, frames_dropped;
    int cut;
    uint64_t cut_cycle;
    uint64_t per_cycle; /* time units a cycle, when whole */
    double units_per_cycle;
    const char *unit;
    line_t lines[MAX_LINES];
    int line_count;
    name_t names[MAX_NAMES];
    int name_count;
    struct {
        char name;
        uint64_t key, anchor;
    } timers[MAX_TIMERS];
    int timer_count;
} trace;

void trace_add(const char *spec) {
    const char *equals = strrchr(spec, '=');
    char *end = NULL;
    long pin = equals ? strtol(equals + 1, &end, 10) : -1;
    size_t length = equals ? (size_t)(equals - spec) : 0;
    int good = equals && end != equals + 1 && *end == 0 && length > 0 && length < 47;
    for (size_t i = 0; good && i < length; i++) {
        char c = spec[i];
        good = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
    }
    if (!good) {
        harness_fail(2, "--trace-pin %s: expected NAME=PIN (NAME of letters, digits, _ and ., a digital pin)", spec);
    }
    if (trace.name_count == MAX_NAMES) {
        harness_fail(2, "--trace-pin: more than %d names", MAX_NAMES);
    }
    name_t *n = &trace.names[trace.name_count++];
    snprintf(n->full, sizeof n->full, "%.*s", (int)length, spec);
    const char *dot = memchr(spec, '.', length);
    if (dot) {
        snprintf(n->scope, sizeof n->scope, "%.*s", (int)(dot - spec), spec);
        snprintf(n->var, sizeof n->var, "%.*s", (int)(length - (size_t)(dot - spec) - 1), dot + 1);
    } else {
        snprintf(n->scope, sizeof n->scope, "pins");
        snprintf(n->var, sizeof n->var, "%.*s", (int)length, spec);
    }
    n->line = (int)pin; /* the pin until trace_attach makes the lines */
}

void trace_file(const char *path, uint64_t limit) {
    trace.path = path;
    trace.limit = limit ? limit : DEFAULT_LIMIT;
}

/* --- writing --------------------------------------------------------------------------- */

static void put(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int n = vfprintf(trace.out, format, ap);
    va_end(ap);
    trace.bytes += n > 0 ? (uint64_t)n : 0;
}

static uint64_t time_of(uint64_t cycle) {
    return trace.per_cycle ? cycle * trace.per_cycle : (uint64_t)llround((double)cycle * trace.units_per_cycle);
}

static void cut_here(uint64_t cycle) {
    double seconds = (double)cycle / harness_frequency();
    put("$comment pin trace cut: the file reached its size limit of %" PRIu64 " bytes at cycle %" PRIu64
        " (%.6f s); nothing after that is in it $end\n",
        trace.limit, cycle, seconds);
    fflush(trace.out);
    trace.cut = 1;
    trace.cut_cycle = cycle;
    fprintf(stderr, "hil_simavr: pin trace %s reached its size limit of %" PRIu64 " bytes at %.3f s: it stops there\n",
            trace.path, trace.limit, seconds);
}

/* The line shows ``level`` from ``cycle`` on. */
static void emit(line_t *l, uint64_t cycle, uint8_t level) {
    if (level == l->level || trace.cut) {
        return;
    }
    l->level = level;
    uint64_t t = time_of(cycle);
    if (trace.bytes + 32 + RESERVE > trace.limit) {
        cut_here(cycle);
        return;
    }
    if (t != trace.last_time) {
        put("#%" PRIu64 "\n", t);
        trace.last_time = t;
    }
    put("%u%s\n", level, l->id);
    trace.changes++;
}

/* --- computed edges -------------------------------------------------------------------- */

static uint8_t wave_level(const line_t *l, uint64_t cycle) {
    const pwm_wave_t *w = &l->wave;
    uint64_t phase = (cycle - l->anchor) % w->period;
    return w->rise < w->fall ? (phase >= w->rise && phase < w->fall) : (phase >= w->rise || phase < w->fall);
}

static uint64_t wave_next(const line_t *l, uint64_t cycle) {
    const pwm_wave_t *w = &l->wave;
    uint64_t phase = (cycle - l->anchor) % w->period;
    uint64_t to_rise = (w->rise + w->period - phase) % w->period, to_fall = (w->fall + w->period - phase) % w->period;
    to_rise = to_rise ? to_rise : w->period;
    to_fall = to_fall ? to_fall : w->period;
    return cycle + (to_rise < to_fall ? to_rise : to_fall);
}

/* The boundary ``cursor`` of the line's first frame: before bit ``cursor`` (``count``:
 * after the last, back to idle). */
static uint64_t frame_edge(const line_t *l) {
    const frame_t *f = &l->frames[l->head];
    return f->start + (uint64_t)l->cursor * f->bit;
}

/* Draw the line's computed edge at l->next and find its next one. */
static void step(line_t *l) {
    uint64_t at = l->next;
    if (l->source == FROM_TIMER) {
        emit(l, at, wave_level(l, at));
        l->next = wave_next(l, at);
        return;
    }
    const frame_t *f = &l->frames[l->head];
    emit(l, at, l->cursor < f->count ? (uint8_t)(f->bits >> l->cursor & 1) : 1);
    if (++l->cursor > f->count) {
        l->head = (l->head + 1) % MAX_FRAMES;
        l->count--;
        l->cursor = 0;
    }
    l->next = l->count ? frame_edge(l) : NO_EDGE;
}

/* Write every computed edge before ``until``, in time order. */
static void advance(uint64_t until) {
    while (!trace.cut) {
        line_t *first = NULL;
        for (int i = 0; i < trace.line_count; i++) {
            line_t *l = &trace.lines[i];
            if (l->next < until && (!first || l->next < first->next)) {
                first = l;
            }
        }
        if (!first) {
            return;
        }
        step(first);
    }
}

/* --- what drives each line ------------------------------------------------------------- */

/* The cycle timer ``name``'s counter was last at BOTTOM with its present mode, clock and TOP. */
static uint64_t timer_anchor(char name) {
    uint64_t key = pwm_timer_key(name), now = harness_avr()->cycle;
    for (int i = 0; i < trace.timer_count; i++) {
        if (trace.timers[i].name == name) {
            if (trace.timers[i].key != key) {
                trace.timers[i].key = key;
                trace.timers[i].anchor = now;
            }
            return trace.timers[i].anchor;
        }
    }
    if (trace.timer_count < MAX_TIMERS) {
        trace.timers[trace.timer_count].name = name;
        trace.timers[trace.timer_count].key = key;
        trace.timers[trace.timer_count].anchor = now;
        trace.timer_count++;
    }
    return now;
}

static uint16_t uart_register(const line_t *l, int offset) {
    return (uint16_t)(harness_board()->uart_pins[l->uart].ucsra + offset);
}

static int uart_on(const line_t *l) {
    return l->uart >= 0 && harness_avr()->data[uart_register(l, 1)] >> (l->tx ? 3 : 4) & 1; /* TXEN, RXEN */
}

/* Look at the line now: what drives it, its level, its next computed edge. */
static void update(line_t *l) {
    if (trace.cut) {
        return;
    }
    uint64_t now = harness_avr()->cycle;
    advance(now);
    if (uart_on(l)) {
        if (l->source != FROM_UART) {
            l->source = FROM_UART;
            l->count = l->head = l->cursor = 0;
            l->frames_end = now;
            l->next = NO_EDGE;
            emit(l, now, 1); /* idle */
        }
        return;
    }
    pwm_wave_t wave;
    if (pwm_wave(l->pin, &wave)) {
        l->source = FROM_TIMER;
        l->wave = wave;
        if (!wave.periodic) {
            l->next = NO_EDGE;
            emit(l, now, wave.level);
            return;
        }
        l->anchor = timer_anchor(wave.timer);
        emit(l, now, wave_level(l, now));
        l->next = wave_next(l, now);
        return;
    }
    l->source = FROM_PORT;
    l->next = NO_EDGE;
    /* A UART on a pty has a peer that holds its lines high while the pin is not an output. */
    int held = l->uart >= 0 && uart_link_has(l->uart) && !pins_is_output(l->pin);
    emit(l, now, held ? 1 : pins_level(l->pin));
}

static void on_pin(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)value;
    update(param);
}

/* A timer register was written (or read: simavr tells both). */
static void on_timer(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)value;
    char name = (char)(intptr_t)param;
    if (trace.cut) {
        return;
    }
    advance(harness_avr()->cycle);
    timer_anchor(name);
    for (int i = 0; i < trace.line_count; i++) {
        const board_pin *p = board_pin_at(harness_board(), trace.lines[i].pin);
        if (p->timer == name) {
            update(&trace.lines[i]);
        }
    }
}

/* UCSRnB was written (or read): the UART's lines may have been switched on or off. */
static void on_uart_control(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)value;
    for (int i = 0; i < trace.line_count; i++) {
        if (trace.lines[i].uart == (int)(intptr_t)param) {
            update(&trace.lines[i]);
        }
    }
}

/* A byte the firmware wrote (TX line) or the harness handed the UART (RX line). */
static void on_uart_byte(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    line_t *l = param;
    uint64_t now = harness_avr()->cycle;
    update(l);
    if (l->source != FROM_UART || trace.cut) {
        return;
    }
    if (l->count == MAX_FRAMES) {
        trace.frames_dropped++;
        return;
    }
    const uint8_t *data = harness_avr()->data;
    uint8_t a = data[uart_register(l, 0)], b = data[uart_register(l, 1)], c = data[uart_register(l, 2)];
    unsigned ubrr = (unsigned)(data[uart_register(l, 4)] | (data[uart_register(l, 5)] & 0x0F) << 8);
    int size = (c >> 1 & 3) == 3 && (b & 0x04) ? 9 : 5 + (c >> 1 & 3); /* UCSZn2..0 */
    int parity = c >> 4 & 3;                                          /* UPMn: 2 even, 3 odd */
    uint32_t byte = (value & 0xFF) | (size == 9 && l->tx ? (uint32_t)(b & 1) << 8 : 0); /* TXB8n */
    frame_t *f = &l->frames[(l->head + l->count) % MAX_FRAMES];
    f->bit = (uint32_t)(ubrr + 1) * (a & 0x02 ? 8 : 16); /* U2Xn */
    f->start = now > l->frames_end ? now : l->frames_end;
    f->bits = 0; /* the start bit */
    int at = 1, ones = 0;
    for (int i = 0; i < size; i++, at++) {
        uint16_t bit = (uint16_t)(byte >> i & 1);
        f->bits |= (uint16_t)(bit << at);
        ones += bit;
    }
    if (parity >= 2) {
        f->bits |= (uint16_t)(((ones & 1) ^ (parity == 3)) << at++);
    }
    int stops = c & 0x08 ? 2 : 1; /* USBSn */
    for (int i = 0; i < stops; i++) {
        f->bits |= (uint16_t)(1u << at++);
    }
    f->count = (uint8_t)at;
    l->frames_end = f->start + (uint64_t)f->count * f->bit;
    if (l->count++ == 0) {
        l->cursor = 0;
        l->next = frame_edge(l);
    }
}

static avr_cycle_count_t on_sync(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)param;
    advance(avr->cycle);
    return when + harness_cycles_us(SYNC_US);
}

static void trace_stats(FILE *out) {
    fprintf(out, ", \"trace_bytes\": %" PRIu64 ", \"trace_changes\": %" PRIu64 ", \"trace_frames_dropped\": %" PRIu64,
            trace.bytes, trace.changes, trace.frames_dropped);
    if (trace.cut) {
        fprintf(out, ", \"trace_cut_at_s\": %.6f", (double)trace.cut_cycle / harness_frequency());
    } else {
        fputs(", \"trace_cut_at_s\": null", out);
    }
}

/* At exit: the computed edges up to now, and now as the trace's last time. */
static void trace_close(void) {
    if (!trace.out) {
        return;
    }
    uint64_t now = harness_avr()->cycle;
    advance(now);
    if (!trace.cut && time_of(now) != trace.last_time) {
        put("#%" PRIu64 "\n", time_of(now));
    }
    fclose(trace.out);
    trace.out = NULL;
}

/* --- the file's start -------------------------------------------------------------------- */

static void choose_unit(void) {
    static const struct {
        const char *name;
        double ps;
    } units[] = {{"100ns", 1e5}, {"10ns", 1e4}, {"1ns", 1e3}, {"100ps", 100}, {"10ps", 10}, {"1ps", 1}};
    double cycle_ps = 1e12 / harness_frequency();
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        double n = cycle_ps / units[i].ps;
        if (n >= 1 && fabs(n - round(n)) < 1e-9) {
            trace.unit = units[i].name;
            trace.per_cycle = (uint64_t)llround(n);
            trace.units_per_cycle = n;
            return;
        }
    }
    trace.unit = "1ps";
    trace.units_per_cycle = cycle_ps;
}

static void write_header(void) {
    const board_t *board = harness_board();
    put("$version hil_simavr pin trace $end\n$comment\n");
    put("  The firmware's pins on the %s (%s) at %.0f Hz, in simavr: time in AVR cycles from\n"
        "  power-on, one cycle = %.6g x %s.\n",
        board->name, board->mcu, harness_frequency(), trace.units_per_cycle, trace.unit);
    for (int i = 0; i < trace.name_count; i++) {
        const name_t *n = &trace.names[i];
        const line_t *l = &trace.lines[n->line];
        const board_pin *p = board_pin_at(board, l->pin);
        put("  %s: pin %d (P%c%d)%s%s%s\n", n->full, l->pin, p->port, p->bit,
            p->timer ? ", a timer output: while the timer drives it, its wave is computed from the timer's registers"
                     : "",
            l->uart >= 0 ? (l->tx ? ", a UART's TX: while TXEN, the line drawn from the bytes sent"
                                  : ", a UART's RX: while RXEN, the line drawn from the bytes received")
                         : "",
            p->timer || l->uart >= 0 ? "" : ", its level as the firmware sees it");
    }
    put("  Timer outputs are computed (simavr 1.6 does not run the Arduino core's PWM on the\n"
        "  pin: nothing toggles on Timer1's phase-correct PWM, and Timer0's fast PWM edges\n"
        "  drift); UART lines are drawn from the bytes (simavr moves bytes, not bits); every\n"
        "  other level is simavr's, at the cycle it changes.\n$end\n");
    put("$timescale %s $end\n$scope module %s $end\n", trace.unit, board->name);
    for (int i = 0; i < trace.name_count; i++) {
        int opened = 0;
        for (int j = 0; j < i && !opened; j++) {
            opened = strcmp(trace.names[j].scope, trace.names[i].scope) == 0;
        }
        if (opened) {
            continue; /* written with the first of its scope */
        }
        put("$scope module %s $end\n", trace.names[i].scope);
        for (int j = i; j < trace.name_count; j++) {
            if (strcmp(trace.names[j].scope, trace.names[i].scope) == 0) {
                put("$var wire 1 %s %s $end\n", trace.lines[trace.names[j].line].id, trace.names[j].var);
            }
        }
        put("$upscope $end\n");
    }
    put("$upscope $end\n$enddefinitions $end\n#0\n$dumpvars\n");
}

void trace_attach(void) {
    if (!trace.path) {
        if (trace.name_count) {
            harness_fail(2, "--trace-pin needs --trace FILE");
        }
        return;
    }
    if (!trace.name_count) {
        harness_fail(2, "--trace %s: no --trace-pin to trace", trace.path);
    }
    const board_t *board = harness_board();
    for (int i = 0; i < trace.name_count; i++) {
        name_t *n = &trace.names[i];
        int pin = n->line;
        if (!board_pin_at(board, pin)) {
            harness_fail(2, "--trace-pin %s=%d: not %s", n->full, pin, pins_check(pin));
        }
        int found = -1;
        for (int j = 0; j < trace.line_count && found < 0; j++) {
            found = trace.lines[j].pin == pin ? j : -1;
        }
        if (found < 0) {
            if (trace.line_count == MAX_LINES) {
                harness_fail(2, "--trace-pin: more than %d pins", MAX_LINES);
            }
            found = trace.line_count++;
            line_t *l = &trace.lines[found];
            l->pin = pin;
            int code = found;
            int k = 0;
            do {
                l->id[k++] = (char)('!' + code % 94);
                code /= 94;
            } while (code && k < 3);
            int tx = 0;
            l->uart = board_uart_of_pin(board, pin, &tx);
            l->tx = (uint8_t)tx;
            l->next = NO_EDGE;
            l->level = 2; /* none yet */
        }
        n->line = found;
    }
    trace.out = fopen(trace.path, "w");
    if (!trace.out) {
        harness_fail(2, "--trace %s: cannot write it: %s", trace.path, strerror(errno));
    }
    setvbuf(trace.out, NULL, _IOFBF, 1 << 16);
    choose_unit();
    write_header();

    avr_t *avr = harness_avr();
    for (int i = 0; i < trace.line_count; i++) {
        line_t *l = &trace.lines[i];
        const board_pin *p = board_pin_at(board, l->pin);
        avr_irq_register_notify(pins_irq(l->pin), on_pin, l);
        if (p->timer) {
            const board_timer *t = board_timer_named(board, p->timer);
            /* TCCRnA, TCCRnB; OCRnA, OCRnB (8-bit) or ICRn, OCRnA..C (16-bit: the low byte,
             * written last) */
            static const int offsets8[] = {0, 1, 3, 4}, offsets16[] = {0, 1, 6, 8, 10, 12};
            const int *offsets = t->bits == 16 ? offsets16 : offsets8;
            int count = t->bits == 16 ? 6 : 4;
            int seen = 0;
            for (int j = 0; j < i && !seen; j++) {
                const board_pin *q = board_pin_at(board, trace.lines[j].pin);
                seen = q->timer == p->timer;
            }
            for (int k = 0; k < count && !seen; k++) {
                avr_irq_register_notify(avr_iomem_getirq(avr, (avr_io_addr_t)(t->tccra + offsets[k]), NULL,
                                                         AVR_IOMEM_IRQ_ALL),
                                        on_timer, (void *)(intptr_t)p->timer);
            }
        }
        if (l->uart >= 0) {
            l->frames = calloc(MAX_FRAMES, sizeof *l->frames);
            avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0' + l->uart),
                                                  l->tx ? UART_IRQ_OUTPUT : UART_IRQ_INPUT),
                                    on_uart_byte, l);
            avr_irq_register_notify(avr_iomem_getirq(avr, uart_register(l, 1), NULL, AVR_IOMEM_IRQ_ALL),
                                    on_uart_control, (void *)(intptr_t)l->uart);
        }
    }
    /* The levels at cycle 0, as $dumpvars. */
    for (int i = 0; i < trace.line_count; i++) {
        line_t *l = &trace.lines[i];
        update(l);
        if (l->level > 1) {
            put("0%s\n", l->id);
            l->level = 0;
        }
    }
    put("$end\n");
    trace.last_time = 0;
    avr_cycle_timer_register(avr, harness_cycles_us(SYNC_US), on_sync, NULL);
    harness_add_stats(trace_stats);
    atexit(trace_close);
}

void trace_after_reset(void) {
    for (int i = 0; i < trace.line_count && trace.out; i++) {
        update(&trace.lines[i]);
    }
}
