#include "hil_line.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hil_crc.h"

static uint8_t is_digit(char c) { return c >= '0' && c <= '9'; }

static uint8_t is_alnum(char c) {
    return is_digit(c) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* -?[0-9]+ over exactly s[0..n). */
static uint8_t match_int(const char *s, uint8_t n) {
    uint8_t i = 0;
    if (i < n && s[i] == '-') {
        i++;
    }
    if (i == n) {
        return 0;
    }
    for (; i < n; i++) {
        if (!is_digit(s[i])) {
            return 0;
        }
    }
    return 1;
}

/* -?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)? over exactly s[0..n). */
static uint8_t match_number(const char *s, uint8_t n) {
    uint8_t i = 0, digits = 0;
    if (i < n && s[i] == '-') {
        i++;
    }
    while (i < n && is_digit(s[i])) {
        i++;
        digits++;
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && is_digit(s[i])) {
            i++;
            digits++;
        }
    }
    if (digits == 0) {
        return 0;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        uint8_t exponent = 0;
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+')) {
            i++;
        }
        while (i < n && is_digit(s[i])) {
            i++;
            exponent++;
        }
        if (exponent == 0) {
            return 0;
        }
    }
    return i == n;
}

/* Whether the number text s[0..n) (already matched) is finite as a double (a float
 * on an AVR, where strtod is single precision). */
static uint8_t is_finite(const char *s, uint8_t n) {
    char text[HIL_LINE_MAX + 1];
    double value;
    memcpy(text, s, n);
    text[n] = '\0';
    value = strtod(text, NULL);
    return !isinf(value) && !isnan(value);
}

/* Decimal digits to int32, saturating (the MCU refuses anything that large anyway). */
static int32_t parse_int(const char *s, uint8_t n) {
    uint8_t i = 0, negative = 0;
    int32_t value = 0;
    if (s[0] == '-') {
        negative = 1;
        i = 1;
    }
    for (; i < n; i++) {
        int32_t digit = s[i] - '0';
        if (value > (INT32_MAX - digit) / 10) {
            return negative ? INT32_MIN : INT32_MAX;
        }
        value = value * 10 + digit;
    }
    return negative ? -value : value;
}

static uint8_t hex_digit(char c, uint16_t *value) {
    if (c >= '0' && c <= '9') {
        *value = (uint16_t)((*value << 4) | (uint16_t)(c - '0'));
    } else if (c >= 'A' && c <= 'F') {
        *value = (uint16_t)((*value << 4) | (uint16_t)(c - 'A' + 10));
    } else {
        return 0;
    }
    return 1;
}

static uint8_t hex4(const char *s, uint16_t *value) {
    uint8_t i;
    *value = 0;
    for (i = 0; i < 4; i++) {
        if (!hex_digit(s[i], value)) {
            return 0;
        }
    }
    return 1;
}

static uint8_t drop(hil_line_decoder *d, hil_drop_reason reason) {
    d->dropped[reason]++;
    return 0;
}

/* A payload whose fields do not parse: missing (arity) if empty, else bad. */
static uint8_t bad_fields(hil_line_decoder *d, uint8_t payload_length) {
    return drop(d, payload_length == 0 ? HIL_DROP_BAD_ARITY : HIL_DROP_BAD_FIELD);
}

/* Comma-separated finite numbers: counts them into m and keeps the first offsets. */
static uint8_t parse_numbers(hil_line_decoder *d, const char *p, uint8_t n, hil_line_message *m) {
    uint8_t start = 0, i;
    m->count = 0;
    for (i = 0; i <= n; i++) {
        if (i == n || p[i] == ',') {
            if (!match_number(p + start, (uint8_t)(i - start))) {
                return bad_fields(d, n);
            }
            if (m->count < HIL_LINE_MAX_VALUES) {
                m->value_at[m->count] = start;
            }
            m->count++;
            start = (uint8_t)(i + 1);
        }
    }
    start = 0;
    for (i = 0; i <= n; i++) {
        if (i == n || p[i] == ',') {
            if (!is_finite(p + start, (uint8_t)(i - start))) {
                return drop(d, HIL_DROP_BAD_FIELD);
            }
            start = (uint8_t)(i + 1);
        }
    }
    return 1;
}

static uint8_t parse_drive(hil_line_decoder *d, const char *p, uint8_t n, hil_line_message *m) {
    uint8_t comma = 0, commas = 0, i;
    for (i = 0; i < n; i++) {
        if (p[i] == ',') {
            commas++;
            comma = i;
        }
    }
    if (commas != 1) {
        return drop(d, HIL_DROP_BAD_ARITY);
    }
    if (!match_int(p, comma) || !match_int(p + comma + 1, (uint8_t)(n - comma - 1))) {
        return bad_fields(d, n);
    }
    m->left = parse_int(p, comma);
    m->right = parse_int(p + comma + 1, (uint8_t)(n - comma - 1));
    return 1;
}

