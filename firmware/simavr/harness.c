/* hil_simavr: a compiled Arduino firmware (ELF) in simavr, coupled to the HIL simulator.
 *
 * The harness plays the robot's hardware around the AVR running the real firmware
 * (DESIGN.md "Firmware in the loop"). This file is its core: options, the AVR and its
 * board (board.c), the links it polls, the two ways time runs, the stats line and
 * simavr's own messages. The peripherals live in their own files:
 *
 *   - uart_link.c: the hardware UARTs that reach a pty, bytes both ways through pty
 *     masters the caller passes as file descriptors (--uart N:FD; --command-fd FD is
 *     UART0), and the command link's open watch (--reset-on-open FD);
 *   - softuart.c: serial links on two ordinary pins, read and driven at the bit level
 *     (--softuart RX:TX:BAUD:FD: SoftwareSerial);
 *   - signal_link.c: the pins are the signal link, spoken on a second pty (--signal-fd)
 *     as a bridge board speaks it; the coupling file (--coupling) lists the signals and
 *     the device kind serving each: pwm.c, pins.c (level, adc), hcsr04.c (echo, ping),
 *     encoder.c (quadrature, pulses), pulse_meter.c (servo, tone), ws2812.c, ir_nec.c
 *     (nec), button.c, and on the I2C bus (twi_bus.c) hmc5883l.c and mpu6050.c;
 *   - sc16is750.c: the radio link's I2C-to-UART bridge (--radio-fd, optional);
 *   - trace.c: the pin trace, a VCD file of chosen pins timed in AVR cycles (--trace FILE
 *     --trace-pin NAME=PIN..., optional).
 *
 * Time: --lockstep reads "run <cycle>" lines on stdin and answers "ok <cycle>" (and the
 * signal link's " signal <bytes read from its pty> <bytes written to it>", the radio's
 * " radio <read> <written>", each UART's " uartN <read> <written>") once the AVR has
 * reached that cycle (the simulator's step); otherwise the AVR is paced to the wall
 * clock (--rtf scales it), and a JSON stats line goes to stdout every --stats-period
 * seconds. "stats" on stdin prints one at once.
 *
 * Resets: "reset" on stdin (answered "ok <cycle>" in lockstep), and the first open of
 * the command link's pty (the open watch: DTR on a real UNO, Nano or Mega), reset the
 * AVR as its RESET pin does (EXTRF): the firmware starts again from its reset vector
 * after the bootloader's wait (--boot-delay, default the board's: board.c), while the
 * cycles go on. In lockstep a reset happens at the start of the step after the open
 * (or at once, by command), so a run repeats. A watchdog reset (WDRF) starts the
 * sketch at once. Outside the AVR nothing resets: the devices, the links and their
 * timers go on.
 *
 * Errors in the arguments or the coupling file name what is wrong and exit 2; a
 * firmware that crashes the AVR exits 3. Nothing is written to stdout but the protocol
 * above. simavr's own messages (its warnings: unsupported timer modes, bad I/O
 * accesses) go to stderr, one line each, prefixed "simavr: "; the harness's errors are
 * prefixed "hil_simavr: ".
 */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <avr_extint.h>
#include <sim_cycle_timers.h>
#include <sim_elf.h>

#include "pins.h"
#include "sc16is750.h"
#include "signal_link.h"
#include "softuart.h"
#include "trace.h"
#include "uart_link.h"

/* How often (AVR time) the ptys are polled: the latency a received byte can gain. */
#define POLL_US 100
/* Real time: how often (AVR time) the open watch and stdin are looked at. */
#define CHECK_US 1000
/* Real time: how far behind the wall clock the AVR may fall before the backlog is
 * given up (counted), so a stall does not become a burst of fast-forwarded time. */
#define MAX_BEHIND_S 0.25
#define MAX_LINKS 16
#define MAX_STATS 8
#define MAX_KEPT_TIMERS MAX_CYCLE_TIMERS

static struct {
    avr_t *avr;
    const board_t *board;
    double frequency;
    struct {
        int fd;
        void (*poll)(void *);
        void (*flush)(void *);
        void *param;
    } links[MAX_LINKS];
    int link_count;
    void (*stats[MAX_STATS])(FILE *out);
    int stats_count;
    double behind_dropped_s;
    avr_run_t run;            /* simavr's run function (the watchdog swaps it to reset) */
    double boot_delay_s;      /* the bootloader's wait after an external reset */
    uint8_t booting;          /* held in the bootloader */
    uint64_t resets, watchdog_resets;
    volatile sig_atomic_t stop;
} core = {.frequency = 16e6, .boot_delay_s = -1};

