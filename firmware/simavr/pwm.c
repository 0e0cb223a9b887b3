/* PWM duty of a timer output pin (coupling: in <id> <min> <max> pwm <pin>).
 *
 * While the pin's comparator drives it (COM bits connected, pin an output), the duty
 * follows from the timer's registers, exactly, for every waveform mode of the
 * ATmega328P's and ATmega2560's timers: simavr 1.6 runs only some of them (not the
 * phase-correct PWM the Arduino core sets on Timers 1-5 and 2), so its comparator edges
 * cannot be trusted. Otherwise (digitalWrite, analogWrite 0 and 255, software PWM) the
 * pin's level is the port's, and its duty is measured from the pin's edges: the duty
 * of the last whole period, or the level once the pin has stopped toggling for two
 * periods. Only a wave of at most MAX_WAVE_US a period is a duty (software PWM: 50 Hz
 * and faster); slower changes are levels, as the motor sees them (a direction pin set
 * HIGH, LOW, HIGH over seconds is HIGH now, not a 60 % duty). A pin that never had its comparator connected to a running timer and never
 * changed level is listed in the stats line (pwm_idle_pins). */
#include "pwm.h"

#include <inttypes.h>
#include <stdlib.h>

#include <avr_timer.h>

#include "harness.h"
#include "pins.h"

#define MAX_PWM 64
/* The longest period of a wave whose duty the pin shows (the slowest software PWM that
 * drives a motor: 50 Hz); a pin toggled slower shows its level. */
#define MAX_WAVE_US 20000.0

typedef enum { W_RESERVED, W_NORMAL, W_CTC, W_FAST, W_PHASE } wave_t;
typedef enum { TOP_FIXED, TOP_OCRA, TOP_ICR } top_t;

typedef struct {
    wave_t wave;
    top_t top;
    uint16_t fixed;
} wgm_mode;

/* The datasheets' waveform generation modes (phase and frequency correct PWM has the
 * duty of phase correct PWM). */
static const wgm_mode modes8[8] = {{W_NORMAL, TOP_FIXED, 0xFF}, {W_PHASE, TOP_FIXED, 0xFF}, {W_CTC, TOP_OCRA, 0},
                                   {W_FAST, TOP_FIXED, 0xFF},   {W_RESERVED, TOP_FIXED, 0},  {W_PHASE, TOP_OCRA, 0},
                                   {W_RESERVED, TOP_FIXED, 0},  {W_FAST, TOP_OCRA, 0}};
static const wgm_mode modes16[16] = {
    {W_NORMAL, TOP_FIXED, 0xFFFF}, {W_PHASE, TOP_FIXED, 0xFF},  {W_PHASE, TOP_FIXED, 0x1FF},
    {W_PHASE, TOP_FIXED, 0x3FF},   {W_CTC, TOP_OCRA, 0},        {W_FAST, TOP_FIXED, 0xFF},
    {W_FAST, TOP_FIXED, 0x1FF},    {W_FAST, TOP_FIXED, 0x3FF},  {W_PHASE, TOP_ICR, 0},
    {W_PHASE, TOP_OCRA, 0},        {W_PHASE, TOP_ICR, 0},       {W_PHASE, TOP_OCRA, 0},
    {W_CTC, TOP_ICR, 0},           {W_RESERVED, TOP_FIXED, 0},  {W_FAST, TOP_ICR, 0},
    {W_FAST, TOP_OCRA, 0}};

typedef struct {
    int pin;
    const board_timer *timer;
    uint8_t comparator;
    uint8_t driven; /* the comparator drove the pin when last looked at */
    uint8_t active; /* ever driven by a running timer, or ever changed level */
    /* the edge meter, while the port drives the pin */
    uint8_t level, have_rise;
    uint64_t last_rise, last_fall, last_edge, period;
    double duty; /* of the last whole period, -1 before one was seen */
} pwm_device;

static pwm_device *devices[MAX_PWM];
static int device_count;

