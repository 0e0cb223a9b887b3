"""The radio link's line messages (DESIGN.md "Radio link"), one codec for every end.

``RTX,<dst|*>,<hex>`` MCU -> radio, ``RRX,<src>,<rssi>,<hex>`` and
``RST,<state>,<free>,<dropped>`` radio -> MCU (``LOST`` is the state an MCU reports
when its radio has been silent). :func:`encode_radio` and :func:`decode_radio` write
and read their bodies; the line codec (:mod:`hil_bridge.core.line_protocol`) adds
the line ending and, in checked mode, the check suffix. Used by the radio model
(hil_sim), the radio module node, the virtual MCU and the control loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# _INT: the line protocol's integer grammar, so radio lines read numbers as every other line.
from hil_bridge.core.line_protocol import _INT, MAX_LINE
from hil_bridge.errors import HilBridgeError

#: Largest payload (bytes): an ``RRX`` line with it, a 4-digit id and the check
#: suffix fits the line protocol's 128 bytes.
MAX_PAYLOAD = 48
#: Module states of ``RST`` lines (``LOST``: sent by an MCU whose radio went silent).
STATES = ("LISTEN", "SEND", "SWITCH", "LOST")
#: The line ids of the radio link.
RADIO_IDS = ("RTX", "RRX", "RST")

_ID = re.compile(_INT)
_HEX = re.compile(r"(?:[0-9A-Fa-f]{2})+")


@dataclass(frozen=True, slots=True)
class RadioSend:
    """``RTX``: the MCU asks its radio to send ``payload`` to ``dst`` (None: broadcast)."""

    dst: int | None
    payload: bytes


@dataclass(frozen=True, slots=True)
class RadioReceive:
    """``RRX``: the radio hands its MCU a packet from ``src`` heard at ``rssi`` dBm."""

    src: int
    rssi: int
    payload: bytes


@dataclass(frozen=True, slots=True)
class RadioStatus:
    """``RST``: the radio's state, free send-queue slots and packets refused so far."""

    state: str
    free: int
    dropped: int


RadioMessage = RadioSend | RadioReceive | RadioStatus


def _hex_payload(payload: bytes) -> str:
    if not 1 <= len(payload) <= MAX_PAYLOAD:
        raise HilBridgeError(f"payload: expected 1..{MAX_PAYLOAD} bytes, got {len(payload)}")
    return payload.hex().upper()


def encode_radio(message: RadioMessage) -> str:
    """The line body of ``message`` (no line ending, no check suffix).

    Raises:
        HilBridgeError: a field cannot be written (negative id, empty or long payload, bad state).
    """
    if isinstance(message, RadioSend):
        if message.dst is not None and message.dst < 0:
            raise HilBridgeError(f"dst: expected a robot id >= 0 or None, got {message.dst}")
        dst = "*" if message.dst is None else str(int(message.dst))
        return f"RTX,{dst},{_hex_payload(message.payload)}"
    if isinstance(message, RadioReceive):
        if message.src < 0:
            raise HilBridgeError(f"src: expected a robot id >= 0, got {message.src}")
        return f"RRX,{int(message.src)},{int(message.rssi)},{_hex_payload(message.payload)}"
    if message.state not in STATES or message.free < 0 or message.dropped < 0:
        raise HilBridgeError(f"RST: expected a state in {STATES} and counts >= 0, got {message}")
    return f"RST,{message.state},{int(message.free)},{int(message.dropped)}"


def _field_int(ident: str, name: str, text: str, *, signed: bool = False) -> int:
    if _ID.fullmatch(text) is None or (not signed and int(text) < 0):
        raise HilBridgeError(f"{ident} {name}: expected an integer{'' if signed else ' >= 0'}, got {text!r}")
    return int(text)


def _field_payload(ident: str, text: str) -> bytes:
    if _HEX.fullmatch(text) is None or len(text) > 2 * MAX_PAYLOAD:
        raise HilBridgeError(
            f"{ident} payload: expected 1..{MAX_PAYLOAD} bytes as hex digit pairs, got {text!r:.40}"
        )
    return bytes.fromhex(text)


def decode_radio(body: str) -> RadioMessage:
    """Read the body of an ``RTX``, ``RRX`` or ``RST`` line (check suffix already removed).

    Raises:
        HilBridgeError: naming the message and the field that does not parse.
    """
    if len(body) > MAX_LINE:
        raise HilBridgeError(f"line: longer than {MAX_LINE} bytes: {body[:20]!r}...")
    ident, rest = body[:3], body[3:]
    fields = (rest[1:] if rest[:1] == "," else rest).split(",")
    expected = {"RTX": 2, "RRX": 3, "RST": 3}.get(ident)
    if expected is None:
        raise HilBridgeError(f"id: {ident!r} is not RTX, RRX or RST")
    if len(fields) != expected:
        raise HilBridgeError(f"{ident}: expected {expected} fields, got {len(fields)} in {body!r:.40}")
    if ident == "RTX":
        dst = None if fields[0] == "*" else _field_int(ident, "dst", fields[0])
        return RadioSend(dst, _field_payload(ident, fields[1]))
    if ident == "RRX":
        src = _field_int(ident, "src", fields[0])
        return RadioReceive(
            src, _field_int(ident, "rssi", fields[1], signed=True), _field_payload(ident, fields[2])
        )
    if fields[0] not in STATES:
        raise HilBridgeError(f"RST state: expected one of {STATES}, got {fields[0]!r}")
    return RadioStatus(
        fields[0], _field_int(ident, "free", fields[1]), _field_int(ident, "dropped", fields[2])
    )
