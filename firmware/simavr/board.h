/* The boards the harness plays: Arduino pin -> port and bit, timer compare outputs, ADC
 * channels, as the Arduino AVR core's variants (standard, eightanaloginputs, mega).
 * hil_bridge.core.boards holds the same table for the Python side; a test compares
 * them pin by pin (hil_simavr --list-pins). */
#ifndef HIL_SIMAVR_BOARD_H
#define HIL_SIMAVR_BOARD_H

#include <stdint.h>
#include <stdio.h>

/* A timer: its name ('0'..'5'), the data-space address of TCCRnA and its width. The
 * other registers follow the datasheets' layout: TCCRnB at +1; 8-bit OCRnA/B at +3/+4;
 * 16-bit ICRn at +6, OCRnA/B/C at +8/+10/+12 (little-endian pairs). */
typedef struct {
    char name;
    uint16_t tccra;
    uint8_t bits; /* 8 or 16 */
} board_timer;

/* A hardware UART: its RX and TX pins and the data-space address of UCSRnA (UCSRnB at
 * +1, UCSRnC +2, UBRRnL +4, UBRRnH +5, UDRn +6). */
typedef struct {
    uint8_t rx, tx;
    uint16_t ucsra;
} board_uart;

/* One Arduino pin: port letter and bit, and the timer comparator on it (timer 0 = none;
 * comparator 0 = A, 1 = B, 2 = C), as analogWrite uses it. */
typedef struct {
    char port;
    uint8_t bit;
    char timer;
    uint8_t comparator;
} board_pin;

typedef struct {
    const char *name; /* uno, nano, mega2560 */
    const char *mcu;  /* simavr's name of the MCU */
    int pin_count;    /* digital pins 0..pin_count-1 */
    int first_analog; /* A0's pin number */
    int analog_pins;  /* A0.. that are also digital pins */
    int adc_channels; /* the ADC's single-ended channels */
    int external_interrupts;
    int uarts;          /* hardware UARTs: UART0..uarts-1 */
    const board_uart *uart_pins; /* UART0..uarts-1 */
    double boot_delay_s; /* the bootloader's wait after an external reset (see board.c) */
    const board_pin *pins;
    const board_timer *timers;
    int timer_count;
} board_t;

/* The board of this name, or NULL. */
const board_t *board_find(const char *name);
/* The first board built on this MCU (uno for atmega328p), or NULL. */
const board_t *board_for_mcu(const char *mcu);
/* Names of every board, for messages ("uno, nano, mega2560"). */
const char *board_names(void);
/* The pin, or NULL if the board has no such digital pin. */
const board_pin *board_pin_at(const board_t *board, int pin);
/* The timer named, or NULL. */
const board_timer *board_timer_named(const board_t *board, char name);
/* The UART whose RX (*tx = 0) or TX (*tx = 1) pin ``pin`` is, or -1. */
int board_uart_of_pin(const board_t *board, int pin, int *tx);
/* Data-space address of PINx (DDRx at +1, PORTx at +2), 0 for no such port. */
uint16_t board_port_register(char port);
/* "3, 5, 6, 9, 10, 11": the board's PWM pins, for messages. */
const char *board_pwm_pins(const board_t *board);
/* The table as one JSON line (hil_simavr --list-pins). */
void board_print(const board_t *board, FILE *out);

#endif
