#include "hil_signal.h"

#include <math.h>
#include <string.h>

#include "hil_crc.h"

#define RAW_SPAN ((int32_t)65535)

/* Signed 32-bit arithmetic that wraps as an AVR's does, without C's undefined overflow. */
static int32_t wrap_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static int32_t wrap_sub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }
static int32_t wrap_mul(int32_t a, int32_t b) { return (int32_t)((uint32_t)a * (uint32_t)b); }

int32_t hil_arduino_map(int32_t x, int32_t in_min, int32_t in_max, int32_t out_min, int32_t out_max) {
    int32_t numerator = wrap_mul(wrap_sub(x, in_min), wrap_sub(out_max, out_min));
    int32_t denominator = wrap_sub(in_max, in_min);
    int32_t quotient = (numerator == INT32_MIN && denominator == -1) ? INT32_MIN : numerator / denominator;
    return wrap_add(quotient, out_min);
}

int32_t hil_rounding_map(int32_t x, int32_t in_min, int32_t in_max, int32_t out_min, int32_t out_max) {
    int32_t span_in = in_max - in_min;
    return out_min + ((x - in_min) * (out_max - out_min) + span_in / 2) / span_in;
}

int16_t hil_int_to_raw(int32_t value, int32_t min, int32_t max, uint8_t checked) {
    if (value < min) {
        value = min;
    } else if (value > max) {
        value = max;
    }
    return (int16_t)(checked ? hil_rounding_map(value, min, max, HIL_RAW_MIN, HIL_RAW_MAX)
                             : hil_arduino_map(value, min, max, HIL_RAW_MIN, HIL_RAW_MAX));
}

int32_t hil_raw_to_int(int16_t raw, int32_t min, int32_t max, uint8_t checked) {
    /* (raw + 32768) * span is never negative and, the span being at most 32767, never
     * leaves 32-bit range: truncating and flooring division agree. */
    int32_t offset = (int32_t)raw - HIL_RAW_MIN;
    int32_t span = max - min;
    if (checked) {
        return min + (offset * span + RAW_SPAN / 2) / RAW_SPAN;
    }
    return min + offset * span / RAW_SPAN;
}

int16_t hil_float_to_raw(double value, double min, double max, uint8_t checked) {
    double scaled;
    int32_t code;
    if (!(value >= min)) { /* also NaN */
        value = min;
    } else if (value > max) {
        value = max;
    }
    scaled = (value - min) * (double)RAW_SPAN / (max - min);
    code = checked ? (int32_t)floor(scaled + 0.5) : (int32_t)scaled;
    code += HIL_RAW_MIN;
    if (code < HIL_RAW_MIN) {
        code = HIL_RAW_MIN;
    } else if (code > HIL_RAW_MAX) {
        code = HIL_RAW_MAX;
    }
    return (int16_t)code;
}

double hil_raw_to_float(int16_t raw, double min, double max) {
    return min + (double)((int32_t)raw - HIL_RAW_MIN) * (max - min) / (double)RAW_SPAN;
}

void hil_frame_encoder_init(hil_frame_encoder *encoder, uint8_t checked) {
    encoder->checked = checked;
    encoder->seq = 0;
}

uint16_t hil_frame_encode(hil_frame_encoder *encoder, const uint8_t *ids, const int16_t *raw, uint16_t n,
                          uint8_t *out) {
    uint16_t length = 0, i;
    uint16_t crc;
    if (n > HIL_MAX_SIGNALS) {
        return 0;
    }
    out[length++] = HIL_SIGNAL_START;
    if (encoder->checked) {
        out[length++] = encoder->seq++;
    }
    for (i = 0; i < n; i++) {
        out[length++] = ids[i];
        out[length++] = (uint8_t)((uint16_t)raw[i] >> 8);
        out[length++] = (uint8_t)((uint16_t)raw[i] & 0xFF);
    }
    if (encoder->checked) {
        crc = hil_crc16(out + 1, (size_t)(length - 1));
        out[length++] = (uint8_t)(crc >> 8);
        out[length++] = (uint8_t)(crc & 0xFF);
    }
    return length;
}