static uint8_t parse_telemetry(hil_line_decoder *d, char list_id, const char *p, uint8_t n,
                               hil_line_message *m) {
    uint8_t i;
    for (i = 0; i < d->schema.count; i++) {
        if (d->schema.ids[i] == list_id) {
            break;
        }
    }
    if (i == d->schema.count) {
        return drop(d, HIL_DROP_UNKNOWN_LIST);
    }
    if (!parse_numbers(d, p, n, m)) {
        return 0;
    }
    if (m->count != d->schema.arity[i]) {
        return drop(d, HIL_DROP_BAD_ARITY);
    }
    m->list_id = list_id;
    return 1;
}

/* Strip and verify "*SSSSCCCC"; returns the body's length, or -1 (dropped). */
static int16_t unwrap_checked(hil_line_decoder *d, uint8_t length) {
    const char *line = d->line;
    uint16_t seq, crc, lost;
    uint8_t verdict;
    if (length < HIL_LINE_CHECK_LENGTH || line[length - HIL_LINE_CHECK_LENGTH] != '*') {
        drop(d, HIL_DROP_BAD_CHECK);
        return -1;
    }
    if (!hex4(line + length - 8, &seq) || !hex4(line + length - 4, &crc)) {
        drop(d, HIL_DROP_BAD_CHECK);
        return -1;
    }
    if (hil_crc16((const uint8_t *)line, (size_t)(length - 4)) != crc) {
        drop(d, HIL_DROP_BAD_CHECK);
        return -1;
    }
    verdict = hil_sequence_check(&d->sequence, seq, 0xFFFFu, &lost);
    if (verdict == HIL_SEQ_DUPLICATE) {
        drop(d, HIL_DROP_DUPLICATE);
        return -1;
    }
    if (verdict == HIL_SEQ_RESYNC) {
        d->resyncs++;
    }
    d->lost = (uint16_t)(d->lost + lost);
    return (int16_t)(length - HIL_LINE_CHECK_LENGTH);
}

/* A complete line (without '\n'; a trailing '\r' already removed) of `length` bytes. */
static uint8_t parse_line(hil_line_decoder *d, uint8_t length, hil_line_message *m) {
    char *line = d->line;
    char *payload;
    uint8_t i, payload_length;
    if (d->checked) {
        int16_t body = unwrap_checked(d, length);
        if (body < 0) {
            return 0;
        }
        length = (uint8_t)body;
    }
    if (length == 0) {
        return drop(d, HIL_DROP_EMPTY);
    }
    for (i = 0; i < length; i++) {
        if ((uint8_t)line[i] >= 0x80) {
            return drop(d, HIL_DROP_NOT_ASCII);
        }
    }
    line[length] = '\0';
    for (i = 0; length >= 3 && i < d->relay_count; i++) {
        const char *id = d->relay_ids + 3 * i;
        if (line[0] == id[0] && line[1] == id[1] && line[2] == id[2]) {
            memset(m, 0, sizeof(*m));
            m->type = HIL_MSG_RELAY;
            m->text = line;
            m->text_length = length;
            return 1;
        }
    }
    payload = line + (length < 3 ? length : 3);
    payload_length = (uint8_t)(length - (uint8_t)(payload - line));
    if (payload_length > 0 && payload[0] == ',') {
        payload++;
        payload_length--;
    }
    memset(m, 0, sizeof(*m));
    m->text = payload;
    m->text_length = payload_length;
    if (length >= 3 && line[0] == 'D' && line[1] == 'R' && line[2] == 'V') {
        m->type = HIL_MSG_DRV;
        return parse_drive(d, payload, payload_length, m);
    }
    if (length >= 3 && line[0] == 'H' && line[1] == 'B' && line[2] == 'B') {
        m->type = HIL_MSG_HBB;
        if (!match_number(payload, payload_length) || !is_finite(payload, payload_length)) {
            return bad_fields(d, payload_length);
        }
        return 1;
    }
    if (length >= 3 && ((line[0] == 'E' && line[1] == 'R' && line[2] == 'R') ||
                        (line[0] == 'C' && line[1] == 'O' && line[2] == 'M'))) {
        m->type = line[0] == 'E' ? HIL_MSG_ERR : HIL_MSG_COM;
        return payload_length == 0 ? bad_fields(d, 0) : 1;
    }
    if (length >= 3 && line[0] == 'A' && line[1] == 'R' && line[2] == 'M') {
        m->type = HIL_MSG_ARM;
        return parse_numbers(d, payload, payload_length, m);
    }
    if (length >= 3 && line[0] == 'T' && line[1] == 'L' && is_alnum(line[2])) {
        m->type = HIL_MSG_TL;
        return parse_telemetry(d, line[2], payload, payload_length, m);
    }
    return drop(d, HIL_DROP_UNKNOWN_ID);
}