static uint8_t reg(uint16_t address) { return harness_avr()->data[address]; }
static uint16_t reg16(uint16_t address) { return (uint16_t)(reg(address) | reg(address + 1) << 8); }

static uint16_t ocr(const board_timer *t, uint8_t comparator) {
    return t->bits == 16 ? reg16((uint16_t)(t->tccra + 8 + 2 * comparator)) : reg((uint16_t)(t->tccra + 3 + comparator));
}

/* The comparator's output latch as simavr keeps it (what a stopped timer leaves). */
static double latch(const pwm_device *d) {
    return avr_io_getirq(harness_avr(), AVR_IOCTL_TIMER_GETIRQ(d->timer->name), TIMER_IRQ_OUT_COMP + d->comparator)
               ->value &
           1;
}

/* The registers of a comparator and its timer, decoded. */
typedef struct {
    uint8_t com; /* COMnx bits */
    uint8_t cs;  /* clock select bits */
    unsigned wgm;
    wgm_mode mode;
    uint16_t top, compare;
} comparator_regs;

static void read_regs(const board_timer *t, uint8_t comparator, comparator_regs *r) {
    uint8_t tccra = reg(t->tccra), tccrb = reg((uint16_t)(t->tccra + 1));
    r->com = (uint8_t)(tccra >> (6 - 2 * comparator) & 3);
    r->cs = tccrb & 7;
    r->wgm = (unsigned)((tccra & 3) | (tccrb >> 1 & (t->bits == 16 ? 0x0C : 0x04)));
    r->mode = t->bits == 16 ? modes16[r->wgm] : modes8[r->wgm];
    r->top = r->mode.top == TOP_FIXED ? r->mode.fixed
             : r->mode.top == TOP_OCRA ? ocr(t, 0)
                                       : reg16((uint16_t)(t->tccra + 6));
    r->compare = ocr(t, comparator);
}

/* AVR cycles per timer count (0: an external clock, or stopped). */
static double prescale(const board_timer *t, uint8_t cs) {
    /* the clock select bits' prescalers: Timer2's own, the others' (6, 7: external clock) */
    static const double timer2[8] = {0, 1, 8, 32, 64, 128, 256, 1024};
    static const double others[8] = {0, 1, 8, 64, 256, 1024, 0, 0};
    return (t->name == '2' ? timer2 : others)[cs & 7];
}

/* The duty the comparator gives the pin, or -1 if it does not drive it. Sets *running,
 * and *period to the PWM period in timer counts (0 outside the PWM modes). */
static double comparator_duty(const pwm_device *d, int *running, double *period) {
    comparator_regs r;
    read_regs(d->timer, d->comparator, &r);
    *running = 0;
    *period = 0;
    if (r.com == 0 || !pins_is_output(d->pin)) {
        return -1;
    }
    wgm_mode mode = r.mode;
    int pwm = mode.wave == W_FAST || mode.wave == W_PHASE;
    if (mode.wave == W_RESERVED) {
        return -1;
    }
    if (r.com == 1 && pwm) {
        /* Toggle on compare match exists in PWM modes for comparator A only, with TOP
         * in OCRnA (16-bit fast PWM: or in ICRn); otherwise the port drives the pin. */
        int toggles = d->comparator == 0 &&
                      (mode.top == TOP_OCRA || (d->timer->bits == 16 && mode.wave == W_FAST && mode.top == TOP_ICR));
        if (!toggles) {
            return -1;
        }
    }
    uint16_t top = r.top, compare = r.compare;
    *running = r.cs != 0;
    if (pwm) {
        *period = mode.wave == W_FAST ? (double)top + 1.0 : 2.0 * (double)top;
    }
    if (!*running) {
        return latch(d); /* a stopped timer leaves the output as it was */
    }
    if (r.com == 1) {
        /* toggling on every match: a square wave, if the counter reaches the match */
        return compare <= top ? 0.5 : latch(d);
    }
    if (!pwm) {
        /* clear (2) or set (3) on compare match: constant once matched */
        return compare <= top ? (r.com == 3) : latch(d);
    }
    double high;
    if (mode.wave == W_FAST) {
        /* set at BOTTOM, cleared at the match: OCR + 1 of TOP + 1 counts (all at OCR >= TOP) */
        high = ((double)(compare < top ? compare : top) + 1.0) / ((double)top + 1.0);
    } else {
        /* cleared at the match counting up, set at the match counting down: OCR of TOP */
        if (top == 0) {
            return latch(d);
        }
        high = (double)(compare < top ? compare : top) / (double)top;
    }
    return r.com == 2 ? high : 1.0 - high;
}

