/* Pulses the firmware drives on a pin, timed in AVR cycles from the pin's edges
 * (coupling: in <id> <min> <max> servo <pin>, in <id> <min> <max> tone <pin>).
 *
 * servo: the width in microseconds of the last complete high pulse (a hobby servo's
 * command, 544..2400 us from Servo.h, every 20 ms); 0 once no pulse has ended for
 * 50 ms (the servo's input is idle: it holds no position). While a timer's comparator
 * drives the pin in a PWM mode (a servo on Timer1's fast PWM), the width follows from
 * the timer's registers, as for the pwm kind (simavr does not run every mode).
 *
 * tone: the frequency in Hz of the square wave on the pin (tone() toggles it from a
 * timer interrupt): the rising edges since the last frame over the time they span,
 * from the last rising edge of the frame before; with no rising edge in a frame, the
 * last frequency holds while the wave may still be running, and it is 0 once the pin
 * has not risen for two of its periods (silent: noTone(), or a duration that ended). */
#include "pulse_meter.h"

#include <inttypes.h>
#include <stdlib.h>

#include "harness.h"
#include "pins.h"
#include "pwm.h"

#define SERVO_IDLE_US 50000.0
/* Before the first whole period, a wave that has not risen again this long is silent. */
#define TONE_FIRST_PERIOD_US 50000.0

typedef struct {
    int pin;
    uint8_t level, have_rise, have_width;
    uint64_t rise, fall, width;         /* servo */
    uint64_t anchor, last_rise, rises;  /* tone: rises after anchor, up to last_rise */
    uint8_t sounding;
    double period, frequency;           /* tone: cycles per period, Hz */
} pulse_device;

static uint64_t servo_pulses, tone_rises;

static void on_servo_pin(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    pulse_device *d = param;
    uint8_t level = value & 1;
    uint64_t now = harness_avr()->cycle;
    double high, period;
    if (level == d->level || pwm_comparator_pulse(d->pin, &high, &period)) {
        d->level = level;
        return; /* a timer's output: its registers say it (servo_sample) */
    }
    d->level = level;
    if (level) {
        d->rise = now;
        d->have_rise = 1;
    } else if (d->have_rise) {
        d->width = now - d->rise;
        d->fall = now;
        d->have_width = 1;
        servo_pulses++;
    }
}

static double servo_sample(signal_t *s) {
    pulse_device *d = s->device;
    double f = harness_frequency(), high, period, us;
    if (pwm_comparator_pulse(d->pin, &high, &period)) {
        /* a timer's PWM output: from its registers, and the last pulse once it stops */
        d->width = (uint64_t)(high + 0.5);
        d->fall = harness_avr()->cycle;
        d->have_width = 1;
        us = high * 1e6 / f;
    } else if (!d->have_width || (double)(harness_avr()->cycle - d->fall) > SERVO_IDLE_US * f / 1e6) {
        us = 0;
    } else {
        us = (double)d->width * 1e6 / f;
    }
    double fraction = (us - s->min) / (s->max - s->min);
    return fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
}

static void on_tone_pin(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    pulse_device *d = param;
    uint8_t level = value & 1;
    uint64_t now = harness_avr()->cycle;
    if (level == d->level) {
        return;
    }
    d->level = level;
    if (!level) {
        return;
    }
    tone_rises++;
    if (d->sounding) {
        d->rises++;
    } else {
        d->sounding = 1;
        d->anchor = now;
        d->rises = 0;
        d->period = 0;
    }
    d->last_rise = now;
}

static double tone_sample(signal_t *s) {
    pulse_device *d = s->device;
    uint64_t now = harness_avr()->cycle;
    if (d->sounding && d->rises > 0) {
        d->period = (double)(d->last_rise - d->anchor) / (double)d->rises;
        d->frequency = harness_frequency() / d->period;
        d->anchor = d->last_rise;
        d->rises = 0;
    }
    double silence = d->period > 0 ? 2 * d->period : TONE_FIRST_PERIOD_US * harness_frequency() / 1e6;
    if (d->sounding && (double)(now - d->last_rise) > silence) {
        d->sounding = 0;
    }
    double hz = d->sounding && d->period > 0 ? d->frequency : 0.0;
    double fraction = (hz - s->min) / (s->max - s->min);
    return fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
}

static const char *pulse_parse(signal_t *s, const char *rest) {
    static char message[96];
    pulse_device *d = calloc(1, sizeof *d);
    s->device = d;
    if (sscanf(rest, "%d", &d->pin) != 1 || pins_check(d->pin)) {
        snprintf(message, sizeof message, "%s needs its pin, 0..%d", s->kind->name, harness_board()->pin_count - 1);
        return message;
    }
    return NULL;
}

static void servo_attach(signal_t *s) {
    pulse_device *d = s->device;
    d->level = pins_level(d->pin);
    avr_irq_register_notify(pins_irq(d->pin), on_servo_pin, d);
}

static void tone_attach(signal_t *s) {
    pulse_device *d = s->device;
    d->level = pins_level(d->pin);
    avr_irq_register_notify(pins_irq(d->pin), on_tone_pin, d);
}

static void servo_stats(FILE *out) { fprintf(out, ", \"servo_pulses\": %" PRIu64, servo_pulses); }
static void tone_stats(FILE *out) { fprintf(out, ", \"tone_rises\": %" PRIu64, tone_rises); }

const signal_kind servo_kind = {"servo", 0, pulse_parse, servo_attach, servo_sample, NULL, servo_stats};
const signal_kind tone_kind = {"tone", 0, pulse_parse, tone_attach, tone_sample, NULL, tone_stats};
