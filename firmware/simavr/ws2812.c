/* WS2812 addressable RGB LEDs on one pin, decoded from the pin's edges as the chips
 * read them (coupling: in <id> 0 255 ws2812 <pin> <led> r|g|b; one signal per LED and
 * colour, the LEDs of a pin form one strip of as many LEDs as it has signals).
 *
 * Each bit is a high pulse: its width says 0 or 1 (WS2812B datasheet: T0H 0.4 us and
 * T1H 0.8 us, +-150 ns; the bit period 1.25 us +-600 ns). The chip samples about
 * 0.6 us after the rising edge, so a width below 0.6 us is a 0 and a longer one a 1;
 * widths outside both datasheet windows (0.25..0.55 us, 0.65..0.95 us) are decoded the
 * same way and counted (ws2812_bad_bits). The line low for at least the reset time
 * (50 us, the WS2812's figure; the WS2812B V5 asks 280 us) latches the bits received
 * since the last reset: the first LED takes the first 24 bits, G, R, B, most
 * significant bit first, and passes the rest on; bits beyond the strip leave it. An
 * LED that got fewer than 24 bits keeps its colour (counted). Low times within a
 * frame are not checked: the chips tolerate longer ones up to the reset. */
#include "ws2812.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pins.h"

#define MAX_LEDS 85 /* 255 signals */
#define MAX_STRIPS 8
#define RESET_US 50.0
#define DECIDE_NS 600.0

typedef struct {
    int pin, count;
    uint8_t level, started, attached;
    uint64_t rise, fall;
    uint32_t bits; /* received since the last reset */
    uint8_t shift[MAX_LEDS * 3];
    uint8_t shown[MAX_LEDS][3]; /* R, G, B latched */
} strip_t;

typedef struct {
    strip_t *strip;
    int led, colour; /* 0 R, 1 G, 2 B */
} led_signal;

static strip_t *strips[MAX_STRIPS];
static int strip_count;
static uint64_t frames, bad_bits, short_frames;

static void latch(strip_t *d) {
    int whole = (int)(d->bits / 24);
    if (whole > d->count) {
        whole = d->count;
    }
    if (d->bits % 24 != 0 && (int)(d->bits / 24) < d->count) {
        short_frames++;
    }
    for (int i = 0; i < whole; i++) {
        d->shown[i][0] = d->shift[3 * i + 1];
        d->shown[i][1] = d->shift[3 * i];
        d->shown[i][2] = d->shift[3 * i + 2];
    }
    if (d->bits > 0) {
        frames++;
    }
    d->bits = 0;
}

static uint64_t reset_cycles(void) { return harness_cycles_us(RESET_US); }

static void on_pin(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    strip_t *d = param;
    uint8_t level = value & 1;
    uint64_t now = harness_avr()->cycle;
    if (level == d->level) {
        return;
    }
    d->level = level;
    if (level) {
        if (d->started && now - d->fall >= reset_cycles()) {
            latch(d);
        }
        d->rise = now;
        d->started = 1;
        return;
    }
    d->fall = now;
    if (!d->started) {
        return;
    }
    double ns = (double)(now - d->rise) * 1e9 / harness_frequency();
    uint8_t bit = ns >= DECIDE_NS;
    if (!((ns >= 250 && ns <= 550) || (ns >= 650 && ns <= 950))) {
        bad_bits++;
    }
    if (d->bits < (uint32_t)d->count * 24) {
        uint8_t *byte = &d->shift[d->bits / 8];
        *byte = (uint8_t)(*byte << 1 | bit);
    }
    d->bits++;
}

static double ws2812_sample(signal_t *s) {
    led_signal *l = s->device;
    strip_t *d = l->strip;
    if (d->started && !d->level && d->bits > 0 && harness_avr()->cycle - d->fall >= reset_cycles()) {
        latch(d);
    }
    double fraction = (d->shown[l->led][l->colour] - s->min) / (s->max - s->min);
    return fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
}

static const char *ws2812_parse(signal_t *s, const char *rest) {
    static char message[128];
    led_signal *l = calloc(1, sizeof *l);
    s->device = l;
    int pin = -1;
    char colour = 0;
    if (sscanf(rest, "%d %d %c", &pin, &l->led, &colour) != 3 || pins_check(pin) || l->led < 0 ||
        l->led >= MAX_LEDS || !strchr("rgb", colour) || colour == 0) {
        snprintf(message, sizeof message, "ws2812 needs its pin (0..%d), an LED 0..%d and r, g or b",
                 harness_board()->pin_count - 1, MAX_LEDS - 1);
        return message;
    }
    l->colour = colour == 'r' ? 0 : colour == 'g' ? 1 : 2;
    for (int i = 0; i < strip_count && !l->strip; i++) {
        if (strips[i]->pin == pin) {
            l->strip = strips[i];
        }
    }
    if (!l->strip) {
        if (strip_count == MAX_STRIPS) {
            return "more than 8 ws2812 pins";
        }
        l->strip = strips[strip_count++] = calloc(1, sizeof(strip_t));
        l->strip->pin = pin;
    }
    if (l->led >= l->strip->count) {
        l->strip->count = l->led + 1;
    }
    return NULL;
}

static void ws2812_attach(signal_t *s) {
    strip_t *d = ((led_signal *)s->device)->strip;
    if (d->attached) {
        return; /* by another signal of the strip */
    }
    d->attached = 1;
    d->level = pins_level(d->pin);
    avr_irq_register_notify(pins_irq(d->pin), on_pin, d);
}

static void ws2812_stats(FILE *out) {
    fprintf(out, ", \"ws2812_frames\": %" PRIu64 ", \"ws2812_bad_bits\": %" PRIu64 ", \"ws2812_short_frames\": %" PRIu64,
            frames, bad_bits, short_frames);
}

const signal_kind ws2812_kind = {"ws2812", 0, ws2812_parse, ws2812_attach, ws2812_sample, NULL, ws2812_stats};
