/* The MPU-6050 (InvenSense register map, revision 4.2) on the TWI bus (coupling:
 * out <id> float <min> <max> <default> mpu6050 <address> ax|ay|az|gx|gy|gz|temp; one
 * chip per address, 0x68 with AD0 low or 0x69 with AD0 high, its seven signals in any
 * order: acceleration in m/s^2, rotation rate in rad/s, the die's temperature in C).
 *
 * Registers the common libraries use: SMPLRT_DIV 0x19, CONFIG 0x1A, GYRO_CONFIG 0x1B
 * and ACCEL_CONFIG 0x1C (FS_SEL, AFS_SEL in bits 4:3), INT_PIN_CFG 0x37, INT_ENABLE
 * 0x38, INT_STATUS 0x3A (DATA_RDY, bit 0, set while awake), ACCEL_XOUT_H..GYRO_ZOUT_L
 * 0x3B..0x48 (big-endian int16), USER_CTRL 0x6A, PWR_MGMT_1 0x6B (reset 0x40:
 * SLEEP; bit 7 DEVICE_RESET restores every register), PWR_MGMT_2 0x6C, WHO_AM_I
 * 0x75 (0x68 at either address). The register pointer auto-increments, so a burst
 * read from 0x3B returns the 14 output bytes; the outputs are latched at each START
 * addressed to the chip, so a burst reads one sample. Outputs: acceleration x
 * 16384 / 2^AFS_SEL LSB per g (9.80665 m/s^2), rotation rate x 131, 65.5, 32.8 or
 * 16.4 LSB per deg/s by FS_SEL, temperature (T - 36.53) x 340, rounded and clamped
 * to int16. Asleep (the power-on state) the chip does not sample: its outputs stay
 * as they were, zero from power-on or a reset, until PWR_MGMT_1's SLEEP bit is
 * cleared. The sample rate and the digital low-pass filter are stored, not modelled:
 * the outputs follow the frames (noise and bias are the simulator's). Other
 * registers are plain storage; the outputs and WHO_AM_I are read-only. */
#include "mpu6050.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "twi_bus.h"

#define REGISTERS 128
#define MAX_CHIPS 2
#define G 9.80665
enum {
    GYRO_CONFIG = 0x1B,
    ACCEL_CONFIG = 0x1C,
    INT_STATUS = 0x3A,
    ACCEL_XOUT_H = 0x3B,
    GYRO_ZOUT_L = 0x48,
    PWR_MGMT_1 = 0x6B,
    WHO_AM_I = 0x75,
};
enum { AX, AY, AZ, TEMP, GX, GY, GZ, QUANTITIES };
static const char *const quantities[QUANTITIES] = {"ax", "ay", "az", "temp", "gx", "gy", "gz"};

typedef struct {
    uint8_t regs[REGISTERS];
    double values[QUANTITIES];
    uint8_t on_bus;
    twi_registers bus;
} mpu_chip;

typedef struct {
    mpu_chip *chip;
    int quantity;
} mpu_signal;

static mpu_chip *chips[MAX_CHIPS];
static int chip_count;
static uint64_t reads, samples;

static void power_on(mpu_chip *c) {
    memset(c->regs, 0, sizeof c->regs);
    c->regs[PWR_MGMT_1] = 0x40;
    c->regs[WHO_AM_I] = 0x68;
}

static int16_t clamp16(double raw) {
    raw = round(raw);
    return (int16_t)(raw > 32767 ? 32767 : raw < -32768 ? -32768 : raw);
}

