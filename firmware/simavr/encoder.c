/* Wheel encoders as the firmware sees them: edges on its pins (coupling:
 * out <id> float -32768 32767 <default> quadrature <a> <b>, or ... pulses <pin>).
 *
 * The signal is the wheel's position in encoder counts, a 16-bit value that wraps
 * (-32768..32767, exact in a FLOAT signal of that range): each frame's change is the
 * shortest difference from the last value, (int16_t)(new - old), so the position is
 * unwrapped for ever as long as the wheel turns less than 32767 counts per frame.
 *
 * quadrature: one count per transition of A or B (x4 decoding). The levels follow the
 * position: position mod 4 = 0, 1, 2, 3 is (A, B) = (0, 0), (1, 0), (1, 1), (0, 1), so
 * counting up (forward) A leads B by a quarter period: A rises while B is low;
 * counting down B leads A. A profile that counts the other way swaps the pins.
 *
 * pulses: a single-channel encoder (an optical slot disc on one pin): one pulse (a
 * rising and a falling edge) per count the position moves, either way; the direction
 * is not on the wire (sketches take it from their motor command).
 *
 * Timing: the transitions a frame asks for are spread evenly over the frame period,
 * timed in AVR cycles (centred in equal slots, so they are done before the next
 * frame), which gives the edges the rate of the simulated wheel. Transitions not yet
 * made when a frame comes are spread with the new ones over the next period. The
 * slots are at least MIN_SLOT cycles (400 k transitions a second); a faster wheel
 * falls behind and catches up when it slows down. */
#include "encoder.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include <sim_cycle_timers.h>

#include "harness.h"
#include "pins.h"

#define MIN_SLOT 40.0

typedef struct {
    int a, b; /* b < 0 for a single channel */
    int16_t last;          /* the signal's last value */
    int64_t position;      /* quadrature: the position the pins show */
    int64_t target;        /* quadrature: the position asked for */
    uint64_t done, goal;   /* pulses: transitions made, asked for */
    uint8_t level;         /* pulses: the pin's level */
    double slot, next;     /* cycles between transitions, cycle of the next one */
} encoder_device;

static uint64_t edges;

static int64_t remaining(const encoder_device *d) {
    return d->b >= 0 ? d->target - d->position : (int64_t)(d->goal - d->done);
}

static void show(const encoder_device *d) {
    if (d->b >= 0) {
        unsigned phase = (unsigned)(d->position & 3);
        pins_drive(d->a, phase == 1 || phase == 2);
        pins_drive(d->b, phase >= 2);
    } else {
        pins_drive(d->a, d->level);
    }
}

static avr_cycle_count_t encoder_step(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)when;
    encoder_device *d = param;
    int64_t left = remaining(d);
    if (left == 0) {
        return 0;
    }
    if (d->b >= 0) {
        d->position += left > 0 ? 1 : -1;
    } else {
        d->done++;
        d->level ^= 1;
    }
    edges++;
    show(d);
    if (remaining(d) == 0) {
        return 0;
    }
    d->next += d->slot;
    avr_cycle_count_t at = (avr_cycle_count_t)ceil(d->next);
    return at > avr->cycle ? at : avr->cycle + 1;
}

static void encoder_apply(signal_t *s) {
    encoder_device *d = s->device;
    avr_t *avr = harness_avr();
    int16_t value = (int16_t)lround(s->value);
    int16_t change = (int16_t)(uint16_t)((uint16_t)value - (uint16_t)d->last);
    d->last = value;
    if (d->b >= 0) {
        d->target += change;
    } else {
        d->goal += 2 * (uint64_t)llabs(change);
    }
    int64_t left = llabs(remaining(d));
    if (change == 0) {
        return; /* the transitions under way keep their pace */
    }
    if (left == 0) {
        avr_cycle_timer_cancel(avr, encoder_step, d);
        return;
    }
    d->slot = signal_link_period_cycles() / (double)left;
    if (d->slot < MIN_SLOT) {
        d->slot = MIN_SLOT;
    }
    d->next = (double)avr->cycle + d->slot / 2;
    avr_cycle_count_t delay = (avr_cycle_count_t)ceil(d->slot / 2);
    avr_cycle_timer_register(avr, delay > 0 ? delay : 1, encoder_step, d);
}

static const char *encoder_parse(signal_t *s, const char *rest, int quadrature) {
    static char message[128];
    encoder_device *d = calloc(1, sizeof *d);
    s->device = d;
    d->b = -1;
    int fields = quadrature ? sscanf(rest, "%d %d", &d->a, &d->b) : sscanf(rest, "%d", &d->a);
    if (fields != (quadrature ? 2 : 1) || pins_check(d->a) || (quadrature && (pins_check(d->b) || d->a == d->b))) {
        snprintf(message, sizeof message, "%s, 0..%d",
                 quadrature ? "quadrature needs two pins, A and B" : "pulses needs its pin",
                 harness_board()->pin_count - 1);
        return message;
    }
    if (!s->is_float || s->min != -32768 || s->max != 32767) {
        snprintf(message, sizeof message, "%s needs a float signal -32768 32767 (a wrapping 16-bit count)",
                 quadrature ? "quadrature" : "pulses");
        return message;
    }
    return NULL;
}

static const char *quadrature_parse(signal_t *s, const char *rest) { return encoder_parse(s, rest, 1); }
static const char *pulses_parse(signal_t *s, const char *rest) { return encoder_parse(s, rest, 0); }

static void encoder_attach(signal_t *s) {
    encoder_device *d = s->device;
    d->last = (int16_t)lround(s->value); /* the default: where the wheel starts */
    d->position = d->target = d->last;
    show(d);
}

static void encoder_stats(FILE *out) { fprintf(out, ", \"encoder_edges\": %" PRIu64, edges); }

const signal_kind quadrature_kind = {"quadrature", 1, quadrature_parse, encoder_attach, NULL, encoder_apply,
                                     encoder_stats};
const signal_kind pulses_kind = {"pulses", 1, pulses_parse, encoder_attach, NULL, encoder_apply, encoder_stats};
