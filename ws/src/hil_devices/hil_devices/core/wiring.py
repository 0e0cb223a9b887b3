"""Bridge-board wiring: which ATmega328P pin serves each signal, checked or found by ``autowire``.

A wiring file maps every pin the bridge board uses to an Arduino pin:

.. code-block:: yaml

    board: nano            # or uno: both are an ATmega328P
    pins:
      motor_left.enable: 4   # a signal (device.signal)
      ultrasonic.trigger: 9  # a pin of a device's handler template (device.pin)
      ir.voltage: A0

What a pin must be able to do follows from the signal (its mode and direction, seen
from the simulator: INPUT signals are read by the bridge board, OUTPUT ones written)
or from the handler template's ``##PINS##`` section:

==========  ===================================================================
DIGITAL     any of 2..13, A0..A5 (0 and 1 are the serial link)
PWM         3, 5, 6, 9, 10, 11 (the ATmega328P's PWM outputs): a PWM or ANALOG
            OUTPUT, produced with analogWrite (an RC filter makes the voltage).
            A PWM INPUT (an MCU's motor enable) is sampled by the loop, so any
            digital pin measures its duty
ANALOG      A0..A5 (the ADC): ANALOG INPUT signals
INTERRUPT   2, 3 (INT0, INT1): INTERRUPT INPUT signals without a handler
PCINT       any digital pin (each has a pin-change interrupt)
SDA, SCL    A4, A5 (the I2C bus, for handlers that play an I2C device)
==========  ===================================================================

``autowire`` serves the most constrained needs first and gives each the free pin
with the fewest other abilities, so scarce pins (PWM, interrupts, ADC, I2C) stay free
for what needs them; it fails naming the need it could not serve.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from hil_common.core.config_file import load_yaml
from hil_devices.core.boards import BOARDS as BOARDS_TABLE
from hil_devices.core.devices import DeviceInstance, Direction, PinMode
from hil_devices.errors import HilDevicesError

#: The boards a bridge board can be (both an ATmega328P).
BOARDS = ("nano", "uno")


class Capability(str, Enum):
    """What a pin must be able to do."""

    DIGITAL = "DIGITAL"
    PWM = "PWM"
    ANALOG = "ANALOG"
    INTERRUPT = "INTERRUPT"
    PCINT = "PCINT"
    SDA = "SDA"
    SCL = "SCL"


@dataclass(frozen=True)
class PinInfo:
    """One ATmega328P pin as an Arduino pin number, with its port and interrupts."""

    number: int
    port: str  # B, C or D
    bit: int
    pcint: int  # PCINTn
    abilities: frozenset[Capability]

    @property
    def name(self) -> str:
        """``A0``..``A5`` for the analog pins, else the number."""
        return f"A{self.number - 14}" if self.number >= 14 else str(self.number)

    @property
    def pcint_group(self) -> int:
        """Pin-change interrupt group: PCIE0/PCMSK0/PCINT0_vect for port B, 1 for C, 2 for D."""
        return {"B": 0, "C": 1, "D": 2}[self.port]


def _pins() -> dict[int, PinInfo]:
    """The bridge board's pins, from the ATmega328P boards' table (hil_devices.core.boards)."""
    board = BOARDS_TABLE["nano"]
    pins: dict[int, PinInfo] = {}
    for number in range(2, board.first_analog + board.pins_analog):
        pin = board.pins[number]
        assert pin.pcint is not None  # every ATmega328P pin has one
        abilities = {Capability.DIGITAL, Capability.PCINT}
        if number >= board.first_analog:
            abilities.add(Capability.ANALOG)
        if pin.pwm is not None:
            abilities.add(Capability.PWM)
        if pin.interrupt is not None:
            abilities.add(Capability.INTERRUPT)
        if number == board.sda:
            abilities.add(Capability.SDA)
        if number == board.scl:
            abilities.add(Capability.SCL)
        pins[number] = PinInfo(number, pin.port, pin.bit, pin.pcint, frozenset(abilities))
    return pins


#: The pins a bridge board may use (0 and 1 are its serial link).
PINS: Mapping[int, PinInfo] = _pins()


def parse_pin(value: Any, *, key: str = "pin") -> int:
    """An Arduino pin number from ``4``, ``"4"``, ``"D4"`` or ``"A0"``.

    Raises:
        HilDevicesError: not a pin, or pin 0/1 (the serial link); names ``key``.
    """
    text = str(value).strip().upper()
    number: int | None = None
    if text.isdigit():
        number = int(text)
    elif text[:1] == "D" and text[1:].isdigit():
        number = int(text[1:])
    elif text[:1] == "A" and text[1:].isdigit() and int(text[1:]) <= 5:
        number = 14 + int(text[1:])
    if number in (0, 1):
        raise HilDevicesError(f"{key}: pin {value!r} is the serial link (pins 0 and 1 are reserved)")
    if number is None or number not in PINS or isinstance(value, bool):
        raise HilDevicesError(f"{key}: {value!r} is not a pin of the ATmega328P (2..13, A0..A5)")
    return number


@dataclass(frozen=True)
class PinNeed:
    """One pin the bridge board needs: a signal's, or a handler template's."""

    key: str  # device.signal or device.handler_pin
    capability: Capability
    #: Seen from the bridge board: INPUT = it reads the pin (the MCU drives it).
    reads: bool


def signal_capability(mode: PinMode, direction: Direction, *, key: str) -> Capability:
    """What a pin of a signal without handler must do (module docstring).

    Raises:
        HilDevicesError: the combination cannot be served by a plain pin.
    """
    if mode is PinMode.DIGITAL:
        return Capability.DIGITAL
    if mode is PinMode.PWM:
        return Capability.DIGITAL if direction is Direction.INPUT else Capability.PWM
    if mode is PinMode.ANALOG:
        return Capability.ANALOG if direction is Direction.INPUT else Capability.PWM
    if direction is Direction.INPUT:
        return Capability.INTERRUPT
    raise HilDevicesError(f"{key}: an INTERRUPT OUTPUT signal needs a handler template")


def pin_needs(
    devices: Sequence[DeviceInstance], handler_pins: Mapping[str, Sequence[PinNeed]]
) -> list[PinNeed]:
    """Every pin the bridge board of ``devices`` needs, in device order.

    Args:
        devices: the device set of the link.
        handler_pins: for each handler template name, its pins (keys are pin names).

    Raises:
        HilDevicesError: a handler template is missing or a signal cannot be wired.
    """
    needs: list[PinNeed] = []
    for device in devices:
        handler = device.config.handler
        if handler is not None:
            template = handler_pins.get(handler.template)
            if template is None:
                raise HilDevicesError(f"{device.name}: no handler template {handler.template!r}")
            declared = {p.key for p in template}
            if declared != set(handler.pins):
                raise HilDevicesError(
                    f"{device.name}: handler {handler.template!r} has pins {sorted(declared)}, "
                    f"the device config names {sorted(handler.pins)}"
                )
            needs += [PinNeed(f"{device.name}.{p.key}", p.capability, p.reads) for p in template]
            continue
        for spec in device.config.signals:
            key = f"{device.name}.{spec.name}"
            capability = signal_capability(spec.mode, spec.direction, key=key)
            needs.append(PinNeed(key, capability, spec.direction is Direction.INPUT))
    return needs


@dataclass(frozen=True)
class Wiring:
    """A board and the pin of every need."""

    board: str
    pins: Mapping[str, int]

    def to_yaml(self, *, header: str = "") -> str:
        """The wiring file text (pins in the needs' order as given)."""
        lines = [f"# {line}".rstrip() for line in header.splitlines()]
        lines += [f"board: {self.board}", "pins:"]
        lines += [f"  {key}: {PINS[pin].name}" for key, pin in self.pins.items()]
        return "\n".join(lines) + "\n"


def load_wiring(path: str | Path) -> Wiring:
    """Read a wiring file (not yet checked against a device set).

    Raises:
        HilDevicesError: unreadable, not YAML, or malformed; names the file and key.
    """
    data = load_yaml(path, what="wiring", error=HilDevicesError)
    if not isinstance(data, dict) or not isinstance(data.get("pins", {}), dict):
        raise HilDevicesError(f"{path}: expected a mapping with `board` and `pins: {{device.signal: pin}}`")
    unknown = sorted(set(data) - {"board", "pins"})
    if unknown:
        raise HilDevicesError(f"{path}: unknown keys {unknown} (expected board, pins)")
    board = str(data.get("board", "nano"))
    if board not in BOARDS:
        raise HilDevicesError(f"{path}: board {board!r}: expected one of {list(BOARDS)}")
    pins = {str(k): parse_pin(v, key=f"{path}: pins.{k}") for k, v in (data.get("pins") or {}).items()}
    return Wiring(board, pins)


def _allowed(need: PinNeed) -> list[int]:
    return [n for n, info in PINS.items() if need.capability in info.abilities]


def check_wiring(needs: Sequence[PinNeed], wiring: Wiring, *, complete: bool = True) -> None:
    """Check that ``wiring`` serves ``needs``: known keys, capable and distinct pins.

    Raises:
        HilDevicesError: naming the key at fault and what it needs.
    """
    by_key = {need.key: need for need in needs}
    unknown = sorted(set(wiring.pins) - set(by_key))
    if unknown:
        raise HilDevicesError(f"wiring: {unknown[0]} is not a signal or handler pin of the device set")
    owner: dict[int, str] = {}
    for key, pin in wiring.pins.items():
        need = by_key[key]
        if need.capability not in PINS[pin].abilities:
            allowed = ", ".join(PINS[n].name for n in _allowed(need))
            raise HilDevicesError(
                f"wiring: {key}: pin {PINS[pin].name} cannot do {need.capability.value} "
                f"(pins that can: {allowed})"
            )
        if pin in owner:
            raise HilDevicesError(f"wiring: {key}: pin {PINS[pin].name} is already {owner[pin]}'s")
        owner[pin] = key
    missing = [need.key for need in needs if need.key not in wiring.pins]
    if complete and missing:
        raise HilDevicesError(f"wiring: not wired: {', '.join(missing)} (autowire can fill them in)")


def autowire(
    needs: Sequence[PinNeed], *, fixed: Mapping[str, int] | None = None, board: str = "nano"
) -> Wiring:
    """Give every need a pin, keeping the ones in ``fixed``.

    Raises:
        HilDevicesError: ``fixed`` is invalid, or a need has no capable pin left (naming
            it, what it needs and who holds the pins that could serve it).
    """
    given = dict(fixed or {})
    check_wiring(needs, Wiring(board, given), complete=False)
    taken = {pin: key for key, pin in given.items()}
    order = {need.key: index for index, need in enumerate(needs)}
    open_needs = [need for need in needs if need.key not in given]
    # Most constrained first; ties in device-set order, so the result is stable.
    for need in sorted(open_needs, key=lambda n: (len(_allowed(n)), order[n.key])):
        candidates = [pin for pin in _allowed(need) if pin not in taken]
        if not candidates:
            holders = ", ".join(f"{PINS[p].name} ({taken[p]})" for p in _allowed(need))
            free = 18 - len(taken)
            raise HilDevicesError(
                f"autowire: no free pin for {need.key}, which needs {need.capability.value}: "
                f"the pins that can are taken: {holders}; {free} pin(s) left in all"
            )
        # The least able free pin: keep PWM, interrupts, ADC and I2C for who needs them.
        pin = min(candidates, key=lambda p: (len(PINS[p].abilities), p))
        taken[pin] = need.key
        given[need.key] = pin
    return Wiring(board, {need.key: given[need.key] for need in needs})


def _verb(need: PinNeed) -> str:
    return "reads" if need.reads else "writes"


def describe(needs: Iterable[PinNeed], wiring: Wiring) -> list[str]:
    """One line per pin for humans: ``D4  motor_left.enable  (reads, DIGITAL)``."""
    return [f"{PINS[wiring.pins[n.key]].name:>3}  {n.key}  ({_verb(n)}, {n.capability.value})" for n in needs]
