/* The HMC5883L: registers 0..12 (config A/B, mode, X, Z, Y, status, id "H43"); X and Y
 * hold cos and sin of the heading x 1000, Z holds 0, as the bridge board's template. */
#include "hmc5883l.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "twi_bus.h"

#define REGISTERS 13
#define MAX_COMPASSES 4

typedef struct {
    int address; /* 7-bit */
    uint8_t regs[REGISTERS], pointer, selected, index;
} compass_device;

static compass_device *compasses[MAX_COMPASSES];
static int compass_count;
static uint64_t i2c_reads;

static void compass_update(signal_t *s) {
    compass_device *d = s->device;
    double radians = s->value * (M_PI / 180.0);
    int16_t x = (int16_t)(cos(radians) * 1000.0);
    int16_t y = (int16_t)(sin(radians) * 1000.0);
    d->regs[3] = (uint8_t)((uint16_t)x >> 8);
    d->regs[4] = (uint8_t)((uint16_t)x & 0xFF);
    d->regs[5] = 0;
    d->regs[6] = 0;
    d->regs[7] = (uint8_t)((uint16_t)y >> 8);
    d->regs[8] = (uint8_t)((uint16_t)y & 0xFF);
}

/* The slave side of simavr's TWI messages, as its i2c_eeprom part does it: the first
 * written byte sets the register pointer, later ones the config registers; reads
 * return registers from the pointer on, which advances (wrapping at 13). */
static void compass_twi(avr_twi_msg_irq_t v, avr_irq_t *reply, void *context) {
    compass_device *d = context;
    if (v.u.twi.msg & TWI_COND_STOP) {
        d->selected = 0;
    }
    if (v.u.twi.msg & TWI_COND_START) {
        d->selected = 0;
        d->index = 0;
        if ((v.u.twi.addr >> 1) == d->address) {
            d->selected = v.u.twi.addr;
            avr_raise_irq(reply, avr_twi_irq_msg(TWI_COND_ACK, d->selected, 1));
        }
    }
    if (!d->selected) {
        return;
    }
    if (v.u.twi.msg & TWI_COND_WRITE) {
        avr_raise_irq(reply, avr_twi_irq_msg(TWI_COND_ACK, d->selected, 1));
        if (d->index == 0) {
            d->pointer = v.u.twi.data % REGISTERS;
        } else {
            if (d->pointer < 3) {
                d->regs[d->pointer] = v.u.twi.data;
            }
            d->pointer = (uint8_t)((d->pointer + 1) % REGISTERS);
        }
        d->index++;
    }
    if (v.u.twi.msg & TWI_COND_READ) {
        uint8_t data = d->regs[d->pointer];
        d->pointer = (uint8_t)((d->pointer + 1) % REGISTERS);
        i2c_reads++;
        avr_raise_irq(reply, avr_twi_irq_msg(TWI_COND_READ, d->selected, data));
    }
}

static const char *compass_parse(signal_t *s, const char *rest) {
    static const uint8_t reset[REGISTERS] = {0x10, 0x20, 0x01, 0, 0, 0, 0, 0, 0, 0x01, 'H', '4', '3'};
    compass_device *d = calloc(1, sizeof *d);
    s->device = d;
    int taken = 0;
    if (sscanf(rest, "%i", &d->address) == 1) {
        for (int i = 0; i < compass_count; i++) {
            taken |= compasses[i]->address == d->address;
        }
    }
    if (d->address < 1 || d->address > 127 || taken || compass_count == MAX_COMPASSES) {
        return "hmc5883l needs a 7-bit address (one compass per address)";
    }
    memcpy(d->regs, reset, sizeof reset);
    compasses[compass_count++] = d;
    return NULL;
}

static void compass_attach(signal_t *s) {
    twi_bus_add(compass_twi, s->device);
    compass_update(s);
}

static void compass_stats(FILE *out) { fprintf(out, ", \"i2c_reads\": %" PRIu64, i2c_reads); }

const signal_kind hmc5883l_kind = {"hmc5883l", 1, compass_parse, compass_attach, NULL, compass_update,
                                   compass_stats};
