"""Differential-drive inverse kinematics: a body twist to left/right motor commands.

The wheels' speeds come from the one twist rule of :mod:`hil_common.core.kinematics`
(radius-keeping saturation at the wheels' top speed); a command is the wheel speed as
a fraction of that top speed, times ``max_command``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hil_common.core.kinematics import body_twist, wheel_speeds
from robot_control.errors import RobotControlError


@dataclass(frozen=True)
class DriveGeometry:
    """Wheel base and radius (m), the wheels' top speed (rad/s), the command range."""

    wheel_base: float = 0.14
    wheel_radius: float = 0.033
    max_wheel_speed: float = 20.8
    max_command: int = 255
    #: Dead reckoning only (:mod:`~robot_control.core.odometry`): seconds a driven wheel
    #: takes to 63 % of a new speed (the motor's time constant with the robot on it),
    #: and the deceleration (m/s^2) of a wheel that is not driven and coasts.
    time_constant: float = 0.1
    coast_decel: float = 0.31

    def __post_init__(self) -> None:
        for name in ("wheel_base", "wheel_radius", "max_wheel_speed"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise RobotControlError(f"drive geometry: {name} = {value!r} must be a positive number")
        for name in ("time_constant", "coast_decel"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise RobotControlError(f"drive geometry: {name} = {value!r} must be a number >= 0")
        if self.max_command < 1:
            raise RobotControlError(f"drive geometry: max_command = {self.max_command!r} must be at least 1")


def twist_to_commands(linear: float, angular: float, geometry: DriveGeometry) -> tuple[int, int]:
    """Left and right motor commands for a body twist (m/s, rad/s), radius-keeping saturation.

    Non-finite inputs give (0, 0).
    """
    top = geometry.max_wheel_speed * geometry.wheel_radius
    left, right = wheel_speeds(linear, angular, wheel_base=geometry.wheel_base, limit=top)
    scale = geometry.max_command / top
    return round(left * scale), round(right * scale)


def commands_to_twist(left: float, right: float, geometry: DriveGeometry) -> tuple[float, float]:
    """The body twist (m/s, rad/s) that a pair of commands asks for (the inverse map)."""
    speed = geometry.max_wheel_speed * geometry.wheel_radius / geometry.max_command
    return body_twist(left * speed, right * speed, wheel_base=geometry.wheel_base)
