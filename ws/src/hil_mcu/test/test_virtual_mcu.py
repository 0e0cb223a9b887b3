"""The virtual MCU core on fake time: shared vectors, pins, watchdog, telemetry, robustness."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_bridge.core.line_protocol import (
    Command,
    Drive,
    ErrorReport,
    Heartbeat,
    LineDecoder,
    LineEncoder,
    Telemetry,
)
from hil_bridge.core.signal_protocol import Frame, FrameDecoder, FrameEncoder, SignalLayout, profile_layout
from hil_devices.core.devices import load_device_set
from hil_devices.core.library import load_device_library
from hil_devices.core.profile import load_profile
from hil_devices.core.profile import telemetry_schema as profile_telemetry
from hil_devices.core.telemetry import TelemetrySchema
from hil_mcu.core.virtual_mcu import McuConfig, VirtualMcu, WheelDriver, profile_drivers
from hil_mcu.errors import HilMcuError
from support import mcu_vectors
from support.mcu_vectors import replies

SRC = Path(__file__).resolve().parents[2]
CONFIG = SRC / "hil_devices" / "config"
LIBRARY = load_device_library([CONFIG / "devices"])
LAYOUT = SignalLayout(load_device_set(CONFIG / "demo_robot_devices.yaml", LIBRARY))
SCHEMA = TelemetrySchema.from_yaml(CONFIG / "telemetry.yaml")
DEFAULT = McuConfig(layout=LAYOUT, schema=SCHEMA)

SENSORS = {
    ("bumper_left", "pressed"): 1.0,
    ("bumper_right", "pressed"): 0.0,
    ("ultrasonic", "distance"): 123.4,
    ("ir", "voltage"): 2.0,
    ("light_0", "reading"): 100.0,
    ("light_1", "reading"): 200.0,
    ("light_2", "reading"): 300.0,
    ("light_3", "reading"): 1023.0,
    ("compass", "heading"): 90.25,
}


def make(config: McuConfig = DEFAULT, **changes: Any) -> VirtualMcu:
    return VirtualMcu(replace(config, **changes) if changes else config, start=0.0)


def lines(data: bytes) -> list[str]:
    return data.decode("ascii").splitlines()


def send(mcu: VirtualMcu, *texts: str, now: float = 0.0) -> list[str]:
    """Feed lines; return every line the MCU has queued since the last call."""
    mcu.feed_command("".join(f"{t}\n" for t in texts).encode(), now)
    return lines(mcu.take_command_output())


def telemetry(output: list[str], list_id: str) -> list[str]:
    return [line for line in output if line.startswith(list_id)]


def pins(mcu: VirtualMcu, device: str) -> tuple[int, int, int]:
    return mcu.pin(device, "enable"), mcu.pin(device, "a"), mcu.pin(device, "b")


def sensor_frame(encoder: FrameEncoder, values: dict[tuple[str, str], float] = SENSORS) -> bytes:
    return encoder.encode([values[slot.key] for slot in LAYOUT.outputs])


def round_trip(values: dict[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    """The sensor values as the MCU side decodes them (the plain codec is lossy)."""
    frame = FrameDecoder(LAYOUT.outputs).feed(sensor_frame(FrameEncoder(LAYOUT.outputs), values))[0]
    return {slot.key: value for slot, value in zip(LAYOUT.outputs, frame.values, strict=True)}


def half_up(value: float) -> int:
    return int(value + 0.5)


# -- shared behaviour vectors -------------------------------------------------------


def test_every_vector_case_has_exactly_one_kind_of_expectation() -> None:
    assert len(mcu_vectors.CASES) >= 10
    for case in mcu_vectors.CASES:
        assert ("expect" in case) != ("expect_prefix" in case), case["name"]
        assert set(case) <= {"name", "send", "expect", "expect_prefix", "telemetry"}, case["name"]


class VirtualUnderTest:
    """The virtual MCU behind the shared vector runner's interface."""

    def __init__(self) -> None:
        self.mcu = make()
        self.now = 0.0

    def exchange(self, texts: list[str]) -> list[str]:
        return send(self.mcu, *texts, now=self.now)

    def after_telemetry_period(self) -> list[str]:
        self.now += DEFAULT.telemetry_period
        self.mcu.tick(self.now)
        return lines(self.mcu.take_command_output())


