/* The HIL robot sim wire protocols (DESIGN.md "Wire formats"), for Arduino sketches.
 *
 * hil_crc.h     CRC-16/CCITT-FALSE of both checked modes
 * hil_line.h    line protocol of the command link (robot brain <-> robot MCU)
 * hil_signal.h  signal frames of the signal link (bridge board <-> simulator)
 * hil_sequence.h  checked mode's sequence numbers (repeats, a restarted peer), used by both
 */
#ifndef HIL_PROTOCOL_H
#define HIL_PROTOCOL_H

#include "hil_crc.h"
#include "hil_line.h"
#include "hil_signal.h"

#endif
