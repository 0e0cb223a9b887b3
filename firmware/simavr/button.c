/* A push button between a pin and ground, read with the MCU's pull-up (coupling:
 * out <id> int 0 1 <default> button <pin> <bounce_us> <bounces>; the signal is 1
 * while pressed, which pulls the pin low; released, the pin is high).
 *
 * Contacts bounce: on every change of the signal the pin makes a burst of 2 x bounces
 * + 1 transitions over bounce_us before it settles. The first is at once (the
 * contact closes or opens), then it alternates, the k-th (k >= 1) at bounce_us x
 * (k - 1 + u) / (2 x bounces), u in [0.2, 1) from a pseudo-random sequence seeded by
 * the pin, so every run bounces the same; the last leaves the new level, at most
 * bounce_us after the first. bounce_us 0 or bounces 0 is a clean edge. A change during
 * a burst starts a new burst toward the new level. Buttons pressed or released while
 * the firmware had the pin as an input without its pull-up are listed in the stats
 * (button_no_pullup_pins): on the bench such a pin floats when released. */
#include "button.h"

#include <inttypes.h>
#include <stdlib.h>

#include <sim_cycle_timers.h>

#include "harness.h"
#include "pins.h"

#define MAX_BUTTONS 16
#define MAX_BOUNCES 50

typedef struct {
    int pin, bounces;
    double bounce_us;
    uint8_t level, target;
    int transition; /* of the burst under way */
    uint32_t random;
    double start, times[2 * MAX_BOUNCES + 1]; /* the burst's cycle, its transitions' offsets (us) */
    uint8_t no_pullup;
} button_device;

static button_device *buttons[MAX_BUTTONS];
static int button_count;
static uint64_t transitions;

static double next_unit(button_device *d) {
    d->random = d->random * 1103515245u + 12345u; /* the C standard's example generator */
    return 0.2 + 0.8 * (double)(d->random >> 16 & 0x7FFF) / 32768.0;
}

static void set_level(button_device *d, uint8_t level) {
    if (level != d->level) {
        transitions++;
    }
    d->level = level;
    pins_drive(d->pin, level);
}

static avr_cycle_count_t button_step(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)when;
    button_device *d = param;
    int last = 2 * d->bounces;
    set_level(d, d->transition % 2 == 0 ? d->target : !d->target);
    if (d->transition == last) {
        return 0;
    }
    d->transition++;
    avr_cycle_count_t at = (avr_cycle_count_t)(d->start + (double)harness_cycles_us(d->times[d->transition]));
    return at > avr->cycle ? at : avr->cycle + 1;
}

static void button_apply(signal_t *s) {
    button_device *d = s->device;
    avr_t *avr = harness_avr();
    uint8_t target = !(s->value > (s->min + s->max) / 2); /* pressed pulls the pin low */
    if (target == d->target) {
        return;
    }
    if (!pins_is_output(d->pin) && !pins_pullup(d->pin)) {
        d->no_pullup = 1;
    }
    d->target = target;
    avr_cycle_timer_cancel(avr, button_step, d);
    if (d->bounces == 0 || d->bounce_us <= 0) {
        set_level(d, target);
        return;
    }
    int count = 2 * d->bounces;
    d->times[0] = 0;
    for (int k = 1; k <= count; k++) {
        d->times[k] = d->bounce_us * ((double)(k - 1) + next_unit(d)) / (double)count;
    }
    d->start = (double)avr->cycle;
    d->transition = 0;
    button_step(avr, avr->cycle, d);
    if (d->transition > 0) {
        avr_cycle_timer_register(avr, harness_cycles_us(d->times[1]), button_step, d);
    }
}

static const char *button_parse(signal_t *s, const char *rest) {
    static char message[160];
    button_device *d = calloc(1, sizeof *d);
    s->device = d;
    if (sscanf(rest, "%d %lf %d", &d->pin, &d->bounce_us, &d->bounces) != 3 || pins_check(d->pin) ||
        !(d->bounce_us >= 0 && d->bounce_us <= 100000) || d->bounces < 0 || d->bounces > MAX_BOUNCES ||
        button_count == MAX_BUTTONS) {
        snprintf(message, sizeof message, "button needs its pin (0..%d), bounce_us 0..100000 and bounces 0..%d",
                 harness_board()->pin_count - 1, MAX_BOUNCES);
        return message;
    }
    d->random = (uint32_t)d->pin * 2654435761u + 1u;
    buttons[button_count++] = d;
    return NULL;
}

static void button_attach(signal_t *s) {
    button_device *d = s->device;
    d->target = !(s->value > (s->min + s->max) / 2);
    d->level = d->target;
    pins_drive(d->pin, d->level); /* the default, settled */
}

static void button_stats(FILE *out) {
    fprintf(out, ", \"button_transitions\": %" PRIu64 ", \"button_no_pullup_pins\": [", transitions);
    int listed = 0;
    for (int i = 0; i < button_count; i++) {
        if (buttons[i]->no_pullup) {
            fprintf(out, "%s%d", listed++ ? ", " : "", buttons[i]->pin);
        }
    }
    fputc(']', out);
}

const signal_kind button_kind = {"button", 1, button_parse, button_attach, NULL, button_apply, button_stats};
