"""Pulses a sketch drives, measured by the harness from the pin's edges in AVR cycles.

A hobby servo's command (the library's ``servo``: the width of the last high pulse,
0 once none has ended for 50 ms), from Timer1 as sketches drive it
(``sketches/servo_pulses``), and a buzzer's ``tone()`` (``buzzer``: the square wave's
frequency, 0 when silent; ``sketches/buzzer_tone``).
"""

from __future__ import annotations

import pytest

from support.sketch_rig import STEP_S, SketchRig, library_device

SERVO = library_device("servo")
BUZZER = library_device("buzzer")
WIDTHS = (544, 1000, 1500, 1733, 2400)


@pytest.mark.parametrize(
    ("board", "pin", "hardware", "slack_us"),
    [
        # Timer1's compare interrupt sets the edges: millis' interrupt may delay one
        # of them by its few microseconds, on the bench too
        ("uno", 9, 0, 6.0),
        ("mega2560", 11, 0, 6.0),
        # the timer's own output: exact
        ("uno", 9, 1, 0.5),
    ],
)
def test_a_servo_pulse_width_reads_back_in_microseconds(
    board: str, pin: int, hardware: int, slack_us: float
) -> None:
    rig = SketchRig(
        "servo_pulses",
        board=board,
        devices=[("pan", SERVO)],
        pins={"pan.signal": str(pin)},
        defines={"SERVO_PIN": pin, "HARDWARE_PWM": hardware},
    )
    try:
        for width in WIDTHS:
            rig.command_line(f"p {width}")
            rig.advance(0.05)  # two periods: a whole pulse of the new width
            assert abs(rig.values["pan.pulse_us"] - width) <= slack_us, (width, rig.values)
        assert rig.stats()["servo_pulses"] >= (0 if hardware else 10)  # pulses timed from edges
        rig.command_line("p 0")
        rig.advance(0.03)
        assert rig.values["pan.pulse_us"] == pytest.approx(2400, abs=slack_us)  # the last pulse, for 50 ms
        rig.advance(0.05)
        assert rig.values["pan.pulse_us"] == 0.0
    finally:
        rig.close()


def buzzer_rig() -> SketchRig:
    return SketchRig("buzzer_tone", board="uno", devices=[("buzzer", BUZZER)], pins={"buzzer.signal": "8"})


def test_tone_reads_as_its_frequency_for_its_duration() -> None:
    rig = buzzer_rig()
    try:
        rig.advance(0.02)
        rig.command_line("t 440 200")
        heard: list[float] = []
        for _ in range(round(0.35 / STEP_S)):
            rig.advance(STEP_S)
            heard.append(rig.values["buzzer.frequency"])
        sounding = [hz for hz in heard if hz > 0]
        # tone() runs Timer2 at 16 MHz / 128 / 142 / 2: 440.14 Hz; its interrupt toggles
        # the pin, a few cycles late when another interrupt runs
        assert all(abs(hz - 440.14) < 4.4 for hz in sounding), sounding
        # 200 ms, give or take a period at each end and a frame
        assert 0.19 <= len(sounding) * STEP_S <= 0.215, len(sounding)
        assert heard[-1] == 0.0
    finally:
        rig.close()


@pytest.mark.parametrize("hz", [31, 262, 1000, 4186, 10000])
def test_tone_until_no_tone_reads_its_frequency_then_silence(hz: int) -> None:
    rig = buzzer_rig()
    try:
        rig.command_line(f"t {hz} 0")
        rig.advance(0.1)
        assert rig.values["buzzer.frequency"] == pytest.approx(hz, rel=0.01)
        rig.command_line("n")
        rig.advance(0.1)
        assert rig.values["buzzer.frequency"] == 0.0
        assert rig.stats()["tone_rises"] >= hz * 0.1 - 1
    finally:
        rig.close()
