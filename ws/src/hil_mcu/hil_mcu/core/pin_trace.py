"""The pin trace of a firmware in simavr: which pins a run's ``trace_pins`` names, and where the file goes.

A user who needs to see what their firmware did asks for a trace
(``--trace-pins motor_left.enable,encoder_left.a``); the harness
(``firmware/simavr/trace.c``) writes those pins' levels as a Value Change Dump (IEEE
1364 section 18, as logic analysers write it; GTKWave and PulseView open it), timed in
AVR cycles. This module, which never imports rclpy, turns the names into pins and
the harness's options:

* a pin of the robot's wiring by its key, ``device.signal`` or ``device.pin``
  (``motor_left.enable``, ``ultrasonic.echo``; a robot profile's pins are keyed so
  too: :func:`hil_devices.core.profile.mcu_pins`), or a device's name for all its pins;
* a raw pin of the board: ``D9`` (or ``9``), ``A0``, or its port and bit (``PB1``);
* a hardware UART's lines, ``uart0.tx`` and ``uart0.rx`` (``uart1.tx``... on a Mega).

An unknown name is refused with the names the robot has. :func:`trace_summary` reads
back how big a finished trace is and whether it was cut at its size limit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from hil_devices.core.boards import Board
from hil_mcu.errors import HilMcuError

#: Where a trace goes when the run names no file (the runner: its report folder).
TRACE_FILE = "pins.vcd"
#: The trace's size limit (MB) by default, and its range.
TRACE_LIMIT_MB = 100.0
TRACE_LIMIT_RANGE_MB = (0.01, 100_000.0)
#: The comment the harness ends a cut trace with (trace.c's cut_here).
_CUT = re.compile(rb"\$comment pin trace cut: .*? at cycle (\d+) \(([0-9.]+) s\)")


class RobotWiring(Protocol):
    """A robot's wiring as :class:`hil_mcu.core.simavr.RobotWiring` holds it (its keys, pins, board)."""

    @property
    def pins(self) -> Mapping[str, str]:
        """``device.signal`` or ``device.pin`` -> the pin as written."""

    @property
    def source(self) -> str:
        """Where it was read from, for messages."""

    @property
    def spec(self) -> Board:
        """The board's pin table."""


@dataclass(frozen=True)
class PinTrace:
    """A pin trace the harness writes: the file, the pins by name, the size limit."""

    path: Path
    #: (name, Arduino pin number), in the order asked.
    pins: tuple[tuple[str, int], ...]
    limit_bytes: int = round(TRACE_LIMIT_MB * 1e6)

    def arguments(self) -> list[str]:
        """The harness's options for it (``--trace``, ``--trace-limit``, ``--trace-pin`` each)."""
        pins = [arg for name, pin in self.pins for arg in ("--trace-pin", f"{name}={pin}")]
        return ["--trace", str(self.path), "--trace-limit", str(self.limit_bytes), *pins]


def split_names(text: str) -> list[str]:
    """``"motor_left.enable, D9"`` as ``["motor_left.enable", "D9"]`` (empty entries dropped)."""
    return [name.strip() for name in text.split(",") if name.strip()]


def _raw_pin(board: Board, text: str) -> tuple[str, int] | None:
    """A raw pin (``D9``, ``9``, ``A0``, ``PB1``) as its trace name and number, or None."""
    upper = text.upper()
    number: int | None = None
    if upper.isdigit() or (upper[:1] == "D" and upper[1:].isdigit()):
        number = int(upper.removeprefix("D"))
        upper = f"D{number}"
    elif upper[:1] == "A" and upper[1:].isdigit() and int(upper[1:]) < board.analog_inputs:
        number = board.analog_pin(int(upper[1:]))
        if number is None:
            raise HilMcuError(
                f"trace_pins: {text} of the {board.name} is an analog input only; traces show digital levels"
            )
    elif match := re.fullmatch(r"P([A-L])([0-7])", upper):
        found = [n for n, pin in board.pins.items() if (pin.port, pin.bit) == (match[1], int(match[2]))]
        number = found[0] if found else None
    return (upper, number) if number is not None and number in board.pins else None


