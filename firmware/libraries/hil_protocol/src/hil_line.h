/* Line protocol of the command link (DESIGN.md "Line protocol"), the MCU's side.
 *
 * One ASCII message per line, '\n' terminated (a '\r' before it is ignored):
 * <ID><payload>, ID three characters, an optional comma after it, fields separated
 * by commas. Checked mode appends "*SSSSCCCC": a 16-bit sequence number and the
 * CRC-16/CCITT-FALSE of every byte before the C's, as upper-case hex. A repeated
 * number is dropped, unless HIL_RESYNC_AFTER consecutive numbers behind say the peer
 * restarted (hil_sequence.h).
 *
 * The decoder takes one byte at a time and never fails: over-long lines, non-ASCII
 * bytes, unknown ids, bad or missing fields and bad checks are dropped and counted
 * by reason, exactly as hil_bridge's Python decoder does (the shared vectors and a
 * property test hold the two together). It keeps no heap and no more than one line.
 */
#ifndef HIL_LINE_H
#define HIL_LINE_H

#include <stdint.h>

#include "hil_sequence.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest line accepted, in bytes without the line ending. */
#define HIL_LINE_MAX 128
/* Length of the checked-mode suffix "*SSSSCCCC". */
#define HIL_LINE_CHECK_LENGTH 9
/* Numeric fields whose position a message keeps (more are counted, not kept). */
#define HIL_LINE_MAX_VALUES 16
/* Size of a buffer that hil_line_finish() completes into a line. */
#define HIL_LINE_BUFFER (HIL_LINE_MAX + 2)

typedef enum {
    HIL_MSG_DRV = 1, /* left, right */
    HIL_MSG_ARM,     /* count values */
    HIL_MSG_HBB,     /* text: the stamp, to be echoed unchanged */
    HIL_MSG_TL,      /* list_id, count values */
    HIL_MSG_ERR,     /* text */
    HIL_MSG_COM,     /* text */
    HIL_MSG_RELAY    /* text: the whole body, id included (an id of hil_line_decoder_relay) */
} hil_msg_type;

/* Why a line was dropped: the order of hil_bridge's DropReason. */
typedef enum {
    HIL_DROP_TOO_LONG,
    HIL_DROP_NOT_ASCII,
    HIL_DROP_EMPTY,
    HIL_DROP_UNKNOWN_ID,
    HIL_DROP_UNKNOWN_LIST,
    HIL_DROP_BAD_FIELD,
    HIL_DROP_BAD_ARITY,
    HIL_DROP_BAD_CHECK,
    HIL_DROP_DUPLICATE,
    HIL_DROP_REASONS
} hil_drop_reason;

typedef struct {
    uint8_t type;        /* hil_msg_type */
    char list_id;        /* TL: the character after "TL" */
    int32_t left, right; /* DRV, saturated to the int32 range */
    const char *text;    /* payload (NUL-terminated, inside the decoder: valid until the next byte) */
    uint8_t text_length;
    uint8_t count;       /* ARM, TL: number of values in text */
    uint8_t value_at[HIL_LINE_MAX_VALUES]; /* offsets of the first values in text */
} hil_line_message;

/* Telemetry lists a decoder accepts: ids[i] is the character after "TL", arity[i] its
 * number of fields. An MCU normally accepts none. */
typedef struct {
    const char *ids;
    const uint8_t *arity;
    uint8_t count;
} hil_tl_schema;

typedef struct {
    char line[HIL_LINE_MAX + 2]; /* the line so far (+ '\r') and a NUL */
    uint8_t length;
    uint8_t discarding;          /* inside the tail of a line already counted too long */
    uint8_t checked;
    hil_sequence sequence;
    hil_tl_schema schema;
    const char *relay_ids;       /* ids passed on unparsed, 3 characters each (hil_line_decoder_relay) */
    uint8_t relay_count;
    uint16_t messages;
    uint16_t dropped[HIL_DROP_REASONS];
    uint16_t lost;               /* lines missing from the sequence (checked mode) */
    uint16_t resyncs;            /* times the peer's numbering started again (it restarted) */
} hil_line_decoder;

typedef struct {
    uint8_t checked;
    uint16_t seq;
} hil_line_encoder;

void hil_line_decoder_init(hil_line_decoder *decoder, uint8_t checked, const hil_tl_schema *schema);
/* Lines of these ids (count ids of 3 characters each, one after another, e.g.
 * "RRXRST") come out unparsed as HIL_MSG_RELAY, text the body without check suffix,
 * as hil_bridge's LineDecoder(relay_ids=...) (the radio link's RTX, RRX, RST). The
 * string must outlive the decoder. */
void hil_line_decoder_relay(hil_line_decoder *decoder, const char *ids, uint8_t count);
/* Forget a partial line and the sequence (after a reconnect); counters are kept. */
void hil_line_decoder_reset(hil_line_decoder *decoder);
/* Feed one byte. Returns 1 and fills *message when the byte completed a valid line. */
uint8_t hil_line_feed(hil_line_decoder *decoder, uint8_t byte, hil_line_message *message);
/* Value i (< HIL_LINE_MAX_VALUES) of an ARM or TL message (strtod: float on an AVR). */
double hil_line_value(const hil_line_message *message, uint8_t index);

void hil_line_encoder_init(hil_line_encoder *encoder, uint8_t checked);
/* Make buf[0..length) (the body, e.g. "DRV1,2") a line: the checked suffix if any and
 * '\n', then a NUL. buf holds HIL_LINE_BUFFER bytes. Returns the line's length, or 0
 * (and the sequence number unused) if the receiver would drop the body as too long. */
uint8_t hil_line_finish(hil_line_encoder *encoder, char *buf, uint8_t length);

/* Decimal text of value at out (no NUL); returns its length (at most 11). */
uint8_t hil_format_long(char *out, int32_t value);
/* scaled / 10^decimals as the Python encoder writes it: no trailing zeros, no '.'
 * for whole numbers ("187.5", "200", "-0.25"). decimals <= 6. Returns the length. */
uint8_t hil_format_fixed(char *out, int32_t scaled, uint8_t decimals);

#ifdef __cplusplus
}
#endif

#endif