@pytest.mark.parametrize("case", mcu_vectors.CASES, ids=lambda c: c["name"])
def test_behaviour_vector(case: dict[str, Any]) -> None:
    mcu_vectors.check_case(VirtualUnderTest(), case)


# -- DRV -> pins -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (100, (402, 1, 0)),  # 401.57 rounds up, truncation would give 401
        (-100, (402, 0, 1)),
        (0, (0, 0, 0)),  # coast
        (255, (1024, 1, 0)),
        (-255, (1024, 0, 1)),
        (1, (4, 1, 0)),  # 4.02
        (127, (510, 1, 0)),  # 509.99
        (128, (514, 1, 0)),  # 514.01
    ],
)
def test_drive_sets_l298_pins(value: int, expected: tuple[int, int, int]) -> None:
    mcu = make()
    assert send(mcu, f"DRV{value},{-value}") == []
    assert pins(mcu, "motor_left") == expected
    enable, a, b = expected
    assert pins(mcu, "motor_right") == (enable, b, a)
    assert mcu.motor_commands == (value, -value)
    assert mcu.stats.drv_accepted == 1


def test_drive_duty_rounds_halves_up_with_an_even_max_command() -> None:
    mcu = make(max_command=2048)
    send(mcu, "DRV1,3")  # 0.5 and 1.5 of 1024/2048
    assert pins(mcu, "motor_left") == (1, 1, 0)
    assert pins(mcu, "motor_right") == (2, 1, 0)
    send(mcu, "DRV2048,-2048")
    assert pins(mcu, "motor_left") == (1024, 1, 0)
    assert pins(mcu, "motor_right") == (1024, 0, 1)


def test_power_on_pins_are_coasting_and_led_off() -> None:
    mcu = make()
    assert pins(mcu, "motor_left") == pins(mcu, "motor_right") == (0, 0, 0)
    assert not mcu.led_on
    assert mcu.motor_commands == (0, 0)


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("DRV300,0", "ERR,DRV left 300 out of range -255..255"),
        ("DRV0,-256", "ERR,DRV right -256 out of range -255..255"),
        ("DRV-1000,1000", "ERR,DRV left -1000 and right 1000 out of range -255..255"),
    ],
)
def test_out_of_range_drive_is_an_error_and_leaves_motors_unchanged(line: str, error: str) -> None:
    mcu = make()
    send(mcu, "DRV100,-50")
    before = mcu.input_values
    assert send(mcu, line) == [error]
    assert mcu.input_values == before
    assert mcu.motor_commands == (100, -50)
    assert mcu.stats.drv_rejected["out_of_range"] == 1
    assert mcu.stats.errors_sent == 1


def test_max_command_sets_the_accepted_range() -> None:
    mcu = make(max_command=100)
    assert send(mcu, "DRV101,0") == ["ERR,DRV left 101 out of range -100..100"]
    assert send(mcu, "DRV100,-100") == []
    assert pins(mcu, "motor_left") == (1024, 1, 0)


def test_huge_drive_value_gives_an_error_line_the_receiver_accepts() -> None:
    mcu = make()
    (error,) = send(mcu, "DRV" + "9" * 120 + ",0")
    decoder = LineDecoder()
    assert decoder.feed(error.encode() + b"\n") == [ErrorReport(error[4:])]
    assert error.startswith("ERR,DRV left 999")


# -- HBB, COM, ARM -----------------------------------------------------------------


def test_heartbeat_echo_is_byte_identical() -> None:
    mcu = make()
    for stamp in ("1700000000.123456", "0.100", "7", "-3.5e-2"):
        assert send(mcu, f"HBB,{stamp}") == [f"HBB,{stamp}"]
    assert mcu.stats.hbb_echoed == 4


def test_stop_holds_motors_off_until_go() -> None:
    mcu = make()
    send(mcu, "DRV200,200")
    assert send(mcu, "COM,STOP") == []
    assert mcu.stopped and mcu.motor_commands == (0, 0)
    assert pins(mcu, "motor_left") == (0, 0, 0)
    assert send(mcu, "DRV50,50", "DRV60,60") == []
    assert mcu.motor_commands == (0, 0)
    assert mcu.stats.drv_rejected["stopped"] == 2
    assert send(mcu, "COM,GO") == []
    assert not mcu.stopped and mcu.motor_commands == (0, 0)  # off until the next DRV
    send(mcu, "DRV50,-60")
    assert mcu.motor_commands == (50, -60)
    assert mcu.stats.commands["STOP"] == mcu.stats.commands["GO"] == 1


