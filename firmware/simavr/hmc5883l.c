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
    uint8_t regs[REGISTERS];
    twi_registers bus;
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

/* The register pointer wraps at 13; only the config registers 0..2 take writes. */
static uint8_t compass_select(void *context, uint8_t byte) {
    (void)context;
    return (uint8_t)(byte % REGISTERS);
}

static void compass_write(void *context, uint8_t reg, uint8_t value) {
    compass_device *d = context;
    if (reg < 3) {
        d->regs[reg] = value;
    }
}

static uint8_t compass_read(void *context, uint8_t reg) {
    i2c_reads++;
    return ((compass_device *)context)->regs[reg];
}

static uint8_t compass_next(void *context, uint8_t reg) {
    (void)context;
    return (uint8_t)((reg + 1) % REGISTERS);
}

static const char *compass_parse(signal_t *s, const char *rest) {
    static const uint8_t reset[REGISTERS] = {0x10, 0x20, 0x01, 0, 0, 0, 0, 0, 0, 0x01, 'H', '4', '3'};
    compass_device *d = calloc(1, sizeof *d);
    s->device = d;
    int taken = 0;
    if (sscanf(rest, "%i", &d->bus.address) == 1) {
        for (int i = 0; i < compass_count; i++) {
            taken |= compasses[i]->bus.address == d->bus.address;
        }
    }
    if (d->bus.address < 1 || d->bus.address > 127 || taken || compass_count == MAX_COMPASSES) {
        return "hmc5883l needs a 7-bit address (one compass per address)";
    }
    memcpy(d->regs, reset, sizeof reset);
    d->bus.select = compass_select;
    d->bus.write = compass_write;
    d->bus.read = compass_read;
    d->bus.next = compass_next;
    d->bus.context = d;
    compasses[compass_count++] = d;
    return NULL;
}

static void compass_attach(signal_t *s) {
    twi_bus_add_registers(&((compass_device *)s->device)->bus);
    compass_update(s);
}

static void compass_stats(FILE *out) { fprintf(out, ", \"i2c_reads\": %" PRIu64, i2c_reads); }

const signal_kind hmc5883l_kind = {"hmc5883l", 1, compass_parse, compass_attach, NULL, compass_update,
                                   compass_stats};
