/* Ultrasonic rangers as the firmware sees them (coupling: out ... echo <trigger> <echo>,
 * out ... ping <pin>; the signal's value is the distance in cm).
 *
 * HC-SR04 (ElecFreaks datasheet): a trigger pulse of at least 10 us starts a
 * measurement; the module sends 8 cycles of 40 kHz (200 us) and raises its echo after
 * them, then holds it high for the sound's round trip (distance x 58.2 us: 343.6 m/s,
 * the figure the bridge board's template and robot_mcu share) or, with nothing within
 * 400 cm, for 38 ms. Measured modules raise the echo 0.45 to 2.3 ms after the trigger;
 * we take 450 us. A trigger during a measurement, or shorter than 10 us, is ignored
 * (counted). Distances below 2 cm read as 2 cm.
 *
 * PING))) (Parallax datasheet): one SIG pin. The firmware drives a pulse of at least
 * 2 us on it, then makes it an input; 750 us after the pulse (the holdoff) the module
 * drives SIG high for the round trip, 115 us (2 cm) to 18.5 ms (nothing within 3 m).
 * mBot-style single-pin modules are read the same way. The trigger is what the firmware
 * drives (the pin an output and high); the module's own echo is not a trigger. */
#include "hcsr04.h"

#include <inttypes.h>
#include <stdlib.h>

#include <sim_cycle_timers.h>

#include "harness.h"
#include "pins.h"

typedef struct {
    double min_trigger_us;  /* shorter trigger pulses start nothing */
    double delay_us;        /* trigger's falling edge -> echo's rising edge */
    double us_per_cm;       /* echo width per cm */
    double min_width_us;    /* the nearest distance it reports */
    double max_range_cm;    /* beyond it: no echo */
    double no_echo_width_us; /* the echo's width with nothing in range */
} sonar_timing;

static const sonar_timing hcsr04_timing = {10.0, 450.0, 58.2, 2 * 58.2, 400.0, 38000.0};
static const sonar_timing ping_timing = {2.0, 750.0, 58.2, 115.0, 300.0, 18500.0};

typedef enum { IDLE, WAITING, ECHOING } sonar_state;

typedef struct {
    int trigger, echo; /* the same pin for a single-signal ranger */
    uint8_t single;
    const sonar_timing *timing;
    sonar_state state;
    uint8_t trigger_level;
    uint64_t trigger_rise;
    avr_cycle_count_t width; /* of the echo due */
    signal_t *signal;
} sonar_device;

static uint64_t echoes, ignored_triggers, short_triggers;

static avr_cycle_count_t echo_end(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)avr;
    (void)when;
    sonar_device *d = param;
    pins_drive(d->echo, 0);
    d->state = IDLE;
    return 0;
}

static avr_cycle_count_t echo_start(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)when;
    sonar_device *d = param;
    d->state = ECHOING;
    echoes++;
    pins_drive(d->echo, 1);
    avr_cycle_timer_register(avr, d->width, echo_end, d);
    return 0;
}

/* The echo's width for the distance now. */
static avr_cycle_count_t echo_width(const sonar_device *d) {
    const sonar_timing *t = d->timing;
    double cm = d->signal->value;
    double us = cm > t->max_range_cm ? t->no_echo_width_us : cm * t->us_per_cm;
    return harness_cycles_us(us < t->min_width_us ? t->min_width_us : us);
}

static void trigger_level(sonar_device *d, uint8_t level) {
    avr_t *avr = harness_avr();
    if (level == d->trigger_level) {
        return;
    }
    d->trigger_level = level;
    if (level) {
        d->trigger_rise = avr->cycle;
        return;
    }
    if (d->state != IDLE) {
        ignored_triggers++;
    } else if (avr->cycle - d->trigger_rise < harness_cycles_us(d->timing->min_trigger_us)) {
        short_triggers++;
    } else {
        d->state = WAITING;
        d->width = echo_width(d);
        avr_cycle_timer_register(avr, harness_cycles_us(d->timing->delay_us), echo_start, d);
    }
}

/* The trigger pin changed (the new level is the argument, not yet the IRQ's value). */
static void on_trigger(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    trigger_level((sonar_device *)param, value & 1);
}

/* The signal pin of a single-signal ranger changed: its trigger is what the firmware
 * drives (the registers are current in the hook), not what the module drives. */
static void on_signal_pin(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)value;
    sonar_device *d = param;
    trigger_level(d, pins_is_output(d->trigger) && pins_level(d->trigger));
}

static const char *sonar_parse(signal_t *s, const char *rest, uint8_t single) {
    static char message[128];
    sonar_device *d = calloc(1, sizeof *d);
    s->device = d;
    d->signal = s;
    d->single = single;
    d->timing = single ? &ping_timing : &hcsr04_timing;
    int fields = single ? sscanf(rest, "%d", &d->trigger) : sscanf(rest, "%d %d", &d->trigger, &d->echo);
    if (single) {
        d->echo = d->trigger;
    }
    if (fields != (single ? 1 : 2) || pins_check(d->trigger) || pins_check(d->echo)) {
        snprintf(message, sizeof message, "%s, 0..%d",
                 single ? "ping needs its signal pin" : "echo needs a trigger pin and an echo pin",
                 harness_board()->pin_count - 1);
        return message;
    }
    return NULL;
}

static const char *echo_parse(signal_t *s, const char *rest) { return sonar_parse(s, rest, 0); }
static const char *ping_parse(signal_t *s, const char *rest) { return sonar_parse(s, rest, 1); }

static void sonar_attach(signal_t *s) {
    sonar_device *d = s->device;
    avr_irq_register_notify(pins_irq(d->trigger), d->single ? on_signal_pin : on_trigger, d);
    pins_drive(d->echo, 0);
}

static void sonar_apply(signal_t *s) { (void)s; /* read when the next trigger ends */ }

static void sonar_stats(FILE *out) {
    fprintf(out, ", \"echoes\": %" PRIu64 ", \"sonar_ignored_triggers\": %" PRIu64 ", \"sonar_short_triggers\": %" PRIu64,
            echoes, ignored_triggers, short_triggers);
}

const signal_kind echo_kind = {"echo", 1, echo_parse, sonar_attach, NULL, sonar_apply, sonar_stats};
const signal_kind ping_kind = {"ping", 1, ping_parse, sonar_attach, NULL, sonar_apply, sonar_stats};