def test_reset_returns_to_power_on_and_keeps_counters() -> None:
    mcu = make()
    send(mcu, "DRV100,100", "COM,STOP", "DRV1,1")
    assert send(mcu, "COM,RESET") == []
    assert not mcu.stopped and mcu.motor_commands == (0, 0)
    assert pins(mcu, "motor_left") == (0, 0, 0)
    assert mcu.stats.drv_accepted == 1 and mcu.stats.drv_rejected["stopped"] == 1
    send(mcu, "DRV10,20")
    assert mcu.motor_commands == (10, 20)


def test_reset_restarts_the_watchdog_as_at_power_on() -> None:
    mcu = make()
    mcu.tick(2.0)
    assert mcu.heartbeat_lost
    send(mcu, "COM,RESET", now=2.0)
    assert not mcu.heartbeat_lost
    mcu.tick(3.4)
    assert not mcu.heartbeat_lost
    mcu.tick(3.5)
    assert mcu.heartbeat_lost and mcu.stats.watchdog_trips == 2


def test_version_and_unknown_commands() -> None:
    mcu = make()
    assert send(mcu, "COM,VERSION") == ["COM,VERSION hil-virtual-mcu 0.1.0"]
    assert send(mcu, "COM,FOO") == ["ERR,unknown command FOO"]
    assert send(mcu, "COM,stop") == ["ERR,unknown command stop"]
    assert mcu.stats.commands["unknown"] == 2


def test_version_text_comes_from_the_config() -> None:
    mcu = make(name="robot_mcu", version="2.1")
    assert send(mcu, "COM,VERSION") == ["COM,VERSION robot_mcu 2.1"]


def test_unknown_command_error_is_printable_and_short() -> None:
    mcu = make()
    (error,) = send(mcu, "COM,X\x01Y" + "Z" * 120)
    assert error.startswith("ERR,unknown command X?YZZZ")
    assert len(error) <= 84
    assert LineDecoder().feed(error.encode() + b"\n") == [ErrorReport(error[4:])]


def test_arm_is_accepted_and_ignored() -> None:
    mcu = make()
    assert send(mcu, "ARM10,-20.5", "ARM1") == []
    assert mcu.stats.arm_ignored == 2
    assert mcu.motor_commands == (0, 0)


def test_lines_an_mcu_does_not_take_are_counted() -> None:
    mcu = make()
    assert send(mcu, "ERR,from the brain", "TL11,2") == []
    assert mcu.stats.unexpected == {"ERR": 1, "TL1": 1}
    assert mcu.counters()["unexpected"] == 2


# -- watchdog ----------------------------------------------------------------------


def test_watchdog_fires_once_after_the_timeout_and_recovers_on_the_next_heartbeat() -> None:
    mcu = make()
    send(mcu, "HBB,1", now=1.0)
    send(mcu, "DRV100,100", now=1.0)
    mcu.tick(2.49)
    assert not mcu.heartbeat_lost and mcu.motor_commands == (100, 100)
    assert mcu.next_deadline(2.49) <= 2.5
    mcu.tick(2.5)
    assert replies(lines(mcu.take_command_output())) == ["ERR,heartbeat lost"]
    assert mcu.heartbeat_lost and mcu.motor_commands == (0, 0)
    assert pins(mcu, "motor_left") == pins(mcu, "motor_right") == (0, 0, 0)
    for now in (3.0, 5.0, 60.0):
        mcu.tick(now)
    assert replies(lines(mcu.take_command_output())) == []  # one ERR, not one per tick
    assert send(mcu, "DRV50,50", now=60.0) == []
    assert mcu.motor_commands == (0, 0)
    assert mcu.stats.drv_rejected["heartbeat_lost"] == 1
    assert mcu.stats.watchdog_trips == 1

    assert send(mcu, "HBB,61", now=61.0) == ["HBB,61"]
    assert not mcu.heartbeat_lost and mcu.motor_commands == (0, 0)  # off until the next DRV
    send(mcu, "DRV50,-50", now=61.0)
    assert mcu.motor_commands == (50, -50)
    mcu.tick(62.5)
    assert mcu.heartbeat_lost and mcu.stats.watchdog_trips == 2


def test_watchdog_runs_from_power_on() -> None:
    mcu = make()
    mcu.tick(1.4)
    assert not mcu.heartbeat_lost
    mcu.tick(1.5)
    assert mcu.heartbeat_lost
    assert "ERR,heartbeat lost" in lines(mcu.take_command_output())


