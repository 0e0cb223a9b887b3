r"""Line protocol of the command link (robot brain <-> MCU).

One ASCII message per line, ``\\n`` terminated (a preceding ``\\r`` is ignored):
``<ID><payload>``, ID exactly three characters, payload comma-separated, an optional
comma right after the ID. The encoder writes numeric lists without that comma
(``DRV100,-100``, ``TL11500,1438``) and text payloads with it (``HBB,1700000000.123``,
``ERR,DRV value 300 out of range``, ``COM,STOP``), as in DESIGN.md.

=====  ==============  =========================================================
ID     direction       payload
=====  ==============  =========================================================
DRV    brain -> MCU    left,right: signed integers
ARM    brain -> MCU    one or more joint values (numbers)
HBB    both            sender timestamp, float seconds; echoed unchanged
TLn    MCU -> brain    telemetry list n (digit or letter): numbers, named by the
                       telemetry schema (TL1: right,left)
ERR    MCU -> brain    error text
COM    both            command text (STOP, GO, RESET, VERSION, ...)
=====  ==============  =========================================================

Checked mode (opt-in) appends ``*SSSSCCCC`` to every line: ``SSSS`` a 16-bit sequence
number and ``CCCC`` the CRC-16/CCITT-FALSE of every byte before the ``C``s, both as
four upper-case hex digits, e.g. ``DRV100,-100*0007xxxx``. A corrupted line fails its
CRC and is dropped; a gap in the sequence counts the lines lost in between; a repeated
number is dropped, unless ``RESYNC_AFTER`` consecutive numbers behind say the peer
restarted (:mod:`hil_bridge.core.sequence`).

The decoder never raises on input: over-long lines, non-ASCII bytes, unknown IDs,
non-numeric or missing fields and bad checks are dropped and counted by reason.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum

from hil_bridge.core.crc import crc16
from hil_bridge.core.sequence import DUPLICATE, RESYNC, SequenceWindow
from hil_bridge.errors import HilBridgeError
from hil_devices.core.telemetry import TelemetrySchema

#: Default longest line accepted, in bytes without the line ending (DESIGN.md).
MAX_LINE = 128

_INT = r"-?[0-9]+"
_NUMBER = r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_INT_PAIR = re.compile(rf"({_INT}),({_INT})")
_NUMBER_LIST = re.compile(rf"{_NUMBER}(?:,{_NUMBER})*")
_NUMBER_ONE = re.compile(_NUMBER)
_HEX4 = re.compile(r"[0-9A-F]{4}")


@dataclass(frozen=True, slots=True)
class Drive:
    """``DRV``: wheel motor commands, positive forward."""

    left: int
    right: int


@dataclass(frozen=True, slots=True)
class Arm:
    """``ARM``: arm joint commands."""

    values: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """``HBB``: the sender's timestamp, kept as its text so an echo is byte-identical."""

    stamp: str

    @classmethod
    def at(cls, seconds: float) -> Heartbeat:
        """Heartbeat carrying ``seconds`` with microsecond resolution."""
        return cls(f"{seconds:.6f}")

    @property
    def seconds(self) -> float:
        """The timestamp as float seconds."""
        return float(self.stamp)


@dataclass(frozen=True, slots=True)
class Telemetry:
    """``TLn``: one telemetry list, typed by the schema; ``raw`` is the line as received."""

    list_id: str
    names: tuple[str, ...]
    values: tuple[float, ...]
    raw: str = ""


@dataclass(frozen=True, slots=True)
class ErrorReport:
    """``ERR``: an error the MCU reports."""

    text: str


@dataclass(frozen=True, slots=True)
class Command:
    """``COM``: a command word such as STOP, GO, RESET, VERSION."""

    text: str


