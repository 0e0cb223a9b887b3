/* An IR remote receiver module (TSOP38238-style: demodulated, active low) receiving
 * NEC codes (coupling: out <id> int 0 255 <default> nec <pin> address|command|sends;
 * one receiver per pin, its three signals in any order).
 *
 * The simulator sets the address and command and counts key presses in sends (0..255,
 * wrapping): each increase sends one frame per press, with the address and command of
 * the frame that brought it. The pin idles high; a frame (the NEC protocol as the
 * common decoders read it) is a 9 ms mark (low) and a 4.5 ms space (high), then 32
 * bits least significant first: address, ~address, command, ~command, each a 562.5 us
 * mark and a 562.5 us (0) or 1687.5 us (1) space, and a final 562.5 us mark: 67.5 ms
 * in all. Frames start at least 108 ms apart (the NEC repeat period), so presses that
 * come faster wait (up to 16; more are dropped and counted). Repeat codes (a key held)
 * are not sent. */
#include "ir_nec.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sim_cycle_timers.h>

#include "harness.h"
#include "pins.h"

#define MAX_RECEIVERS 4
#define MAX_PENDING 16
#define SEGMENTS 67 /* leader mark and space, 32 x (mark, space), final mark */
#define FRAME_PERIOD_US 108000.0
enum { ADDRESS, COMMAND, SENDS, FIELDS };
static const char *const fields[FIELDS] = {"address", "command", "sends"};

typedef struct {
    int pin;
    uint8_t attached, busy, field[FIELDS];
    uint8_t last_sends;
    int pending, segment;
    double durations[SEGMENTS]; /* us, of the frame under way */
    uint64_t last_start;
    uint8_t started;
} nec_receiver;

typedef struct {
    nec_receiver *receiver;
    int field;
} nec_signal;

static nec_receiver *receivers[MAX_RECEIVERS];
static int receiver_count;
static uint64_t frames_sent, presses_dropped;

static avr_cycle_count_t nec_segment(avr_t *avr, avr_cycle_count_t when, void *param);

/* Start the next frame: the code of now, the waveform's durations. */
static avr_cycle_count_t nec_start(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)when;
    nec_receiver *r = param;
    uint8_t address = r->field[ADDRESS], command = r->field[COMMAND];
    uint32_t code = (uint32_t)address | (uint32_t)(uint8_t)~address << 8 | (uint32_t)command << 16 |
                    (uint32_t)(uint8_t)~command << 24;
    r->durations[0] = 9000.0;
    r->durations[1] = 4500.0;
    for (int bit = 0; bit < 32; bit++) {
        r->durations[2 + 2 * bit] = 562.5;
        r->durations[3 + 2 * bit] = (code >> bit & 1) ? 1687.5 : 562.5;
    }
    r->durations[SEGMENTS - 1] = 562.5;
    r->pending--;
    r->busy = 1;
    r->segment = 0;
    r->last_start = avr->cycle;
    r->started = 1;
    frames_sent++;
    avr_cycle_timer_register(avr, 1, nec_segment, r);
    return 0;
}

static void schedule(nec_receiver *r) {
    avr_t *avr = harness_avr();
    if (r->busy || r->pending == 0 || avr_cycle_timer_status(avr, nec_start, r)) {
        return;
    }
    uint64_t earliest = r->started ? r->last_start + harness_cycles_us(FRAME_PERIOD_US) : 0;
    /* at least a cycle on: the frame's other signals are applied first */
    avr_cycle_count_t delay = earliest > avr->cycle + 1 ? earliest - avr->cycle : 1;
    avr_cycle_timer_register(avr, delay, nec_start, r);
}

/* Each segment: marks (even) drive the pin low, spaces high; after the last, idle. */
static avr_cycle_count_t nec_segment(avr_t *avr, avr_cycle_count_t when, void *param) {
    nec_receiver *r = param;
    if (r->segment == SEGMENTS) {
        pins_drive(r->pin, 1);
        r->busy = 0;
        schedule(r);
        return 0;
    }
    pins_drive(r->pin, r->segment % 2 == 1);
    avr_cycle_count_t next = when + harness_cycles_us(r->durations[r->segment]);
    r->segment++;
    return next > avr->cycle ? next : avr->cycle + 1;
}

static void nec_apply(signal_t *s) {
    nec_signal *n = s->device;
    nec_receiver *r = n->receiver;
    uint8_t value = (uint8_t)((long)s->value & 0xFF);
    r->field[n->field] = value;
    if (n->field != SENDS) {
        return;
    }
    int presses = (uint8_t)(value - r->last_sends);
    r->last_sends = value;
    for (int i = 0; i < presses; i++) {
        if (r->pending < MAX_PENDING) {
            r->pending++;
        } else {
            presses_dropped++;
        }
    }
    schedule(r);
}

static const char *nec_parse(signal_t *s, const char *rest) {
    static char message[128];
    nec_signal *n = calloc(1, sizeof *n);
    s->device = n;
    int pin = -1;
    char name[16] = "";
    n->field = -1;
    if (sscanf(rest, "%d %15s", &pin, name) == 2 && !pins_check(pin)) {
        for (int f = 0; f < FIELDS; f++) {
            if (strcmp(name, fields[f]) == 0) {
                n->field = f;
            }
        }
    }
    if (n->field < 0 || s->is_float || s->min != 0 || s->max != 255) {
        snprintf(message, sizeof message, "nec needs its pin (0..%d) and address, command or sends, int 0 255",
                 harness_board()->pin_count - 1);
        return message;
    }
    for (int i = 0; i < receiver_count && !n->receiver; i++) {
        if (receivers[i]->pin == pin) {
            n->receiver = receivers[i];
        }
    }
    if (!n->receiver) {
        if (receiver_count == MAX_RECEIVERS) {
            return "more than 4 nec receivers";
        }
        n->receiver = receivers[receiver_count++] = calloc(1, sizeof(nec_receiver));
        n->receiver->pin = pin;
    }
    return NULL;
}

static void nec_attach(signal_t *s) {
    nec_signal *n = s->device;
    nec_receiver *r = n->receiver;
    r->field[n->field] = (uint8_t)((long)s->value & 0xFF);
    if (n->field == SENDS) {
        r->last_sends = r->field[SENDS]; /* the default is no press */
    }
    if (!r->attached) {
        r->attached = 1;
        pins_drive(r->pin, 1);
    }
}

static void nec_stats(FILE *out) {
    fprintf(out, ", \"nec_frames\": %" PRIu64 ", \"nec_presses_dropped\": %" PRIu64, frames_sent, presses_dropped);
}

const signal_kind nec_kind = {"nec", 1, nec_parse, nec_attach, NULL, nec_apply, nec_stats};
