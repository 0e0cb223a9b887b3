/* Host-build entry points for the tests (ctypes): the firmware's protocol module and
 * behaviour core behind opaque handles and flat buffers, so Python needs no copy of
 * the C structs. Built with the host's gcc by test/support/firmware_host.py; never
 * part of a sketch.
 *
 * Decoded line messages come out as "<TYPE>:<len>:<text>" records (len = bytes of
 * text, so any text survives), one after another:
 *   DRV:<n>:<left>,<right>   HBB:<n>:<stamp>   COM:<n>:<text>   ERR:<n>:<text>
 *   ARM:<n>:<v>,<v>...       TLx:<n>:<v>,<v>...   (values printed with %.17g)
 *   RLY:<n>:<body>           (an id of shim_line_relay, the whole body)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../robot_mcu/mcu_core.h"
#include "hil_crc.h"
#include "hil_line.h"
#include "hil_signal.h"

/* --- line protocol ------------------------------------------------------------------ */

typedef struct {
    hil_line_decoder decoder;
    char ids[16];
    uint8_t arity[16];
    char relay[3 * 8];
} shim_line;

void *shim_line_new(int checked, const char *tl_ids, const uint8_t *tl_arity, int tl_count) {
    shim_line *s = calloc(1, sizeof(*s));
    hil_tl_schema schema;
    if (s == NULL || tl_count > 16) {
        free(s);
        return NULL;
    }
    memcpy(s->ids, tl_ids, (size_t)tl_count);
    memcpy(s->arity, tl_arity, (size_t)tl_count);
    schema.ids = s->ids;
    schema.arity = s->arity;
    schema.count = (uint8_t)tl_count;
    hil_line_decoder_init(&s->decoder, (uint8_t)checked, &schema);
    return s;
}

void shim_free(void *handle) { free(handle); }

/* Pass lines of these ids (count x 3 characters) on unparsed; 0 if more than 8. */
int shim_line_relay(void *handle, const char *ids, int count) {
    shim_line *s = handle;
    if (count < 0 || count > 8) {
        return 0;
    }
    memcpy(s->relay, ids, (size_t)(3 * count));
    hil_line_decoder_relay(&s->decoder, s->relay, (uint8_t)count);
    return 1;
}

static int put_record(char *out, int capacity, int used, const char *type, const char *text, int length) {
    int header = snprintf(out + used, (size_t)(capacity - used), "%s:%d:", type, length);
    if (header < 0 || used + header + length >= capacity) {
        return -1;
    }
    memcpy(out + used + header, text, (size_t)length);
    return used + header + length;
}

static int values_text(const hil_line_message *m, char *text, int capacity) {
    int length = 0, i;
    for (i = 0; i < m->count && i < HIL_LINE_MAX_VALUES; i++) {
        length += snprintf(text + length, (size_t)(capacity - length), "%s%.17g", i ? "," : "",
                           hil_line_value(m, (uint8_t)i));
    }
    return length;
}

/* Feed n bytes; writes the decoded messages' records to out and their number to
 * *messages; returns the bytes written, or -1 if out was too small. */
int shim_line_feed(void *handle, const uint8_t *data, int n, char *out, int capacity, int *messages) {
    shim_line *s = handle;
    hil_line_message m;
    char text[2048];
    char type[4];
    int used = 0, count = 0, i, length;
    out[0] = '\0';
    for (i = 0; i < n; i++) {
        if (!hil_line_feed(&s->decoder, data[i], &m)) {
            continue;
        }
        switch (m.type) {
        case HIL_MSG_DRV:
            length = snprintf(text, sizeof(text), "%ld,%ld", (long)m.left, (long)m.right);
            strcpy(type, "DRV");
            break;
        case HIL_MSG_ARM:
            length = values_text(&m, text, sizeof(text));
            strcpy(type, "ARM");
            break;
        case HIL_MSG_TL:
            length = values_text(&m, text, sizeof(text));
            type[0] = 'T';
            type[1] = 'L';
            type[2] = m.list_id;
            type[3] = '\0';
            break;
        default:
            memcpy(text, m.text, m.text_length);
            length = m.text_length;
            strcpy(type, m.type == HIL_MSG_HBB     ? "HBB"
                         : m.type == HIL_MSG_COM   ? "COM"
                         : m.type == HIL_MSG_RELAY ? "RLY"
                                                   : "ERR");
            break;
        }
        used = put_record(out, capacity, used, type, text, length);
        if (used < 0) {
            return -1;
        }
        count++;
    }
    *messages = count;
    return used;
}