avr_t *harness_avr(void) { return core.avr; }
const board_t *harness_board(void) { return core.board; }
double harness_frequency(void) { return core.frequency; }

avr_cycle_count_t harness_cycles_us(double us) {
    avr_cycle_count_t cycles = (avr_cycle_count_t)(us * core.frequency / 1e6 + 0.5);
    return cycles > 0 ? cycles : 1;
}

void harness_fail(int status, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    fputs("hil_simavr: ", stderr);
    vfprintf(stderr, format, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(status);
}

void harness_nonblocking(int fd, const char *option) {
    if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
        harness_fail(2, "--%s %d: not an open descriptor: %s", option, fd, strerror(errno));
    }
}

void harness_add_link(int fd, void (*poll_link)(void *), void (*flush)(void *), void *param) {
    if (core.link_count == MAX_LINKS) {
        harness_fail(2, "more than %d links", MAX_LINKS);
    }
    core.links[core.link_count].fd = fd;
    core.links[core.link_count].poll = poll_link;
    core.links[core.link_count].flush = flush;
    core.links[core.link_count].param = param;
    core.link_count++;
}

void harness_flush_links(void) {
    for (int i = 0; i < core.link_count; i++) {
        core.links[i].flush(core.links[i].param);
    }
}

int harness_booting(void) { return core.booting; }

void harness_add_stats(void (*write)(FILE *out)) {
    if (core.stats_count < MAX_STATS) {
        core.stats[core.stats_count++] = write;
    }
}

/* simavr's messages, one line each on stderr, prefixed "simavr: ". simavr may write a
 * line in several calls: the text is collected up to its newline. */
static void logger(avr_t *avr, const int level, const char *format, va_list ap) {
    static char line[512];
    static size_t used;
    (void)avr;
    if (level > LOG_WARNING) {
        return;
    }
    vsnprintf(line + used, sizeof line - used, format, ap);
    used = strlen(line);
    char *end;
    while ((end = strchr(line, '\n')) != NULL || used >= sizeof line - 1) {
        size_t length = end ? (size_t)(end - line) : used;
        for (size_t i = 0; i < length; i++) {
            if (line[i] == '\r' || line[i] == '\t') {
                line[i] = ' ';
            }
        }
        if (length > 0) {
            fprintf(stderr, "simavr: %.*s\n", (int)length, line);
        }
        size_t rest = end ? used - length - 1 : 0;
        memmove(line, line + used - rest, rest + 1);
        used = rest;
    }
}

static avr_cycle_count_t poll_timer(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)avr;
    (void)param;
    for (int i = 0; i < core.link_count; i++) {
        core.links[i].poll(core.links[i].param);
    }
    return when + harness_cycles_us(POLL_US);
}

/* --- resets ------------------------------------------------------------------------------ */

/* The harness's own code, as the linker lays the executable out (libsimavr is a shared
 * library: its timers are elsewhere). */
extern const char __executable_start[], etext[];

static int is_harness_timer(avr_cycle_timer_t timer) {
    uintptr_t at = (uintptr_t)timer;
    return at >= (uintptr_t)__executable_start && at < (uintptr_t)etext;
}

/* simavr sleeps on the wall clock when the firmware sleeps; the harness paces itself. */
static void no_sleep(avr_t *avr, avr_cycle_count_t how_long) {
    (void)avr;
    (void)how_long;
}

static avr_cycle_count_t boot_done(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)when;
    (void)param;
    avr->sreg[S_I] = 0;
    avr->state = cpu_Running; /* from the reset vector: the PC stayed there */
    core.booting = 0;
    return 0;
}

/* What every reset needs after simavr's avr_reset: the harness's settings of the AVR. */
static void after_reset(void) {
    /* simavr polls a low INTn pin on every cycle while it is in its power-on low-level
     * mode (a timer per notification, kept until the pin goes high): a bumper at rest
     * would slow the AVR four times. Edge detection is unaffected. */
    for (int i = 0; i < core.board->external_interrupts; i++) {
        avr_extint_set_strict_lvl_trig(core.avr, (uint8_t)i, 0);
    }
}