static void meter_reset(pwm_device *d) {
    d->level = pins_level(d->pin);
    d->have_rise = 0;
    d->period = 0;
    d->duty = -1;
    d->last_edge = harness_avr()->cycle;
}

static void meter_edge(pwm_device *d, uint8_t level) {
    uint64_t now = harness_avr()->cycle;
    if (level == d->level) {
        return;
    }
    d->active = 1;
    d->level = level;
    d->last_edge = now;
    if (level) {
        if (d->have_rise && d->last_fall > d->last_rise && now > d->last_rise) {
            d->period = now - d->last_rise;
            d->duty = (double)(d->last_fall - d->last_rise) / (double)d->period;
        }
        d->last_rise = now;
        d->have_rise = 1;
    } else {
        d->last_fall = now;
    }
}

/* Look at the pin now: who drives it (a switch restarts the meter), its level, its
 * comparator's duty (or -1). */
static double look(pwm_device *d) {
    int running = 0;
    double period;
    double duty = comparator_duty(d, &running, &period);
    uint8_t driven = duty >= 0;
    if (driven != d->driven) {
        d->driven = driven;
        meter_reset(d);
    }
    if (driven) {
        d->active |= (uint8_t)running;
    } else {
        meter_edge(d, pins_level(d->pin));
    }
    return duty;
}

/* Every change of the pin's port (PORT, DDR, or the comparator's output). */
static void on_pin(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)value;
    look((pwm_device *)param);
}

static double pwm_sample(signal_t *s) {
    pwm_device *d = s->device;
    double duty = look(d);
    if (duty >= 0) {
        return duty;
    }
    if (d->duty < 0 || d->period == 0 || d->period > harness_cycles_us(MAX_WAVE_US) ||
        harness_avr()->cycle - d->last_edge > 2 * d->period + 16) {
        return d->level;
    }
    return d->duty;
}

static const char *pwm_parse(signal_t *s, const char *rest) {
    static char message[160];
    pwm_device *d = calloc(1, sizeof *d);
    const board_t *board = harness_board();
    s->device = d;
    const board_pin *pin = NULL;
    if (sscanf(rest, "%d", &d->pin) == 1) {
        pin = board_pin_at(board, d->pin);
    }
    if (!pin || !pin->timer || device_count == MAX_PWM) {
        snprintf(message, sizeof message, "pwm needs a timer output pin (%s)", board_pwm_pins(board));
        return message;
    }
    d->timer = board_timer_named(board, pin->timer);
    d->comparator = pin->comparator;
    d->duty = -1;
    devices[device_count++] = d;
    return NULL;
}

static void pwm_attach(signal_t *s) {
    pwm_device *d = s->device;
    avr_irq_register_notify(pins_irq(d->pin), on_pin, d);
}

static void pwm_stats(FILE *out) {
    fputs(", \"pwm_idle_pins\": [", out);
    int listed = 0;
    for (int i = 0; i < device_count; i++) {
        look(devices[i]);
        if (!devices[i]->active) {
            fprintf(out, "%s%d", listed++ ? ", " : "", devices[i]->pin);
        }
    }
    fputc(']', out);
}

