"""Binary signal protocol of the signal link (MCU pins <-> simulator).

Plain frame (DESIGN.md): ``0xFF``, then exactly N signals ``[id][hi][lo]``; ``id`` is
one byte, never 0xFF, and the value a big-endian signed 16-bit integer. Which
signals a frame carries depends on its direction (INPUT signals from the MCU side to
the simulator, OUTPUT signals the other way). Encoders send them in layout order;
decoders accept them in any order, each id exactly once.

Checked frame (opt-in): ``0xFF [seq] [id hi lo]*N [crc_hi crc_lo]``, ``seq`` an 8-bit
counter per direction and the CRC-16/CCITT-FALSE over ``seq`` and the signals. A
frame that fails its CRC is dropped and counted; a gap in ``seq`` counts lost
frames; a repeated ``seq`` is dropped, unless ``RESYNC_AFTER`` consecutive numbers
behind say the peer restarted (:mod:`hil_bridge.core.sequence`).

Values. A signal's physical range [min, max] maps linearly onto [-32768, 32767].

* Plain mode, INTEGER signals: exactly Arduino ``map()`` in 32-bit integer arithmetic
  with truncation toward zero, both ways, so PC and firmware agree bit for bit. It
  is not invertible: 512 in 0..1024 goes out as -1 and comes back as 511; 1 comes
  back as 0.
* Checked mode, INTEGER signals: the rounding map ``out_min + (k * span_out + span_in
  / 2) / span_in`` (k = x - in_min, integer division), which round-trips every
  integer of a range of at most 32767 exactly and stays inside 32-bit arithmetic,
  so firmware can use it too.
* FLOAT signals: the same linear map in floating point, truncated (plain) or
  rounded (checked) to the 16-bit code; the firmware's 32-bit float may differ from
  the PC's double by one code near a rounding boundary.

Values outside [min, max] are clamped and counted; non-finite values are replaced by
the signal's default and counted. The decoder keeps its state between calls, so
bytes may arrive one at a time, and resynchronises at the next start byte after a
lost byte, a corrupted frame or a start in mid-frame. Plain mode cannot tell a
corrupted frame whose ids still line up from a good one; checked mode can.
"""

from __future__ import annotations

import math
import struct
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hil_bridge.core.crc import crc16
from hil_bridge.core.sequence import DUPLICATE, RESYNC, SequenceWindow
from hil_bridge.errors import HilBridgeError
from hil_devices.core.devices import (
    MAX_SIGNAL_ID,
    DeviceInstance,
    Direction,
    SignalSpec,
    SignalType,
    assign_signal_ids,
)
from hil_devices.core.profile import RobotProfile, device_instances

START = 0xFF
RAW_MIN = -32768
RAW_MAX = 32767
RAW_SPAN = RAW_MAX - RAW_MIN
#: Ids 0..254: 0xFF is the start byte. Signals in one frame, as the firmware's
#: HIL_MAX_SIGNALS (a frame of them is 766 bytes plain, 769 checked).
MAX_SIGNALS = MAX_SIGNAL_ID + 1