def _wired_pin(wiring: RobotWiring, key: str) -> int:
    board, text = wiring.spec, wiring.pins[key]
    try:
        raw = _raw_pin(board, text)
    except HilMcuError as exc:
        raise HilMcuError(f"{exc} ({key}, {wiring.source})") from None
    if raw is None:
        raise HilMcuError(f"{wiring.source}: pins.{key}: {text!r} is not a pin of the {board.name}")
    return raw[1]


def known_names(wiring: RobotWiring) -> list[str]:
    """What ``trace_pins`` may name, for messages: the wiring's keys and devices, raw pins, UART lines."""
    board = wiring.spec
    devices = sorted({key.split(".", 1)[0] for key in wiring.pins})
    uarts = [f"uart{n}.{line}" for n in sorted(board.uarts) for line in ("tx", "rx")]
    last = max(board.pins)
    return [
        *wiring.pins,
        *devices,
        f"raw pins D0..D{last}, A0..A{board.pins_analog - 1}, port bits (PB1)",
        *uarts,
    ]


def resolve_trace_pins(names: Sequence[str], wiring: RobotWiring) -> tuple[tuple[str, int], ...]:
    """The pins ``names`` name on the robot wired by ``wiring``, as (trace name, pin number).

    Each name is a wiring key (exactly, else ignoring case), a device (all its keys, in
    the wiring's order), a raw pin or a UART line (see the module's text). A name given
    twice is traced once.

    Raises:
        HilMcuError: an unknown name (listing the known ones) or an analog-only input.
    """
    board = wiring.spec
    lower = {key.lower(): key for key in wiring.pins}
    found: dict[str, int] = {}
    for name in names:
        key = name if name in wiring.pins else lower.get(name.lower())
        device = [k for k in wiring.pins if k.split(".", 1)[0].lower() == name.lower()]
        uart = re.fullmatch(r"uart(\d)\.(tx|rx)", name.lower())
        if key is not None:
            found.setdefault(key, _wired_pin(wiring, key))
        elif device:
            for each in device:
                found.setdefault(each, _wired_pin(wiring, each))
        elif uart and int(uart[1]) in board.uarts:
            rx, tx = board.uarts[int(uart[1])]
            found.setdefault(name.lower(), tx if uart[2] == "tx" else rx)
        elif (raw := _raw_pin(board, name)) is not None:
            found.setdefault(*raw)
        else:
            known = "; ".join(known_names(wiring))
            where = f" ({wiring.source})" if wiring.source else ""
            raise HilMcuError(f"trace_pins: no pin named {name!r} on this robot{where}; known: {known}")
    return tuple(found.items())


def pin_trace(
    text: str, wiring: RobotWiring, *, path: str | Path, limit_mb: float = TRACE_LIMIT_MB
) -> PinTrace | None:
    """The trace ``text`` (the ``trace_pins`` option) asks for, or None for an empty one.

    Raises:
        HilMcuError: an unknown name (:func:`resolve_trace_pins`), a limit out of its
            range, or a file that cannot be written (its folder is made).
    """
    names = split_names(text)
    if not names:
        return None
    low, high = TRACE_LIMIT_RANGE_MB
    if not low <= limit_mb <= high:
        raise HilMcuError(f"trace_limit_mb {limit_mb!r}: outside {low:g}..{high:g}")
    pins = resolve_trace_pins(names, wiring)
    where = Path(path or TRACE_FILE)
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        with where.open("w"):
            pass
    except OSError as exc:
        raise HilMcuError(f"trace_file {where}: cannot write it: {exc.strerror or exc}") from None
    return PinTrace(where, pins, round(limit_mb * 1e6))


def trace_summary(trace: PinTrace) -> dict[str, Any]:
    """A finished trace for the run's report: its file, pins, size, and when it was cut (None: whole)."""
    path = trace.path
    size = path.stat().st_size if path.is_file() else 0
    cut_at = None
    if size:
        with path.open("rb") as stream:
            stream.seek(max(0, size - 1024))
            match = _CUT.search(stream.read())
        cut_at = float(match[2]) if match else None
    return {
        "file": str(path),
        "pins": dict(trace.pins),
        "bytes": size,
        "cut_at_s": cut_at,
    }