@dataclass(frozen=True, slots=True)
class Relayed:
    """A line of an id the decoder was told to pass on unparsed (``relay_ids``).

    ``body`` is the line without check suffix and line ending (``RTX,*,01AB``); the
    encoder writes it unchanged, so a relay re-frames a line without reading its payload
    (the MCU between the command link and the radio link).
    """

    body: str


Message = Drive | Arm | Heartbeat | Telemetry | ErrorReport | Command | Relayed


class DropReason(str, Enum):
    """Why the decoder dropped a line (the counter keys of :class:`DecodeStats`)."""

    TOO_LONG = "too_long"
    NOT_ASCII = "not_ascii"
    EMPTY = "empty"
    UNKNOWN_ID = "unknown_id"
    UNKNOWN_LIST = "unknown_list"
    BAD_FIELD = "bad_field"
    BAD_ARITY = "bad_arity"
    BAD_CHECK = "bad_check"
    DUPLICATE = "duplicate"


#: Checked mode: the reasons a line is dropped for after its CRC passed and its
#: sequence number was taken (a damaged line the CRC missed, or a peer's bad line).
AFTER_SEQUENCE = frozenset(
    {
        DropReason.EMPTY,
        DropReason.NOT_ASCII,
        DropReason.UNKNOWN_ID,
        DropReason.UNKNOWN_LIST,
        DropReason.BAD_FIELD,
        DropReason.BAD_ARITY,
    }
)


@dataclass
class DecodeStats:
    """Counters of a decoder: messages decoded, lines dropped by reason, lines lost."""

    messages: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    #: Lines missing from the sequence (checked mode only).
    lost: int = 0
    #: Times the peer's numbering started again (checked mode: it restarted).
    resyncs: int = 0
    last_error: str = ""

    @property
    def dropped_total(self) -> int:
        """All dropped lines, whatever the reason."""
        return sum(self.dropped.values())


def _number(value: float) -> str:
    """Shortest text that reads back as ``value``; integral values without ``.0``."""
    if not math.isfinite(value):
        raise HilBridgeError(f"cannot encode non-finite number {value!r}")
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def encode_body(message: Message) -> str:
    """The line of ``message`` without checked suffix and line ending.

    Raises:
        HilBridgeError: a value cannot be written (non-finite number, newline in text).
    """
    if isinstance(message, Drive):
        return f"DRV{int(message.left)},{int(message.right)}"
    if isinstance(message, Relayed):
        if "\n" in message.body or "\r" in message.body:
            raise HilBridgeError(f"line break inside a relayed line: {message.body!r}")
        return message.body
    if isinstance(message, Telemetry):
        return message.list_id + ",".join(_number(v) for v in message.values)
    if isinstance(message, Heartbeat):
        body = f"HBB,{message.stamp}"
    elif isinstance(message, Arm):
        return "ARM" + ",".join(_number(v) for v in message.values)
    elif isinstance(message, ErrorReport):
        body = f"ERR,{message.text}"
    else:
        body = f"COM,{message.text}"
    if "\n" in body or "\r" in body:
        raise HilBridgeError(f"line break inside message text: {body!r}")
    return body


class LineEncoder:
    """Encodes messages to lines; in checked mode numbers them and adds a CRC."""

    def __init__(self, *, checked: bool = False, max_line: int = MAX_LINE) -> None:
        self.checked = checked
        self.max_line = max_line
        self.seq = 0

    def encode(self, message: Message) -> bytes:
        """The bytes of one line, line feed included.

        Raises:
            HilBridgeError: the message cannot be written, or its line would be longer
                than ``max_line`` (the receiver would drop it).
        """
        body = encode_body(message).encode("ascii", "replace")
        limit = self.max_line - (9 if self.checked else 0)
        if len(body) > limit:
            raise HilBridgeError(f"{body[:20]!r}...: line of {len(body)} bytes exceeds the limit of {limit}")
        if not self.checked:
            return body + b"\n"
        body += b"*%04X" % self.seq
        self.seq = (self.seq + 1) & 0xFFFF
        return body + b"%04X\n" % crc16(body)


