"""The pin trace: a sketch's pins in a VCD file timed in AVR cycles, read back with pyvcd.

A sketch (``sketches/pin_trace``) toggles pin 7 every 250 us with interrupts off, runs
analogWrite on pins 9 (Timer1, phase-correct PWM) and 5 (Timer0, fast PWM) and writes
"Uready" on Serial; the test sends it a byte. The trace must show each edge at the
sketch's timing, each PWM pin's real waveform (simavr 1.6 toggles nothing on pin 9), and
the UART's frames; the same run writes the same file; the file stops at its size limit
saying so. Names resolve through the robot's wiring or profile, and unknown ones are
refused listing the known ones.
"""

from __future__ import annotations

import itertools
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from vcd.reader import TokenKind, tokenize

from hil_devices.core.profile import load_profile
from hil_mcu.core.pin_trace import PinTrace, resolve_trace_pins, split_names, trace_summary
from hil_mcu.core.simavr import (
    FirmwareOptions,
    RobotWiring,
    build_firmware,
    harness,
    load_robot_wiring,
    profile_wiring,
)
from hil_mcu.errors import HilMcuError
from support.sketch_rig import BUILD_CACHE, SKETCHES, SketchRig

#: The AVR's clock and the sketch's half period of pin 7 (250 us), in cycles.
HZ = 16_000_000
HALF_PERIOD = 4000
#: What the sketch traces, by raw pins and UART lines.
TRACED = "D7, D9, D5, uart0.tx, uart0.rx"
#: Arduino's Serial.begin(115200): U2X on, UBRR 16: 17 x 8 cycles a bit.
BIT_CYCLES = 136
UNITS_S = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12, "fs": 1e-15}

Changes = dict[str, list[tuple[int, int]]]


def read_vcd(path: Path) -> tuple[Changes, list[str]]:
    """Each traced name's levels as (AVR cycle, level), from the start; and the file's comments."""
    names: dict[str, list[str]] = {}
    scopes: list[str] = []
    changes: Changes = {}
    comments: list[str] = []
    cycles_per_unit = 0.0
    now = 0
    with path.open("rb") as stream:
        for token in tokenize(stream):
            if token.kind is TokenKind.TIMESCALE:
                cycles_per_unit = token.timescale.magnitude * UNITS_S[token.timescale.unit.value] * HZ
            elif token.kind is TokenKind.SCOPE:
                scopes.append(token.scope.ident)
            elif token.kind is TokenKind.UPSCOPE:
                scopes.pop()
            elif token.kind is TokenKind.VAR:
                name = ".".join([*scopes[1:], token.var.reference])  # below the board's scope
                names.setdefault(token.var.id_code, []).append(name)
                changes[name] = []
            elif token.kind is TokenKind.CHANGE_TIME:
                now = round(token.time_change * cycles_per_unit)
            elif token.kind is TokenKind.CHANGE_SCALAR:
                for name in names[token.scalar_change.id_code]:
                    changes[name].append((now, int(token.scalar_change.value)))
            elif token.kind is TokenKind.COMMENT:
                comments.append(token.comment)
    return changes, comments


def edges(levels: list[tuple[int, int]], level: int) -> list[int]:
    """The cycles at which the line goes to ``level``."""
    return [cycle for cycle, value in levels[1:] if value == level]


