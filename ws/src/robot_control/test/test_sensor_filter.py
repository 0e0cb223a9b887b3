"""The sensor filter: readings a robot cannot have made do not reach the behaviours."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from robot_control.core.sensor_filter import PLAUSIBLE, SensorFilter
from robot_control.errors import RobotControlError

REPORT = {
    "ultrasonic_cm": 120.0,
    "ir_adc": 300.0,
    "light_0": 10.0,
    "light_1": 20.0,
    "light_2": 30.0,
    "light_3": 40.0,
    "bumper_left": 0.0,
    "bumper_right": 0.0,
    "heading_deg": 90.0,
}


def test_a_plausible_report_passes_unchanged() -> None:
    sensor_filter = SensorFilter()
    assert sensor_filter.filter(REPORT, turned_deg=0.0) == REPORT
    assert not sensor_filter.rejected


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ultrasonic_cm", 4000.0),
        ("ir_adc", -3.0),
        ("light_2", 2023.0),
        ("heading_deg", 360.0),
        ("ir_adc", math.nan),
    ],
)
def test_an_out_of_range_reading_keeps_the_last_accepted_one_and_is_counted(name: str, value: float) -> None:
    sensor_filter = SensorFilter()
    sensor_filter.filter(REPORT, turned_deg=0.0)
    got = sensor_filter.filter(REPORT | {name: value}, turned_deg=0.0)
    assert got[name] == REPORT[name]
    assert sensor_filter.rejected[f"{name} out of range"] == 1


def test_an_out_of_range_reading_before_any_good_one_is_left_out() -> None:
    sensor_filter = SensorFilter()
    assert "ir_adc" not in sensor_filter.filter(REPORT | {"ir_adc": 5000.0}, turned_deg=0.0)


def test_a_heading_jump_the_robot_did_not_turn_is_rejected() -> None:
    sensor_filter = SensorFilter()
    sensor_filter.filter(REPORT, turned_deg=0.0)
    # 90 -> 170: a digit damaged by one bit ("90" -> "170" is not, but 8 -> 16 in tens is).
    assert sensor_filter.filter(REPORT | {"heading_deg": 170.0}, turned_deg=0.0)["heading_deg"] == 90.0
    assert sensor_filter.rejected["heading_deg jump"] == 1
    assert sensor_filter.filter(REPORT | {"heading_deg": 92.0}, turned_deg=0.0)["heading_deg"] == 92.0


def test_a_heading_that_follows_the_odometers_turn_is_taken() -> None:
    sensor_filter = SensorFilter()
    heading = 350.0
    sensor_filter.filter(REPORT | {"heading_deg": heading}, turned_deg=0.0)
    for k in range(1, 20):  # a spin across north, 40 degrees a report
        heading = (350.0 + 40.0 * k) % 360.0
        got = sensor_filter.filter(REPORT | {"heading_deg": heading}, turned_deg=40.0 * k)
        assert got["heading_deg"] == heading
    assert not sensor_filter.rejected


def test_a_heading_that_stays_away_is_taken_after_resync_after_reports() -> None:
    """The robot was pushed round: the compass is right, the prediction wrong."""
    sensor_filter = SensorFilter(resync_after=3)
    sensor_filter.filter(REPORT, turned_deg=0.0)
    got = [
        sensor_filter.filter(REPORT | {"heading_deg": 200.0}, turned_deg=0.0)["heading_deg"] for _ in range(4)
    ]
    assert got == [90.0, 90.0, 200.0, 200.0]


def test_a_bumper_closes_on_the_second_report_and_opens_at_once() -> None:
    sensor_filter = SensorFilter(press_reports=2)
    pressed = REPORT | {"bumper_left": 1.0}
    got = [
        sensor_filter.filter(report, turned_deg=0.0)["bumper_left"] for report in (pressed, pressed, REPORT)
    ]
    assert got == [0.0, 1.0, 0.0]
    assert sensor_filter.rejected["bumper_left not yet confirmed"] == 1


def test_a_single_report_of_a_closed_bumper_never_reaches_the_behaviour() -> None:
    sensor_filter = SensorFilter()
    for k in range(10):
        report = REPORT | ({"bumper_right": 1.0} if k % 2 else {})
        assert sensor_filter.filter(report, turned_deg=0.0)["bumper_right"] == 0.0


@given(st.dictionaries(st.sampled_from(sorted(PLAUSIBLE)), st.floats(allow_nan=True), max_size=9))
def test_whatever_arrives_what_leaves_is_in_range(damaged: dict[str, float]) -> None:
    sensor_filter = SensorFilter()
    sensor_filter.filter(REPORT, turned_deg=0.0)
    got = sensor_filter.filter(REPORT | damaged, turned_deg=0.0)
    for name, value in got.items():
        low, high = PLAUSIBLE[name]
        assert low <= value <= high


def test_bad_settings_are_clear_errors() -> None:
    with pytest.raises(RobotControlError, match="heading_gate_deg"):
        SensorFilter(heading_gate_deg=200.0)
    with pytest.raises(RobotControlError, match="press_reports"):
        SensorFilter(press_reports=0)