/* The timer comparator that drives ``pin`` as a device to read (0: not a timer pin). */
static int pin_comparator(int pin, pwm_device *d) {
    const board_t *board = harness_board();
    const board_pin *p = board_pin_at(board, pin);
    if (!p || !p->timer) {
        return 0;
    }
    *d = (pwm_device){.pin = pin, .timer = board_timer_named(board, p->timer), .comparator = p->comparator};
    return 1;
}

int pwm_comparator_pulse(int pin, double *high_cycles, double *period_cycles) {
    pwm_device d;
    if (!pin_comparator(pin, &d)) {
        return 0;
    }
    int running = 0;
    double period = 0;
    double duty = comparator_duty(&d, &running, &period);
    double cycles = prescale(d.timer, reg((uint16_t)(d.timer->tccra + 1)));
    if (duty < 0 || !running || period <= 0 || cycles <= 0) {
        return 0;
    }
    *period_cycles = period * cycles;
    *high_cycles = duty * *period_cycles;
    return 1;
}

uint64_t pwm_timer_key(char name) {
    const board_timer *t = board_timer_named(harness_board(), name);
    comparator_regs r;
    read_regs(t, 0, &r);
    return r.wgm | (uint64_t)r.cs << 4 | (uint64_t)r.top << 8;
}

/* A wave high on [rise, fall) (counts from BOTTOM) of each period, all in timer counts. */
static int periodic(pwm_wave_t *w, double cycles, uint64_t period, uint64_t rise, uint64_t fall) {
    uint64_t per_count = (uint64_t)cycles;
    w->periodic = 1;
    w->period = period * per_count;
    w->rise = rise % period * per_count;
    w->fall = fall % period * per_count;
    return 1;
}

static int constant(pwm_wave_t *w, uint8_t level) {
    w->periodic = 0;
    w->level = level;
    return 1;
}

int pwm_wave(int pin, pwm_wave_t *w) {
    pwm_device d;
    if (!pin_comparator(pin, &d)) {
        return 0;
    }
    int running = 0;
    double period = 0;
    double duty = comparator_duty(&d, &running, &period);
    if (duty < 0) {
        return 0;
    }
    w->timer = d.timer->name;
    comparator_regs r;
    read_regs(d.timer, d.comparator, &r);
    double cycles = prescale(d.timer, r.cs);
    uint8_t held = (uint8_t)latch(&d);
    if (!running || cycles <= 0) {
        return constant(w, held); /* stopped, or counting an external clock: as it was */
    }
    uint64_t top = r.top, compare = r.compare;
    wave_t wave = r.mode.wave;
    if (r.com == 1) {
        /* toggled at each match: the match time apart (phase correct: TOP, twice a period) */
        if (compare > top || (wave == W_PHASE && top == 0)) {
            return constant(w, held);
        }
        uint64_t half = wave == W_PHASE ? 2 * top : top + 1;
        uint64_t at = wave == W_PHASE ? top : compare + 1;
        return periodic(w, cycles, 2 * half, at, at + half);
    }
    if (wave == W_NORMAL || wave == W_CTC) {
        return constant(w, compare <= top ? r.com == 3 : held);
    }
    uint64_t match = compare < top ? compare : top;
    if (wave == W_FAST) {
        /* high from BOTTOM for OCR + 1 counts of TOP + 1 (inverted: the rest) */
        if (match + 1 >= top + 1) {
            return constant(w, r.com == 2);
        }
        return r.com == 2 ? periodic(w, cycles, top + 1, 0, match + 1) : periodic(w, cycles, top + 1, match + 1, 0);
    }
    /* phase correct: high while the counter is below OCR, OCR counts either side of BOTTOM */
    if (top == 0) {
        return constant(w, held);
    }
    if (match == 0 || match == top) {
        return constant(w, (match == top) == (r.com == 2));
    }
    return r.com == 2 ? periodic(w, cycles, 2 * top, 2 * top - match, match)
                      : periodic(w, cycles, 2 * top, match, 2 * top - match);
}

const signal_kind pwm_kind = {"pwm", 0, pwm_parse, pwm_attach, pwm_sample, NULL, pwm_stats};