def test_late_bytes_after_the_timeout_find_the_watchdog_tripped() -> None:
    mcu = make()
    # No tick ran in between: the timeout expired before the DRV arrived.
    assert send(mcu, "DRV10,10", now=2.0) == ["ERR,heartbeat lost"]
    assert mcu.motor_commands == (0, 0)
    assert send(mcu, "HBB,2", "DRV10,10", now=2.0) == ["HBB,2"]
    assert mcu.motor_commands == (10, 10)


def test_watchdog_timeout_is_configurable() -> None:
    mcu = make(watchdog_timeout=0.3)
    mcu.tick(0.29)
    assert not mcu.heartbeat_lost
    mcu.tick(0.3)
    assert mcu.heartbeat_lost


# -- telemetry ---------------------------------------------------------------------


def test_telemetry_at_the_period() -> None:
    mcu = make()
    send(mcu, "DRV-100,200")
    mcu.tick(0.05)
    assert telemetry(lines(mcu.take_command_output()), "TL") == []
    sent = []
    for step in range(1, 11):
        mcu.tick(step * 0.1)
        sent += lines(mcu.take_command_output())
    assert telemetry(sent, "TL1") == ["TL1200,-100"] * 10
    assert len(telemetry(sent, "TL2")) == 10
    assert mcu.stats.telemetry_sent == 20


def test_tl2_before_any_frame_reports_the_signal_defaults() -> None:
    mcu = make()
    mcu.tick(0.1)
    # ultrasonic default 200 cm; IR default 0.45 V = 92 counts; the rest 0.
    assert telemetry(lines(mcu.take_command_output()), "TL2") == ["TL2200,92,0,0,0,0,0,0,0"]


def test_tl2_reports_the_latest_output_frame() -> None:
    mcu = make()
    encoder = FrameEncoder(LAYOUT.outputs)
    mcu.feed_signal(sensor_frame(encoder, {**SENSORS, ("ultrasonic", "distance"): 10.0}), 0.01)
    mcu.feed_signal(sensor_frame(encoder), 0.02)
    assert mcu.last_signal_at == 0.02
    mcu.tick(0.1)
    (line,) = telemetry(lines(mcu.take_command_output()), "TL2")
    (message,) = LineDecoder(schema=SCHEMA).feed(line.encode() + b"\n")
    assert isinstance(message, Telemetry)
    got = dict(zip(message.names, message.values, strict=True))
    decoded = round_trip(SENSORS)
    assert got == {
        "ultrasonic_cm": round(decoded[("ultrasonic", "distance")], 1),
        "ir_adc": half_up(decoded[("ir", "voltage")] / 5 * 1023),
        "light_0": decoded[("light_0", "reading")],
        "light_1": decoded[("light_1", "reading")],
        "light_2": decoded[("light_2", "reading")],
        "light_3": decoded[("light_3", "reading")],
        "bumper_left": 1,
        "bumper_right": 0,
        "heading_deg": round(decoded[("compass", "heading")], 1),
    }
    # The values as numbers: 123.4 cm, 2.0 V -> 409, 1023 stays 1023, 90.25 deg -> 90.2 or 90.3.
    assert got["ultrasonic_cm"] == 123.4 and got["ir_adc"] == 409 and got["light_3"] == 1023
    assert abs(got["heading_deg"] - 90.25) <= 0.05
    assert mcu.sensor("bumper_left", "pressed") == 1.0


def test_tl2_line_is_exact() -> None:
    mcu = make()
    values = {**SENSORS, ("compass", "heading"): 180.0, ("light_0", "reading"): 0.0}
    mcu.feed_signal(sensor_frame(FrameEncoder(LAYOUT.outputs), values), 0.0)
    mcu.tick(0.1)
    decoded = round_trip(values)
    light = [int(decoded[(f"light_{i}", "reading")]) for i in range(4)]
    assert light[0] == 0 and light[3] == 1023
    expected = "TL2123.4,409,{},{},{},{},1,0,180".format(*light)
    assert telemetry(lines(mcu.take_command_output()), "TL2") == [expected]


# -- LED and signal frames ---------------------------------------------------------


def test_led_toggles_every_period() -> None:
    mcu = make()
    states = []
    for step in range(1, 9):
        mcu.tick(step * 0.25)
        states.append(mcu.led_on)
    assert states == [False, True, True, False, False, True, True, False]
    assert make(led_period=0.1).next_deadline(0.0) <= 0.1