def frames(levels: list[tuple[int, int]], bit: int) -> bytes:
    """The 8N1 bytes on a UART line (idle high), sampled mid-bit from each start bit's edge."""

    def level_at(cycle: int) -> int:
        return [value for at, value in levels if at <= cycle][-1]

    found, start = bytearray(), 0
    for fall in edges(levels, 0):
        if fall < start:
            continue  # a data bit of the frame being read
        assert level_at(fall + bit // 2) == 0 and level_at(fall + 9 * bit + bit // 2) == 1, "start/stop bit"
        found.append(sum(level_at(fall + (1 + i) * bit + bit // 2) << i for i in range(8)))
        start = fall + 10 * bit
    return bytes(found)


def run_sketch(path: Path, *, limit: int = 10**8, seconds: float = 0.2) -> tuple[Path, dict[str, object]]:
    """The sketch in lockstep for ``seconds`` after its "ready", with "A" sent to it: its trace and stats."""
    wiring = RobotWiring("uno", {}, "<pin_trace wiring>")
    trace = PinTrace(path, resolve_trace_pins(split_names(TRACED), wiring), limit)
    rig = SketchRig("pin_trace", board="uno", trace=trace)
    try:
        rig.wait_for("command", "ready", timeout=1.0)
        assert rig.port is not None
        rig.port.write(b"A")
        rig.advance(seconds)
        stats = rig.stats()
    finally:
        rig.close()
    return path, stats


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Changes, list[str]]]:
    path, _ = run_sketch(tmp_path_factory.mktemp("trace") / "pins.vcd")
    changes, comments = read_vcd(path)
    yield path, changes, comments


def test_a_toggled_pin_shows_each_edge_at_the_sketchs_timing(traced: tuple[Path, Changes, list[str]]) -> None:
    _, changes, _ = traced
    toggles = [cycle for cycle, _ in changes["pins.D7"][2:]]  # from the loop's first toggle
    halves = {b - a for a, b in itertools.pairwise(toggles)}
    assert len(toggles) > 700  # 0.2 s of 250 us halves
    # every half period the same (interrupts off): _delay_us(250) and a few cycles of the loop
    assert len(halves) == 1 and HALF_PERIOD <= halves.pop() <= HALF_PERIOD + 8


@pytest.mark.parametrize(
    ("pin", "value", "period", "high"),
    [
        (
            9,
            64,
            2 * 255 * 64,
            2 * 64 * 64,
        ),  # Timer1 phase correct, /64: high OCR of TOP either side of BOTTOM
        (5, 192, 256 * 64, (192 + 1) * 64),  # Timer0 fast PWM, /64: high OCR + 1 of 256 counts
    ],
)
def test_a_pwm_pin_shows_its_timer_waveform(
    traced: tuple[Path, Changes, list[str]], pin: int, value: int, period: int, high: int
) -> None:
    _, changes, _ = traced
    levels = changes[f"pins.D{pin}"]
    rises, falls = edges(levels, 1)[1:], edges(levels, 0)  # the first: when analogWrite connects it
    assert len(rises) > 10
    assert {b - a for a, b in itertools.pairwise(rises)} == {period}
    highs = {fall - rise for rise in rises for fall in falls if 0 < fall - rise < period}
    assert highs == {high}
    assert abs(high / period * 255 - value) <= 1  # analogWrite's value, within 1/255


def test_uart_lines_show_the_bytes_as_frames_at_the_baud_rate(
    traced: tuple[Path, Changes, list[str]],
) -> None:
    _, changes, _ = traced
    assert frames(changes["uart0.tx"], BIT_CYCLES) == b"Uready\r\n"
    assert frames(changes["uart0.rx"], BIT_CYCLES) == b"A"
    tx_falls = edges(changes["uart0.tx"], 0)
    assert (tx_falls[1] - tx_falls[0]) % BIT_CYCLES == 0  # 'U' = 01010101: a bit an edge


def test_the_file_says_how_each_line_is_drawn(traced: tuple[Path, Changes, list[str]]) -> None:
    path, _, comments = traced
    header = comments[0]
    assert "16000000 Hz" in header and "625 x 100ps" in header
    assert "D9: pin 9 (PB1), a timer output" in header and "uart0.tx: pin 1 (PD1), a UART's TX" in header
    assert "nothing toggles on Timer1's phase-correct PWM" in header
    assert trace_summary(PinTrace(path, ())) == {
        "file": str(path),
        "pins": {},
        "bytes": path.stat().st_size,
        "cut_at_s": None,
    }


def test_the_same_run_writes_the_same_file(traced: tuple[Path, Changes, list[str]], tmp_path: Path) -> None:
    path, _, _ = traced
    again, _ = run_sketch(tmp_path / "again.vcd")
    assert again.read_bytes() == path.read_bytes()


def test_a_trace_stops_at_its_size_limit_saying_so(tmp_path: Path) -> None:
    limit = 20_000
    path, stats = run_sketch(tmp_path / "pins.vcd", limit=limit, seconds=0.5)
    assert path.stat().st_size <= limit
    changes, comments = read_vcd(path)  # still a whole VCD file
    assert "size limit of 20000 bytes" in comments[-1]
    cut = stats["trace_cut_at_s"]
    assert isinstance(cut, float) and 0.0 < cut < 0.5
    assert trace_summary(PinTrace(path, ()))["cut_at_s"] == pytest.approx(cut, abs=1e-6)
    assert max(cycle for levels in changes.values() for cycle, _ in levels) <= cut * HZ


def test_a_reset_stops_the_waves_until_the_sketch_runs_again_and_time_goes_on(tmp_path: Path) -> None:
    boot = 0.05  # the bootloader's wait, s
    trace = PinTrace(tmp_path / "pins.vcd", (("D9", 9), ("D7", 7)))
    rig = SketchRig("pin_trace", board="uno", trace=trace, boot_delay=boot)
    try:
        rig.wait_for("command", "ready", timeout=1.0)
        rig.advance(0.1)
        reset_at = rig.process.cycle
        rig.process.reset()
        rig.advance(0.2)
    finally:
        rig.close()
    changes, _ = read_vcd(trace.path)
    rises = edges(changes["pins.D9"], 1)
    restart = reset_at + round(boot * HZ)
    assert [r for r in rises if reset_at <= r < restart] == []  # registers cleared: no wave
    before, after = [r for r in rises if r < reset_at], [r for r in rises if r >= restart]
    assert len(before) > 2 and len(after) > 2  # the sketch's analogWrite again, on the same clock
    assert {b - a for a, b in itertools.pairwise(after[1:])} == {2 * 255 * 64}
    assert changes["pins.D7"][-1][0] > restart  # its loop toggles again


DEMO = "demo wiring"
RAB = "rab_style profile"


def wiring_of(which: str) -> RobotWiring:
    return load_robot_wiring() if which == DEMO else profile_wiring(load_profile("rab_style"))


@pytest.mark.parametrize(
    ("which", "names", "pins"),
    [
        (DEMO, "motor_left.enable", {"motor_left.enable": 5}),
        (DEMO, "MOTOR_LEFT.Enable", {"motor_left.enable": 5}),
        (DEMO, "ultrasonic", {"ultrasonic.trigger": 4, "ultrasonic.echo": 9}),
        (DEMO, "ir.voltage, led.active", {"ir.voltage": 14, "led.active": 13}),
        (DEMO, "D9, 9, a0, PB1, pd5", {"D9": 9, "A0": 14, "PB1": 9, "PD5": 5}),
        (DEMO, "uart0.tx, UART0.RX", {"uart0.tx": 1, "uart0.rx": 0}),
        (
            RAB,
            "encoder_left.a, encoder_right",
            {"encoder_left.a": 2, "encoder_right.a": 18, "encoder_right.b": 19},
        ),
    ],
)
def test_names_resolve_through_the_wiring(which: str, names: str, pins: dict[str, int]) -> None:
    assert dict(resolve_trace_pins(split_names(names), wiring_of(which))) == pins


@pytest.mark.parametrize(
    ("which", "name", "words"),
    [
        (
            DEMO,
            "bogus",
            ["no pin named 'bogus'", "wiring.yaml", "motor_left.enable", "ultrasonic", "uart0.tx"],
        ),
        (DEMO, "uart1.tx", ["no pin named 'uart1.tx'", "uart0.rx"]),
        (DEMO, "D20", ["no pin named 'D20'", "raw pins D0..D19, A0..A5"]),
        (DEMO, "PE0", ["no pin named 'PE0'"]),
        (DEMO, "A6", ["A6 of the nano is an analog input only"]),
        (DEMO, "light_3.reading", ["A6 of the nano is an analog input only", "light_3.reading"]),
        (RAB, "motor_left.enable", ["no pin named 'motor_left.enable'", "motor_left.a", "encoder_right.b"]),
    ],
)
def test_unknown_names_are_refused_listing_the_known_ones(which: str, name: str, words: list[str]) -> None:
    with pytest.raises(HilMcuError) as refused:
        resolve_trace_pins([name], wiring_of(which))
    for word in words:
        assert word in str(refused.value)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--trace-pin", "a b=3"), "--trace-pin a b=3: expected NAME=PIN"),
        (("--trace-pin", "a=x"), "--trace-pin a=x: expected NAME=PIN"),
        (("--trace", "TRACE", "--trace-pin", "a=20"), "--trace-pin a=20: not a digital pin 0..19"),
        (("--trace-pin", "a=3"), "--trace-pin needs --trace FILE"),
        (("--trace", "TRACE"), "--trace TRACE: no --trace-pin to trace"),
        (("--trace", "/proc/no/t.vcd", "--trace-pin", "a=3"), "--trace /proc/no/t.vcd: cannot write it"),
        (("--trace-limit", "lots"), "--trace-limit: not a number: lots"),
        (("--trace-limit", "-1"), "--trace-limit -1: outside 0..1e15 bytes"),
    ],
)
def test_the_harness_refuses_bad_trace_options(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    elf = build_firmware(FirmwareOptions(board="uno"), sketch=SKETCHES / "pin_trace", build_root=BUILD_CACHE)
    options = [arg.replace("TRACE", str(tmp_path / "t.vcd")) for arg in args]
    message = message.replace("TRACE", str(tmp_path / "t.vcd"))
    command = [
        str(harness()),
        "--firmware",
        str(elf),
        "--uart",
        "0:0",
        "--board",
        "uno",
        "--lockstep",
        *options,
    ]
    result = subprocess.run(
        command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 2, result.stderr
    assert f"hil_simavr: {message}" in result.stderr
