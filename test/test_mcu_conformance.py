"""One behaviour, every simulated MCU: the virtual MCU and the compiled firmware in simavr.

The same tests run against both over real ptys (pyserial on the command link, the
signal link decoded as the bridge decodes it), in simulated time: the shared
conformance vectors, the heartbeat watchdog as the pins show it, and the sensor
path from a signal frame to TL2. A firmware built without its watchdog must fail
the watchdog test: that is what shows the test exercises the firmware itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hil_bridge.core.defaults import telemetry_schema
from support import mcu_vectors
from support.mcu_links import MCUS, PtyMcu, SimavrPtyMcu, layout

TL2_FIELDS = tuple(telemetry_schema().lists["TL2"])


@pytest.fixture(params=sorted(MCUS))
def make_mcu(request: pytest.FixtureRequest) -> Iterator[Callable[..., PtyMcu]]:
    made: list[PtyMcu] = []

    def make(**options: Any) -> PtyMcu:
        mcu = MCUS[request.param](**options)
        made.append(mcu)
        return mcu

    yield make
    for mcu in made:
        mcu.close()


@pytest.mark.parametrize("case", mcu_vectors.CASES, ids=lambda c: c["name"])
def test_behaviour_vector(make_mcu: Callable[..., PtyMcu], case: dict[str, Any]) -> None:
    mcu_vectors.check_case(make_mcu(), case)


def test_heartbeat_loss_stops_the_motors_and_a_heartbeat_restores_them(
    make_mcu: Callable[..., PtyMcu],
) -> None:
    mcu_vectors.check_heartbeat_loss(make_mcu())


def test_firmware_without_its_watchdog_fails_the_heartbeat_loss_test() -> None:
    mcu = SimavrPtyMcu(MCU_WATCHDOG_MS=0)
    try:
        with pytest.raises(AssertionError, match="no heartbeat-loss error"):
            mcu_vectors.check_heartbeat_loss(mcu)
    finally:
        mcu.close()


def test_power_on_state_is_motors_off_and_telemetry_at_the_sensor_defaults(
    make_mcu: Callable[..., PtyMcu],
) -> None:
    mcu = make_mcu()
    lines = mcu.wait(0.25)
    assert mcu.motor_enables() == (0, 0)
    # Defaults: nothing in range (200 cm), IR 0.45 V = ADC 92, dark, bumpers open, north.
    assert [line for line in lines if line.startswith("TL2")][-1] == "TL2200,92,0,0,0,0,0,0,0"


def _on_the_wire(device: str, signal: str, value: float) -> float:
    """The value after the signal link (plain mode maps integers with truncation)."""
    slot = layout().slot(device, signal)
    return slot.from_raw(slot.to_raw(value))


@pytest.mark.parametrize(
    "values",
    [
        {
            ("ultrasonic", "distance"): 44.3,
            ("ir", "voltage"): 1.5,
            ("light_0", "reading"): 1000,
            ("light_1", "reading"): 512,
            ("light_2", "reading"): 1,
            ("light_3", "reading"): 1023,
            ("bumper_left", "pressed"): 1,
            ("bumper_right", "pressed"): 0,
            ("compass", "heading"): 91.5,
        },
        {("ultrasonic", "distance"): 12.0, ("bumper_right", "pressed"): 1, ("compass", "heading"): 270.0},
    ],
    ids=["all_sensors", "bumper_right_and_west"],
)
def test_sensor_frames_reach_tl2_as_the_firmware_reads_them(
    make_mcu: Callable[..., PtyMcu], values: dict[tuple[str, str], float]
) -> None:
    mcu = make_mcu()
    mcu.exchange(["HBB,0"])
    lines: list[str] = []
    # Frames every signal period for 0.3 s: the firmware pings every 60 ms, reads
    # the ADC every 20 ms and the compass every 100 ms.
    for _ in range(60):
        mcu.send_sensors(values)
        lines += mcu.wait(0.005)
    got = dict(
        zip(
            TL2_FIELDS,
            (float(v) for v in [x for x in lines if x.startswith("TL2")][-1][3:].split(",")),
            strict=True,
        )
    )
    sent = {
        f"{d}.{s}": _on_the_wire(d, s, values.get((d, s), layout().slot(d, s).spec.default))
        for d, s in (slot.key for slot in layout().outputs)
    }
    expected = {
        "ultrasonic_cm": sent["ultrasonic.distance"],
        "ir_adc": sent["ir.voltage"] / 5.0 * 1023,
        **{f"light_{i}": sent[f"light_{i}.reading"] for i in range(4)},
        "bumper_left": sent["bumper_left.pressed"],
        "bumper_right": sent["bumper_right.pressed"],
        "heading_deg": sent["compass.heading"],
    }
    # The echo is timed to 4 us by micros() (0.1 cm); the ADC truncates where the
    # virtual MCU rounds; the compass registers hold 1/1000 of the field.
    tolerance = {"ultrasonic_cm": 0.1, "ir_adc": 1.0, "heading_deg": 0.2}
    for name, want in expected.items():
        assert abs(got[name] - want) <= tolerance.get(name, 0.0) + 0.051, (name, got[name], want)


# --- the radio relay, the same cases for both MCUs -------------------------------------------


@pytest.mark.parametrize("checked", [False, True], ids=["plain", "checked"])
def test_rtx_from_the_command_link_reaches_the_radio_link_unchanged(
    make_mcu: Callable[..., PtyMcu], checked: bool
) -> None:
    mcu_vectors.check_rtx_relayed(make_mcu(radio=True, checked=checked))


@pytest.mark.parametrize("checked", [False, True], ids=["plain", "checked"])
def test_rrx_and_rst_from_the_radio_link_reach_the_command_link_unchanged(
    make_mcu: Callable[..., PtyMcu], checked: bool
) -> None:
    mcu_vectors.check_radio_lines_relayed(make_mcu(radio=True, checked=checked))


@pytest.mark.parametrize("checked", [False, True], ids=["plain", "checked"])
def test_unknown_ids_and_broken_lines_from_the_radio_are_dropped(
    make_mcu: Callable[..., PtyMcu], checked: bool
) -> None:
    mcu_vectors.check_radio_junk_dropped(make_mcu(radio=True, checked=checked))


def test_an_mcu_without_a_radio_link_answers_rtx_with_no_radio(make_mcu: Callable[..., PtyMcu]) -> None:
    mcu_vectors.check_no_radio_refuses_rtx(make_mcu())


def test_three_seconds_without_rst_send_lost_once_and_the_next_rst_ends_it(
    make_mcu: Callable[..., PtyMcu],
) -> None:
    mcu_vectors.check_radio_lost_and_back(make_mcu(radio=True))


def test_relaying_leaves_telemetry_motors_and_the_watchdog_alone(make_mcu: Callable[..., PtyMcu]) -> None:
    mcu_vectors.check_relay_leaves_telemetry_and_watchdog_alone(make_mcu(radio=True))


def test_a_flooding_radio_module_starves_neither_link(make_mcu: Callable[..., PtyMcu]) -> None:
    mcu_vectors.check_radio_flood_starves_nothing(make_mcu(radio=True))
