/* Pin levels, external drive, and the level and adc signal kinds. */
#include "pins.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <avr_adc.h>
#include <avr_ioport.h>

#include "harness.h"

static const board_pin *pin_of(int pin) { return board_pin_at(harness_board(), pin); }

avr_irq_t *pins_irq(int pin) {
    const board_pin *p = pin_of(pin);
    return avr_io_getirq(harness_avr(), AVR_IOCTL_IOPORT_GETIRQ(p->port), p->bit);
}

uint8_t pins_is_output(int pin) {
    const board_pin *p = pin_of(pin);
    return harness_avr()->data[board_port_register(p->port) + 1] >> p->bit & 1;
}

uint8_t pins_pullup(int pin) {
    const board_pin *p = pin_of(pin);
    const uint8_t *data = harness_avr()->data;
    uint16_t base = board_port_register(p->port);
    return !(data[base + 1] >> p->bit & 1) && (data[base + 2] >> p->bit & 1);
}

uint8_t pins_level(int pin) {
    const board_pin *p = pin_of(pin);
    uint16_t base = board_port_register(p->port);
    const uint8_t *data = harness_avr()->data;
    uint8_t value = (data[base + 1] >> p->bit & 1) ? data[base + 2] : data[base];
    return value >> p->bit & 1;
}

/* simavr keeps one external drive per port: the mask and levels of every pin driven. */
static uint8_t masks[26], values[26];

void pins_drive(int pin, uint8_t level) {
    const board_pin *p = pin_of(pin);
    int i = p->port - 'A';
    masks[i] |= (uint8_t)(1 << p->bit);
    values[i] = (uint8_t)((values[i] & ~(1 << p->bit)) | (level << p->bit));
    avr_ioport_external_t external = {.name = (unsigned long)p->port, .mask = masks[i], .value = values[i]};
    avr_ioctl(harness_avr(), AVR_IOCTL_IOPORT_SET_EXTERNAL(p->port), &external);
    avr_raise_irq(pins_irq(pin), level);
}

void pins_restore(void) {
    uint8_t *data = harness_avr()->data;
    for (int i = 0; i < 26; i++) {
        uint16_t pin_register = masks[i] ? board_port_register((char)('A' + i)) : 0;
        if (pin_register) {
            data[pin_register] = (uint8_t)((data[pin_register] & ~masks[i]) | (values[i] & masks[i]));
        }
    }
}

const char *pins_check(int pin) {
    static char message[64];
    if (pin_of(pin)) {
        return NULL;
    }
    snprintf(message, sizeof message, "a digital pin 0..%d", harness_board()->pin_count - 1);
    return message;
}

/* --- level: a pin's level (in), or a level driven onto an input pin (out) -------------- */

typedef struct {
    int pin;
} level_device;

static const char *level_parse(signal_t *s, const char *rest) {
    static char message[96];
    level_device *d = calloc(1, sizeof *d);
    s->device = d;
    const char *wrong = sscanf(rest, "%d", &d->pin) == 1 ? pins_check(d->pin) : pins_check(-1);
    if (wrong) {
        snprintf(message, sizeof message, "level needs %s", wrong);
        return message;
    }
    return NULL;
}

static double level_sample(signal_t *s) { return pins_level(((level_device *)s->device)->pin); }

static void level_apply(signal_t *s) {
    pins_drive(((level_device *)s->device)->pin, s->value > (s->min + s->max) / 2);
}

static void level_attach(signal_t *s) {
    if (s->output) {
        level_apply(s); /* the default until the first frame */
    }
}

const signal_kind level_in_kind = {"level", 0, level_parse, level_attach, level_sample, NULL, NULL};
const signal_kind level_out_kind = {"level", 1, level_parse, level_attach, NULL, level_apply, NULL};

/* --- adc: millivolts on an ADC channel ------------------------------------------------------ */

typedef struct {
    int channel;
    double mv_per_unit;
} adc_device;

static const char *adc_parse(signal_t *s, const char *rest) {
    static char message[96];
    adc_device *d = calloc(1, sizeof *d);
    s->device = d;
    int channels = harness_board()->adc_channels;
    if (sscanf(rest, "%d %lf", &d->channel, &d->mv_per_unit) != 2 || d->channel < 0 || d->channel >= channels) {
        snprintf(message, sizeof message, "adc needs a channel 0..%d and millivolts per unit", channels - 1);
        return message;
    }
    return NULL;
}

static void adc_apply(signal_t *s) {
    adc_device *d = s->device;
    /* Rounded up: simavr truncates mV x 1023 / 5000, so a reading of n counts comes back
     * as n exactly. */
    double mv = ceil(s->value * d->mv_per_unit - 1e-9);
    avr_raise_irq(avr_io_getirq(harness_avr(), AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_ADC0 + d->channel),
                  (uint32_t)(mv < 0 ? 0 : mv));
}

const signal_kind adc_kind = {"adc", 1, adc_parse, adc_apply, NULL, adc_apply, NULL};
