"""The Arduino boards the project builds for and simulates: pins, timers, ADC, memory.

One table for the Python side, as the Arduino AVR core's variants have it
(``variants/standard``, ``eightanaloginputs`` and ``mega``, ``pins_arduino.h``):
every digital pin's port and bit, the timer comparator ``analogWrite`` drives on it,
its pin-change and external interrupt, and which pins are the analog inputs A0...
The firmware-in-the-loop harness holds the same table in C
(``firmware/simavr/board.c``); a test compares the two pin by pin, and this one with
the installed Arduino core's variants.

==========  ============  ==========================================================
board       MCU           pins
==========  ============  ==========================================================
uno         ATmega328P    0..19 (A0..A5 = 14..19); PWM 3, 5, 6, 9, 10, 11
nano        ATmega328P    as the UNO, plus A6 and A7 (analog inputs only)
mega2560    ATmega2560    0..69 (A0..A15 = 54..69); PWM 2..13, 44..46
==========  ============  ==========================================================

All run at 16 MHz. Pins 0 and 1 are UART0 (the serial link); the Mega's UART1..3
(Serial1..3) are on pins 19/18, 17/16 and 15/14 (RX/TX).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hil_devices.errors import HilDevicesError


@dataclass(frozen=True)
class BoardPin:
    """One digital pin of a board."""

    number: int
    port: str  # A..L
    bit: int
    #: The timer comparator analogWrite drives on it (``"1A"``), or None.
    pwm: str | None = None
    #: Its pin-change interrupt (PCINTn), or None.
    pcint: int | None = None
    #: attachInterrupt's number (``digitalPinToInterrupt``), or None.
    interrupt: int | None = None


@dataclass(frozen=True)
class Board:
    """An Arduino board: its MCU, build settings, memory and pins."""

    name: str
    title: str
    mcu: str
    #: The Arduino core's variant folder and the board's ``ARDUINO_<define>``.
    variant: str
    define: str
    #: The Arduino IDE's fully qualified board name (what ``avr_build`` builds for).
    fqbn: str
    #: Flash left by the bootloader, and RAM, in bytes.
    flash_bytes: int
    ram_bytes: int
    pins: Mapping[int, BoardPin]
    #: A0's pin number; analog inputs A0..A<analog_inputs - 1> (the last ones may be
    #: analog only: the Nano's A6 and A7).
    first_analog: int
    analog_inputs: int
    sda: int
    scl: int
    frequency_hz: int = 16_000_000
    #: Each hardware UART's (RX, TX) pins: Serial is UART 0, Serial1 UART 1...
    uarts: Mapping[int, tuple[int, int]] = field(default_factory=lambda: {0: (0, 1)})

    @property
    def pwm_pins(self) -> tuple[int, ...]:
        """The pins with a timer output, as analogWrite uses them."""
        return tuple(n for n, pin in self.pins.items() if pin.pwm is not None)

    def analog_pin(self, channel: int) -> int | None:
        """The digital pin of A<channel>, or None for an analog-only input."""
        number = self.first_analog + channel
        return number if number in self.pins else None

    def pin_name(self, number: int) -> str:
        """``A0`` for an analog input's digital pin, else the number."""
        channel = number - self.first_analog
        return f"A{channel}" if 0 <= channel < self.analog_inputs else str(number)

    def parse_pin(self, value: Any, *, key: str = "pin") -> int:
        """A digital pin from ``4``, ``"4"``, ``"D4"`` or ``"A0"``.

        Raises:
            HilDevicesError: not a pin of this board, an analog-only input, or pin 0/1
                (the serial link); names ``key``.
        """
        text = str(value).strip().upper()
        number: int | None = None
        if isinstance(value, bool):
            number = None
        elif text.isdigit():
            number = int(text)
        elif text[:1] == "D" and text[1:].isdigit():
            number = int(text[1:])
        elif text[:1] == "A" and text[1:].isdigit() and int(text[1:]) < self.analog_inputs:
            number = self.analog_pin(int(text[1:]))
            if number is None:
                raise HilDevicesError(f"{key}: {text} of the {self.name} is an analog input only")
        if number in (0, 1):
            raise HilDevicesError(f"{key}: pin {value!r} is the serial link (pins 0 and 1 are reserved)")
        if number is None or number not in self.pins:
            raise HilDevicesError(f"{key}: {value!r} is not a pin of the {self.name} ({self.pin_range})")
        return number

    def parse_analog(self, value: Any, *, key: str = "pin") -> int:
        """The ADC channel of ``"A0"``..., or of its digital pin number.

        Raises:
            HilDevicesError: not an analog input of this board; names ``key``.
        """
        text = str(value).strip().upper()
        channel: int | None = None
        if text[:1] == "A" and text[1:].isdigit():
            channel = int(text[1:])
        elif text.isdigit() and not isinstance(value, bool):
            channel = int(text) - self.first_analog
        if channel is None or not 0 <= channel < self.analog_inputs:
            elsewhere = [
                b.title for b in BOARDS.values() if channel is not None and 0 <= channel < b.analog_inputs
            ]
            hint = (
                f"; A{channel} exists on the {', '.join(elsewhere)}" if elsewhere and text[:1] == "A" else ""
            )
            raise HilDevicesError(
                f"{key}: {value!r} is not an analog input of the {self.name}"
                f" (A0..A{self.analog_inputs - 1}){hint}"
            )
        return channel

    @property
    def pin_range(self) -> str:
        """``2..13, A0..A5``: the pins a wiring may use (0 and 1 are the serial link)."""
        last_digital = self.first_analog - 1
        return f"2..{last_digital}, A0..A{self.pins_analog - 1}"

    @property
    def pins_analog(self) -> int:
        """How many analog inputs are also digital pins."""
        return sum(1 for channel in range(self.analog_inputs) if self.analog_pin(channel) is not None)


