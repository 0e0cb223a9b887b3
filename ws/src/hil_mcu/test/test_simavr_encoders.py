"""Wheel encoders in the firmware-in-the-loop harness, counted as sketches count them.

The simulator sends each wheel's position in counts (the library's
``quadrature_encoder`` and ``single_channel_encoder``: a wrapping 16-bit value); the
harness turns each frame's change into edges spread over the frame period. Test
sketches (``sketches/encoder_*``) count them with pin-change interrupts and a lookup
table (ROSArduinoBridge-like), with attachInterrupt on both pins, and, single channel,
on rising edges with the direction from the motor command.
"""

from __future__ import annotations

import math

import pytest

from support.sketch_rig import STEP_S, SketchRig, library_device

QUADRATURE = library_device("quadrature_encoder")
#: The sketch's setup() has attached its interrupts (the wheels stand still until then).
BOOT_S = 0.02
#: Seconds of driving (lockstep runs several times faster than real time).
DRIVE_S = {"uno": 10.0, "mega2560": 4.0}
SINGLE = library_device("single_channel_encoder")


def wrapped(position: int) -> int:
    """A position as the signal carries it: a 16-bit two's complement value."""
    return (position + 32768) % 65536 - 32768


def profile(seconds: float, top: float) -> list[float]:
    """Counts per second at each step: up to ``top``, back through zero to -top/2,
    a stop, then a slow crawl and a stop; the speed varies all the way."""
    rates = []
    for step in range(round(seconds / STEP_S)):
        t = step * STEP_S / seconds
        if t < 0.45:
            rate = top * math.sin(math.pi * t / 0.45) ** 0.5
        elif t < 0.75:
            rate = -0.5 * top * math.sin(math.pi * (t - 0.45) / 0.3)
        elif t < 0.8:
            rate = 0.0
        elif t < 0.95:
            rate = 300.0 * (1 + math.sin(40 * t))
        else:
            rate = 0.0
        rates.append(rate)
    return rates


def command(rig: SketchRig, line: str) -> list[int]:
    """The numbers of the sketch's ``e`` line."""
    got = [text for text in rig.command_line(line) if text.startswith("e ")]
    assert got, f"no answer to {line!r}"
    return [int(field) for field in got[-1].split()[1:]]


@pytest.mark.parametrize("board", ["uno", "mega2560"])
def test_two_quadrature_encoders_counted_by_pin_change_interrupts_follow_the_wheels(board: str) -> None:
    # Each pin-change interrupt takes about 130 cycles; a sketch that decodes two
    # encoders so loses counts (on the bench too) once two edges of one encoder fall
    # within one interrupt, beyond about 50 000 counts a second with both turning.
    pins = {"uno": ("2", "3", "A4", "A5"), "mega2560": ("50", "51", "10", "11")}[board]
    rig = SketchRig(
        "encoder_pcint",
        board=board,
        devices=[("left", QUADRATURE), ("right", QUADRATURE)],
        pins=dict(zip(["left.a", "left.b", "right.a", "right.b"], pins, strict=True)),
    )
    try:
        rig.advance(BOOT_S)
        left = right = 0.0
        checked = 0
        for rate in profile(DRIVE_S[board] / 2, 40_000.0):
            left += rate * STEP_S
            right -= 0.3 * rate * STEP_S
            rig.set(left__position=wrapped(round(left)), right__position=wrapped(round(right)))
            rig.advance(STEP_S)
            if rate == 0.0 and checked % 20 == 0:  # standing still: every count is in
                rig.advance(STEP_S)
                counts = command(rig, "e")
                assert abs(counts[0] - round(left)) <= 1 and abs(counts[1] - round(right)) <= 1, (
                    counts,
                    round(left),
                    round(right),
                )
            checked += rate == 0.0
        rig.advance(2 * STEP_S)
        counts = command(rig, "e")
        assert abs(counts[0] - round(left)) <= 1 and abs(counts[1] - round(right)) <= 1
        assert rig.stats()["encoder_edges"] >= abs(round(left))
    finally:
        rig.close()


@pytest.mark.parametrize("board", ["uno", "mega2560"])
def test_a_quadrature_encoder_counted_by_attach_interrupt_on_both_pins_follows_the_wheel(board: str) -> None:
    # up to 80 000 counts a second: 20 kHz on each channel; past 32767 the 16-bit
    # position wraps and is unwrapped
    rig = SketchRig(
        "encoder_attach", board=board, devices=[("wheel", QUADRATURE)], pins={"wheel.a": "2", "wheel.b": "3"}
    )
    try:
        rig.advance(BOOT_S)
        position = peak = 0.0
        for rate in profile(DRIVE_S[board], 80_000.0):
            position += rate * STEP_S
            peak = max(peak, position)
            rig.set(wheel__position=wrapped(round(position)))
            rig.advance(STEP_S)
        rig.advance(2 * STEP_S)
        assert abs(command(rig, "e")[0] - round(position)) <= 1
        assert peak > 65536  # the 16-bit value wrapped, and was unwrapped
    finally:
        rig.close()


def test_the_edges_of_a_frame_are_spread_evenly_over_its_period() -> None:
    # 200 counts in one 5 ms frame: one every 25 us, so half of them after half a period
    rig = SketchRig(
        "encoder_attach", board="uno", devices=[("wheel", QUADRATURE)], pins={"wheel.a": "2", "wheel.b": "3"}
    )
    try:
        rig.advance(STEP_S)
        rig.set(wheel__position=200)
        rig.advance(STEP_S / 2)
        assert 90 <= rig.stats()["encoder_edges"] <= 110
        rig.advance(STEP_S / 2)  # the frame came at the first poll (100 us)
        assert 190 <= rig.stats()["encoder_edges"] <= 200
        rig.advance(STEP_S)
        assert rig.stats()["encoder_edges"] == 200
        assert command(rig, "e") == [200]
    finally:
        rig.close()


def test_a_single_channel_encoder_pulses_once_per_count_either_way() -> None:
    rig = SketchRig(
        "encoder_single",
        board="uno",
        devices=[("wheel", SINGLE)],
        pins={"wheel.signal": "2"},
        defines={"PIN_ENC": 2},
    )
    try:
        rig.advance(BOOT_S)
        position = 0
        for step in range(100):  # forward, 40 counts a frame at most
            position += step % 41
            rig.set(wheel__position=wrapped(position))
            rig.advance(STEP_S)
        rig.advance(2 * STEP_S)
        forward = position
        assert command(rig, "e") == [forward, forward]
        rig.command_line("d -1")
        for _ in range(50):  # back, as the motor command says
            position -= 7
            rig.set(wheel__position=wrapped(position))
            rig.advance(STEP_S)
        rig.advance(2 * STEP_S)
        assert command(rig, "e") == [position, forward + 350]
    finally:
        rig.close()
