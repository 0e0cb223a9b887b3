"""The odometer: commands through the wheels' lag, overridden by MCU reports that disagree."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from robot_control.core.kinematics import DriveGeometry, commands_to_twist, twist_to_commands
from robot_control.core.odometry import Odometer
from robot_control.errors import RobotControlError

GEOMETRY = DriveGeometry()
NO_LAG = replace(GEOMETRY, time_constant=0.0)
FORWARD = twist_to_commands(0.4, 0.0, GEOMETRY)
SPEED = commands_to_twist(*FORWARD, GEOMETRY)[0]


def drive(
    odometer: Odometer, commands: tuple[int, int], start: float, seconds: float, *, dt: float = 0.01
) -> float:
    """Command ``commands`` every ``dt`` (a loop's frames) for ``seconds``; returns the end time."""
    steps = round(seconds / dt)
    for k in range(steps):
        odometer.command(start + k * dt, *commands)
    odometer.advance(start + steps * dt)
    return start + steps * dt


def test_commands_alone_integrate_to_speed_times_time_without_lag() -> None:
    odometer = Odometer(geometry=NO_LAG)
    drive(odometer, FORWARD, 0.0, 2.0)
    assert odometer.distance_m == pytest.approx(2.0 * SPEED)
    assert odometer.turned_deg == pytest.approx(0.0)


def test_out_and_back_at_one_speed_ends_one_lag_out() -> None:
    """Going out the wheels start late; reversing they carry on: ``speed * time_constant``."""
    odometer = Odometer()
    end = drive(odometer, FORWARD, 0.0, 3.0)
    assert odometer.distance_m == pytest.approx(SPEED * (3.0 - GEOMETRY.time_constant), rel=1e-6)
    drive(odometer, (-FORWARD[0], -FORWARD[1]), end, 3.0)
    assert odometer.distance_m == pytest.approx(SPEED * GEOMETRY.time_constant, rel=1e-4)


def test_a_wheel_without_drive_coasts_to_a_stop_by_friction() -> None:
    """The L298 with its enable low: speed**2 / (2 * coast_decel) more, then nothing."""
    odometer = Odometer()
    end = drive(odometer, FORWARD, 0.0, 3.0)
    before = odometer.distance_m
    end = drive(odometer, (0, 0), end, 0.5)
    halfway = odometer.distance_m - before
    drive(odometer, (0, 0), end, 5.0)
    coast = odometer.distance_m - before
    assert coast == pytest.approx(SPEED**2 / (2 * GEOMETRY.coast_decel), rel=1e-3)
    assert 0.0 < halfway < coast


def test_lag_integration_is_exact_whatever_the_steps() -> None:
    coarse, fine = Odometer(), Odometer()
    drive(coarse, FORWARD, 0.0, 0.5, dt=0.25)
    drive(fine, FORWARD, 0.0, 0.5, dt=0.001)
    tau = GEOMETRY.time_constant
    expected = SPEED * (0.5 - tau * (1.0 - math.exp(-0.5 / tau)))
    assert coarse.distance_m == pytest.approx(expected)
    assert fine.distance_m == pytest.approx(expected)


def test_a_spin_to_the_left_lowers_the_heading() -> None:
    odometer = Odometer(geometry=NO_LAG)
    spin = twist_to_commands(0.0, 1.0, GEOMETRY)
    drive(odometer, spin, 0.0, 1.0)
    assert odometer.distance_m == pytest.approx(0.0, abs=1e-9)
    assert odometer.turned_deg == pytest.approx(-math.degrees(commands_to_twist(*spin, GEOMETRY)[1]))


def test_a_report_of_stopped_wheels_overrides_the_command_while_fresh() -> None:
    """The MCU's watchdog holds the wheels: the commands said drive, TL1 says zero."""
    odometer = Odometer(geometry=NO_LAG)
    for k in range(100):  # one second of frames, a report of (0, 0) every 0.1 s
        now = k * 0.01
        odometer.command(now, *FORWARD)
        if k % 10 == 0:
            odometer.report(now, 0, 0)
    odometer.advance(1.0)
    assert odometer.distance_m == pytest.approx(0.0, abs=1e-9)
    assert odometer.overrides == 10


def test_reports_that_match_a_recent_command_change_nothing() -> None:
    """TL1 lags a change by up to a period: the command's own time stands."""
    with_reports, without = Odometer(geometry=NO_LAG), Odometer(geometry=NO_LAG)
    for odometer in (with_reports, without):
        drive(odometer, (0, 0), 0.0, 1.0)
        odometer.command(1.0, *FORWARD)
    with_reports.report(1.05, 0, 0)  # sent just before the DRV arrived
    with_reports.report(1.15, *FORWARD)
    for odometer in (with_reports, without):
        odometer.advance(2.0)
    assert with_reports.distance_m == pytest.approx(without.distance_m)
    assert with_reports.overrides == 0


def test_missing_reports_leave_the_commands_to_carry_on() -> None:
    odometer = Odometer(geometry=NO_LAG)
    odometer.report(0.0, *FORWARD)
    drive(odometer, FORWARD, 0.0, 3.0)
    assert odometer.distance_m == pytest.approx(3.0 * SPEED)


def test_a_report_beyond_max_command_is_clipped_and_counted() -> None:
    odometer = Odometer(geometry=NO_LAG)
    odometer.command(0.0, 0, 0)
    odometer.report(0.0, 1500, 1500)
    odometer.advance(0.1)
    top = commands_to_twist(GEOMETRY.max_command, GEOMETRY.max_command, GEOMETRY)[0]
    assert odometer.distance_m == pytest.approx(0.1 * top)
    assert odometer.clipped == 1


@given(
    st.lists(
        st.tuples(st.integers(-255, 255), st.integers(-255, 255), st.floats(0.001, 0.5), st.booleans()),
        max_size=40,
    )
)
def test_distance_is_finite_and_bounded_by_top_speed(steps: list[tuple[int, int, float, bool]]) -> None:
    odometer = Odometer()
    now = 0.0
    top = commands_to_twist(GEOMETRY.max_command, GEOMETRY.max_command, GEOMETRY)[0]
    for left, right, dt, is_report in steps:
        (odometer.report if is_report else odometer.command)(now, left, right)
        now += dt
        odometer.advance(now)
        assert math.isfinite(odometer.distance_m) and math.isfinite(odometer.turned_deg)
        assert abs(odometer.distance_m) <= top * now + 1e-9


def test_bad_settings_are_clear_errors() -> None:
    with pytest.raises(RobotControlError, match="fresh_s"):
        Odometer(fresh_s=0.0)
    with pytest.raises(RobotControlError, match="time_constant"):
        DriveGeometry(time_constant=-1.0)
    with pytest.raises(RobotControlError, match="coast_decel"):
        DriveGeometry(coast_decel=math.nan)
