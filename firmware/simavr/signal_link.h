/* The signal link: the MCU's pins spoken as a bridge board speaks them (hil_protocol's
 * frames on a pty), and the coupling file that says which pin serves each signal.
 *
 * Coupling file (written by hil_mcu.core.simavr), one signal per line in frame order:
 *
 *   period_us <microseconds>
 *   in  <id> <min> <max> <kind> <kind's arguments>
 *   out <id> int|float <min> <max> <default> <kind> <kind's arguments>
 *
 * Each kind is a device emulation in its own file (or a family's), listed once in the
 * table of signal_link.c, with its arguments:
 *
 *   in:  pwm <pin> (pwm.c), level <pin> (pins.c), servo <pin> and tone <pin>
 *        (pulse_meter.c), ws2812 <pin> <led> r|g|b (ws2812.c);
 *   out: level <pin> and adc <channel> <mV per unit> (pins.c), echo <trigger> <echo>
 *        and ping <pin> (hcsr04.c), hmc5883l <address> (hmc5883l.c), mpu6050
 *        0x68|0x69 ax|ay|az|gx|gy|gz|temp (mpu6050.c), quadrature <a> <b> and
 *        pulses <pin> (encoder.c), nec <pin> address|command|sends (ir_nec.c),
 *        button <pin> <bounce_us> <bounces> (button.c). */
#ifndef HIL_SIMAVR_SIGNAL_LINK_H
#define HIL_SIMAVR_SIGNAL_LINK_H

#include <stdint.h>
#include <stdio.h>

struct signal_kind;

typedef struct signal_s {
    uint8_t id;
    uint8_t output; /* 1: simulator -> MCU ("out"), 0: MCU -> simulator ("in") */
    uint8_t is_float;
    double min, max;
    double value; /* out: the physical value last received (the default until then) */
    const struct signal_kind *kind;
    void *device; /* the kind's own state of this signal */
} signal_t;

typedef struct signal_kind {
    const char *name;
    uint8_t output; /* the direction it serves */
    /* Read the kind's arguments (``rest`` of the line) into s->device; NULL if they are
     * right, else what is wrong (the caller adds the file and line). */
    const char *(*parse)(signal_t *s, const char *rest);
    /* The AVR exists: connect to it (hooks, timers); out kinds apply their default. */
    void (*attach)(signal_t *s);
    /* in kinds: the fraction of [min, max] to send now (0..1). */
    double (*sample)(signal_t *s);
    /* out kinds: s->value has changed. */
    void (*apply)(signal_t *s);
    /* Counters of the stats line (may be NULL); written once however many kinds share it. */
    void (*stats)(FILE *out);
} signal_kind;

/* Read the coupling file (the board must be known); exits 2 naming the line on error. */
void signal_link_parse(const char *path);
/* The link on ``fd`` (checked frames or plain); registers its stats. */
void signal_link_open(int fd, int checked);
/* The AVR exists: attach every signal. */
void signal_link_attach(void);
/* Start sending frames (after the other parts are attached). */
void signal_link_start(void);
/* The frame period in AVR cycles (what the simulator's values are spread over). */
double signal_link_period_cycles(void);

/* Lockstep: " signal <bytes read from the pty> <bytes written to it>" (nothing without a
 * signal link), for the "ok" reply: the reader on the other end waits for every byte
 * written (the kernel passes pty bytes on in deferred work). */
void signal_link_report(FILE *out);

#endif
