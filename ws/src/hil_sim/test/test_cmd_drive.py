"""Robots without an MCU driven from cmd_vel (hil_sim.core.cmd_drive)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hil_common.core.kinematics import wheel_speeds
from hil_sim.core.build import build_simulation
from hil_sim.core.cmd_drive import CmdVelDrive, twist_duties, wheel_duty
from hil_sim.core.motor import MotorParams
from hil_sim.core.robot_model import demo_robot
from hil_sim.core.world import WorldConfig

ROBOT = demo_robot()
MOTOR = ROBOT.motor
BODY = ROBOT.body


def test_a_straight_twist_turns_both_wheels_alike_and_a_spin_turns_them_apart() -> None:
    left, right = wheel_speeds(0.1, 0.0, wheel_base=0.2)
    assert left == right == pytest.approx(0.1)
    left, right = wheel_speeds(0.0, 1.0, wheel_base=0.2)
    assert left == pytest.approx(-0.1) and right == pytest.approx(0.1)


def test_no_twist_lets_the_motors_coast() -> None:
    assert twist_duties(0.0, 0.0, wheel_radius=0.03, wheel_base=0.1, motor=MOTOR) == (0.0, 0.0)


@pytest.mark.parametrize("speed", [3.0, -3.0])
def test_the_duty_follows_the_sign(speed: float) -> None:
    duty = wheel_duty(speed, MOTOR)
    assert 0 < abs(duty) < 1
    assert math.copysign(1.0, duty) == math.copysign(1.0, speed)


def test_a_speed_past_the_supply_is_clipped_at_full_duty() -> None:
    assert wheel_duty(1e6, MOTOR) == 1.0


def test_a_twist_past_the_top_speed_keeps_its_turn_radius() -> None:
    # 1 m/s on a 0.5 m radius: beyond both wheels' top speed; the fast wheel is at full
    # duty, the slow one in the same proportion of its speed (not clipped alone).
    left, right = twist_duties(
        1.0, 2.0, wheel_radius=BODY.wheel_radius, wheel_base=BODY.wheel_base, motor=MOTOR
    )
    assert right == pytest.approx(1.0)
    top = MOTOR.steady_speed(MOTOR.supply_voltage)
    slow = MOTOR.steady_speed(left * MOTOR.supply_voltage)
    assert slow / top == pytest.approx((1.0 - 0.14) / (1.0 + 0.14), rel=1e-6)


@given(st.floats(min_value=0.5, max_value=12.0))
def test_the_duty_steady_state_is_the_asked_wheel_speed(speed: float) -> None:
    motor = MotorParams()
    duty = wheel_duty(speed, motor)
    if duty < 1.0:
        voltage = duty * motor.supply_voltage
        assert motor.steady_speed(voltage) / motor.gear_ratio == pytest.approx(speed, rel=1e-9)


@given(st.floats(min_value=-500.0, max_value=500.0, allow_nan=False))
def test_steady_voltage_inverts_steady_speed(shaft_speed: float) -> None:
    motor = MotorParams()
    voltage = motor.steady_voltage(shaft_speed)
    assert math.copysign(1.0, voltage) == math.copysign(1.0, shaft_speed) or shaft_speed == 0.0
    assert motor.steady_speed(abs(voltage)) == pytest.approx(abs(shaft_speed), rel=1e-9, abs=1e-9)


def test_a_cmd_vel_robot_drives_and_coasts_after_the_timeout() -> None:
    sim = build_simulation(WorldConfig(width=10.0, height=10.0), robots=2, spacing=1.0)
    drive = CmdVelDrive(sim, timeout=0.5)
    drive.command(1, 0.2, 0.0)
    sim.step(1000)
    drive.expire()
    assert sim.v[1] == pytest.approx(0.2, rel=0.02)  # the steady state of the asked speed
    assert sim.v[0] == 0.0
    sim.step(1000)
    drive.expire()  # 2 s after the twist: let go
    assert not sim.driving(1)
    sim.step(3000)
    assert sim.v[1] == pytest.approx(0.0, abs=1e-6)
