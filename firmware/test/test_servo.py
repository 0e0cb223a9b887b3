"""Our Servo library in simavr: every pulse timed in AVR cycles (servo_probe.c).

The sketch ``sketches/servo_pulses`` attaches twelve servos (three measured: pan 544 us,
tilt 1500 us, gripper 1800 us), asks for a thirteenth, reads the library's answers back
over UART0 and detaches the gripper after 200 ms. Hobby servos expect one pulse every
20 ms; the library's pulses follow each other in attach order.
"""

from __future__ import annotations

import itertools
import subprocess
from collections import defaultdict
from dataclasses import dataclass

import pytest

from hil_firmware.core.avr_build import build_sketch
from support.firmware_host import FIRMWARE, SIMAVR_INCLUDE, simavr_probe

SKETCH = FIRMWARE / "test" / "sketches" / "servo_pulses"
PROBE_SOURCE = FIRMWARE / "test" / "servo_probe.c"
RUN_MS = 300
#: Port and bit of pins 9 (pan), 3 (tilt), 12 (gripper) and 13 (the thirteenth servo).
PINS = {
    "uno": ("atmega328p", {"pan": "B1", "tilt": "D3", "gripper": "B4", "extra": "B5"}),
    "mega2560": ("atmega2560", {"pan": "H6", "tilt": "E5", "gripper": "B6", "extra": "B7"}),
}
WIDTH_TOLERANCE_US = 3.0
PERIOD_TOLERANCE_US = 20.0

pytestmark = pytest.mark.skipif(
    not (SIMAVR_INCLUDE / "sim_avr.h").is_file(), reason="libsimavr-dev is not installed"
)


@dataclass(frozen=True)
class Run:
    """What the probe saw: each pin's pulses (rise, width in us) and the sketch's serial lines."""

    board: str
    pulses: dict[str, list[tuple[float, float]]]
    lines: list[str]


@pytest.fixture(scope="module", params=sorted(PINS))
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Run:
    board: str = request.param
    mcu, pins = PINS[board]
    out = tmp_path_factory.mktemp(f"servo-{board}")
    elf = build_sketch(SKETCH, out, libraries=[FIRMWARE / "libraries"], board=board, strict=True).elf
    result = subprocess.run(
        [str(simavr_probe(PROBE_SOURCE)), str(elf), mcu, str(RUN_MS), *pins.values()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    names = {pin: name for name, pin in pins.items()}
    pulses: dict[str, list[tuple[float, float]]] = defaultdict(list)
    lines: list[str] = []
    for line in result.stdout.splitlines():
        kind, *fields = line.split()
        if kind == "pulse":
            pulses[names[fields[0]]].append((float(fields[1]), float(fields[2])))
        else:
            lines = bytes.fromhex(fields[0] if fields else "").decode().splitlines()
    return Run(board, dict(pulses), lines)


@pytest.mark.parametrize(("servo", "width"), [("pan", 544), ("tilt", 1500), ("gripper", 1800)])
def test_each_servo_gets_its_width_every_20_ms(run: Run, servo: str, width: float) -> None:
    pulses = run.pulses[servo][1:]  # the first frame began before setup() wrote the widths
    assert len(pulses) >= 8
    assert all(abs(w - width) <= WIDTH_TOLERANCE_US for _, w in pulses), pulses
    periods = [b[0] - a[0] for a, b in itertools.pairwise(pulses)]
    assert all(abs(p - 20000) <= PERIOD_TOLERANCE_US for p in periods), periods


def test_pulses_follow_each_other_in_attach_order(run: Run) -> None:
    for (rise, width), (next_rise, _) in zip(run.pulses["pan"][1:5], run.pulses["tilt"][1:5], strict=True):
        assert 0 <= next_rise - (rise + width) <= 10


def test_the_library_reads_back_what_was_written(run: Run) -> None:
    assert run.lines[:3] == ["pan 0 544", "tilt 90 1500", "gripper 122 1800"]
    assert "roundtrip 0" in run.lines  # read() of write(a) is a for every angle 0..180


def test_a_thirteenth_servo_runs_on_a_second_timer_where_there_is_one(run: Run) -> None:
    """The UNO's Timer1 serves 12; the Mega's thirteenth gets channel 12, on Timer1."""
    if run.board == "uno":
        assert "extra 255" in run.lines  # INVALID_SERVO
        assert "extra" not in run.pulses
    else:
        assert "extra 12" in run.lines
        pulses = run.pulses["extra"][1:]
        assert len(pulses) >= 8
        assert all(abs(w - 1500) <= WIDTH_TOLERANCE_US for _, w in pulses)
        assert all(abs(b[0] - a[0] - 20000) <= PERIOD_TOLERANCE_US for a, b in itertools.pairwise(pulses))


def test_detach_stops_the_pulses(run: Run) -> None:
    assert "gripper attached 0" in run.lines
    assert run.pulses["gripper"][-1][0] < 200_000
    assert run.pulses["pan"][-1][0] > RUN_MS * 1000 - 20_000  # the others go on