def _c_div(numerator: int, denominator: int) -> int:
    """C integer division: truncation toward zero."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient


def _int32(value: int) -> int:
    """Wrap to a signed 32-bit long, as AVR arithmetic does."""
    return (value + 2**31) % 2**32 - 2**31


def arduino_map(x: int, in_min: int, in_max: int, out_min: int, out_max: int) -> int:
    """Arduino ``map()``: ``(x - in_min) * (out_max - out_min) / (in_max - in_min) + out_min``.

    Computed in 32-bit signed arithmetic with truncation toward zero, as on an AVR.
    """
    numerator = _int32(_int32(x - in_min) * _int32(out_max - out_min))
    return _int32(_c_div(numerator, _int32(in_max - in_min)) + out_min)


def rounding_map(x: int, in_min: int, in_max: int, out_min: int, out_max: int) -> int:
    """Linear map rounded to nearest (halves up) for ``in_min <= x <= in_max``, ``out_max > out_min``."""
    span_in = in_max - in_min
    return out_min + ((x - in_min) * (out_max - out_min) + span_in // 2) // span_in


@dataclass(frozen=True)
class SignalSlot:
    """A signal's place on the link: its id and the device instance it belongs to."""

    id: int
    device: str
    spec: SignalSpec

    @property
    def name(self) -> str:
        """The signal's name within its device."""
        return self.spec.name

    @property
    def key(self) -> tuple[str, str]:
        """``(device, signal)``, the name of the signal on ROS topics."""
        return (self.device, self.spec.name)

    def to_raw(self, value: float, *, checked: bool = False) -> int:
        """Physical value (already inside [min, max]) -> 16-bit code."""
        spec = self.spec
        if spec.type is SignalType.INTEGER:
            # Halves round up, as the firmware's (x + 0.5) truncation does for x >= 0.
            whole = math.floor(value + 0.5)
            if checked:
                return rounding_map(whole, int(spec.min), int(spec.max), RAW_MIN, RAW_MAX)
            return arduino_map(whole, int(spec.min), int(spec.max), RAW_MIN, RAW_MAX)
        scaled = (value - spec.min) * RAW_SPAN / (spec.max - spec.min)
        code = math.floor(scaled + 0.5) if checked else int(scaled)
        return min(max(code + RAW_MIN, RAW_MIN), RAW_MAX)

    def from_raw(self, raw: int, *, checked: bool = False) -> float:
        """16-bit code -> physical value."""
        return self.converter(checked=checked)(raw)

    def converter(self, *, checked: bool) -> Callable[[int], float]:
        """The code -> value function of this signal, for decoding many frames.

        For INTEGER signals it is ``arduino_map(raw, -32768, 32767, min, max)`` (plain)
        or the rounding map (checked) with the constant parts folded: the numerator
        ``(raw + 32768) * span`` is never negative and, the span being at most 32767,
        never leaves 32-bit range, so floor division equals C's truncating division
        and no wrap-around can occur.
        """
        spec = self.spec
        low = spec.min
        if spec.type is SignalType.FLOAT:
            span_f = spec.max - spec.min
            return lambda raw: low + (raw - RAW_MIN) * span_f / RAW_SPAN
        base, span = int(spec.min), int(spec.max - spec.min)
        if checked:
            return lambda raw: float(base + ((raw - RAW_MIN) * span + RAW_SPAN // 2) // RAW_SPAN)
        return lambda raw: float(base + (raw - RAW_MIN) * span // RAW_SPAN)


class SignalLayout:
    """The signals of a device set in device and signal order, with their ids.

    Ids come from :func:`hil_devices.core.devices.assign_signal_ids`: explicit ones as
    given, the others 0, 1, 2... skipping taken ids.

    Raises:
        HilBridgeError: more than 255 signals, or an id given twice.
    """

    def __init__(self, devices: Sequence[DeviceInstance]) -> None:
        ids = iter(assign_signal_ids(devices))
        slots = [
            SignalSlot(next(ids), device.name, spec) for device in devices for spec in device.config.signals
        ]
        self.devices = list(devices)
        self.slots = slots
        #: Signals into the simulator (from the MCU side), in layout order.
        self.inputs = [s for s in slots if s.spec.direction is Direction.INPUT]
        #: Signals out of the simulator (to the MCU side), in layout order.
        self.outputs = [s for s in slots if s.spec.direction is Direction.OUTPUT]
        self._by_key = {s.key: s for s in slots}

    def slot(self, device: str, name: str) -> SignalSlot:
        """The slot of ``device``'s signal ``name``.

        Raises:
            HilBridgeError: unknown device or signal.
        """
        try:
            return self._by_key[(device, name)]
        except KeyError:
            raise HilBridgeError(f"no signal {device}.{name} on this link") from None


def profile_layout(profile: RobotProfile) -> SignalLayout:
    """The signal link of a robot profile: its devices in profile order, tied pins' signals left out.

    Raises:
        HilBridgeError: more than 255 signals.
    """
    return SignalLayout(device_instances(profile))


@dataclass(frozen=True)
class Frame:
    """One decoded frame: raw codes and physical values in slot order, ``seq`` if checked."""

    raw: tuple[int, ...]
    values: tuple[float, ...]
    seq: int | None = None


@dataclass
class FrameStats:
    """Counters of a frame encoder or decoder."""

    frames: int = 0
    #: Values clamped into [min, max] (encoder), per signal ``device.name``.
    clamped: Counter[str] = field(default_factory=Counter)
    #: Non-finite values replaced by the default (encoder), per signal.
    invalid: Counter[str] = field(default_factory=Counter)
    #: Frame candidates rejected because their ids were not the expected ones (each once).
    bad_ids: int = 0
    bad_crc: int = 0
    duplicates: int = 0
    #: Frames missing from the sequence (checked mode).
    lost: int = 0
    #: Times the peer's numbering started again (checked mode: it restarted).
    resyncs: int = 0
    #: Bytes thrown away while looking for a start byte.
    skipped_bytes: int = 0


def _frame_struct(count: int, checked: bool) -> struct.Struct:
    return struct.Struct(">B" + ("B" if checked else "") + "Bh" * count + ("H" if checked else ""))


def _check_frame_slots(slots: Sequence[SignalSlot]) -> None:
    """A frame carries at most :data:`MAX_SIGNALS` signals with ids 0..254, as in the firmware.

    Raises:
        HilBridgeError: too many slots, or an id outside 0..254.
    """
    if len(slots) > MAX_SIGNALS:
        raise HilBridgeError(
            f"{len(slots)} signals in one frame; at most {MAX_SIGNALS} (ids 0..{MAX_SIGNAL_ID})"
        )
    for slot in slots:
        if not 0 <= slot.id <= MAX_SIGNAL_ID:
            raise HilBridgeError(
                f"signal {slot.device}.{slot.name}: id {slot.id} is outside 0..{MAX_SIGNAL_ID}"
            )


class FrameEncoder:
    """Encodes the values of ``slots`` (one direction of a layout) into frames.

    Raises:
        HilBridgeError: more than :data:`MAX_SIGNALS` slots, or an id outside 0..254.
    """

    def __init__(self, slots: Sequence[SignalSlot], *, checked: bool = False) -> None:
        _check_frame_slots(slots)
        self.slots = list(slots)
        self.checked = checked
        self.seq = 0
        self.stats = FrameStats()
        self._struct = _frame_struct(len(self.slots), checked)
        # The last values and what they gave: a link sends the same values for many
        # frames in a row (pins between changes, sensors between samples), and mapping
        # each value in Python was a third of an exchange's cost.
        self._last_values: tuple[float, ...] | None = None
        self._last_codes: list[int] = []
        self._last_fixes: tuple[list[str], list[str]] = ([], [])
        self._last_frame = b""

    def raw_codes(self, values: Sequence[float]) -> list[int]:
        """Clamp and map physical values to codes, counting what had to be fixed."""
        if len(values) != len(self.slots):
            raise HilBridgeError(f"expected {len(self.slots)} values, got {len(values)}")
        given = tuple(values)
        invalid, clamped = self._last_fixes
        if given != self._last_values:
            codes = []
            invalid, clamped = [], []
            for slot, value_given in zip(self.slots, given, strict=True):
                spec = slot.spec
                value = value_given
                if not math.isfinite(value):
                    invalid.append(f"{slot.device}.{spec.name}")
                    value = spec.default
                elif value < spec.min or value > spec.max:
                    clamped.append(f"{slot.device}.{spec.name}")
                    value = min(max(value, spec.min), spec.max)
                codes.append(slot.to_raw(value, checked=self.checked))
            self._last_values, self._last_codes, self._last_fixes = given, codes, (invalid, clamped)
            self._last_frame = b""
        # Counted per frame, whether or not the values were mapped again.
        for name in invalid:
            self.stats.invalid[name] += 1
        for name in clamped:
            self.stats.clamped[name] += 1
        return list(self._last_codes)

    def encode(self, values: Sequence[float]) -> bytes:
        """One frame carrying ``values`` (physical, in slot order)."""
        codes = self.raw_codes(values)
        if self.checked or not self._last_frame:
            frame = self.encode_raw(codes)
            self._last_frame = frame
            return frame
        self.stats.frames += 1  # plain mode: the same values are the same bytes
        return self._last_frame

    def encode_raw(self, codes: Sequence[int]) -> bytes:
        """One frame carrying already-mapped 16-bit codes."""
        fields: list[int] = []
        for slot, code in zip(self.slots, codes, strict=True):
            fields += (slot.id, code)
        self.stats.frames += 1
        if not self.checked:
            return self._struct.pack(START, *fields)
        seq = self.seq
        self.seq = (seq + 1) & 0xFF
        body = self._struct.pack(START, seq, *fields, 0)[:-2]
        return body + crc16(body[1:]).to_bytes(2, "big")


def _placed(raw: Sequence[int], order: Sequence[int]) -> tuple[int, ...]:
    """``raw[k]`` moved to ``order[k]``."""
    placed = [0] * len(raw)
    for index, code in zip(order, raw, strict=True):
        placed[index] = code
    return tuple(placed)


class FrameDecoder:
    """Incremental frame decoder for ``slots`` (one direction of a layout).

    A frame's signals may come in any order, each id exactly once; :class:`Frame`
    holds them in slot order.

    Raises:
        HilBridgeError: no slots, more than :data:`MAX_SIGNALS`, an id outside 0..254
            or an id twice.
    """

    def __init__(self, slots: Sequence[SignalSlot], *, checked: bool = False) -> None:
        if not slots:
            raise HilBridgeError("a frame needs at least one signal")
        _check_frame_slots(slots)
        self.slots = list(slots)
        self.checked = checked
        self.stats = FrameStats()
        self._struct = _frame_struct(len(self.slots), checked)
        self.frame_size = self._struct.size
        self._ids = bytes(slot.id for slot in self.slots)
        if len(set(self._ids)) != len(self._ids):
            raise HilBridgeError(f"a frame's signal ids must differ, got {list(self._ids)}")
        self._sorted_ids = bytes(sorted(self._ids))
        self._position = {slot.id: index for index, slot in enumerate(self.slots)}
        self._in_order = list(range(len(self.slots)))
        self._converters = [slot.converter(checked=checked) for slot in self.slots]
        # The last codes and their values: consecutive frames mostly repeat.
        self._last_raw: tuple[int, ...] = ()
        self._last_decoded: tuple[float, ...] = ()
        self._id_offset = 2 if checked else 1
        self._id_end = self._id_offset + 3 * len(self.slots)
        self._buffer = b""
        self._sequence = SequenceWindow(8)

    def reset(self) -> None:
        """Forget partial frames and the sequence (after a reconnect)."""
        self._buffer = b""
        self._sequence.reset()

    def _order(self, ids: bytes) -> list[int] | None:
        """The slot index of each signal of a frame with ``ids``; None if they are not the slots' ids."""
        if ids == self._ids:
            return self._in_order
        if bytes(sorted(ids)) != self._sorted_ids:
            return None
        return [self._position[i] for i in ids]

    def _take_seq(self, seq: int) -> bool:
        """Whether a checked frame numbered ``seq`` is taken; counts lost, repeated, resyncs."""
        verdict = self._sequence.check(seq)
        if verdict == DUPLICATE:
            self.stats.duplicates += 1
            return False
        if verdict == RESYNC:
            self.stats.resyncs += 1
        else:
            self.stats.lost += verdict
        return True

    def feed(self, data: bytes) -> list[Frame]:
        """Decode every complete frame in the bytes received so far."""
        buffer = self._buffer + data if self._buffer else data
        size = self.frame_size
        stats = self.stats
        out: list[Frame] = []
        pos = 0
        end = len(buffer)
        while True:
            start = buffer.find(b"\xff", pos)
            if start < 0:
                stats.skipped_bytes += end - pos
                pos = end
                break
            stats.skipped_bytes += start - pos
            if end - start < size:
                pos = start
                break
            order = self._order(buffer[start + self._id_offset : start + self._id_end : 3])
            if order is None:
                stats.bad_ids += 1
                pos = start + 1
                continue
            fields = self._struct.unpack_from(buffer, start)
            seq = None
            if self.checked:
                if crc16(buffer[start + 1 : start + size - 2]) != fields[-1]:
                    stats.bad_crc += 1
                    pos = start + 1
                    continue
                seq = fields[1]
                if not self._take_seq(seq):
                    pos = start + size
                    continue
                raw = fields[3:-1:2]
            else:
                raw = fields[2::2]
            if order is not self._in_order:
                raw = _placed(raw, order)
            if raw != self._last_raw:
                self._last_raw = raw
                self._last_decoded = tuple(
                    convert(code) for convert, code in zip(self._converters, raw, strict=True)
                )
            out.append(Frame(raw, self._last_decoded, seq))
            pos = start + size
        self._buffer = buffer[pos:]
        stats.frames += len(out)
        return out