def test_signal_frames_carry_the_pins_every_period() -> None:
    mcu = make()
    send(mcu, "DRV255,-255")
    frames: list[Frame] = []
    decoder = FrameDecoder(LAYOUT.inputs)
    now = 0.0
    while (now := mcu.next_deadline(now)) < 1.0 - 1e-9:  # as the node's loop runs it
        mcu.tick(now)
        frames += decoder.feed(mcu.take_signal_output())
    assert len(frames) == 199  # 5 ms, 10 ms, ... 995 ms
    keys = [slot.key for slot in LAYOUT.inputs]
    last = dict(zip(keys, frames[-1].values, strict=True))
    assert last[("motor_left", "enable")] == 1024 and last[("motor_left", "a")] == 1
    assert last[("motor_right", "enable")] == 1024 and last[("motor_right", "b")] == 1
    led = {frame.values[keys.index(("led", "active"))] for frame in frames}
    assert led == {0.0, 1.0}  # 1 s of frames sees the LED both ways
    assert mcu.counters()["signal_frames_sent"] == 199
    assert mcu.counters()["timer_overruns"] == 0


@pytest.mark.parametrize("rate", [1000, 200, 2000])
def test_a_signal_frame_every_period_on_a_steps_over_rate_clock(rate: int) -> None:
    # The runner's lockstep clock is steps / rate, which misses the k * 5 ms grid by an ulp.
    mcu = make()
    sent = []
    for step in range(1, rate + 1):
        mcu.tick(step / rate)
        sent.append(mcu.counters()["signal_frames_sent"])
    assert sent[-1] == 200
    assert mcu.counters()["timer_overruns"] == 0
    # One frame at each 5 ms boundary, none early or late.
    steps_per_frame = rate // 200
    assert [sent[k * steps_per_frame - 1] for k in range(1, 201)] == list(range(1, 201))


def test_signal_frame_reports_the_current_pins() -> None:
    mcu = make()
    send(mcu, "DRV100,0")
    (frame,) = FrameDecoder(LAYOUT.inputs).feed(mcu.signal_frame())
    expected = FrameDecoder(LAYOUT.inputs).feed(FrameEncoder(LAYOUT.inputs).encode(mcu.input_values))[0]
    assert frame.raw == expected.raw
    assert mcu.input_values[:3] == (402.0, 1.0, 0.0)


def test_next_deadline_is_the_earliest_timer() -> None:
    mcu = make()
    assert mcu.next_deadline(0.0) == pytest.approx(0.005)
    mcu.tick(0.005)
    assert mcu.next_deadline(0.005) == pytest.approx(0.010)
    assert mcu.next_deadline(1.0) == 1.0  # already due
    slow = make(signal_period=1.0, telemetry_period=5.0, led_period=5.0)
    assert slow.next_deadline(0.0) == pytest.approx(1.0)
    watchdog_first = make(signal_period=1.0, telemetry_period=5.0, led_period=5.0, watchdog_timeout=0.3)
    assert watchdog_first.next_deadline(0.0) == pytest.approx(0.3)
    watchdog_first.tick(0.3)
    assert watchdog_first.next_deadline(0.3) == pytest.approx(1.0)  # tripped: no watchdog deadline


# -- checked mode ------------------------------------------------------------------


def test_checked_mode_round_trip_on_both_links() -> None:
    mcu = make(checked=True)
    to_mcu = LineEncoder(checked=True)
    from_mcu = LineDecoder(schema=SCHEMA, checked=True)
    stream = b"".join(to_mcu.encode(m) for m in (Heartbeat("5.25"), Drive(100, -100), Command("VERSION")))
    mcu.feed_command(stream, 0.0)
    mcu.feed_signal(sensor_frame(FrameEncoder(LAYOUT.outputs, checked=True)), 0.0)
    mcu.tick(0.1)
    messages = from_mcu.feed(mcu.take_command_output())
    assert from_mcu.stats.dropped_total == 0 and from_mcu.stats.lost == 0
    assert messages[:2] == [Heartbeat("5.25"), Command("VERSION hil-virtual-mcu 0.1.0")]
    tl1, tl2 = messages[2:]
    assert isinstance(tl1, Telemetry) and tl1.values == (-100.0, 100.0)
    assert isinstance(tl2, Telemetry) and tl2.values[0] == 123.4 and tl2.values[6] == 1.0

    decoder = FrameDecoder(LAYOUT.inputs, checked=True)
    frames = decoder.feed(mcu.take_signal_output() + mcu.signal_frame())
    assert len(frames) == 2 and decoder.stats.bad_crc == 0 and decoder.stats.lost == 0
    assert frames[-1].values[:3] == (402.0, 1.0, 0.0)  # checked mode round-trips exactly
    assert mcu.sensor("ultrasonic", "distance") == pytest.approx(123.4, abs=0.01)