void hil_line_decoder_init(hil_line_decoder *decoder, uint8_t checked, const hil_tl_schema *schema) {
    memset(decoder, 0, sizeof(*decoder));
    decoder->checked = checked;
    if (schema != NULL) {
        decoder->schema = *schema;
    }
}

void hil_line_decoder_relay(hil_line_decoder *decoder, const char *ids, uint8_t count) {
    decoder->relay_ids = ids;
    decoder->relay_count = count;
}

void hil_line_decoder_reset(hil_line_decoder *decoder) {
    decoder->length = 0;
    decoder->discarding = 0;
    hil_sequence_reset(&decoder->sequence);
}

uint8_t hil_line_feed(hil_line_decoder *d, uint8_t byte, hil_line_message *message) {
    uint8_t length;
    if (byte != '\n') {
        if (d->discarding) {
            return 0;
        }
        if (d->length == HIL_LINE_MAX + 1) {
            /* Longer than any line plus its '\r': count it once, skip to its end. */
            d->length = 0;
            d->discarding = 1;
            return drop(d, HIL_DROP_TOO_LONG);
        }
        d->line[d->length++] = (char)byte;
        return 0;
    }
    if (d->discarding) {
        d->discarding = 0;
        return 0;
    }
    length = d->length;
    d->length = 0;
    if (length > 0 && d->line[length - 1] == '\r') {
        length--;
    }
    if (length > HIL_LINE_MAX) {
        return drop(d, HIL_DROP_TOO_LONG);
    }
    if (!parse_line(d, length, message)) {
        return 0;
    }
    d->messages++;
    return 1;
}

double hil_line_value(const hil_line_message *message, uint8_t index) {
    if (index >= message->count || index >= HIL_LINE_MAX_VALUES) {
        return NAN;
    }
    return strtod(message->text + message->value_at[index], NULL);
}

void hil_line_encoder_init(hil_line_encoder *encoder, uint8_t checked) {
    encoder->checked = checked;
    encoder->seq = 0;
}

static char hex(uint8_t nibble) { return (char)(nibble < 10 ? '0' + nibble : 'A' + nibble - 10); }

static void put_hex4(char *out, uint16_t value) {
    out[0] = hex((uint8_t)(value >> 12));
    out[1] = hex((uint8_t)((value >> 8) & 0xF));
    out[2] = hex((uint8_t)((value >> 4) & 0xF));
    out[3] = hex((uint8_t)(value & 0xF));
}

uint8_t hil_line_finish(hil_line_encoder *encoder, char *buf, uint8_t length) {
    if (length > HIL_LINE_MAX - (encoder->checked ? HIL_LINE_CHECK_LENGTH : 0)) {
        return 0;
    }
    if (encoder->checked) {
        buf[length++] = '*';
        put_hex4(buf + length, encoder->seq);
        length += 4;
        encoder->seq++;
        put_hex4(buf + length, hil_crc16((const uint8_t *)buf, length));
        length += 4;
    }
    buf[length++] = '\n';
    buf[length] = '\0';
    return length;
}

uint8_t hil_format_long(char *out, int32_t value) {
    char digits[10];
    uint8_t n = 0, length = 0;
    /* Unsigned magnitude: -INT32_MIN does not fit an int32. */
    uint32_t magnitude = value < 0 ? (uint32_t)0 - (uint32_t)value : (uint32_t)value;
    if (value < 0) {
        out[length++] = '-';
    }
    do {
        digits[n++] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude != 0);
    while (n > 0) {
        out[length++] = digits[--n];
    }
    return length;
}

uint8_t hil_format_fixed(char *out, int32_t scaled, uint8_t decimals) {
    uint32_t magnitude = scaled < 0 ? (uint32_t)0 - (uint32_t)scaled : (uint32_t)scaled;
    uint32_t unit = 1, fraction;
    uint8_t length = 0, i;
    if (decimals == 0) {
        return hil_format_long(out, scaled);
    }
    for (i = 0; i < decimals; i++) {
        unit *= 10;
    }
    fraction = magnitude % unit;
    if (scaled < 0) {
        out[length++] = '-';
    }
    length = (uint8_t)(length + hil_format_long(out + length, (int32_t)(magnitude / unit)));
    if (fraction != 0) {
        out[length++] = '.';
        while (decimals > 0 && fraction % 10 == 0) {
            fraction /= 10;
            unit /= 10;
            decimals--;
        }
        for (unit /= 10; unit > 0; unit /= 10) {
            out[length++] = (char)('0' + (fraction / unit) % 10);
        }
    }
    return length;
}
