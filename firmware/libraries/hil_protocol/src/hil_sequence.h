/* Sequence numbers of checked mode, one direction of a link (DESIGN.md "Sequence rule").
 *
 * Lines carry 16-bit numbers, signal frames 8-bit ones. A receiver takes a number at
 * or ahead of the one it expects (the difference modulo the range below half of it)
 * and counts the numbers skipped as lost. A number behind it is a repeat and dropped,
 * except that HIL_RESYNC_AFTER numbers behind in a row that follow one another
 * (n, n+1, n+2) are a peer that restarted and numbers from 0 again: the last of them
 * is taken and the receiver follows the new numbering. The same rule as hil_bridge's
 * hil_bridge.core.sequence; the shared vectors hold the two together.
 *
 * Header only (static inline): each codec gets its copy without another source file
 * to build.
 */
#ifndef HIL_SEQUENCE_H
#define HIL_SEQUENCE_H

#include <stdint.h>

/* Consecutive numbers behind the expected one that mean the peer restarted. */
#define HIL_RESYNC_AFTER 3

/* What hil_sequence_check makes of a number. */
#define HIL_SEQ_TAKE 0      /* in order or ahead: take it, *lost numbers were skipped */
#define HIL_SEQ_DUPLICATE 1 /* behind: drop it */
#define HIL_SEQ_RESYNC 2    /* the peer restarted: take it, nothing lost */

typedef struct {
    uint16_t expected;  /* the number expected next */
    uint16_t candidate; /* the number that continues the run of numbers behind */
    uint8_t have;       /* 0 until the first number (or after a reset) */
    uint8_t streak;     /* numbers behind in a row that followed one another */
} hil_sequence;

/* Judge seq (mask: 0xFFFF for lines, 0xFF for frames); *lost is set when it is taken. */
static inline uint8_t hil_sequence_check(hil_sequence *s, uint16_t seq, uint16_t mask, uint16_t *lost) {
    uint16_t next = (uint16_t)((seq + 1u) & mask);
    uint16_t gap = (uint16_t)((seq - s->expected) & mask);
    *lost = 0;
    if (!s->have || gap <= (mask >> 1)) {
        *lost = s->have ? gap : 0;
        s->have = 1;
        s->streak = 0;
        s->expected = next;
        return HIL_SEQ_TAKE;
    }
    s->streak = (uint8_t)(s->streak != 0 && seq == s->candidate ? s->streak + 1 : 1);
    s->candidate = next;
    if (s->streak >= HIL_RESYNC_AFTER) {
        s->streak = 0;
        s->expected = next;
        return HIL_SEQ_RESYNC;
    }
    return HIL_SEQ_DUPLICATE;
}

/* Forget the sequence (a reconnect): the next number is taken as it comes. */
static inline void hil_sequence_reset(hil_sequence *s) {
    s->have = 0;
    s->streak = 0;
}

#endif
