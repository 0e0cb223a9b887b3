/* Board pin tables (the Arduino AVR core's variants/standard, eightanaloginputs, mega). */
#include "board.h"

#include <stddef.h>
#include <string.h>

#define NONE 0, 0
#define ATMEGA328P_PINS                                                                                              \
    {{'D', 0, NONE}, {'D', 1, NONE}, {'D', 2, NONE}, {'D', 3, '2', 1}, {'D', 4, NONE}, {'D', 5, '0', 1},               \
     {'D', 6, '0', 0}, {'D', 7, NONE}, {'B', 0, NONE}, {'B', 1, '1', 0}, {'B', 2, '1', 1}, {'B', 3, '2', 0},           \
     {'B', 4, NONE}, {'B', 5, NONE}, {'C', 0, NONE}, {'C', 1, NONE}, {'C', 2, NONE}, {'C', 3, NONE},                  \
     {'C', 4, NONE}, {'C', 5, NONE}}

static const board_pin atmega328p_pins[20] = ATMEGA328P_PINS;

/* variants/mega/pins_arduino.h: digital_pin_to_port, _bit_mask and _timer. */
static const board_pin atmega2560_pins[70] = {
    {'E', 0, NONE},    {'E', 1, NONE},    {'E', 4, '3', 1},  {'E', 5, '3', 2},  {'G', 5, '0', 1},  {'E', 3, '3', 0},
    {'H', 3, '4', 0},  {'H', 4, '4', 1},  {'H', 5, '4', 2},  {'H', 6, '2', 1},  {'B', 4, '2', 0},  {'B', 5, '1', 0},
    {'B', 6, '1', 1},  {'B', 7, '0', 0},  {'J', 1, NONE},    {'J', 0, NONE},    {'H', 1, NONE},    {'H', 0, NONE},
    {'D', 3, NONE},    {'D', 2, NONE},    {'D', 1, NONE},    {'D', 0, NONE},    {'A', 0, NONE},    {'A', 1, NONE},
    {'A', 2, NONE},    {'A', 3, NONE},    {'A', 4, NONE},    {'A', 5, NONE},    {'A', 6, NONE},    {'A', 7, NONE},
    {'C', 7, NONE},    {'C', 6, NONE},    {'C', 5, NONE},    {'C', 4, NONE},    {'C', 3, NONE},    {'C', 2, NONE},
    {'C', 1, NONE},    {'C', 0, NONE},    {'D', 7, NONE},    {'G', 2, NONE},    {'G', 1, NONE},    {'G', 0, NONE},
    {'L', 7, NONE},    {'L', 6, NONE},    {'L', 5, '5', 2},  {'L', 4, '5', 1},  {'L', 3, '5', 0},  {'L', 2, NONE},
    {'L', 1, NONE},    {'L', 0, NONE},    {'B', 3, NONE},    {'B', 2, NONE},    {'B', 1, NONE},    {'B', 0, NONE},
    {'F', 0, NONE},    {'F', 1, NONE},    {'F', 2, NONE},    {'F', 3, NONE},    {'F', 4, NONE},    {'F', 5, NONE},
    {'F', 6, NONE},    {'F', 7, NONE},    {'K', 0, NONE},    {'K', 1, NONE},    {'K', 2, NONE},    {'K', 3, NONE},
    {'K', 4, NONE},    {'K', 5, NONE},    {'K', 6, NONE},    {'K', 7, NONE},
};

/* Data-space addresses from the datasheets (avr-libc's iom328p.h, iomxx0_1.h). */
static const board_timer atmega328p_timers[] = {{'0', 0x44, 8}, {'1', 0x80, 16}, {'2', 0xB0, 8}};
static const board_timer atmega2560_timers[] = {{'0', 0x44, 8},  {'1', 0x80, 16}, {'2', 0xB0, 8},
                                                {'3', 0x90, 16}, {'4', 0xA0, 16}, {'5', 0x120, 16}};

/* The UARTs' pins (the variants' Serial..Serial3) and registers (datasheets). */
static const board_uart atmega328p_uarts[] = {{0, 1, 0xC0}};
static const board_uart atmega2560_uarts[] = {{0, 1, 0xC0}, {19, 18, 0xC8}, {17, 16, 0xD0}, {15, 14, 0x130}};

#define COUNT(array) ((int)(sizeof(array) / sizeof((array)[0])))

