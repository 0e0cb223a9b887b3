/* The signal link: coupling file, kinds table, frames both ways. */
#include "signal_link.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sim_cycle_timers.h>

#include "button.h"
#include "encoder.h"
#include "harness.h"
#include "hcsr04.h"
#include "hil_signal.h"
#include "hmc5883l.h"
#include "ir_nec.h"
#include "mpu6050.h"
#include "pins.h"
#include "pulse_meter.h"
#include "pwm.h"
#include "queue.h"
#include "ws2812.h"

#define MAX_SIGNALS 255

/* Every device the coupling can name: one line per kind. */
static const signal_kind *const kinds[] = {
    &pwm_kind,
    &level_in_kind,
    &level_out_kind,
    &adc_kind,
    &echo_kind,
    &ping_kind,
    &hmc5883l_kind,
    &mpu6050_kind,
    &quadrature_kind,
    &pulses_kind,
    &servo_kind,
    &tone_kind,
    &ws2812_kind,
    &nec_kind,
    &button_kind,
};
#define KIND_COUNT (sizeof kinds / sizeof kinds[0])

static struct {
    int fd;
    uint8_t checked;
    uint32_t period_us;
    signal_t signals[MAX_SIGNALS];
    int count;
    uint8_t in_ids[MAX_SIGNALS], out_ids[MAX_SIGNALS];
    signal_t *ins[MAX_SIGNALS], *outs[MAX_SIGNALS];
    int n_in, n_out;
    hil_frame_encoder encoder;
    hil_frame_decoder decoder;
    uint8_t decode_buffer[HIL_FRAME_SIZE(MAX_SIGNALS, 1)];
    queue_t out;
    uint64_t tx_dropped, frames_sent;
    uint64_t fd_read, fd_written; /* bytes read from and written to the pty */
} sl = {.fd = -1, .period_us = 5000};

static const signal_kind *find_kind(const char *name, uint8_t output) {
    for (size_t i = 0; i < KIND_COUNT; i++) {
        if (kinds[i]->output == output && strcmp(kinds[i]->name, name) == 0) {
            return kinds[i];
        }
    }
    return NULL;
}

void signal_link_parse(const char *path) {
    FILE *file = fopen(path, "r");
    char line[512];
    int number = 0;
    if (!file) {
        harness_fail(2, "--coupling %s: %s", path, strerror(errno));
    }
    while (fgets(line, sizeof line, file)) {
        char direction[8], type[8], kind[16];
        int id, consumed = 0;
        double min, max, fallback = 0;
        number++;
        char *hash = strchr(line, '#');
        if (hash) {
            *hash = 0;
        }
        if (strspn(line, " \t\r\n") == strlen(line)) {
            continue;
        }
        if (sscanf(line, " period_us %" SCNu32, &sl.period_us) == 1) {
            if (sl.period_us == 0) {
                harness_fail(2, "%s:%d: period_us must be positive", path, number);
            }
            continue;
        }
        if (sl.count == MAX_SIGNALS) {
            harness_fail(2, "%s:%d: more than %d signals", path, number, MAX_SIGNALS);
        }
        signal_t *s = &sl.signals[sl.count];
        memset(s, 0, sizeof *s);
        if (sscanf(line, " %7s %d", direction, &id) != 2 || id < 0 || id > 254) {
            harness_fail(2, "%s:%d: expected 'in|out <id 0..254> ...', got: %s", path, number, line);
        }
        s->id = (uint8_t)id;
        if (strcmp(direction, "in") == 0) {
            strcpy(type, "int");
            if (sscanf(line, " in %*d %lf %lf %15s %n", &min, &max, kind, &consumed) != 3) {
                harness_fail(2, "%s:%d: expected 'in <id> <min> <max> <kind> ...'", path, number);
            }
        } else if (strcmp(direction, "out") == 0) {
            s->output = 1;
            if (sscanf(line, " out %*d %7s %lf %lf %lf %15s %n", type, &min, &max, &fallback, kind, &consumed) != 5) {
                harness_fail(2, "%s:%d: expected 'out <id> <int|float> <min> <max> <default> <kind> ...'", path,
                             number);
            }
        } else {
            harness_fail(2, "%s:%d: direction %s is neither in nor out", path, number, direction);
        }
        if (strcmp(type, "int") != 0 && strcmp(type, "float") != 0) {
            harness_fail(2, "%s:%d: type %s is neither int nor float", path, number, type);
        }
        if (!(max > min)) {
            harness_fail(2, "%s:%d: max %g must exceed min %g", path, number, max, min);
        }
        s->is_float = strcmp(type, "float") == 0;
        s->min = min;
        s->max = max;
        s->value = fallback;
        s->kind = find_kind(kind, s->output);
        if (!s->kind) {
            harness_fail(2, "%s:%d: kind %s does not fit an %s signal", path, number, kind, direction);
        }
        const char *wrong = s->kind->parse(s, line + consumed);
        if (wrong) {
            harness_fail(2, "%s:%d: %s", path, number, wrong);
        }
        if (s->output) {
            sl.out_ids[sl.n_out] = s->id;
            sl.outs[sl.n_out++] = s;
        } else {
            sl.in_ids[sl.n_in] = s->id;
            sl.ins[sl.n_in++] = s;
        }
        sl.count++;
    }
    fclose(file);
}

