"""Robots without an MCU of their own: motor pins from a ``cmd_vel`` twist.

In a run with ``hil_robots`` < ``robots`` the robots past the HIL ones have no MCU and
no control loop; the simulator drives them from ``robot_<i>/cmd_vel`` as an ideal
open-loop motor controller would: each wheel's speed from the twist (differential
drive), the L298 pins (enable duty, direction) whose steady state is that speed
(:meth:`MotorParams.steady_voltage`), clipped at the supply. No ``cmd_vel`` for
``timeout`` seconds and the pins go low (the motors coast), as a loop's failsafe does.
"""

from __future__ import annotations

import math

from hil_sim.core.motor import ENABLE_FULL, MotorParams


def wheel_speeds(
    linear: float, angular: float, *, wheel_radius: float, wheel_base: float
) -> tuple[float, float]:
    """Left and right wheel speeds (rad/s) of a differential drive for a twist (m/s, rad/s)."""
    left = (linear - angular * wheel_base / 2) / wheel_radius
    right = (linear + angular * wheel_base / 2) / wheel_radius
    return left, right


def motor_pins(wheel_speed: float, motor: MotorParams) -> tuple[float, float, float]:
    """``(enable, a, b)`` L298 pins for a wheel speed (rad/s, signed): forward a, back b."""
    voltage = motor.steady_voltage(wheel_speed * motor.gear_ratio)
    if voltage == 0.0 or not math.isfinite(voltage):
        return 0.0, 0.0, 0.0
    enable = min(abs(voltage) / motor.supply_voltage, 1.0) * ENABLE_FULL
    return (enable, 1.0, 0.0) if voltage > 0 else (enable, 0.0, 1.0)


def twist_pins(
    linear: float, angular: float, *, wheel_radius: float, wheel_base: float, motor: MotorParams
) -> list[tuple[float, float, float]]:
    """The left and right motors' ``(enable, a, b)`` for a twist."""
    return [
        motor_pins(speed, motor)
        for speed in wheel_speeds(linear, angular, wheel_radius=wheel_radius, wheel_base=wheel_base)
    ]