uint8_t hil_frame_decoder_init(hil_frame_decoder *decoder, const uint8_t *ids, uint16_t count, uint8_t checked,
                               uint8_t *buffer) {
    uint8_t seen[32]; /* a bit per id */
    uint16_t i;
    memset(decoder, 0, sizeof(*decoder));
    decoder->ids = ids;
    decoder->checked = checked;
    decoder->buffer = buffer;
    /* size 0 marks a refused decoder: hil_frame_feed skips every byte. */
    if (count == 0 || count > HIL_MAX_SIGNALS) {
        return 0;
    }
    memset(seen, 0, sizeof seen);
    for (i = 0; i < count; i++) {
        if (ids[i] == HIL_SIGNAL_START || (seen[ids[i] >> 3] & (1u << (ids[i] & 7)))) {
            return 0;
        }
        seen[ids[i] >> 3] = (uint8_t)(seen[ids[i] >> 3] | (1u << (ids[i] & 7)));
    }
    decoder->count = (uint8_t)count;
    decoder->size = (uint16_t)HIL_FRAME_SIZE(count, checked);
    return 1;
}

void hil_frame_decoder_reset(hil_frame_decoder *decoder) {
    decoder->length = 0;
    hil_sequence_reset(&decoder->sequence);
}

/* The candidate at the buffer's start is not a frame: look for the next start byte
 * after it; what lies before that is skipped. */
static void resync(hil_frame_decoder *d) {
    uint16_t i;
    for (i = 1; i < d->length; i++) {
        if (d->buffer[i] == HIL_SIGNAL_START) {
            break;
        }
    }
    d->skipped_bytes += (uint32_t)(i - 1);
    memmove(d->buffer, d->buffer + i, (size_t)(d->length - i));
    d->length = (uint16_t)(d->length - i);
}

/* The index of id among the expected ids (count: not one of them). */
static uint8_t slot_of(const hil_frame_decoder *d, uint8_t id) {
    uint8_t j;
    for (j = 0; j < d->count; j++) {
        if (d->ids[j] == id) {
            break;
        }
    }
    return j;
}

#define IDS_BAD 0
#define IDS_IN_ORDER 1
#define IDS_REORDERED 2

/* Whether the signals starting at first (3 bytes each) carry the expected ids: in
 * order (the usual case, no search), in another order with each id once, or not. */
static uint8_t match_ids(const hil_frame_decoder *d, const uint8_t *first) {
    uint8_t seen[32]; /* a bit per id */
    uint8_t i, id;
    for (i = 0; i < d->count && first[3 * i] == d->ids[i]; i++) {
    }
    if (i == d->count) {
        return IDS_IN_ORDER;
    }
    memset(seen, 0, sizeof seen);
    for (i = 0; i < d->count; i++) {
        id = first[3 * i];
        if (slot_of(d, id) == d->count || (seen[id >> 3] & (1u << (id & 7)))) {
            return IDS_BAD;
        }
        seen[id >> 3] = (uint8_t)(seen[id >> 3] | (1u << (id & 7)));
    }
    return IDS_REORDERED;
}

uint8_t hil_frame_feed(hil_frame_decoder *d, uint8_t byte, int16_t *raw) {
    uint8_t *frame = d->buffer;
    uint8_t offset = d->checked ? 2 : 1;
    uint8_t i, order;
    const uint8_t *signal;
    if (d->length == 0) {
        if (byte != HIL_SIGNAL_START || d->size == 0) {
            d->skipped_bytes++;
            return 0;
        }
    }
    frame[d->length++] = byte;
    if (d->length < d->size) {
        return 0;
    }
    order = match_ids(d, frame + offset);
    if (order == IDS_BAD) {
        d->bad_ids++;
        resync(d);
        return 0;
    }
    if (d->checked) {
        uint16_t crc = (uint16_t)((uint16_t)frame[d->size - 2] << 8 | frame[d->size - 1]);
        uint8_t seq = frame[1], verdict;
        uint16_t lost;
        if (hil_crc16(frame + 1, (size_t)(d->size - 3)) != crc) {
            d->bad_crc++;
            resync(d);
            return 0;
        }
        verdict = hil_sequence_check(&d->sequence, seq, 0xFFu, &lost);
        if (verdict == HIL_SEQ_DUPLICATE) {
            d->duplicates++;
            d->length = 0;
            return 0;
        }
        if (verdict == HIL_SEQ_RESYNC) {
            d->resyncs++;
        }
        d->lost = (uint16_t)(d->lost + lost);
        d->seq = seq;
    }
    for (i = 0; i < d->count; i++) {
        signal = frame + offset + 3 * i;
        raw[order == IDS_IN_ORDER ? i : slot_of(d, signal[0])] =
            (int16_t)(uint16_t)((uint16_t)signal[1] << 8 | signal[2]);
    }
    d->length = 0;
    d->frames++;
    return 1;
}
