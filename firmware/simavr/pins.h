/* Pin levels as the firmware sees them and as the outside drives them, and the two plain
 * signal kinds: level (a pin's level, either way) and adc (millivolts on an ADC channel). */
#ifndef HIL_SIMAVR_PINS_H
#define HIL_SIMAVR_PINS_H

#include <stdint.h>

#include <sim_irq.h>

#include "signal_link.h"

/* simavr's IRQ of the Arduino pin (the pin must exist on the board). */
avr_irq_t *pins_irq(int pin);
/* The level the pin shows: PORT for an output, PIN (what drives it) for an input. */
uint8_t pins_level(int pin);
/* 1 while the firmware has the pin as an output (DDR bit set). */
uint8_t pins_is_output(int pin);
/* 1 while the firmware has the pin as an input with its pull-up on (PORT bit set). */
uint8_t pins_pullup(int pin);
/* Drive an input pin from outside. The level is also set as the port's external drive,
 * so the firmware's writes to the port (a pull-up) cannot override it. */
void pins_drive(int pin, uint8_t level);
/* After a reset of the AVR (which clears the PIN registers): the levels driven from
 * outside, as they were. */
void pins_restore(void);
/* A message if ``pin`` is no digital pin of the board ("a digital pin 0..19"), else NULL. */
const char *pins_check(int pin);

extern const signal_kind level_in_kind, level_out_kind, adc_kind;

#endif
