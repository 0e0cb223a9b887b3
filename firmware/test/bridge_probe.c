/* bridge_probe: a generated bridge-board sketch (ELF) in simavr, pinged as an MCU pings an HC-SR04.
 *
 *   bridge_probe <elf> <trigger pin> <echo pin> <frame hex>
 *
 * After 20 ms (setup) it pings once, then sends the frame bytes (a signal frame from the
 * simulator) into UART0, lets 10 ms pass and pings twice more. A ping is a 10 us high
 * pulse on the trigger pin; for each it prints "ping <rise> <width>": microseconds from
 * the trigger's falling edge to the echo's rising edge, and the echo's width, timed in
 * AVR cycles (-1 -1 when no echo came within 40 ms). Exit 2 on bad arguments, 3 if the
 * AVR crashed. Used by test_bridge_board_sim.py.
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

static avr_t *avr;
static avr_cycle_count_t echo_rise, echo_fall;

/* simavr's messages go to stderr: stdout is the probe's answer. */
static void logger(avr_t *avr_, const int level, const char *format, va_list ap) {
    (void)avr_;
    if (level <= LOG_WARNING) {
        vfprintf(stderr, format, ap);
    }
}

static avr_irq_t *pin_irq(int pin) {
    char port = pin < 8 ? 'D' : pin < 14 ? 'B' : 'C';
    int bit = pin < 8 ? pin : pin < 14 ? pin - 8 : pin - 14;
    return avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(port), bit);
}

/* simavr sets the IRQ's value after its hooks ran: the new level is the argument. */
static void on_echo(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)param;
    if (value) {
        echo_rise = avr->cycle;
    } else {
        echo_fall = avr->cycle;
    }
}

static void run_us(double us) {
    avr_cycle_count_t end = avr->cycle + (avr_cycle_count_t)(us * FREQUENCY / 1e6);
    while (avr->cycle < end) {
        int state = avr_run(avr);
        if (state == cpu_Done || state == cpu_Crashed) {
            fprintf(stderr, "bridge_probe: the AVR stopped (state %d) at cycle %llu\n", state,
                    (unsigned long long)avr->cycle);
            exit(3);
        }
    }
}

static void ping(int trigger) {
    avr_cycle_count_t fell;
    avr_raise_irq(pin_irq(trigger), 1);
    run_us(10);
    avr_raise_irq(pin_irq(trigger), 0);
    fell = avr->cycle;
    echo_rise = echo_fall = 0;
    run_us(40000);
    if (echo_rise > fell && echo_fall > echo_rise) {
        printf("ping %.2f %.2f\n", (double)(echo_rise - fell) * 1e6 / FREQUENCY,
               (double)(echo_fall - echo_rise) * 1e6 / FREQUENCY);
    } else {
        printf("ping -1 -1\n");
    }
}

int main(int argc, char **argv) {
    elf_firmware_t elf;
    int trigger, echo;
    const char *hex;
    if (argc != 5 || (trigger = atoi(argv[2])) < 2 || trigger > 19 || (echo = atoi(argv[3])) < 2 || echo > 19 ||
        strlen(argv[4]) % 2 != 0) {
        fprintf(stderr, "usage: bridge_probe <elf> <trigger pin 2..19> <echo pin 2..19> <frame hex>\n");
        return 2;
    }
    hex = argv[4];
    avr_global_logger_set(logger);
    memset(&elf, 0, sizeof elf);
    if (elf_read_firmware(argv[1], &elf) != 0) {
        fprintf(stderr, "bridge_probe: %s is not a readable AVR ELF file\n", argv[1]);
        return 2;
    }
    snprintf(elf.mmcu, sizeof elf.mmcu, "atmega328p");
    elf.frequency = (uint32_t)FREQUENCY;
    avr = avr_make_mcu_by_name(elf.mmcu);
    avr_init(avr);
    avr->log = LOG_WARNING;
    avr_load_firmware(avr, &elf);
    avr_irq_register_notify(pin_irq(echo), on_echo, NULL);

    run_us(20000);
    ping(trigger);
    for (size_t i = 0; i < strlen(hex); i += 2) { /* the UART's FIFO times them at the baud rate */
        unsigned byte;
        if (sscanf(hex + i, "%2x", &byte) != 1) {
            fprintf(stderr, "bridge_probe: frame hex %s is not hex\n", hex);
            return 2;
        }
        avr_raise_irq(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT), byte);
    }
    run_us(10000);
    ping(trigger);
    ping(trigger);
    return 0;
}
