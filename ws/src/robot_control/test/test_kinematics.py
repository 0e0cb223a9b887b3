"""Differential-drive kinematics: twist -> commands, radius-keeping saturation, the inverse map."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robot_control.core.kinematics import DriveGeometry, commands_to_twist, twist_to_commands
from robot_control.errors import RobotControlError

GEOMETRY = DriveGeometry()
SETTINGS = settings(deadline=None, derandomize=True, max_examples=500)
#: Ground speed of one command count with the default geometry (m/s).
COUNT = GEOMETRY.max_wheel_speed * GEOMETRY.wheel_radius / GEOMETRY.max_command
#: Slack for float arithmetic on top of the half count of rounding.
EPS = 1e-9

geometries = st.builds(
    DriveGeometry,
    wheel_base=st.floats(0.05, 1.0),
    wheel_radius=st.floats(0.01, 0.2),
    max_wheel_speed=st.floats(1.0, 100.0),
    max_command=st.integers(1, 4095),
)
#: Finite speeds up to where this file's float oracle (ideal_commands) still fits a float, with
#: small values weighted in so that unsaturated twists are drawn often; the largest floats have
#: their own test below.
speeds = st.one_of(
    st.floats(min_value=-2.0, max_value=2.0),
    st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False),
)


def ideal_commands(linear: float, angular: float, geometry: DriveGeometry) -> tuple[float, float]:
    """Unrounded, unsaturated commands, computed from the wheel speeds as documented."""
    left_speed = (linear - angular * geometry.wheel_base / 2) / geometry.wheel_radius
    right_speed = (linear + angular * geometry.wheel_base / 2) / geometry.wheel_radius
    full = geometry.max_wheel_speed
    return left_speed / full * geometry.max_command, right_speed / full * geometry.max_command


def test_zero_twist_gives_zero_commands() -> None:
    assert twist_to_commands(0.0, 0.0, GEOMETRY) == (0, 0)


def test_straight_ahead_drives_both_wheels_equally() -> None:
    left, right = twist_to_commands(0.3, 0.0, GEOMETRY)
    assert left == right == round(0.3 / COUNT)


def test_full_wheel_speed_forward_is_full_command() -> None:
    top = GEOMETRY.max_wheel_speed * GEOMETRY.wheel_radius
    assert twist_to_commands(top, 0.0, GEOMETRY) == (255, 255)
    assert twist_to_commands(-top, 0.0, GEOMETRY) == (-255, -255)


@pytest.mark.parametrize("angular", [0.5, 2.0, 8.0])
def test_counter_clockwise_turn_in_place_runs_right_wheel_forward(angular: float) -> None:
    left, right = twist_to_commands(0.0, angular, GEOMETRY)
    assert right > 0
    assert left == -right


def test_turning_left_while_driving_makes_right_wheel_faster() -> None:
    left, right = twist_to_commands(0.2, 1.0, GEOMETRY)
    assert 0 < left < right
    expected_left, expected_right = ideal_commands(0.2, 1.0, GEOMETRY)
    assert (left, right) == (round(expected_left), round(expected_right))


def test_saturation_keeps_turn_radius_instead_of_clipping_one_wheel() -> None:
    # 1 m/s on a 0.5 m radius: both wheels beyond the top speed.
    left, right = twist_to_commands(1.0, 2.0, GEOMETRY)
    ideal_left, ideal_right = ideal_commands(1.0, 2.0, GEOMETRY)
    assert right == 255
    assert left == round(255 * ideal_left / ideal_right)
    linear, angular = commands_to_twist(left, right, GEOMETRY)
    assert linear / angular == pytest.approx(0.5, rel=0.01)


def test_saturated_pure_rotation_stays_a_pure_rotation() -> None:
    assert twist_to_commands(0.0, 1000.0, GEOMETRY) == (-255, 255)
    assert twist_to_commands(0.0, -1000.0, GEOMETRY) == (255, -255)


@pytest.mark.parametrize(
    ("linear", "angular"),
    [(math.nan, 0.0), (0.0, math.nan), (math.inf, 0.0), (0.0, -math.inf), (math.nan, math.inf)],
)
def test_non_finite_twist_gives_zero_commands(linear: float, angular: float) -> None:
    assert twist_to_commands(linear, angular, GEOMETRY) == (0, 0)


@pytest.mark.parametrize(
    ("linear", "angular", "expected"),
    [(1e308, 0.0, (255, 255)), (-1.7e308, 0.0, (-255, -255)), (0.0, 1.7e308, (-255, 255))],
)
def test_huge_finite_twist_saturates_instead_of_raising(
    linear: float, angular: float, expected: tuple[int, int]
) -> None:
    assert twist_to_commands(linear, angular, GEOMETRY) == expected


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("wheel_base", 0.0),
        ("wheel_base", -0.1),
        ("wheel_radius", math.nan),
        ("wheel_radius", 0.0),
        ("max_wheel_speed", math.inf),
        ("max_wheel_speed", -1.0),
        ("max_command", 0),
    ],
)
def test_bad_geometry_is_refused_naming_the_field(name: str, value: float) -> None:
    with pytest.raises(RobotControlError, match=name):
        DriveGeometry(**{name: value})


def test_commands_to_twist_inverts_known_commands() -> None:
    linear, angular = commands_to_twist(255, 255, GEOMETRY)
    assert linear == pytest.approx(GEOMETRY.max_wheel_speed * GEOMETRY.wheel_radius)
    assert angular == 0.0
    linear, angular = commands_to_twist(-100, 100, GEOMETRY)
    assert linear == 0.0
    assert angular == pytest.approx(2 * 100 * COUNT / GEOMETRY.wheel_base)


@SETTINGS
@given(linear=speeds, angular=speeds, geometry=geometries)
def test_commands_never_exceed_max_command(linear: float, angular: float, geometry: DriveGeometry) -> None:
    left, right = twist_to_commands(linear, angular, geometry)
    assert isinstance(left, int)
    assert isinstance(right, int)
    assert abs(left) <= geometry.max_command
    assert abs(right) <= geometry.max_command


@SETTINGS
@given(linear=speeds, angular=speeds, geometry=geometries)
def test_saturated_commands_keep_the_unsaturated_ratio(
    linear: float, angular: float, geometry: DriveGeometry
) -> None:
    ideal_left, ideal_right = ideal_commands(linear, angular, geometry)
    largest = max(abs(ideal_left), abs(ideal_right))
    left, right = twist_to_commands(linear, angular, geometry)
    if largest <= geometry.max_command:
        assert abs(left - ideal_left) <= 0.5 + EPS * max(1.0, largest)
        assert abs(right - ideal_right) <= 0.5 + EPS * max(1.0, largest)
        return
    # Saturated: both scaled by one factor, so the faster wheel runs at full command and
    # each command is the scaled ideal within rounding (the ratio left/right is kept).
    factor = geometry.max_command / largest
    assert max(abs(left), abs(right)) == geometry.max_command
    assert abs(left - ideal_left * factor) <= 0.5 + EPS * geometry.max_command
    assert abs(right - ideal_right * factor) <= 0.5 + EPS * geometry.max_command
    # Cross-multiplied ratio: left * ideal_right == right * ideal_left within rounding.
    slack = (0.5 + EPS * geometry.max_command) * (abs(ideal_left) + abs(ideal_right))
    assert abs(left * ideal_right - right * ideal_left) <= slack


@SETTINGS
@given(linear=speeds, angular=speeds, geometry=geometries)
def test_unsaturated_twist_round_trips_within_rounding(
    linear: float, angular: float, geometry: DriveGeometry
) -> None:
    ideal_left, ideal_right = ideal_commands(linear, angular, geometry)
    if max(abs(ideal_left), abs(ideal_right)) > geometry.max_command:
        return
    count = geometry.max_wheel_speed * geometry.wheel_radius / geometry.max_command
    back_linear, back_angular = commands_to_twist(*twist_to_commands(linear, angular, geometry), geometry)
    # Each wheel is off by at most half a count.
    assert abs(back_linear - linear) <= 0.5 * count + 1e-9
    assert abs(back_angular - angular) <= count / geometry.wheel_base + 1e-9


@SETTINGS
@given(st.data(), geometries)
def test_commands_in_range_round_trip_exactly(data: st.DataObject, geometry: DriveGeometry) -> None:
    commands = st.integers(-geometry.max_command, geometry.max_command)
    left, right = data.draw(commands), data.draw(commands)
    assert twist_to_commands(*commands_to_twist(left, right, geometry), geometry) == (left, right)
