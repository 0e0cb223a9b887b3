"""PWM in the firmware-in-the-loop harness: the duty of every timer output of both boards.

A sketch (``sketches/pwm_sweep``) calls analogWrite/digitalWrite on command; the
harness reports each PWM pin's duty on the signal link (0..25500 = 0..255 x 100), read
back here. Timer0 runs fast PWM, the other timers the phase-correct PWM the Arduino
core sets, which simavr 1.6 does not run: the duty comes from the timer's registers.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hil_devices.core.boards import BOARDS
from support.sketch_rig import STEP_S, SketchRig, device

PROBE = device(
    "pwm_probe",
    [{"name": "duty", "direction": "INPUT", "type": "INTEGER", "min": 0, "max": 25500, "mode": "PWM"}],
)
#: How far a duty read back may be from analogWrite's value, in its units (1/255).
TOLERANCE = 1.0


def pwm_rig(board: str, pins: tuple[int, ...] = ()) -> SketchRig:
    pins = pins or BOARDS[board].pwm_pins
    return SketchRig(
        "pwm_sweep",
        board=board,
        devices=[(f"pwm_{pin}", PROBE) for pin in pins],
        pins={f"pwm_{pin}.duty": str(pin) for pin in pins},
    )


@pytest.fixture(params=["uno", "mega2560"])
def rig(request: pytest.FixtureRequest) -> Iterator[SketchRig]:
    made = pwm_rig(request.param)
    yield made
    made.close()


def pins_of(rig: SketchRig) -> list[int]:
    return [int(slot.device.removeprefix("pwm_")) for slot in rig.layout.inputs]


def duty(rig: SketchRig, pin: int) -> float:
    """The pin's duty in analogWrite units (0..255)."""
    return rig.values[f"pwm_{pin}.duty"] / 100.0


def after(rig: SketchRig, command: str) -> None:
    """Send ``command``; return once two frames have been sent after it."""
    rig.command_line(command)
    rig.advance(2 * STEP_S)


def test_analog_write_of_every_value_reads_back_on_every_pwm_pin(rig: SketchRig) -> None:
    pins = pins_of(rig)
    step = 37  # every pin gets another value, so a pin read off the wrong comparator shows
    wrong: list[tuple[int, int, float]] = []
    for value in range(256):
        after(rig, f"A {value} {step}")
        for i, pin in enumerate(pins):
            want = (value + i * step) % 256
            if abs(duty(rig, pin) - want) > TOLERANCE:
                wrong.append((pin, want, duty(rig, pin)))
    assert wrong == [], f"{len(wrong)} readings off, first: {wrong[:5]}"
    assert rig.stats()["pwm_idle_pins"] == []


@pytest.mark.parametrize(("board", "pin"), [("uno", 9), ("uno", 6), ("mega2560", 44), ("mega2560", 13)])
def test_a_pin_switched_between_pwm_and_digital_writes_reads_what_it_shows(board: str, pin: int) -> None:
    rig = pwm_rig(board, (pin,))
    try:
        # command, expected duty (0..255); "s": software PWM 1 ms high, 3 ms low (25 %)
        for command, want in [
            (f"a {pin} 128", 128.0),
            (f"d {pin} 1", 255.0),
            (f"a {pin} 64", 64.0),
            (f"d {pin} 0", 0.0),
            (f"a {pin} 255", 255.0),
            (f"a {pin} 1", 1.0),
            (f"a {pin} 0", 0.0),
            (f"a {pin} 200", 200.0),
        ]:
            after(rig, command)
            assert abs(duty(rig, pin) - want) <= TOLERANCE, (command, duty(rig, pin))
        rig.command_line(f"s {pin} 1000 3000")
        rig.advance(0.02)
        assert abs(duty(rig, pin) - 255 * 0.25) <= 2.0, duty(rig, pin)
        rig.command_line(f"s {pin} 0 0")
        after(rig, f"d {pin} 0")
        rig.advance(0.02)
        assert duty(rig, pin) == 0.0
    finally:
        rig.close()


# fmt: off
#: analogWrite(pin, value) outside 0..255, as the Arduino core does it (sketches that forget
#: constrain()): 0 and 255 are digitalWrite, anything else goes into the pin's OCR register
#: unchecked. An 8-bit OCR (Timer0, Timer2) keeps the low byte: Timer0's fast PWM is
#: (OCR + 1) / 256, Timer2's phase-correct OCR / 255; Timer1's 16-bit OCR1x above its TOP
#: of 255 never matches: the pin stays high.
OUT_OF_RANGE = [  # value, expected duty (0..255) on UNO pins 6 (Timer0), 11 (Timer2), 9 (Timer1)
    (300,  {6: 45 * 255 / 256, 11: 44.0, 9: 255.0}),
    (-50,  {6: 207 * 255 / 256, 11: 206.0, 9: 255.0}),
    (256,  {6: 255 / 256, 11: 0.0, 9: 255.0}),
    (-1,   {6: 255.0, 11: 255.0, 9: 255.0}),
    (1000, {6: 233 * 255 / 256, 11: 232.0, 9: 255.0}),
]
# fmt: on


def test_analog_write_outside_0_to_255_gives_what_the_core_writes_into_the_timer() -> None:
    rig = pwm_rig("uno", (6, 11, 9))
    try:
        for value, want in OUT_OF_RANGE:
            for pin in want:
                after(rig, f"a {pin} {value}")
            assert {pin: duty(rig, pin) for pin in want} == pytest.approx(want, abs=TOLERANCE), value
    finally:
        rig.close()