/* messages, dropped[HIL_DROP_REASONS], lost, resyncs */
void shim_line_stats(void *handle, uint32_t *out) {
    shim_line *s = handle;
    int i;
    out[0] = s->decoder.messages;
    for (i = 0; i < HIL_DROP_REASONS; i++) {
        out[1 + i] = s->decoder.dropped[i];
    }
    out[1 + HIL_DROP_REASONS] = s->decoder.lost;
    out[2 + HIL_DROP_REASONS] = s->decoder.resyncs;
}

/* The line the encoder makes of body at sequence number seq; returns its length. */
int shim_line_finish(int checked, int seq, const char *body, int length, char *out) {
    hil_line_encoder encoder;
    hil_line_encoder_init(&encoder, (uint8_t)checked);
    encoder.seq = (uint16_t)seq;
    if (length > HIL_LINE_MAX) {
        return 0;
    }
    memcpy(out, body, (size_t)length);
    return hil_line_finish(&encoder, out, (uint8_t)length);
}

int shim_format_fixed(int32_t scaled, int decimals, char *out) {
    int length = hil_format_fixed(out, scaled, (uint8_t)decimals);
    out[length] = '\0';
    return length;
}

/* --- signal frames ------------------------------------------------------------------ */

typedef struct {
    hil_frame_decoder decoder;
    hil_frame_encoder encoder;
    uint8_t ids[HIL_MAX_SIGNALS + 1];
    uint8_t buffer[HIL_FRAME_MAX_SIZE];
} shim_frames;

/* A decoder and an encoder of the count ids; *ok is what hil_frame_decoder_init said. */
void *shim_frames_new(const uint8_t *ids, int count, int checked, int *ok) {
    shim_frames *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return NULL;
    }
    /* More ids than fit are for init to refuse, unread. */
    memcpy(s->ids, ids, count >= 0 && (size_t)count <= sizeof s->ids ? (size_t)count : 0);
    *ok = hil_frame_decoder_init(&s->decoder, s->ids, (uint16_t)count, (uint8_t)checked, s->buffer);
    hil_frame_encoder_init(&s->encoder, (uint8_t)checked);
    return s;
}

/* hil_frame_encode of n signals (ids[i] = i, raw[i] = i) at sequence number seq: the
 * frame's size, 0 if refused. out holds HIL_FRAME_MAX_SIZE bytes. */
int shim_frame_encode_n(int n, int checked, int seq, uint8_t *out) {
    hil_frame_encoder encoder;
    uint8_t ids[HIL_MAX_SIGNALS + 1];
    int16_t raw[HIL_MAX_SIGNALS + 1];
    int i;
    for (i = 0; i <= HIL_MAX_SIGNALS; i++) {
        ids[i] = (uint8_t)i;
        raw[i] = (int16_t)i;
    }
    hil_frame_encoder_init(&encoder, (uint8_t)checked);
    encoder.seq = (uint8_t)seq;
    /* n beyond the arrays is refused before they are read. */
    return hil_frame_encode(&encoder, ids, raw, (uint16_t)n, out);
}

int shim_frames_encode(void *handle, const int16_t *raw, uint8_t *out) {
    shim_frames *s = handle;
    return hil_frame_encode(&s->encoder, s->ids, raw, s->decoder.count, out);
}

/* Feed n bytes; the raw codes of every decoded frame go to raw, count per frame;
 * returns the number of frames (at most max_frames are stored). */
int shim_frames_feed(void *handle, const uint8_t *data, int n, int16_t *raw, int max_frames) {
    shim_frames *s = handle;
    int frames = 0, i;
    int16_t codes[HIL_MAX_SIGNALS];
    for (i = 0; i < n; i++) {
        if (hil_frame_feed(&s->decoder, data[i], codes)) {
            if (frames < max_frames) {
                memcpy(raw + frames * s->decoder.count, codes, sizeof(int16_t) * s->decoder.count);
            }
            frames++;
        }
    }
    return frames;
}

/* frames, bad_ids, bad_crc, duplicates, lost, skipped_bytes, resyncs */
void shim_frames_stats(void *handle, uint32_t *out) {
    shim_frames *s = handle;
    out[0] = s->decoder.frames;
    out[1] = s->decoder.bad_ids;
    out[2] = s->decoder.bad_crc;
    out[3] = s->decoder.duplicates;
    out[4] = s->decoder.lost;
    out[5] = s->decoder.skipped_bytes;
    out[6] = s->decoder.resyncs;
}

