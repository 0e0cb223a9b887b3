/* Signal frames of the signal link (DESIGN.md "Signal protocol"), the MCU side's codec.
 *
 * Plain frame: 0xFF, then N signals [id][hi][lo] (id any byte but 0xFF, value a
 * big-endian int16). Checked frame: 0xFF [seq] [id hi lo]*N [crc_hi crc_lo], the CRC-16/CCITT-FALSE
 * over seq and the signals. A signal's range [min, max] maps onto -32768..32767:
 * INTEGER signals with Arduino map() (plain) or the rounding map (checked) in 32-bit
 * arithmetic, FLOAT signals linearly in floating point, truncated (plain) or rounded
 * (checked). On an AVR `double` is a 32-bit float: a FLOAT code may then differ from
 * the PC's by one near a rounding boundary (documented in DESIGN.md).
 *
 * The decoder takes one byte at a time, keeps one frame's bytes in a buffer the caller
 * gives it, accepts a frame's signals in any order (each expected id exactly once;
 * frames in the expected order cost no search), and resynchronises at the next start byte after a lost byte, a corrupted
 * frame or a start in mid-frame; its counters match hil_bridge's Python decoder. A
 * repeated seq is dropped, unless HIL_RESYNC_AFTER consecutive numbers behind say the
 * peer restarted (hil_sequence.h).
 *
 * A frame carries at most HIL_MAX_SIGNALS signals (ids 0..254, as hil_bridge allows
 * per link): at most HIL_FRAME_MAX_SIZE bytes. More is refused, not truncated.
 */
#ifndef HIL_SIGNAL_H
#define HIL_SIGNAL_H

#include <stdint.h>

#include "hil_sequence.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HIL_SIGNAL_START 0xFF
#define HIL_RAW_MIN ((int32_t)-32768)
#define HIL_RAW_MAX ((int32_t)32767)
/* Bytes of a frame of n signals. */
#define HIL_FRAME_SIZE(n, checked) (1 + 3 * (n) + ((checked) ? 3 : 0))
/* Most signals in a frame: one per id, 0..254 (0xFF is the start byte). */
#define HIL_MAX_SIGNALS 255
/* Bytes of the largest frame (769): frame lengths need 16 bits. */
#define HIL_FRAME_MAX_SIZE HIL_FRAME_SIZE(HIL_MAX_SIGNALS, 1)

/* Arduino map(): (x - in_min) * (out_max - out_min) / (in_max - in_min) + out_min, in
 * 32-bit signed arithmetic with truncation toward zero. Not invertible. */
int32_t hil_arduino_map(int32_t x, int32_t in_min, int32_t in_max, int32_t out_min, int32_t out_max);
/* The linear map rounded to nearest (halves up), for in_min <= x <= in_max and
 * out_max > out_min; round-trips every integer of a range of at most 32767. */
int32_t hil_rounding_map(int32_t x, int32_t in_min, int32_t in_max, int32_t out_min, int32_t out_max);

/* INTEGER signal value -> code (value clamped into [min, max] first). */
int16_t hil_int_to_raw(int32_t value, int32_t min, int32_t max, uint8_t checked);
/* Code -> INTEGER signal value. */
int32_t hil_raw_to_int(int16_t raw, int32_t min, int32_t max, uint8_t checked);
/* FLOAT signal value -> code (clamped; NaN counts as min). */
int16_t hil_float_to_raw(double value, double min, double max, uint8_t checked);
/* Code -> FLOAT signal value. */
double hil_raw_to_float(int16_t raw, double min, double max);

typedef struct {
    uint8_t checked;
    uint8_t seq;
} hil_frame_encoder;

void hil_frame_encoder_init(hil_frame_encoder *encoder, uint8_t checked);
/* One frame of the n signals ids[i] carrying raw[i], in that order; out holds
 * HIL_FRAME_SIZE(n, checked) bytes. Returns the frame's size, or 0 (nothing written,
 * the sequence number unused) if n is more than HIL_MAX_SIGNALS. */
uint16_t hil_frame_encode(hil_frame_encoder *encoder, const uint8_t *ids, const int16_t *raw, uint16_t n,
                          uint8_t *out);

typedef struct {
    const uint8_t *ids; /* the expected ids, distinct; raw[i] is ids[i]'s value */
    uint8_t count;
    uint8_t checked;
    uint16_t size;      /* HIL_FRAME_SIZE(count, checked) */
    uint8_t *buffer;    /* size bytes, the caller's */
    uint16_t length;
    hil_sequence sequence;
    uint8_t seq;        /* of the last frame decoded (checked mode) */
    uint16_t frames;
    uint16_t bad_ids;
    uint16_t bad_crc;
    uint16_t duplicates;
    uint16_t lost;
    uint16_t resyncs;   /* times the peer's numbering started again (it restarted) */
    uint32_t skipped_bytes;
} hil_frame_decoder;

/* Returns 1, or 0 if count is 0 or more than HIL_MAX_SIGNALS, or an id is 0xFF or
 * given twice: such a decoder decodes nothing (every byte is skipped). buffer holds
 * HIL_FRAME_SIZE(count, checked) bytes. */
uint8_t hil_frame_decoder_init(hil_frame_decoder *decoder, const uint8_t *ids, uint16_t count, uint8_t checked,
                               uint8_t *buffer);
/* Forget a partial frame and the sequence; counters are kept. */
void hil_frame_decoder_reset(hil_frame_decoder *decoder);
/* Feed one byte. Returns 1 when it completed a valid frame: raw[0..count) filled, raw[i]
 * holding the value of the signal ids[i] wherever it was in the frame. */
uint8_t hil_frame_feed(hil_frame_decoder *decoder, uint8_t byte, int16_t *raw);

#ifdef __cplusplus
}
#endif

#endif
