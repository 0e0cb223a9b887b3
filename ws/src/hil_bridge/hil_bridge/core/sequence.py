"""Sequence numbers of checked mode, one direction of a link (DESIGN.md "Sequence rule").

Both checked protocols number what they send, per direction: lines with 16 bits,
signal frames with 8. A receiver takes a number at or ahead of the one it expects
(the difference, counted modulo the range, below half of it) and counts the numbers
skipped as lost. A number behind it is a repeat and dropped, with one exception: a
peer that restarts (MCU reset, control loop restart) numbers from 0 again, which is
behind for as long as the peer had been running. So ``RESYNC_AFTER`` numbers behind
in a row that follow one another (n, n+1, n+2) are taken as the restarted peer: the
last of them is accepted and the receiver follows the new numbering. A single
repeat, or a repeat of fewer than ``RESYNC_AFTER`` consecutive lines, is still
dropped; an in-order number ends a run of repeats.

The firmware's decoders (``hil_line.c``, ``hil_signal.c``) apply the same rule; the
shared vectors (``vectors/*.yaml`` ``sequence``) hold them together.
"""

from __future__ import annotations

#: Consecutive numbers behind the expected one that mean the peer restarted.
RESYNC_AFTER = 3
#: :meth:`SequenceWindow.check`: drop the line or frame, a repeat.
DUPLICATE = -1
#: :meth:`SequenceWindow.check`: take it, the peer restarted (nothing counted lost).
RESYNC = -2


class SequenceWindow:
    """The receiving side's state of one sequence: expected number and a run of repeats.

    Args:
        bits: width of the sequence number (16 for lines, 8 for signal frames).
    """

    __slots__ = ("_candidate", "_half", "_mask", "_streak", "expected")

    def __init__(self, bits: int) -> None:
        self._mask = (1 << bits) - 1
        self._half = 1 << (bits - 1)
        #: The number expected next; None before the first (after a reset).
        self.expected: int | None = None
        self._candidate = 0
        self._streak = 0

    def reset(self) -> None:
        """Forget the sequence (a reconnect): the next number is taken as it comes."""
        self.expected = None
        self._streak = 0

    def check(self, seq: int) -> int:
        """Judge ``seq``: numbers lost before it (>= 0, take it), :data:`DUPLICATE` or :data:`RESYNC`."""
        mask = self._mask
        expected = self.expected
        self.expected = (seq + 1) & mask
        if expected is None:
            self._streak = 0
            return 0
        gap = (seq - expected) & mask
        if gap < self._half:
            self._streak = 0
            return gap
        # Behind: a repeat, or the peer started again from a lower number.
        self._streak = self._streak + 1 if self._streak and seq == self._candidate else 1
        self._candidate = self.expected
        if self._streak >= RESYNC_AFTER:
            self._streak = 0
            return RESYNC
        self.expected = expected
        return DUPLICATE