/* A START addressed to the chip: awake, it samples the values into its outputs. */
static void mpu_start(void *context, int read) {
    static const double gyro_lsb[4] = {131.0, 65.5, 32.8, 16.4};
    (void)read;
    mpu_chip *c = context;
    if (c->regs[PWR_MGMT_1] & 0x40) {
        c->regs[INT_STATUS] = 0;
        return;
    }
    double accel_lsb = 16384.0 / (double)(1 << (c->regs[ACCEL_CONFIG] >> 3 & 3));
    double rate_lsb = gyro_lsb[c->regs[GYRO_CONFIG] >> 3 & 3] * 180.0 / M_PI;
    for (int q = 0; q < QUANTITIES; q++) {
        double v = c->values[q];
        double raw = q <= AZ ? v / G * accel_lsb : q == TEMP ? (v - 36.53) * 340.0 : v * rate_lsb;
        uint16_t code = (uint16_t)clamp16(raw);
        c->regs[ACCEL_XOUT_H + 2 * q] = (uint8_t)(code >> 8);
        c->regs[ACCEL_XOUT_H + 2 * q + 1] = (uint8_t)(code & 0xFF);
    }
    c->regs[INT_STATUS] = 0x01;
    samples++;
}

static uint8_t mpu_select(void *context, uint8_t byte) {
    (void)context;
    return (uint8_t)(byte & 0x7F);
}

static void mpu_write(void *context, uint8_t reg, uint8_t value) {
    mpu_chip *c = context;
    if (reg == PWR_MGMT_1 && (value & 0x80)) {
        power_on(c);
    } else if (reg != WHO_AM_I && (reg < INT_STATUS || reg > 0x60)) {
        c->regs[reg] = value;
    }
}

static uint8_t mpu_read(void *context, uint8_t reg) {
    reads++;
    return ((mpu_chip *)context)->regs[reg];
}

static uint8_t mpu_next(void *context, uint8_t reg) {
    (void)context;
    return (uint8_t)((reg + 1) & 0x7F);
}

static const char *mpu_parse(signal_t *s, const char *rest) {
    mpu_signal *m = calloc(1, sizeof *m);
    s->device = m;
    int address = 0;
    char name[8] = "";
    if (sscanf(rest, "%i %7s", &address, name) != 2 || (address != 0x68 && address != 0x69)) {
        return "mpu6050 needs its address (0x68 or 0x69) and ax, ay, az, gx, gy, gz or temp";
    }
    m->quantity = -1;
    for (int q = 0; q < QUANTITIES; q++) {
        if (strcmp(name, quantities[q]) == 0) {
            m->quantity = q;
        }
    }
    if (m->quantity < 0) {
        return "mpu6050 needs its address (0x68 or 0x69) and ax, ay, az, gx, gy, gz or temp";
    }
    for (int i = 0; i < chip_count && !m->chip; i++) {
        if (chips[i]->bus.address == address) {
            m->chip = chips[i];
        }
    }
    if (!m->chip) {
        if (chip_count == MAX_CHIPS) {
            return "more than two mpu6050 (0x68 and 0x69)";
        }
        mpu_chip *c = chips[chip_count++] = calloc(1, sizeof *c);
        power_on(c);
        c->bus = (twi_registers){.address = address, .start = mpu_start, .select = mpu_select, .write = mpu_write,
                                 .read = mpu_read, .next = mpu_next, .context = c};
        m->chip = c;
    }
    return NULL;
}

static void mpu_apply(signal_t *s) {
    mpu_signal *m = s->device;
    m->chip->values[m->quantity] = s->value;
}

static void mpu_attach(signal_t *s) {
    mpu_chip *c = ((mpu_signal *)s->device)->chip;
    mpu_apply(s);
    if (!c->on_bus) {
        c->on_bus = 1; /* once, whichever of its signals comes first */
        twi_bus_add_registers(&c->bus);
    }
}

static void mpu_stats(FILE *out) {
    fprintf(out, ", \"mpu6050_reads\": %" PRIu64 ", \"mpu6050_samples\": %" PRIu64, reads, samples);
}

const signal_kind mpu6050_kind = {"mpu6050", 1, mpu_parse, mpu_attach, NULL, mpu_apply, mpu_stats};
