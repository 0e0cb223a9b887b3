"""Robots without an MCU of their own: wheel drive from a ``cmd_vel`` twist.

In a run with ``hil_robots`` < ``robots`` the robots past the HIL ones have no MCU and
no control loop; the simulator drives them from ``robot_<i>/cmd_vel`` as an ideal
open-loop motor controller would: each wheel's speed from the twist by the one
differential-drive rule (:func:`hil_common.core.kinematics.wheel_speeds`: radius-keeping
saturation at the wheels' top speed on the full supply), and the motor's duty whose
steady state is that speed (:meth:`MotorParams.steady_voltage`). No ``cmd_vel`` for
``timeout`` seconds and the wheels are let go (the motors coast), as a loop's failsafe does.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from hil_common.core.kinematics import wheel_speeds
from hil_sim.core.motor import MotorParams

if TYPE_CHECKING:
    from hil_sim.core.simulation import Simulation


def wheel_duty(wheel_speed: float, motor: MotorParams) -> float:
    """Signed duty (-1..1: a fraction of the supply, forward positive) for a wheel speed (rad/s)."""
    voltage = motor.steady_voltage(wheel_speed * motor.gear_ratio)
    if voltage == 0.0 or not math.isfinite(voltage):
        return 0.0
    return math.copysign(min(abs(voltage) / motor.supply_voltage, 1.0), voltage)


def twist_duties(
    linear: float, angular: float, *, wheel_radius: float, wheel_base: float, motor: MotorParams
) -> tuple[float, float]:
    """The left and right wheels' signed duties for a twist (m/s, rad/s)."""
    top = motor.steady_speed(motor.supply_voltage) / motor.gear_ratio * wheel_radius
    left, right = wheel_speeds(linear, angular, wheel_base=wheel_base, limit=top)
    return wheel_duty(left / wheel_radius, motor), wheel_duty(right / wheel_radius, motor)


class CmdVelDrive:
    """The robots a simulation drives from ``cmd_vel``: their duties, and when each twist came.

    Args:
        simulation: the robots' simulation (its :meth:`command_wheels`).
        timeout: simulated seconds after a twist before the wheels are let go.
    """

    def __init__(self, simulation: Simulation, *, timeout: float) -> None:
        self.simulation = simulation
        self.timeout = timeout
        self._at: dict[int, float] = {}

    def command(self, robot: int, linear: float, angular: float) -> None:
        """A twist for robot ``robot``, as of the simulation's time now."""
        sim = self.simulation
        body, motor = sim.models[robot].body, sim.models[robot].motor
        duties = twist_duties(
            linear, angular, wheel_radius=body.wheel_radius, wheel_base=body.wheel_base, motor=motor
        )
        sim.command_wheels(robot, duties)
        self._at[robot] = sim.time

    def expire(self) -> None:
        """Let go of the robots whose last twist is older than the timeout (their motors coast)."""
        sim = self.simulation
        for robot, at in list(self._at.items()):
            if sim.time - at > self.timeout:
                del self._at[robot]
                sim.command_wheels(robot, (0.0, 0.0))