static void send_frame(void) {
    int16_t raw[MAX_SIGNALS];
    uint8_t frame[HIL_FRAME_SIZE(MAX_SIGNALS, 1)];
    for (int i = 0; i < sl.n_in; i++) {
        signal_t *s = sl.ins[i];
        double value = s->min + s->kind->sample(s) * (s->max - s->min);
        raw[i] = s->is_float ? hil_float_to_raw(value, s->min, s->max, sl.checked)
                             : hil_int_to_raw((int32_t)floor(value + 0.5), (int32_t)s->min, (int32_t)s->max,
                                              sl.checked);
    }
    uint16_t size = hil_frame_encode(&sl.encoder, sl.in_ids, raw, (uint16_t)sl.n_in, frame);
    for (uint16_t i = 0; i < size; i++) {
        if (!queue_push(&sl.out, frame[i])) {
            sl.tx_dropped++;
        }
    }
    sl.frames_sent++;
}

static void take_frames(const uint8_t *data, ssize_t n) {
    int16_t raw[MAX_SIGNALS];
    for (ssize_t i = 0; i < n; i++) {
        if (!hil_frame_feed(&sl.decoder, data[i], raw)) {
            continue;
        }
        for (int k = 0; k < sl.n_out; k++) {
            signal_t *s = sl.outs[k];
            s->value = s->is_float ? hil_raw_to_float(raw[k], s->min, s->max)
                                   : hil_raw_to_int(raw[k], (int32_t)s->min, (int32_t)s->max, sl.checked);
            s->kind->apply(s);
        }
    }
}

static void signal_poll(void *param) {
    (void)param;
    uint8_t buffer[4096];
    ssize_t n;
    while ((n = read(sl.fd, buffer, sizeof buffer)) > 0) {
        sl.fd_read += (uint64_t)n;
        take_frames(buffer, n);
    }
}

static void signal_flush(void *param) {
    (void)param;
    sl.fd_written += queue_flush(&sl.out, sl.fd, &sl.tx_dropped);
}

void signal_link_report(FILE *out) {
    if (sl.fd >= 0) {
        fprintf(out, " signal %" PRIu64 " %" PRIu64, sl.fd_read, sl.fd_written);
    }
}

static avr_cycle_count_t frame_timer(avr_t *avr, avr_cycle_count_t when, void *param) {
    (void)avr;
    (void)param;
    send_frame();
    harness_flush_links();
    return when + harness_cycles_us(sl.period_us);
}

static void signal_stats(FILE *out) {
    const hil_frame_decoder *d = &sl.decoder;
    fprintf(out,
            ", \"frames_sent\": %" PRIu64 ", \"frames_received\": %u, \"signal_tx_dropped\": %" PRIu64
            ", \"signal_bad_ids\": %u, \"signal_bad_crc\": %u, \"signal_lost\": %u, \"signal_skipped_bytes\": %" PRIu32,
            sl.frames_sent, d->frames, sl.tx_dropped, d->bad_ids, d->bad_crc, d->lost, d->skipped_bytes);
    /* every kind's counters, once each (zero for kinds the coupling does not use) */
    for (size_t i = 0; i < KIND_COUNT; i++) {
        int seen = kinds[i]->stats == NULL;
        for (size_t j = 0; j < i && !seen; j++) {
            seen = kinds[j]->stats == kinds[i]->stats;
        }
        if (!seen) {
            kinds[i]->stats(out);
        }
    }
}

void signal_link_open(int fd, int checked) {
    sl.fd = fd;
    sl.checked = (uint8_t)checked;
    harness_add_stats(signal_stats);
    if (fd < 0) {
        return;
    }
    harness_nonblocking(fd, "signal-fd");
    harness_add_link(fd, signal_poll, signal_flush, NULL);
    hil_frame_encoder_init(&sl.encoder, sl.checked);
    if (!hil_frame_decoder_init(&sl.decoder, sl.out_ids, (uint16_t)sl.n_out, sl.checked, sl.decode_buffer) &&
        sl.n_out > 0) {
        harness_fail(2, "the OUTPUT signals' ids must differ (and none be 255)");
    }
}

void signal_link_attach(void) {
    for (int i = 0; i < sl.count; i++) {
        signal_t *s = &sl.signals[i];
        s->kind->attach(s);
    }
}

double signal_link_period_cycles(void) { return (double)sl.period_us * harness_frequency() / 1e6; }

void signal_link_start(void) {
    if (sl.fd >= 0) {
        avr_cycle_timer_register(harness_avr(), harness_cycles_us(sl.period_us), frame_timer, NULL);
    }
}
