"""Robots without an MCU driven from cmd_vel (hil_sim.core.cmd_drive)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hil_sim.core.cmd_drive import motor_pins, twist_pins, wheel_speeds
from hil_sim.core.motor import ENABLE_FULL, MotorParams
from hil_sim.core.simulation import RobotParams

ROBOT = RobotParams()
MOTOR = ROBOT.motor


def test_a_straight_twist_turns_both_wheels_alike_and_a_spin_turns_them_apart() -> None:
    left, right = wheel_speeds(0.1, 0.0, wheel_radius=0.05, wheel_base=0.2)
    assert left == right == pytest.approx(2.0)
    left, right = wheel_speeds(0.0, 1.0, wheel_radius=0.05, wheel_base=0.2)
    assert left == pytest.approx(-2.0) and right == pytest.approx(2.0)


def test_no_twist_lets_the_motors_coast() -> None:
    assert twist_pins(0.0, 0.0, wheel_radius=0.03, wheel_base=0.1, motor=MOTOR) == [(0.0, 0.0, 0.0)] * 2


@pytest.mark.parametrize(("speed", "direction"), [(3.0, (1.0, 0.0)), (-3.0, (0.0, 1.0))])
def test_the_direction_pins_follow_the_sign(speed: float, direction: tuple[float, float]) -> None:
    enable, a, b = motor_pins(speed, MOTOR)
    assert 0 < enable < ENABLE_FULL
    assert (a, b) == direction


def test_a_speed_past_the_supply_is_clipped_at_full_enable() -> None:
    assert motor_pins(1e6, MOTOR)[0] == ENABLE_FULL


@given(st.floats(min_value=0.5, max_value=12.0))
def test_the_pins_steady_state_is_the_asked_wheel_speed(wheel_speed: float) -> None:
    motor = MotorParams()
    enable, _, _ = motor_pins(wheel_speed, motor)
    if enable < ENABLE_FULL:
        voltage = enable / ENABLE_FULL * motor.supply_voltage
        assert motor.steady_speed(voltage) / motor.gear_ratio == pytest.approx(wheel_speed, rel=1e-9)


@given(st.floats(min_value=-500.0, max_value=500.0, allow_nan=False))
def test_steady_voltage_inverts_steady_speed(shaft_speed: float) -> None:
    motor = MotorParams()
    voltage = motor.steady_voltage(shaft_speed)
    assert math.copysign(1.0, voltage) == math.copysign(1.0, shaft_speed) or shaft_speed == 0.0
    assert motor.steady_speed(abs(voltage)) == pytest.approx(abs(shaft_speed), rel=1e-9, abs=1e-9)