def test_checked_mode_drops_plain_and_corrupted_input() -> None:
    mcu = make(checked=True)
    mcu.feed_command(b"DRV100,100\n", 0.0)
    line = bytearray(LineEncoder(checked=True).encode(Drive(100, 100)))
    line[4] ^= 0x01
    mcu.feed_command(bytes(line), 0.0)
    assert mcu.motor_commands == (0, 0)
    assert mcu.command_stats.dropped["bad_check"] == 2
    frame = bytearray(sensor_frame(FrameEncoder(LAYOUT.outputs, checked=True)))
    frame[4] ^= 0x10  # a value byte: the ids still line up, the CRC does not
    mcu.feed_signal(bytes(frame), 0.0)
    assert mcu.signal_stats.bad_crc == 1 and mcu.last_signal_at is None


# -- robustness --------------------------------------------------------------------


def test_garbage_on_both_links_is_counted_and_later_input_still_works() -> None:
    mcu = make()
    mcu.feed_command(b"\xff\xfe\x00garbage\nDRV1,2,3\nXYZ\n\n" + b"A" * 300 + b"\n", 0.0)
    counters = mcu.counters()
    assert counters["command_dropped.not_ascii"] == 1
    assert counters["command_dropped.bad_arity"] == 1
    assert counters["command_dropped.unknown_id"] == 1
    assert counters["command_dropped.empty"] == 1
    assert counters["command_dropped.too_long"] == 1
    assert send(mcu, "HBB,9") == ["HBB,9"]

    mcu.feed_signal(b"\x01\x02\xff\x07\x07\x07" + bytes(range(256)), 0.0)
    assert mcu.signal_stats.skipped_bytes > 0 and mcu.signal_stats.bad_ids > 0
    assert mcu.last_signal_at is None
    mcu.feed_signal(sensor_frame(FrameEncoder(LAYOUT.outputs)), 1.0)
    assert mcu.last_signal_at == 1.0
    assert mcu.sensor("bumper_left", "pressed") == 1.0


def test_an_echo_too_long_to_send_is_counted_not_raised() -> None:
    mcu = make()
    # 128 bytes is the longest line received; its echo gains the comma after the id.
    mcu.feed_command(b"HBB" + b"1" * 125 + b"\n", 0.0)
    assert mcu.take_command_output() == b""
    assert mcu.stats.unsendable == 1


VALID_LINES = [
    b"DRV100,-100\n",
    b"DRV300,0\n",
    b"HBB,1.5\n",
    b"COM,STOP\n",
    b"COM,GO\n",
    b"COM,RESET\n",
    b"COM,VERSION\n",
    b"COM,FOO\n",
    b"ARM1,2\n",
]


@settings(deadline=None, derandomize=True, max_examples=300)
@given(
    chunks=st.lists(st.one_of(st.binary(max_size=200), st.sampled_from(VALID_LINES)), max_size=12),
    steps=st.lists(st.floats(0.0, 1.0), min_size=12, max_size=12),
    checked=st.booleans(),
)
def test_arbitrary_bytes_on_the_command_link_never_raise(
    chunks: list[bytes], steps: list[float], checked: bool
) -> None:
    mcu = make(checked=checked)
    now = 0.0
    for chunk, step in zip(chunks, steps, strict=False):
        now += step
        mcu.feed_command(chunk, now)
        mcu.tick(now)
        assert all(abs(value) <= 255 for value in mcu.motor_commands)
    # Whatever it answered, the brain's decoder takes every line of it.
    decoder = LineDecoder(schema=SCHEMA, checked=checked)
    decoder.feed(mcu.take_command_output())
    assert decoder.stats.dropped_total == 0


@settings(deadline=None, derandomize=True, max_examples=200)
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes_on_the_signal_link_never_raise(data: bytes) -> None:
    mcu = make()
    mcu.feed_signal(data, 0.0)
    mcu.tick(0.1)