/* The bootloader's wait after an external reset (DTR on opening the port, the reset
 * button), before it starts the sketch, from the bootloader sources of the Arduino AVR
 * core (bootloaders/): optiboot (UNO; Nano with the current bootloader) flashes the LED
 * 3 times (LED_START_FLASHES=3: 6 x 1/16 s = 0.375 s) and then waits for the uploader
 * until its 1 s watchdog fires: 1.375 s; the Mega 2560's stk500v2 waits for the uploader
 * for boot_timeout = 20000 loops, "about 1 second" by its source. After a watchdog
 * reset both start the sketch at once. At power-on the harness starts the sketch at
 * cycle 0 on every board (optiboot does; stk500v2 would wait there too). */
#define OPTIBOOT_WAIT_S 1.375
#define STK500V2_WAIT_S 1.0

static const board_t boards[] = {
    {"uno", "atmega328p", 20, 14, 6, 8, 2, 1, atmega328p_uarts, OPTIBOOT_WAIT_S, atmega328p_pins,
     atmega328p_timers, COUNT(atmega328p_timers)},
    {"nano", "atmega328p", 20, 14, 6, 8, 2, 1, atmega328p_uarts, OPTIBOOT_WAIT_S, atmega328p_pins,
     atmega328p_timers, COUNT(atmega328p_timers)},
    {"mega2560", "atmega2560", 70, 54, 16, 16, 8, 4, atmega2560_uarts, STK500V2_WAIT_S, atmega2560_pins,
     atmega2560_timers, COUNT(atmega2560_timers)},
};

const board_t *board_find(const char *name) {
    for (int i = 0; i < COUNT(boards); i++) {
        if (strcmp(boards[i].name, name) == 0) {
            return &boards[i];
        }
    }
    return NULL;
}

const board_t *board_for_mcu(const char *mcu) {
    for (int i = 0; i < COUNT(boards); i++) {
        if (strcmp(boards[i].mcu, mcu) == 0) {
            return &boards[i];
        }
    }
    return NULL;
}

const char *board_names(void) { return "uno, nano, mega2560"; }

const board_pin *board_pin_at(const board_t *board, int pin) {
    return pin >= 0 && pin < board->pin_count ? &board->pins[pin] : NULL;
}

const board_timer *board_timer_named(const board_t *board, char name) {
    for (int i = 0; i < board->timer_count; i++) {
        if (board->timers[i].name == name) {
            return &board->timers[i];
        }
    }
    return NULL;
}

int board_uart_of_pin(const board_t *board, int pin, int *tx) {
    for (int i = 0; i < board->uarts; i++) {
        if (board->uart_pins[i].rx == pin || board->uart_pins[i].tx == pin) {
            *tx = board->uart_pins[i].tx == pin;
            return i;
        }
    }
    return -1;
}

uint16_t board_port_register(char port) {
    static const struct {
        char port;
        uint16_t pin;
    } ports[] = {{'A', 0x20}, {'B', 0x23}, {'C', 0x26}, {'D', 0x29},  {'E', 0x2C},  {'F', 0x2F},
                 {'G', 0x32}, {'H', 0x100}, {'J', 0x103}, {'K', 0x106}, {'L', 0x109}};
    for (int i = 0; i < COUNT(ports); i++) {
        if (ports[i].port == port) {
            return ports[i].pin;
        }
    }
    return 0;
}

const char *board_pwm_pins(const board_t *board) {
    static char text[128];
    size_t used = 0;
    text[0] = 0;
    for (int pin = 0; pin < board->pin_count && used < sizeof text - 8; pin++) {
        if (board->pins[pin].timer) {
            used += (size_t)snprintf(text + used, sizeof text - used, "%s%d", used ? ", " : "", pin);
        }
    }
    return text;
}

void board_print(const board_t *board, FILE *out) {
    fprintf(out, "{\"board\": \"%s\", \"mcu\": \"%s\", \"first_analog\": %d, \"analog_pins\": %d, "
                 "\"adc_channels\": %d, \"external_interrupts\": %d, \"uarts\": %d, \"boot_delay_s\": %g, "
                 "\"pins\": [",
            board->name, board->mcu, board->first_analog, board->analog_pins, board->adc_channels,
            board->external_interrupts, board->uarts, board->boot_delay_s);
    for (int pin = 0; pin < board->pin_count; pin++) {
        const board_pin *p = &board->pins[pin];
        fprintf(out, "%s{\"pin\": %d, \"port\": \"%c\", \"bit\": %d, \"pwm\": ", pin ? ", " : "", pin, p->port, p->bit);
        if (p->timer) {
            fprintf(out, "\"%c%c\"", p->timer, 'A' + p->comparator);
        } else {
            fputs("null", out);
        }
        fputc('}', out);
    }
    fputs("], \"uart_pins\": [", out);
    for (int i = 0; i < board->uarts; i++) {
        fprintf(out, "%s[%d, %d]", i ? ", " : "", board->uart_pins[i].rx, board->uart_pins[i].tx);
    }
    fputs("]}\n", out);
}