def _atmega328p_pins() -> dict[int, BoardPin]:
    pwm = {3: "2B", 5: "0B", 6: "0A", 9: "1A", 10: "1B", 11: "2A"}
    pins: dict[int, BoardPin] = {}
    for number in range(20):
        if number < 8:
            port, bit, pcint = "D", number, 16 + number
        elif number < 14:
            port, bit, pcint = "B", number - 8, number - 8
        else:
            port, bit, pcint = "C", number - 14, 8 + number - 14
        interrupt = {2: 0, 3: 1}.get(number)
        pins[number] = BoardPin(number, port, bit, pwm.get(number), pcint, interrupt)
    return pins


#: variants/mega/pins_arduino.h, digital_pin_to_port_PGM and digital_pin_to_bit_mask_PGM.
_MEGA_PORTS = "EEEEGEHHHHBBBBJJHHDDDDAAAAAAAACCCCCCCCDGGGLLLLLLLLBBBBFFFFFFFFKKKKKKKK"
_MEGA_BITS = "0145533456456710103210012345677654321072107654321032100123456701234567"


def _atmega2560_pins() -> dict[int, BoardPin]:
    pwm = {
        2: "3B", 3: "3C", 4: "0B", 5: "3A", 6: "4A", 7: "4B", 8: "4C", 9: "2B", 10: "2A",
        11: "1A", 12: "1B", 13: "0A", 44: "5C", 45: "5B", 46: "5A",
    }  # fmt: skip
    interrupts = {2: 0, 3: 1, 21: 2, 20: 3, 19: 4, 18: 5}
    pins: dict[int, BoardPin] = {}
    for number, (port, bit_text) in enumerate(zip(_MEGA_PORTS, _MEGA_BITS, strict=True)):
        bit = int(bit_text)
        # The ATmega2560's pin-change interrupts: PB0..7 = PCINT0..7, PE0 = PCINT8,
        # PJ0..6 = PCINT9..15, PK0..7 = PCINT16..23.
        pcint = {"B": bit, "E": 8 if bit == 0 else None, "J": 9 + bit, "K": 16 + bit}.get(port)
        pins[number] = BoardPin(number, port, bit, pwm.get(number), pcint, interrupts.get(number))
    return pins


_328P = _atmega328p_pins()
_FLASH_328P = 32 * 1024 - 512  # optiboot's 512 bytes

#: Every board, by name.
BOARDS: Mapping[str, Board] = {
    "uno": Board(
        "uno", "UNO", "atmega328p", "standard", "AVR_UNO", "arduino:avr:uno",
        _FLASH_328P, 2048, _328P, 14, 6, 18, 19,
    ),
    "nano": Board(
        "nano", "Nano", "atmega328p", "eightanaloginputs", "AVR_NANO", "arduino:avr:nano:cpu=atmega328",
        _FLASH_328P, 2048, _328P, 14, 8, 18, 19,
    ),
    "mega2560": Board(
        "mega2560", "Mega 2560", "atmega2560", "mega", "AVR_MEGA2560", "arduino:avr:mega:cpu=atmega2560",
        256 * 1024 - 8 * 1024, 8192, _atmega2560_pins(), 54, 16, 20, 21,
        uarts={0: (0, 1), 1: (19, 18), 2: (17, 16), 3: (15, 14)},
    ),
}  # fmt: skip


def board(name: str, *, where: str = "board") -> Board:
    """The board named ``name``.

    Raises:
        HilDevicesError: no such board; names ``where`` and the choices.
    """
    found = BOARDS.get(name)
    if found is None:
        raise HilDevicesError(f"{where} {name!r}: expected one of {sorted(BOARDS)}")
    return found