# -- configuration -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"max_command": 0}, "max_command 0 is outside 1..32767"),
        ({"max_command": 40000}, "max_command 40000 is outside 1..32767"),
        ({"max_command": True}, "max_command must be an integer"),
        ({"telemetry_period": 0.0}, "telemetry_period must be positive"),
        ({"watchdog_timeout": float("nan")}, "watchdog_timeout must be a finite number"),
        ({"signal_period": -1.0}, "signal_period must be positive"),
        ({"name": "two words"}, "name 'two words'"),
    ],
)
def test_bad_settings_raise_naming_them(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(HilMcuError, match=message):
        replace(DEFAULT, **changes)


def layout_without(device: str) -> SignalLayout:
    devices = load_device_set(CONFIG / "demo_robot_devices.yaml", LIBRARY)
    return SignalLayout([d for d in devices if d.name != device])


def test_layout_without_a_motor_is_refused() -> None:
    with pytest.raises(HilMcuError, match=r"the signal layout has no INPUT signal of motor_right"):
        VirtualMcu(McuConfig(layout=layout_without("motor_right"), schema=SCHEMA))


def test_schema_field_without_a_source_is_refused() -> None:
    schema = TelemetrySchema({"TL1": ("right", "left"), "TL3": ("battery_v",)})
    with pytest.raises(HilMcuError, match="TL3: field 'battery_v' has no source"):
        VirtualMcu(McuConfig(layout=LAYOUT, schema=schema))


def test_schema_field_whose_device_is_missing_is_refused() -> None:
    with pytest.raises(
        HilMcuError, match=r"'heading_deg' has no source in this robot's devices \(known: left"
    ):
        VirtualMcu(McuConfig(layout=layout_without("compass"), schema=SCHEMA))


def test_core_does_not_import_rclpy() -> None:
    code = "import sys, hil_mcu.core.virtual_mcu; sys.exit('rclpy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False, timeout=60).returncode == 0


# --- any robot profile whose wheels' drivers it can drive -----------------------------------

#: Driver type, its left and right pins (a Mega has room for all), ties, then the inputs a
#: DRV 255 (full forward) on the left wheel and a DRV -128 (half back) on the right give.
DRIVER_PROFILES = [
    (
        "l298n",
        ({"ena": 5, "in1": 22, "in2": 23}, {"ena": 6, "in1": 24, "in2": 25}),
        {},
        ({"enable": 1024, "a": 1024, "b": 0}, {"enable": 514, "a": 0, "b": 1024}),
    ),
    (
        "l298n",  # ENA jumpered high: PWM on IN1/IN2 (ROSArduinoBridge's wiring)
        ({"in1": 5, "in2": 6}, {"in1": 9, "in2": 10}),
        {"ena": "high"},
        ({"a": 1024, "b": 0}, {"a": 0, "b": 514}),
    ),
    (
        "tb6612fng",
        ({"pwma": 5, "ain1": 22, "ain2": 23, "stby": 26}, {"pwma": 6, "ain1": 24, "ain2": 25, "stby": 27}),
        {},
        ({"pwm": 1024, "in1": 1, "in2": 0, "stby": 1}, {"pwm": 514, "in1": 0, "in2": 1, "stby": 1}),
    ),
    (
        "drv8833",
        ({"in1": 5, "in2": 6}, {"in1": 9, "in2": 10}),
        {},
        ({"in1": 1024, "in2": 0}, {"in1": 0, "in2": 514}),
    ),
    ("l9110s", ({"ia": 5, "ib": 6}, {"ia": 9, "ib": 10}), {}, ({"ia": 1024, "ib": 0}, {"ia": 0, "ib": 514})),
    (
        "pwm_dir_driver",
        ({"pwm": 5, "dir": 22}, {"pwm": 6, "dir": 23}),
        {},
        ({"pwm": 1024, "dir": 0}, {"pwm": 514, "dir": 1}),
    ),
    (
        "cr_servo_wheel",
        ({"signal": 22}, {"signal": 23}),
        {},
        ({"pulse_us": 2000}, {"pulse_us": 1500 - 500 * 128 / 255}),
    ),
]


def robot_folder(tmp_path: Path, devices: list[dict[str, Any]], **top: Any) -> Path:
    """A robot folder: a Mega with ``devices`` and a bumper, a sketch folder of one tab."""
    (tmp_path / "fw").mkdir()
    (tmp_path / "fw" / "fw.ino").write_text("void setup() {}\nvoid loop() {}\n")
    profile = {
        "name": "test",
        "board": "mega2560",
        "firmware": {"sketch": "fw"},
        "serial": [{"uart": 0, "baud": 38400, "role": "command"}],
        "brain": "control_loop",
        "body": {"wheel_radius": 0.033, "track": 0.14, "mass": 0.8, "footprint": {"radius": 0.09}},
        "devices": [*devices, {"name": "bumper", "type": "limit_switch", "pins": {"pressed": 2}}],
        **top,
    }
    (tmp_path / "robot.yaml").write_text(yaml.safe_dump(profile))
    return tmp_path


@pytest.mark.parametrize(
    ("driver", "pins", "tie", "expected"), DRIVER_PROFILES, ids=[c[0] for c in DRIVER_PROFILES]
)
def test_drv_drives_each_wheel_through_its_driver_whatever_its_type(
    tmp_path: Path, driver: str, pins: tuple[dict[str, int], ...], tie: dict[str, str], expected: Any
) -> None:
    devices = [
        {
            "name": f"motor_{side}",
            "type": driver,
            "pins": wiring,
            "params": {"wheel": side},
            **({"tie": tie} if tie else {}),
        }
        for side, wiring in zip(("left", "right"), pins, strict=True)
    ]
    profile = load_profile(robot_folder(tmp_path, devices), library=LIBRARY)
    mcu = make(
        McuConfig(
            layout=profile_layout(profile),
            schema=profile_telemetry(profile),
            drivers=profile_drivers(profile),
        )
    )
    send(mcu, "HBB,1", "DRV255,-128")
    for side, inputs in zip(("left", "right"), expected, strict=True):
        got = {name: mcu.pin(f"motor_{side}", name) for name in inputs}
        assert got == {name: int(value) for name, value in inputs.items()}, side


def test_telemetry_lists_name_a_devices_signal(tmp_path: Path) -> None:
    devices = [
        {
            "name": f"motor_{side}",
            "type": "l298n",
            "pins": {"ena": pwm, "in1": a, "in2": b},
            "params": {"wheel": side},
        }
        for side, (pwm, a, b) in (("left", (5, 22, 23)), ("right", (6, 24, 25)))
    ]
    devices.append({"name": "floor", "type": "line_sensor_analog", "pins": {"ao": "A0"}, "pose": {"x": 0.05}})
    folder = robot_folder(
        tmp_path, devices, telemetry={"TL1": ["right", "left"], "TL2": ["floor", "floor_reading"]}
    )
    profile = load_profile(folder, library=LIBRARY)
    layout = profile_layout(profile)
    mcu = make(McuConfig(layout=layout, schema=profile_telemetry(profile), drivers=profile_drivers(profile)))
    encoder = FrameEncoder(layout.outputs)
    mcu.feed_signal(
        encoder.encode([612.4 if slot.device == "floor" else 0.0 for slot in layout.outputs]), 0.0
    )
    mcu.tick(0.1)
    (line,) = telemetry(lines(mcu.take_command_output()), "TL2")
    by_name, by_signal = line[3:].split(",")
    assert by_name == by_signal and abs(int(by_name) - 612) <= 1  # a whole count: the plain codec is lossy


def test_a_profile_it_cannot_drive_is_refused_naming_what_it_lacks(tmp_path: Path) -> None:
    devices = [
        {
            "name": f"motor_{side}",
            "type": "l298n",
            "pins": {"ena": pwm, "in1": a, "in2": b},
            "params": {"wheel": side},
        }
        for side, (pwm, a, b) in (("left", (5, 22, 23)), ("right", (6, 24, 25)))
    ]
    folder = robot_folder(tmp_path, devices, telemetry={"TL2": ["heading_deg"]})
    profile = load_profile(folder, library=LIBRARY)
    config = McuConfig(
        layout=profile_layout(profile), schema=profile_telemetry(profile), drivers=profile_drivers(profile)
    )
    with pytest.raises(HilMcuError, match=r"TL2: field 'heading_deg' has no source in this robot's devices"):
        make(config)
    with pytest.raises(HilMcuError, match=r"motor_left: it drives no stepper \(it drives: l298n, tb6612fng"):
        make(
            config,
            drivers=(WheelDriver("motor_left", "stepper"), config.drivers[1]),
            schema=TelemetrySchema({}),
        )
