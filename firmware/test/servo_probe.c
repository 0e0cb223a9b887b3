/* servo_probe: a sketch's ELF in simavr, every pulse on the given pins timed in AVR cycles.
 *
 *   servo_probe <elf> <mcu> <milliseconds> <pin>...
 *
 * <mcu> is simavr's name (atmega328p, atmega2560), a <pin> a port letter and bit (B1
 * for the UNO's pin 9). It runs the AVR for <milliseconds> of AVR time and prints
 * "pulse <pin> <rise us> <width us>" for each high pulse that ended, in order, then
 * "uart <hex>": every byte the sketch wrote to UART0. Exit 2 on bad arguments, 3 if
 * the AVR crashed. Used by test_servo.py.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <avr_ioport.h>
#include <avr_uart.h>
#include <sim_avr.h>
#include <sim_elf.h>
#include <sim_irq.h>

#define FREQUENCY 16000000.0
#define MAX_PINS 8
#define MAX_UART 4096

struct probe_pin {
    char name[3];
    avr_cycle_count_t rose; /* 0: low */
};

static avr_t *avr;
static struct probe_pin pins[MAX_PINS];
static unsigned char uart[MAX_UART];
static size_t uart_length;

/* simavr's messages go to stderr: stdout is the probe's answer. */
static void logger(avr_t *avr_, const int level, const char *format, va_list ap) {
    (void)avr_;
    if (level <= LOG_WARNING) {
        vfprintf(stderr, format, ap);
    }
}

static double us(avr_cycle_count_t cycles) { return (double)cycles * 1e6 / FREQUENCY; }

/* simavr calls this before it stores the new level, which is `value`. */
static void on_pin(avr_irq_t *irq, uint32_t value, void *param) {
    struct probe_pin *pin = param;
    (void)irq;
    if (value && !pin->rose) {
        pin->rose = avr->cycle;
    } else if (!value && pin->rose) {
        printf("pulse %s %.3f %.3f\n", pin->name, us(pin->rose), us(avr->cycle - pin->rose));
        pin->rose = 0;
    }
}

static void on_uart(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)param;
    if (uart_length < MAX_UART) {
        uart[uart_length++] = (unsigned char)value;
    }
}

int main(int argc, char **argv) {
    elf_firmware_t elf;
    double milliseconds;
    uint32_t flags = 0;
    int count = argc - 4;
    if (argc < 5 || count > MAX_PINS || (milliseconds = atof(argv[3])) <= 0) {
        fprintf(stderr, "usage: servo_probe <elf> <mcu> <milliseconds> <pin, e.g. B1>... (up to %d)\n",
                MAX_PINS);
        return 2;
    }
    avr_global_logger_set(logger);
    memset(&elf, 0, sizeof elf);
    if (elf_read_firmware(argv[1], &elf) != 0) {
        fprintf(stderr, "servo_probe: %s is not a readable AVR ELF file\n", argv[1]);
        return 2;
    }
    snprintf(elf.mmcu, sizeof elf.mmcu, "%s", argv[2]);
    elf.frequency = (uint32_t)FREQUENCY;
    avr = avr_make_mcu_by_name(elf.mmcu);
    if (avr == NULL) {
        fprintf(stderr, "servo_probe: simavr has no MCU %s\n", argv[2]);
        return 2;
    }
    avr_init(avr);
    avr->log = LOG_WARNING;
    avr_load_firmware(avr, &elf);
    for (int i = 0; i < count; i++) {
        const char *name = argv[4 + i];
        avr_irq_t *irq;
        if (strlen(name) != 2 || name[0] < 'A' || name[0] > 'L' || name[1] < '0' || name[1] > '7' ||
            (irq = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(name[0]), name[1] - '0')) == NULL) {
            fprintf(stderr, "servo_probe: %s is no pin of the %s (expected a port letter and bit)\n", name,
                    argv[2]);
            return 2;
        }
        memcpy(pins[i].name, name, 3);
        avr_irq_register_notify(irq, on_pin, &pins[i]);
    }
    avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~(uint32_t)AVR_UART_FLAG_STDIO;
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), on_uart, NULL);

    avr_cycle_count_t end = (avr_cycle_count_t)(milliseconds * FREQUENCY / 1e3);
    while (avr->cycle < end) {
        int state = avr_run(avr);
        if (state == cpu_Done || state == cpu_Crashed) {
            fprintf(stderr, "servo_probe: the AVR stopped (state %d) at cycle %llu\n", state,
                    (unsigned long long)avr->cycle);
            return 3;
        }
    }
    printf("uart ");
    for (size_t i = 0; i < uart_length; i++) {
        printf("%02x", uart[i]);
    }
    printf("\n");
    return 0;
}
