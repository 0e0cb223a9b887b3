"""Accounting of a faulty link: what the line damaged against what the receiver counted.

A tally (:class:`LineTally` for the command link, :class:`FrameTally` for the signal
link) is a :class:`~hil_bridge.core.faults.FaultChannel`'s observer: it cuts the
stream as it was sent into messages and records each message's fate on the line:

* intact: every byte, the line feed or the whole frame, arrived unchanged;
* damaged: at least one of its bytes was dropped, corrupted or duplicated;
* merged (lines only): its own bytes arrived, but the line feed before it did not,
  so the receiver sees it glued to the damaged line before it and loses both;
* swallowed (frames only): its own bytes arrived, but the frame before it lost one
  byte after its ids and the receiver, reading a whole frame's length from that
  frame's start, took this frame's start byte as the last byte of that one. In
  checked mode that frame passes its CRC only if the byte lost was 0xFF (its CRC's
  low byte): it is then taken exactly as sent (an intact frame, counted in
  ``completed_by_next_start``); otherwise it fails and is lost. In plain mode it is
  always taken, its last value perhaps wrong (``taken_damaged``).

:func:`reconcile` then sets one direction's fates against the receiving decoder's
counters. In checked mode the receiver counts a message lost for every sequence
number it did not see, so between its first and its last good message the lost
count must equal the damaged and merged messages exactly; those before its first
good message (no number to compare with yet) and after its last one (counted when
the next one arrives) are reported apart. The receiver's bad counts (bad check or
CRC, bad ids, lines by reason) are detections, not messages: a corrupted byte that
becomes a line feed splits one line into two bad ones, a lost line feed makes one
bad line of two messages, a frame whose start byte was lost leaves only skipped
bytes. Plain mode has no sequence numbers, so it can neither count what was lost
whole nor tell a corrupted message that still parses from a good one; its report
gives the damage, the detections, and a lower bound of the damaged messages it took
as good.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hil_bridge.core.crc import crc16
from hil_bridge.core.faults import CORRUPTED, DROPPED, DUPLICATED
from hil_bridge.core.line_protocol import AFTER_SEQUENCE, DecodeStats, check_fault
from hil_bridge.core.signal_protocol import START, FrameStats

#: Fates of a message on the line: the receiver takes it as sent.
INTACT = 0
#: Its bytes were damaged: the receiver loses it.
DAMAGED = 1
#: Intact, but lost with the line before it, whose line feed was hit.
MERGED = 2
#: Intact, but lost: its start byte completed the frame before it.
SWALLOWED = 3
#: Damaged, but the receiver takes it as a good message (plain mode's blind spot).
TAKEN_DAMAGED = 4

#: A partial "line" longer than this without a line feed is not our protocol.
MAX_TALLY_LINE = 4096

#: What each figure of a report means, and why some damage is not in the lost count.
EXPLANATIONS: Mapping[str, str] = {
    "damaged": "messages with at least one byte dropped, corrupted or duplicated by the fault proxy",
    "swallowed": (
        "frames whose own bytes arrived intact but whose start byte the receiver took as the last"
        " byte of the frame before it, which had lost a byte after its ids; that frame is then"
        " taken: as sent in checked mode if the lost byte was 0xFF (completed_by_next_start),"
        " else it fails its CRC; with a wrong last value in plain mode (taken_damaged)"
    ),
    "taken_damaged": (
        "damaged messages the receiver took as good: in plain mode whatever still parses, in"
        " checked mode those whose CRC-16 matches by chance (about 1 in 65536 damaged ones; the"
        " tally judges a line as it arrived, a frame when it only lost one byte or was only"
        " corrupted; a frame the CRC missed after other damage shows as unaccounted). A checked"
        " line the CRC missed whose fields then fail is counted by the receiver as bad and as"
        " taken_undecoded: its sequence number was taken"
    ),
    "taken_unforeseen": (
        "checked mode: messages the receiver took beyond those the tally foresaw, a CRC-16 that"
        " matched by chance on damage the tally does not follow (a frame read across a lost"
        " byte's gap); each can leave the lost count one off (unaccounted), so the report is"
        " then not accounted"
    ),
    "started_by_previous_end": (
        "frames that lost their start byte yet arrived whole: the frame before ended in 0xFF and"
        " was not taken, so the receiver began this frame at that byte"
    ),
    "merged": (
        "lines whose own bytes arrived intact but whose predecessor's line feed was dropped or"
        " corrupted: the receiver sees one line made of both, fails its check, and the sequence"
        " gap counts both as lost"
    ),
    "before_first": (
        "damaged before the receiver's first good message: with no sequence number to compare"
        " with yet, no gap can show them"
    ),
    "not_yet_counted": (
        "damaged after the receiver's last good message (in flight when the run ended): a gap"
        " shows them only once the next good message arrives"
    ),
    "bad": (
        "the receiver's detections, not messages: a corrupted byte that becomes a line feed splits"
        " a line into two bad ones, a lost line feed makes one bad line of two messages, a frame"
        " whose start byte was lost leaves only skipped bytes"
    ),
    "malformed": (
        "messages that were already broken when they entered the proxy (the sender's tty was full):"
        " not the line's doing, and they make the count inexact"
    ),
    "longest_lost_run": (
        "the most messages lost in a row: a checked receiver counts a gap modulo its sequence"
        " range (65536 lines, 256 frames), and reads a gap of half the range or more as a repeat,"
        " so a run that long cannot be accounted"
    ),
    "plain": (
        "plain mode carries no sequence numbers: a message lost whole leaves no trace, and a"
        " corrupted message that still parses (a flipped digit, a signal value whose ids still"
        " line up) is taken as good, so its bad counts are a lower bound of the damage;"
        " silently_accepted_at_least bounds from below the damaged messages it took as good"
    ),
}


class MessageTally:
    """The fate of every message that entered one direction of a faulty line, in order."""

    #: What the messages are: "lines" or "frames".
    kind = ""

    def __init__(self, *, checked: bool) -> None:
        self.checked = checked
        #: One fate per whole message (:data:`INTACT`, :data:`DAMAGED`, ...).
        self.fates = bytearray()
        #: Messages that entered the line already broken (not in :attr:`fates`).
        self.malformed = 0
        #: Damaged frames taken as sent all the same (see :class:`FrameTally`): their last
        #: byte lost and made up by the next frame's start byte, or their start byte lost
        #: and made up by the end of the frame before.
        self.completed_by_next_start = 0
        self.started_by_previous_end = 0

    def observe(self, data: bytes, damaged: bytes, *, on_line: bytes | None = None) -> None:
        """Take a push of the fault channel (:class:`~hil_bridge.core.faults.ByteObserver`)."""
        raise NotImplementedError

    @property
    def sent(self) -> int:
        """Whole messages that entered the line."""
        return len(self.fates)

    def count(self, fate: int) -> int:
        """Messages with ``fate``."""
        return self.fates.count(fate)


class LineTally(MessageTally):
    """Cuts a line-protocol stream at its line feeds (checked mode: checks each line)."""

    kind = "lines"

    def __init__(self, *, checked: bool) -> None:
        super().__init__(checked=checked)
        self._line = bytearray()
        self._damage = bytearray()
        #: The current line's bytes as they went on the line; None: a corrupted byte's new
        #: value was not told (the line cannot be judged as the receiver sees it).
        self._on_line: bytearray | None = bytearray()
        self._line_feed_lost = False

    def observe(self, data: bytes, damaged: bytes, *, on_line: bytes | None = None) -> None:
        """Take a push of the fault channel: the bytes as sent, nonzero where damaged.

        ``on_line``: the bytes as they went on the line (a corrupted byte's new value),
        which tells whether a damaged line still passes its CRC; None: not told.
        """
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            self._add(data, damaged, on_line, start, end)
            self._end_line(damaged[end])
            start = end + 1
        if start < len(data):
            self._add(data, damaged, on_line, start, len(data))
            if len(self._line) > MAX_TALLY_LINE:
                self.malformed += 1
                self._clear()

    def _add(self, data: bytes, damaged: bytes, on_line: bytes | None, start: int, end: int) -> None:
        self._line += data[start:end]
        self._damage += damaged[start:end]
        told = None if on_line is None else on_line[start:end]
        self._on_line = _extend_on_line(self._on_line, data[start:end], damaged[start:end], told)

    def _clear(self) -> None:
        self._line.clear()
        self._damage.clear()
        self._on_line = bytearray()

    def _end_line(self, line_feed: int) -> None:
        line, damage = bytes(self._line), self._damage
        if self.checked and not _checked_line(line):
            self.malformed += 1
        elif line_feed or damage.count(0) != len(damage):
            self.fates.append(self._damaged_fate(line, damage, line_feed))
        else:
            self.fates.append(MERGED if self._line_feed_lost else INTACT)
        self._line_feed_lost = line_feed != 0
        self._clear()

    def _damaged_fate(self, line: bytes, damage: bytearray, line_feed: int) -> int:
        """DAMAGED, or TAKEN_DAMAGED if the line as it arrived still passes its CRC."""
        if self.checked and not (line_feed or self._line_feed_lost) and self._on_line is not None:
            arrived = bytearray()
            for byte, how in zip(self._on_line, damage, strict=True):
                if how != DROPPED:
                    arrived += bytes((byte, byte)) if how == DUPLICATED else bytes((byte,))
            if b"\n" not in arrived and _checked_line(bytes(arrived)):
                return TAKEN_DAMAGED  # the CRC's blind spot: about 1 in 65536
        return DAMAGED


def _extend_on_line(
    kept: bytearray | None, data: bytes, damaged: bytes, on_line: bytes | None
) -> bytearray | None:
    """``kept`` (bytes as they went on the line) with a push's; None from a corrupted byte not told on.

    ``on_line`` None: the push's values on the line were not told, which matters only
    for its corrupted bytes (the others went as sent).
    """
    if kept is not None:
        if on_line is not None:
            kept += on_line
        elif CORRUPTED in damaged:
            return None
        else:
            kept += data
    return kept


def _hit(damaged: bytes | bytearray, start: int, end: int) -> bool:
    """True if any byte of ``damaged[start:end]`` was damaged."""
    return damaged.count(0, start, end) != end - start


def _checked_line(line: bytes) -> bool:
    """True if ``line`` (no line feed) passes its ``*SSSSCCCC`` check, as the decoder judges it."""
    return not check_fault(line)


class FrameTally(MessageTally):
    """Cuts a signal-protocol stream into frames of the given ids (checked: checks each CRC)."""

    kind = "frames"

    def __init__(self, ids: bytes, *, checked: bool) -> None:
        super().__init__(checked=checked)
        self.size = 1 + len(ids) * 3 + (3 if checked else 0)
        self._ids = bytes(sorted(ids))
        self._first_id = 2 if checked else 1
        self._buffer = bytearray()
        self._damage = bytearray()
        #: The buffered bytes as they went on the line (None: a corrupted byte's value not told).
        self._on_line: bytearray | None = bytearray()
        #: A frame the receiver takes if the next frame's start byte arrives: (index, fate).
        self._completing: tuple[int, int] | None = None
        #: The last byte of the frame before, its damage, and whether the receiver took it.
        self._previous: tuple[int, int, bool] | None = None
        #: Bytes outside any frame as sent (the sender's output was broken).
        self.unframed_bytes = 0

    def observe(self, data: bytes, damaged: bytes, *, on_line: bytes | None = None) -> None:
        """Take a push of the fault channel: the bytes as sent, nonzero where damaged.

        A frame that lost one byte, or whose bytes after its start byte were only
        corrupted (``on_line``: the bytes as they went on the line), is judged as the
        receiver reads it; other damage loses it.
        """
        buffer, damage, size = self._buffer, self._damage, self.size
        buffer += data
        damage += damaged
        self._on_line = _extend_on_line(self._on_line, data, damaged, on_line)
        pos = 0
        while pos < len(buffer):
            if buffer[pos] != START:
                self.unframed_bytes += 1
                self._completing = self._previous = None
                pos += 1
                continue
            if len(buffer) - pos < size:
                break
            frame = bytes(buffer[pos : pos + size])
            if not self._valid(frame):
                self.unframed_bytes += 1
                self._completing = self._previous = None
                pos += 1
                continue
            arrived = None if self._on_line is None else bytes(self._on_line[pos : pos + size])
            self._take(frame, bytes(damage[pos : pos + size]), arrived)
            pos += size
        del buffer[:pos]
        del damage[:pos]
        if self._on_line is not None:
            del self._on_line[:pos]
        elif not buffer:
            self._on_line = bytearray()  # told again from the next push on

    def _take(self, frame: bytes, damage: bytes, arrived: bytes | None) -> None:
        """Record one frame's fate (and settle the one before it, if it waited for this one).

        ``arrived``: the frame as it went on the line (None: not told).
        """
        hit = damage.count(0) != len(damage)
        previous, self._previous = self._previous, None
        if self._completing is not None:
            index, fate = self._completing
            self._completing = None
            if damage[0] == 0:  # its start byte arrived: the frame before ends with it
                if fate == INTACT:
                    self.completed_by_next_start += 1
                self.fates[index] = fate
                self.fates.append(DAMAGED if hit else SWALLOWED)
                self._previous = (frame[-1], damage[-1], False)
                return
        only_one_lost = hit and damage.count(0) == len(damage) - 1 and damage.count(DROPPED) == 1
        if only_one_lost and damage[0] == DROPPED and previous == (START, 0, False):
            # Its start byte lost, but the last byte of the frame before, which the
            # receiver did not take, is a 0xFF too: the frame arrives whole after all.
            self.started_by_previous_end += 1
            self.fates.append(INTACT)
            self._previous = (frame[-1], damage[-1], True)
            return
        only_corrupted = damage[0] == 0 and damage.count(0) + damage.count(CORRUPTED) == len(damage)
        if hit and self.checked and arrived is not None and only_corrupted:
            # Only corrupted after its start byte: the receiver reads the frame where it
            # was, and its CRC-16 may still match.
            taken = self._valid(arrived)
            self.fates.append(TAKEN_DAMAGED if taken else DAMAGED)
            self._previous = (arrived[-1], damage[-1], taken)
            return
        self.fates.append(DAMAGED if hit else INTACT)
        self._previous = (frame[-1], damage[-1], not hit)
        if only_one_lost:
            # One byte lost, nothing else: the receiver reads a frame's length from its
            # start, so the next frame's start byte (0xFF) fills the gap.
            lost = damage.index(DROPPED)
            received = frame[:lost] + frame[lost + 1 :] + bytes([START])
            if self._valid(received):
                self._completing = (len(self.fates) - 1, INTACT if received == frame else TAKEN_DAMAGED)

    def _valid(self, frame: bytes) -> bool:
        first = self._first_id
        if bytes(sorted(frame[first : first + 3 * len(self._ids) : 3])) != self._ids:
            return False
        return not self.checked or crc16(frame[1:-2]) == int.from_bytes(frame[-2:], "big")


@dataclass(frozen=True)
class ReceiverCounts:
    """What the receiving decoder of one direction counted."""

    #: Messages (lines or frames) it decoded and took.
    decoded: int
    #: Messages missing from its sequence (checked mode).
    lost: int
    #: Detections by reason (bad check or CRC, bad ids, lines dropped by reason).
    bad: Mapping[str, int] = field(default_factory=dict)
    #: Bytes thrown away while looking for a frame start (signal link).
    skipped_bytes: int = 0
    #: Checked lines whose sequence number it took and which it then dropped (their
    #: fields do not parse: a damaged line its CRC missed); in plain mode the lines
    #: dropped for their fields, which :func:`reconcile` leaves alone there.
    taken_undecoded: int = 0

    @classmethod
    def of_lines(cls, stats: DecodeStats) -> ReceiverCounts:
        """The counters of a line decoder."""
        after = sum(stats.dropped[reason.value] for reason in AFTER_SEQUENCE)
        bad = {k: v for k, v in stats.dropped.items() if v}
        return cls(stats.messages, stats.lost, bad, taken_undecoded=after)

    @classmethod
    def of_frames(cls, stats: FrameStats) -> ReceiverCounts:
        """The counters of a frame decoder."""
        bad = {"bad_ids": stats.bad_ids, "bad_crc": stats.bad_crc, "duplicates": stats.duplicates}
        return cls(stats.frames, stats.lost, {k: v for k, v in bad.items() if v}, stats.skipped_bytes)


def reconcile(tally: MessageTally, receiver: ReceiverCounts) -> dict[str, Any]:
    """One direction's line damage set against its receiver's counts.

    The receiver takes the intact (and taken-damaged) messages in order, so the
    ``decoded``-th of them is the last it took (checked lines: counting those whose
    number it took and whose fields it then dropped, ``taken_undecoded``); in checked
    mode its lost count must then equal the other messages between its first and that
    one (``accounted``).
    Plain mode cannot be reconciled (``accounted`` None), see :data:`EXPLANATIONS`.
    """
    fates = tally.fates
    counts = {name: fates.count(fate) for name, fate in _FATES.items()}
    report: dict[str, Any] = {
        "unit": tally.kind,
        "sent": tally.sent,
        **counts,
        "completed_by_next_start": tally.completed_by_next_start,
        "started_by_previous_end": tally.started_by_previous_end,
        "malformed": tally.malformed,
        "receiver": {
            "decoded": receiver.decoded,
            "lost": receiver.lost,
            "bad": dict(receiver.bad),
            "bad_total": sum(receiver.bad.values()),
            **({"skipped_bytes": receiver.skipped_bytes} if isinstance(tally, FrameTally) else {}),
        },
    }
    taken = counts["intact"] + counts["taken_damaged"]
    report["longest_lost_run"] = _longest_lost_run(fates)
    if not tally.checked:
        report["silently_accepted_at_least"] = max(receiver.decoded - counts["intact"], 0)
        report["accounted"] = None
        return report
    numbered = receiver.decoded + receiver.taken_undecoded
    before, counted, after = _split_at_receiver(fates, numbered)
    report["receiver"]["taken_undecoded"] = receiver.taken_undecoded
    report.update(
        before_first=before,
        expected_lost=counted,
        not_yet_counted=after,
        unaccounted=receiver.lost - counted,
        taken_unforeseen=max(numbered - taken, 0),
        accounted=numbered <= taken and receiver.lost == counted and tally.malformed == 0,
    )
    return report


_FATES = {
    "intact": INTACT,
    "damaged": DAMAGED,
    "merged": MERGED,
    "swallowed": SWALLOWED,
    "taken_damaged": TAKEN_DAMAGED,
}
_TAKEN = (INTACT, TAKEN_DAMAGED)


def _split_at_receiver(fates: bytearray, decoded: int) -> tuple[int, int, int]:
    """Lost messages before the receiver's first taken one, between its first and last, after."""
    taken = [i for i, fate in enumerate(fates) if fate in _TAKEN]
    lost = len(fates) - len(taken)
    if decoded <= 0 or not taken:
        return lost, 0, 0
    first, last = taken[0], taken[min(decoded, len(taken)) - 1]
    between = (last - first + 1) - sum(1 for i in taken if first <= i <= last)
    after = (len(fates) - last - 1) - sum(1 for i in taken if i > last)
    return first, between, after


def _longest_lost_run(fates: bytearray) -> int:
    """The most consecutive messages the receiver does not take."""
    longest = run = 0
    for fate in fates:
        run = 0 if fate in _TAKEN else run + 1
        longest = max(longest, run)
    return longest