/* --- the MCU behaviour core --------------------------------------------------------- */

void *shim_mcu_new(int checked, uint32_t now_ms) {
    mcu_core *m = calloc(1, sizeof(*m));
    if (m != NULL) {
        mcu_init(m, (uint8_t)checked, now_ms);
    }
    return m;
}

void shim_mcu_feed(void *handle, const uint8_t *data, int n, uint32_t now_ms) {
    int i;
    for (i = 0; i < n; i++) {
        mcu_feed(handle, data[i], now_ms);
    }
}

void shim_mcu_tick(void *handle, uint32_t now_ms) { mcu_tick(handle, now_ms); }

int shim_mcu_take(void *handle, char *out, int capacity) {
    return mcu_take(handle, out, (uint16_t)capacity);
}

void shim_mcu_set_tl2(void *handle, int field, int32_t value) {
    mcu_core *m = handle;
    if (field >= 0 && field < MCU_TL2_FIELDS) {
        m->tl2[field] = value;
    }
}

void shim_mcu_set_watchdog(void *handle, uint32_t watchdog_ms) { ((mcu_core *)handle)->watchdog_ms = watchdog_ms; }

/* left, right, led_on, stopped, heartbeat_lost */
void shim_mcu_state(void *handle, int32_t *out) {
    mcu_core *m = handle;
    out[0] = m->left;
    out[1] = m->right;
    out[2] = m->led_on;
    out[3] = m->stopped;
    out[4] = m->heartbeat_lost;
}

/* drv_accepted, rejected[3], arm_ignored, hbb_echoed, commands_unknown, unexpected,
 * errors_sent, telemetry_sent, watchdog_trips, unsendable, out_overflow */
void shim_mcu_counters(void *handle, uint32_t *out) {
    mcu_core *m = handle;
    int i = 0;
    out[i++] = m->drv_accepted;
    out[i++] = m->drv_rejected[MCU_REJECT_OUT_OF_RANGE];
    out[i++] = m->drv_rejected[MCU_REJECT_STOPPED];
    out[i++] = m->drv_rejected[MCU_REJECT_HEARTBEAT_LOST];
    out[i++] = m->arm_ignored;
    out[i++] = m->hbb_echoed;
    out[i++] = m->commands_unknown;
    out[i++] = m->unexpected;
    out[i++] = m->errors_sent;
    out[i++] = m->telemetry_sent;
    out[i++] = m->watchdog_trips;
    out[i++] = m->unsendable;
    out[i++] = m->out_overflow;
}

uint16_t shim_mcu_enable_duty(int16_t command, uint16_t full) { return mcu_enable_duty(command, full); }

/* --- the radio link of the behaviour core -------------------------------------------- */

void shim_mcu_radio_begin(void *handle, uint32_t now_ms) { mcu_radio_begin(handle, now_ms); }

void shim_mcu_radio_feed(void *handle, const uint8_t *data, int n, uint32_t now_ms) {
    int i;
    for (i = 0; i < n; i++) {
        mcu_radio_feed(handle, data[i], now_ms);
    }
}

int shim_mcu_radio_take(void *handle, char *out, int capacity) {
    return mcu_radio_take(handle, out, (uint8_t)(capacity > 255 ? 255 : capacity));
}

/* radio_tx, radio_tx_dropped, radio_tx_overflow, radio_rx, radio_status,
 * radio_rx_overflow, radio_unexpected, radio_losses, radio_lost,
 * radio_dropped[HIL_DROP_REASONS] */
void shim_mcu_radio_counters(void *handle, uint32_t *out) {
    mcu_core *m = handle;
    int i = 0, r;
    out[i++] = m->radio_tx;
    out[i++] = m->radio_tx_dropped;
    out[i++] = m->radio_tx_overflow;
    out[i++] = m->radio_rx;
    out[i++] = m->radio_status;
    out[i++] = m->radio_rx_overflow;
    out[i++] = m->radio_unexpected;
    out[i++] = m->radio_losses;
    out[i++] = m->radio_lost;
    for (r = 0; r < HIL_DROP_REASONS; r++) {
        out[i++] = m->radio_decoder.dropped[r];
    }
}
