"""The firmware behaviour core (mcu_core.c, host build) against the shared vectors and the virtual MCU."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_bridge.core.signal_protocol import SignalLayout, rounding_map
from hil_devices.core.devices import load_device_set
from hil_devices.core.library import load_device_library
from hil_devices.core.telemetry import TelemetrySchema
from hil_mcu.core.virtual_mcu import McuConfig, VirtualMcu
from support import mcu_vectors
from support.firmware_host import HostMcu

CONFIG = Path(__file__).resolve().parents[2] / "ws" / "src" / "hil_devices" / "config"
LAYOUT = SignalLayout(
    load_device_set(CONFIG / "demo_robot_devices.yaml", load_device_library([CONFIG / "devices"]))
)
SCHEMA = TelemetrySchema.from_yaml(CONFIG / "telemetry.yaml")
TELEMETRY_MS = 100
WATCHDOG_MS = 1500


def lines(data: bytes) -> list[str]:
    return data.decode("ascii").splitlines()


class CoreUnderTest:
    """The C core behind the shared vector runner's interface."""

    def __init__(self) -> None:
        self.mcu = HostMcu()

    def exchange(self, texts: list[str]) -> list[str]:
        self.mcu.feed("".join(f"{t}\n" for t in texts).encode())
        return lines(self.mcu.take())

    def after_telemetry_period(self) -> list[str]:
        self.mcu.tick(self.mcu.now_ms + TELEMETRY_MS)
        return lines(self.mcu.take())


@pytest.mark.parametrize("case", mcu_vectors.CASES, ids=lambda c: c["name"])
def test_behaviour_vector(case: dict[str, Any]) -> None:
    mcu_vectors.check_case(CoreUnderTest(), case)


def test_telemetry_lists_follow_telemetry_yaml() -> None:
    mcu = HostMcu()
    values = {
        "ultrasonic_cm": 1234,  # tenths
        "ir_adc": 409,
        "light_0": 100,
        "light_1": 200,
        "light_2": 300,
        "light_3": 1023,
        "bumper_left": 1,
        "bumper_right": 0,
        "heading_deg": 903,  # tenths
    }
    for name, value in values.items():
        mcu.set_tl2(name, value)
    mcu.feed(b"HBB,0\nDRV10,-20\n")
    mcu.tick(TELEMETRY_MS)
    sent = lines(mcu.take())
    assert "TL1-20,10" in sent
    assert "TL2123.4,409,100,200,300,1023,1,0,90.3" in sent
    assert list(SCHEMA.lists["TL2"]) == list(values)


def test_watchdog_stops_the_motors_once_and_refuses_drive_until_a_heartbeat() -> None:
    mcu = HostMcu()
    mcu.feed(b"HBB,0\nDRV100,100\n")
    mcu.take()
    mcu.tick(WATCHDOG_MS - 1)
    assert mcu.state()["left"] == 100
    mcu.tick(WATCHDOG_MS)
    mcu.tick(WATCHDOG_MS + 200)
    replies = [line for line in lines(mcu.take()) if not line.startswith("TL")]
    assert replies == ["ERR,heartbeat lost"]
    assert (mcu.state()["left"], mcu.state()["right"], mcu.state()["heartbeat_lost"]) == (0, 0, 1)
    mcu.feed(b"DRV50,50\n", now_ms=WATCHDOG_MS + 300)
    assert mcu.state()["left"] == 0
    assert mcu.counters()["drv_rejected.heartbeat_lost"] == 1
    mcu.feed(b"HBB,2\nDRV50,50\n", now_ms=WATCHDOG_MS + 400)
    assert mcu.state()["left"] == 50


def test_a_fault_build_without_watchdog_keeps_driving() -> None:
    mcu = HostMcu()
    mcu.set_watchdog(0)
    mcu.feed(b"HBB,0\nDRV100,100\n")
    mcu.tick(10 * WATCHDOG_MS)
    assert mcu.state()["left"] == 100
    assert mcu.counters()["watchdog_trips"] == 0


def test_led_blinks_on_its_period() -> None:
    mcu = HostMcu()
    states = []
    for t in range(250, 2250, 250):
        mcu.feed(b"HBB,0\n", now_ms=t)
        mcu.tick(t)
        states.append(mcu.state()["led_on"])
    assert states == [0, 1, 1, 0, 0, 1, 1, 0]


@pytest.mark.parametrize("command", [0, 1, 100, 127, 128, 255, -100, -255])
def test_enable_duty_is_the_virtual_mcus_rounding(command: int) -> None:
    mcu = HostMcu()
    for full in (255, 1024):
        assert mcu.enable_duty(command, full) == rounding_map(abs(command), 0, 255, 0, full)


def test_a_full_output_queue_drops_lines_and_counts_them() -> None:
    mcu = HostMcu()
    mcu.feed(b"".join(b"HBB,%d\n" % i for i in range(100)))
    assert mcu.counters()["out_overflow"] > 0
    assert len(mcu.take()) <= 256


# --- property: the C core behaves as the virtual MCU ----------------------------------------

LINES = st.sampled_from(
    ["HBB,1", "HBB1.5", "DRV100,-50", "DRV300,0", "DRV-255,255", "DRV,1,2", "COM,STOP", "COM,GO", "COM,RESET",
     "COM,FOO", "COMGO", "ARM1,2", "TL11,2", "ERR,x", "DRVa,b", "", "XYZ", "COM,VERSION"]
)  # fmt: skip
STEPS = st.lists(st.tuples(st.lists(LINES, max_size=3), st.integers(0, 900)), max_size=25)


def comparable(output: list[str]) -> list[str]:
    # TL2 carries the sensors, which the two read from different places; VERSION names
    # the implementation.
    return [
        line.split(" ")[0] if line.startswith("COM,VERSION") else line
        for line in output
        if not line.startswith("TL2")
    ]


#: The virtual MCU runs on seconds, the core on milliseconds. On a clock of 1/1024 s
#: ticks every time and period below is exact in binary floating point, so the two
#: compare deadlines exactly and any difference is a difference of behaviour.
TICK = 1 / 1024


@settings(max_examples=200, deadline=None)
@given(STEPS)
def test_core_answers_exactly_as_the_virtual_mcu(steps: list[tuple[list[str], int]]) -> None:
    c = HostMcu()
    config = McuConfig(
        layout=LAYOUT,
        schema=SCHEMA,
        telemetry_period=TELEMETRY_MS * TICK,
        led_period=500 * TICK,
        watchdog_timeout=WATCHDOG_MS * TICK,
        signal_period=5 * TICK,
    )
    python = VirtualMcu(config, start=0.0)
    now = 0
    for texts, gap in steps:
        now += gap
        data = "".join(f"{t}\n" for t in texts).encode()
        c.feed(data, now_ms=now)
        c.tick(now)
        python.feed_command(data, now * TICK)
        python.tick(now * TICK)
        assert comparable(lines(c.take())) == comparable(lines(python.take_command_output()))
        state = c.state()
        assert (state["left"], state["right"]) == python.motor_commands
        assert bool(state["led_on"]) == python.led_on