/* Reset the AVR (simavr's avr_reset: registers, I/O, interrupts, its peripherals'
 * timers; the PC to the reset vector) while the cycles and everything outside the AVR
 * go on: the harness's timers (links, devices) are kept, the levels driven on pins
 * restored. ``external``: the RESET pin (EXTRF), then the bootloader's wait; else the
 * watchdog, which simavr has asked for (WDRF), and the sketch starts at once. */
static void reset_avr(int external) {
    avr_t *avr = core.avr;
    struct {
        avr_cycle_timer_t timer;
        void *param;
        avr_cycle_count_t when;
    } kept[MAX_KEPT_TIMERS];
    int count = 0;
    avr_cycle_timer_cancel(avr, boot_done, NULL);
    core.booting = 0;
    for (avr_cycle_timer_slot_p slot = avr->cycle_timers.timer; slot && count < MAX_KEPT_TIMERS; slot = slot->next) {
        if (is_harness_timer(slot->timer)) {
            kept[count].timer = slot->timer;
            kept[count].param = slot->param;
            kept[count].when = slot->when;
            count++;
        }
    }
    harness_flush_links();
    avr_reset(avr);
    avr->run = core.run; /* the watchdog's reset restores it too */
    for (int i = 0; i < count; i++) {
        avr_cycle_count_t when = kept[i].when > avr->cycle ? kept[i].when - avr->cycle : 1;
        avr_cycle_timer_register(avr, when, kept[i].timer, kept[i].param);
    }
    after_reset();
    pins_restore();
    uart_link_reset();
    trace_after_reset();
    if (external) {
        core.resets++;
        avr_regbit_set(avr, avr->reset_flags.extrf);
        if (core.boot_delay_s > 0) {
            /* Asleep with interrupts on but none enabled: simavr skips to the next timer
             * without running an instruction, until boot_done wakes it at the vector. */
            core.booting = 1;
            avr->state = cpu_Sleeping;
            avr->sreg[S_I] = 1;
            avr_cycle_timer_register(avr, harness_cycles_us(core.boot_delay_s * 1e6), boot_done, NULL);
        }
    } else {
        core.watchdog_resets++;
    }
}

static void reset_stats(FILE *out) {
    fprintf(out, ", \"resets\": %" PRIu64 ", \"watchdog_resets\": %" PRIu64 ", \"booting\": %d", core.resets,
            core.watchdog_resets, core.booting);
}

/* --- running ------------------------------------------------------------------------------- */