def check_fault(line: bytes) -> str:
    """Why a checked line (no line feed) fails its ``*SSSSCCCC`` check; "" if it passes."""
    if len(line) < 9 or line[-9:-8] != b"*":
        return "no *SSSSCCCC suffix"
    seq_hex, crc_hex = line[-8:-4].decode("ascii", "replace"), line[-4:].decode("ascii", "replace")
    if not (_HEX4.fullmatch(seq_hex) and _HEX4.fullmatch(crc_hex)):
        return "suffix is not hex"
    if crc16(line[:-4]) != int(crc_hex, 16):
        return "CRC mismatch"
    return ""


class LineDecoder:
    """Incremental decoder: feed any bytes, get whole messages; partial lines are kept.

    ``relay_ids``: three-character ids whose lines come out as :class:`Relayed` (the
    body as received, checked-mode suffix verified and removed) instead of being
    parsed or dropped as unknown (the radio link's ``RTX``, ``RRX``, ``RST``).
    """

    def __init__(
        self,
        *,
        schema: TelemetrySchema | None = None,
        max_line: int = MAX_LINE,
        checked: bool = False,
        relay_ids: Iterable[str] = (),
    ) -> None:
        if max_line < 4:
            raise HilBridgeError(f"max_line must be at least 4 bytes, got {max_line}")
        self.relay_ids = frozenset(relay_ids)
        for ident in self.relay_ids:
            if len(ident) != 3 or not ident.isascii():
                raise HilBridgeError(f"relay_ids: {ident!r} is not a three-character ASCII id")
        self.schema = schema or TelemetrySchema({})
        self.max_line = max_line
        self.checked = checked
        self.stats = DecodeStats()
        self._buffer = b""
        self._discarding = False
        self._sequence = SequenceWindow(16)
        self._parsers: dict[str, Callable[[bytes, str], Message | None]] = {
            "DRV": self._parse_drive,
            "HBB": self._parse_heartbeat,
            "ERR": self._parse_error,
            "COM": self._parse_command,
            "ARM": self._parse_arm,
        }
        for ident in self.relay_ids:
            self._parsers[ident] = self._parse_relayed

    def reset(self) -> None:
        """Forget a partial line and the sequence (after a reconnect)."""
        self._buffer = b""
        self._discarding = False
        self._sequence.reset()

    def feed(self, data: bytes) -> list[Message]:
        """Decode every complete line in the bytes received so far."""
        buffer = self._buffer + data if self._buffer else data
        out: list[Message] = []
        start = 0
        find = buffer.find
        while (end := find(b"\n", start)) >= 0:
            line = buffer[start:end]
            start = end + 1
            if self._discarding:
                # The tail of a line already counted as too long.
                self._discarding = False
                continue
            if line.endswith(b"\r"):
                line = line[:-1]
            if len(line) > self.max_line:
                self._drop(DropReason.TOO_LONG, line[:40], f"longer than {self.max_line} bytes")
                continue
            message = self._parse(line)
            if message is not None:
                out.append(message)
        rest = buffer[start:]
        if len(rest) > self.max_line + 1:
            if not self._discarding:
                self._drop(DropReason.TOO_LONG, rest[:40], f"longer than {self.max_line} bytes")
                self._discarding = True
            rest = b""
        self._buffer = rest
        self.stats.messages += len(out)
        return out

    def _drop(self, reason: DropReason, line: bytes, why: str) -> None:
        self.stats.dropped[reason.value] += 1
        self.stats.last_error = f"{reason.value}: {why}: {line!r}"

    def _unwrap_checked(self, line: bytes) -> bytes | None:
        fault = check_fault(line)
        if fault:
            self._drop(DropReason.BAD_CHECK, line, fault)
            return None
        seq = int(line[-8:-4], 16)
        verdict = self._sequence.check(seq)
        if verdict == DUPLICATE:
            self._drop(DropReason.DUPLICATE, line, f"sequence {seq} already seen")
            return None
        if verdict == RESYNC:
            self.stats.resyncs += 1
        else:
            self.stats.lost += verdict
        return line[:-9]

    def _parse(self, line: bytes) -> Message | None:
        if self.checked:
            unwrapped = self._unwrap_checked(line)
            if unwrapped is None:
                return None
            line = unwrapped
        if not line:
            self._drop(DropReason.EMPTY, line, "empty line")
            return None
        if not line.isascii():
            self._drop(DropReason.NOT_ASCII, line, "non-ASCII bytes")
            return None
        text = line.decode("ascii")
        ident = text[:3]
        payload = text[3:]
        if payload[:1] == ",":
            payload = payload[1:]
        parse = self._parsers.get(ident)
        if parse is not None:
            return parse(line, payload)
        if ident[:2] == "TL" and len(ident) == 3 and ident[2].isalnum():
            return self._parse_telemetry(line, ident, payload, text)
        self._drop(DropReason.UNKNOWN_ID, line, f"unknown message id {ident!r}")
        return None

    def _parse_relayed(self, line: bytes, payload: str) -> Message | None:
        return Relayed(line.decode("ascii"))

    def _parse_drive(self, line: bytes, payload: str) -> Message | None:
        match = _INT_PAIR.fullmatch(payload)
        if match is not None:
            return Drive(int(match[1]), int(match[2]))
        if payload.count(",") != 1:
            self._drop(DropReason.BAD_ARITY, line, f"DRV needs left,right, got {payload!r}")
            return None
        return self._bad_fields(line, "DRV", payload, "two integers left,right")

    def _parse_heartbeat(self, line: bytes, payload: str) -> Message | None:
        if _NUMBER_ONE.fullmatch(payload) is None or not math.isfinite(float(payload)):
            return self._bad_fields(line, "HBB", payload, "one finite timestamp")
        return Heartbeat(payload)

    def _parse_error(self, line: bytes, payload: str) -> Message | None:
        if not payload:
            return self._bad_fields(line, "ERR", payload, "text")
        return ErrorReport(payload)

    def _parse_command(self, line: bytes, payload: str) -> Message | None:
        if not payload:
            return self._bad_fields(line, "COM", payload, "text")
        return Command(payload)

    def _parse_arm(self, line: bytes, payload: str) -> Message | None:
        joints = self._numbers(line, "ARM", payload)
        return None if joints is None else Arm(joints)

    def _parse_telemetry(self, line: bytes, ident: str, payload: str, text: str) -> Message | None:
        names = self.schema.lists.get(ident)
        if names is None:
            self._drop(DropReason.UNKNOWN_LIST, line, f"{ident} is not in the telemetry schema")
            return None
        values = self._numbers(line, ident, payload)
        if values is None:
            return None
        if len(values) != len(names):
            self._drop(DropReason.BAD_ARITY, line, f"{ident} has {len(values)} fields, schema {len(names)}")
            return None
        return Telemetry(ident, names, values, text)

    def _numbers(self, line: bytes, ident: str, payload: str) -> tuple[float, ...] | None:
        """The comma-separated finite numbers of ``payload``, or None (counted)."""
        if _NUMBER_LIST.fullmatch(payload) is None:
            self._bad_fields(line, ident, payload, "numbers")
            return None
        values = tuple(map(float, payload.split(",")))
        if not all(map(math.isfinite, values)):
            self._bad_fields(line, ident, payload, "finite numbers")
            return None
        return values

    def _bad_fields(self, line: bytes, ident: str, payload: str, expected: str) -> Message | None:
        """Count a line whose fields do not parse; returns None for the caller to return."""
        reason = DropReason.BAD_ARITY if not payload else DropReason.BAD_FIELD
        self._drop(reason, line, f"{ident} payload {payload!r} is not {expected}")
        return None
