/* The pwm signal kind: the duty a pin shows, computed from its timer's registers while
 * the timer's comparator drives it, measured from the pin's edges otherwise. */
#ifndef HIL_SIMAVR_PWM_H
#define HIL_SIMAVR_PWM_H

#include <stdint.h>

#include "signal_link.h"

extern const signal_kind pwm_kind;

/* While a running timer's comparator drives ``pin`` in a PWM mode: 1, with the high
 * time and the period of its wave in AVR cycles, from the timer's registers (simavr
 * does not run every mode). Else 0. */
int pwm_comparator_pulse(int pin, double *high_cycles, double *period_cycles);

/* How a timer's comparator drives a pin (the pin trace draws it: trace.c). */
typedef struct {
    char timer;       /* the timer's name ('0'..'5') */
    uint8_t periodic; /* 1: a wave; 0: the constant ``level`` */
    uint8_t level;
    /* AVR cycles: one period, and the high part of it, [rise, fall) from the timer's
     * BOTTOM (fall < rise: the high part wraps through BOTTOM, as phase-correct PWM's) */
    uint64_t period, rise, fall;
} pwm_wave_t;

/* While a timer's comparator drives ``pin`` (COM bits connected, pin an output): 1, with
 * its wave from the timer's registers (WGM, COM, OCR, TOP, prescaler) as the datasheet's
 * waveform generator makes it. Else 0: the port drives the pin. */
int pwm_wave(int pin, pwm_wave_t *wave);

/* What places the waves of timer ``name`` in time: its mode, clock select and TOP. A
 * change restarts its counter's phase in the trace. */
uint64_t pwm_timer_key(char name);

#endif