static double wall(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void run_until(avr_cycle_count_t target) {
    while (core.avr->cycle < target) {
        if (core.avr->run != core.run) {
            reset_avr(0); /* the watchdog fired: simavr would reset the AVR in avr_run */
            continue;
        }
        int state = avr_run(core.avr);
        if (state == cpu_Done || state == cpu_Crashed) {
            harness_flush_links();
            harness_fail(3, "the firmware %s at cycle %" PRIu64 " (pc 0x%04x)",
                         state == cpu_Crashed ? "crashed" : "stopped (sleep with interrupts off)",
                         (uint64_t)core.avr->cycle, core.avr->pc);
        }
    }
}

static void print_stats(double wall_seconds, double mhz) {
    printf("{\"cycle\": %" PRIu64 ", \"avr_seconds\": %.6f, \"wall_seconds\": %.3f, \"mhz\": %.3f",
           (uint64_t)core.avr->cycle, (double)core.avr->cycle / core.frequency, wall_seconds, mhz);
    for (int i = 0; i < core.stats_count; i++) {
        core.stats[i](stdout);
    }
    printf(", \"behind_dropped_s\": %.3f, \"board\": \"%s\"}\n", core.behind_dropped_s, core.board->name);
    fflush(stdout);
}

/* A reader's first open of the command link resets the AVR (DTR). */
static void check_open(void) {
    if (uart_link_take_open()) {
        reset_avr(1);
    }
}

/* Lockstep: "ok <cycle>" and every link's byte counts, the answer to a step or a reset. */
static void answer_ok(void) {
    printf("ok %" PRIu64, (uint64_t)core.avr->cycle);
    signal_link_report(stdout);
    sc16is750_report(stdout);
    uart_link_report(stdout);
    printf("\n");
    fflush(stdout);
}

static void run_lockstep(void) {
    char line[128];
    double start = wall();
    while (!core.stop && fgets(line, sizeof line, stdin)) {
        uint64_t target;
        if (sscanf(line, "run %" SCNu64, &target) == 1) {
            check_open(); /* opened since the last step: reset now, at the step's start */
            run_until(target);
            harness_flush_links();
            answer_ok();
        } else if (strncmp(line, "stats", 5) == 0) {
            double seconds = wall() - start;
            print_stats(seconds, seconds > 0 ? (double)core.avr->cycle / seconds / 1e6 : 0.0);
        } else if (strncmp(line, "reset", 5) == 0) {
            reset_avr(1);
            answer_ok();
        } else {
            printf("error unknown command\n");
            fflush(stdout);
        }
    }
}

/* Real time: the commands on stdin ("reset", "stats"), read without blocking. */
static void read_commands(double start) {
    static char line[128];
    static size_t used;
    static int closed;
    struct pollfd input = {0, POLLIN, 0};
    if (closed || poll(&input, 1, 0) <= 0) {
        return;
    }
    ssize_t n = read(0, line + used, sizeof line - 1 - used);
    if (n <= 0) {
        closed = 1; /* nobody will write again */
        return;
    }
    used += (size_t)n;
    line[used] = 0;
    char *end;
    while ((end = strchr(line, '\n')) != NULL || used == sizeof line - 1) {
        size_t length = end ? (size_t)(end - line) + 1 : used;
        if (strncmp(line, "reset", 5) == 0) {
            reset_avr(1);
        } else if (strncmp(line, "stats", 5) == 0) {
            print_stats(wall() - start, 0.0);
        }
        memmove(line, line + length, used - length + 1);
        used -= length;
    }
}

static void run_real_time(double rtf, double stats_period) {
    double start = wall(), next_stats = start + stats_period, last_wall = start;
    uint64_t last_cycle = 0;
    double origin = start; /* wall time of cycle 0, moved on when a backlog is given up */
    double frequency = core.frequency;
    avr_cycle_count_t slice = harness_cycles_us(POLL_US);
    avr_cycle_count_t next_check = 0, check_every = harness_cycles_us(CHECK_US);
    while (!core.stop) {
        if (core.avr->cycle >= next_check) {
            next_check = core.avr->cycle + check_every;
            check_open();
            read_commands(start);
        }
        double now = wall();
        double target = (now - origin) * rtf * frequency;
        if (target - (double)core.avr->cycle > MAX_BEHIND_S * rtf * frequency) {
            double behind = (target - (double)core.avr->cycle) / (rtf * frequency) - MAX_BEHIND_S;
            core.behind_dropped_s += behind;
            origin += behind;
            target = (now - origin) * rtf * frequency;
        }
        if ((double)core.avr->cycle < target) {
            avr_cycle_count_t goal = core.avr->cycle + slice;
            run_until(goal < (avr_cycle_count_t)target ? goal : (avr_cycle_count_t)target + 1);
            harness_flush_links();
        } else {
            /* Ahead of the wall clock: wait for it, or for bytes (read at the next poll). */
            struct pollfd fds[MAX_LINKS];
            for (int i = 0; i < core.link_count; i++) {
                fds[i] = (struct pollfd){core.links[i].fd, POLLIN, 0};
            }
            double wait_s = ((double)core.avr->cycle - target) / (rtf * frequency);
            int ms = (int)(wait_s * 1000.0);
            if (ms > 0) {
                poll(fds, (nfds_t)core.link_count, ms);
            }
        }
        if (now >= next_stats) {
            double seconds = now - last_wall;
            print_stats(now - start, seconds > 0 ? (double)(core.avr->cycle - last_cycle) / seconds / 1e6 : 0.0);
            last_wall = now;
            last_cycle = core.avr->cycle;
            next_stats += stats_period;
            if (next_stats < now) {
                next_stats = now + stats_period;
            }
        }
    }
}

static void on_signal(int number) {
    (void)number;
    core.stop = 1;
}

static void usage(void) {
    fputs("usage: hil_simavr --firmware ELF --uart N:FD... [--softuart RX:TX:BAUD:FD...]\n"
          "                  [--reset-on-open FD] [--boot-delay S]\n"
          "                  [--signal-fd N --coupling FILE] [--radio-fd N]\n"
          "                  [--checked] [--board uno|nano|mega2560 | --mcu atmega328p|atmega2560]\n"
          "                  [--frequency 16000000] [--lockstep | --rtf X] [--stats-period S]\n"
          "                  [--trace FILE --trace-pin NAME=PIN... [--trace-limit BYTES]]\n"
          "       (--command-fd FD is --uart 0:FD)\n"
          "       hil_simavr --list-pins [--board NAME | --mcu NAME]\n",
          stderr);
}

/* "N:FD" of --uart. */
static void parse_uart(const char *text, int *number, int *fd) {
    int consumed = 0;
    if (sscanf(text, "%d:%d%n", number, fd, &consumed) != 2 || text[consumed] != 0 || *fd < 0) {
        harness_fail(2, "--uart %s: expected N:FD (UART number, pty master descriptor)", text);
    }
}

/* The board from --board and --mcu (uno when neither is given). */
static const board_t *choose_board(const char *board_name, const char *mcu) {
    const board_t *board = board_name ? board_find(board_name) : board_for_mcu(mcu ? mcu : "atmega328p");
    if (board_name && !board) {
        harness_fail(2, "--board %s: expected one of %s", board_name, board_names());
    }
    if (!board) {
        harness_fail(2, "--mcu %s: no board of the harness has it (atmega328p: uno, nano; atmega2560: mega2560)",
                     mcu);
    }
    if (mcu && strcmp(mcu, board->mcu) != 0) {
        harness_fail(2, "--mcu %s: the %s is an %s", mcu, board->name, board->mcu);
    }
    return board;
}

int main(int argc, char **argv) {
    static const struct option options[] = {
        {"firmware", required_argument, 0, 'f'}, {"command-fd", required_argument, 0, 'c'},
        {"signal-fd", required_argument, 0, 's'}, {"coupling", required_argument, 0, 'p'},
        {"checked", no_argument, 0, 'k'},         {"mcu", required_argument, 0, 'm'},
        {"frequency", required_argument, 0, 'F'}, {"lockstep", no_argument, 0, 'l'},
        {"rtf", required_argument, 0, 'r'},       {"stats-period", required_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'},            {"radio-fd", required_argument, 0, 'R'},
        {"board", required_argument, 0, 'b'},     {"list-pins", no_argument, 0, 'L'},
        {"uart", required_argument, 0, 'u'},      {"softuart", required_argument, 0, 'U'},
        {"reset-on-open", required_argument, 0, 'o'}, {"boot-delay", required_argument, 0, 'd'},
        {"trace", required_argument, 0, 't'},     {"trace-pin", required_argument, 0, 'T'},
        {"trace-limit", required_argument, 0, 'B'}, {0, 0, 0, 0}};
    const char *firmware = NULL, *coupling = NULL, *mcu = NULL, *board_name = NULL, *trace_path = NULL;
    double trace_limit = 0;
    const char *softuarts[8];
    int lockstep = 0, list_pins = 0, checked = 0, option, softuart_count = 0;
    int signal_fd = -1, radio_fd = -1, open_watch_fd = -1, uart_count = 0;
    int uart_numbers[8], uart_fds[8];
    double rtf = 1.0, stats_period = 1.0;
    while ((option = getopt_long(argc, argv, "", options, NULL)) != -1) {
        char *end = NULL;
        switch (option) {
        case 'f': firmware = optarg; break;
        case 'c':
        case 'u':
            if (uart_count == 8) {
                harness_fail(2, "too many --uart options");
            }
            if (option == 'c') {
                uart_numbers[uart_count] = 0;
                uart_fds[uart_count] = (int)strtol(optarg, &end, 10);
            } else {
                parse_uart(optarg, &uart_numbers[uart_count], &uart_fds[uart_count]);
            }
            uart_count++;
            break;
        case 'U':
            if (softuart_count == 8) {
                harness_fail(2, "too many --softuart options");
            }
            softuarts[softuart_count++] = optarg;
            break;
        case 'o': open_watch_fd = (int)strtol(optarg, &end, 10); break;
        case 'd': core.boot_delay_s = strtod(optarg, &end); break;
        case 's': signal_fd = (int)strtol(optarg, &end, 10); break;
        case 'R': radio_fd = (int)strtol(optarg, &end, 10); break;
        case 'p': coupling = optarg; break;
        case 'k': checked = 1; break;
        case 'm': mcu = optarg; break;
        case 'b': board_name = optarg; break;
        case 'L': list_pins = 1; break;
        case 'F': core.frequency = strtod(optarg, &end); break;
        case 'l': lockstep = 1; break;
        case 'r': rtf = strtod(optarg, &end); break;
        case 'S': stats_period = strtod(optarg, &end); break;
        case 't': trace_path = optarg; break;
        case 'T': trace_add(optarg); break;
        case 'B': trace_limit = strtod(optarg, &end); break;
        case 'h': usage(); return 0;
        default: usage(); return 2;
        }
        if (end && (*end || end == optarg)) {
            harness_fail(2, "--%s: not a number: %s",
                         option == 'F'   ? "frequency"
                         : option == 'R' ? "radio-fd"
                         : option == 'c' ? "command-fd"
                         : option == 's' ? "signal-fd"
                         : option == 'o' ? "reset-on-open"
                         : option == 'd' ? "boot-delay"
                         : option == 'r' ? "rtf"
                         : option == 'B' ? "trace-limit"
                                         : "stats-period",
                         optarg);
        }
    }
    core.board = choose_board(board_name, mcu);
    if (list_pins) {
        board_print(core.board, stdout);
        return 0;
    }
    if (!firmware || uart_count == 0) {
        usage();
        harness_fail(2, "--firmware and a --uart (or --command-fd) are required");
    }
    if ((signal_fd >= 0) != (coupling != NULL)) {
        harness_fail(2, "--signal-fd and --coupling go together");
    }
    if (!(core.frequency >= 1e6 && core.frequency <= 32e6) || !(rtf > 0 && rtf <= 100) || !(stats_period > 0)) {
        harness_fail(2, "--frequency (1e6..32e6), --rtf (0..100] and --stats-period (> 0) out of range");
    }
    if (!(trace_limit >= 0 && trace_limit <= 1e15)) {
        harness_fail(2, "--trace-limit %g: outside 0..1e15 bytes", trace_limit);
    }
    if (trace_path) {
        trace_file(trace_path, (uint64_t)trace_limit);
    }
    if (core.boot_delay_s < 0) {
        core.boot_delay_s = core.board->boot_delay_s;
    } else if (core.boot_delay_s > 10) {
        harness_fail(2, "--boot-delay %g: outside 0..10 s", core.boot_delay_s);
    }
    for (int i = 0; i < uart_count; i++) {
        if (uart_fds[i] < 0) {
            harness_fail(2, "--uart %d:%d: not a descriptor", uart_numbers[i], uart_fds[i]);
        }
        uart_link_open(uart_numbers[i], uart_fds[i]);
    }
    for (int i = 0; i < softuart_count; i++) {
        softuart_open(softuarts[i]);
    }
    if (open_watch_fd >= 0) {
        uart_link_watch_opens(open_watch_fd);
    }
    harness_add_stats(reset_stats);
    if (coupling) {
        signal_link_parse(coupling);
    }
    signal_link_open(signal_fd, checked);
    sc16is750_open(radio_fd);

    avr_global_logger_set(logger);
    elf_firmware_t elf;
    memset(&elf, 0, sizeof elf);
    if (elf_read_firmware(firmware, &elf) != 0) {
        harness_fail(2, "--firmware %s: not a readable AVR ELF file", firmware);
    }
    snprintf(elf.mmcu, sizeof elf.mmcu, "%s", core.board->mcu);
    elf.frequency = (uint32_t)core.frequency;
    core.avr = avr_make_mcu_by_name(elf.mmcu);
    if (!core.avr) {
        harness_fail(2, "--mcu %s: simavr does not know this MCU", elf.mmcu);
    }
    avr_init(core.avr);
    core.avr->log = LOG_WARNING;
    avr_load_firmware(core.avr, &elf);
    core.avr->vcc = core.avr->avcc = core.avr->aref = 5000;
    core.avr->sleep = no_sleep;
    core.run = core.avr->run;

    after_reset();
    uart_link_attach();
    softuart_attach();
    signal_link_attach();
    sc16is750_attach();
    trace_attach();
    avr_cycle_timer_register(core.avr, harness_cycles_us(POLL_US), poll_timer, NULL);
    signal_link_start();

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    /* The node that started it owns the ptys: if it dies (even by SIGKILL), so does this. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1) {
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    if (lockstep) {
        run_lockstep();
    } else {
        run_real_time(rtf, stats_period);
    }
    harness_flush_links();
    return 0;
}