@pytest.mark.parametrize(("board", "pin"), [("uno", 11), ("uno", 9), ("mega2560", 44)])
def test_a_pwm_pin_used_as_a_digital_output_shows_its_level_however_seldom_it_changes(
    board: str, pin: int
) -> None:
    """A direction pin on a timer pin (an L298's IN3 on 11): HIGH, LOW, HIGH over seconds is HIGH now.

    Its edges are no wave: a slow change of level is no 60 % duty (the motor would turn
    at 60 % of its speed for seconds).
    """
    rig = pwm_rig(board, (pin,))
    try:
        for level, hold in [(1, 0.4), (0, 1.2), (1, 0.01), (1, 2.0), (0, 0.3), (1, 0.01)]:
            after(rig, f"d {pin} {level}")
            rig.advance(hold)
            assert duty(rig, pin) == 255.0 * level, (level, hold, duty(rig, pin))
    finally:
        rig.close()


def test_pwm_pins_the_firmware_never_drives_are_reported() -> None:
    rig = pwm_rig("uno", (3, 5, 6, 10))
    try:
        after(rig, "a 5 100")
        after(rig, "d 6 1")
        after(rig, "a 10 255")
        assert rig.stats()["pwm_idle_pins"] == [3]
        after(rig, "a 3 7")
        assert rig.stats()["pwm_idle_pins"] == []
    finally:
        rig.close()


# Timer modes the Arduino core does not set, written to the registers directly:
# (board, pin, [(register address, value)...], expected duty 0..1).
TCCR1A, TCCR1B, ICR1L, ICR1H, OCR1AL, OCR1AH, OCR1BL, OCR1BH = 0x80, 0x81, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x8B
TCCR2A, TCCR2B, OCR2A, OCR2B = 0xB0, 0xB1, 0xB3, 0xB4
TCCR0A, TCCR0B, OCR0A, OCR0B = 0x44, 0x45, 0x47, 0x48
TCCR5A, TCCR5B, ICR5L, ICR5H, OCR5CL, OCR5CH = 0x120, 0x121, 0x126, 0x127, 0x12C, 0x12D
MODES = [
    # Timer1 fast PWM, TOP = ICR1 = 999 (mode 14), OCR1A = 250, non-inverting: 251 of 1000
    (
        "uno",
        9,
        [(ICR1H, 3), (ICR1L, 231), (OCR1AH, 0), (OCR1AL, 250), (TCCR1A, 0x82), (TCCR1B, 0x19)],
        251 / 1000,
    ),
    # the same, inverting (COM1A = 3)
    (
        "uno",
        9,
        [(ICR1H, 3), (ICR1L, 231), (OCR1AH, 0), (OCR1AL, 250), (TCCR1A, 0xC2), (TCCR1B, 0x19)],
        749 / 1000,
    ),
    # Timer1 phase and frequency correct, TOP = ICR1 = 400 (mode 8), OCR1B = 100: 100 of 400
    ("uno", 10, [(ICR1H, 1), (ICR1L, 144), (OCR1BH, 0), (OCR1BL, 100), (TCCR1A, 0x20), (TCCR1B, 0x11)], 0.25),
    # Timer1 phase correct 10-bit (mode 3), OCR1A = 768: 768 of 1023
    ("uno", 9, [(OCR1AH, 3), (OCR1AL, 0), (TCCR1A, 0x83), (TCCR1B, 0x02)], 768 / 1023),
    # Timer1 fast PWM 9-bit (mode 6), OCR1B = 127: 128 of 512
    ("uno", 10, [(OCR1BH, 0), (OCR1BL, 127), (TCCR1A, 0x22), (TCCR1B, 0x0A)], 128 / 512),
    # Timer1 CTC (mode 4), toggle OC1A on compare match: a square wave
    ("uno", 9, [(OCR1AH, 0), (OCR1AL, 99), (TCCR1A, 0x40), (TCCR1B, 0x0A)], 0.5),
    # Timer2 fast PWM, TOP = OCR2A (mode 7): OC2B = 30 of TOP 59 gives 31 of 60
    ("uno", 3, [(OCR2A, 59), (OCR2B, 30), (TCCR2A, 0x23), (TCCR2B, 0x0A)], 31 / 60),
    # Timer2 phase correct, TOP = OCR2A (mode 5), toggle OC2A (COM2A = 1): a square wave
    ("uno", 11, [(OCR2A, 99), (TCCR2A, 0x41), (TCCR2B, 0x0A)], 0.5),
    # Timer2 phase correct 8-bit, COM2B = 1 is reserved: the port drives pin 3 (low)
    ("uno", 3, [(OCR2B, 99), (TCCR2A, 0x11), (TCCR2B, 0x04)], 0.0),
    # Timer0 fast PWM inverting, OCR0B = 63: 1 - 64 / 256
    ("uno", 5, [(OCR0B, 63), (TCCR0A, 0x33)], 1 - 64 / 256),
    # Mega Timer5 phase correct, TOP = ICR5 = 2000 (mode 10), OCR5C = 500: pin 44 at 0.25
    (
        "mega2560",
        44,
        [(ICR5H, 7), (ICR5L, 208), (OCR5CH, 1), (OCR5CL, 244), (TCCR5A, 0x0A), (TCCR5B, 0x11)],
        0.25,
    ),
]


@pytest.mark.parametrize(("board", "pin", "writes", "want"), MODES)
def test_every_timer_mode_gives_the_datasheet_duty(
    board: str, pin: int, writes: list[tuple[int, int]], want: float
) -> None:
    rig = pwm_rig(board, (pin,))
    try:
        after(rig, f"a {pin} 1")  # pinMode OUTPUT, comparator connected
        for address, value in writes:
            rig.command_line(f"r {address} {value}")
        rig.advance(2 * STEP_S)
        assert duty(rig, pin) / 255 == pytest.approx(want, abs=0.0002)
    finally:
        rig.close()
