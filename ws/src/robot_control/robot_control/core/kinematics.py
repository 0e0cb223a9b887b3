"""Differential-drive inverse kinematics: a body twist to left/right motor commands.

Wheel speeds are ``(v -/+ w * wheel_base / 2) / wheel_radius`` (rad/s); a command is
the wheel speed as a fraction of the wheel's top speed, times ``max_command``. When a
command would exceed ``max_command``, both are scaled by the same factor: the turn
radius ``v / w`` is kept and the robot goes as fast as it can along the asked-for
arc, instead of clipping one wheel and bending the path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from robot_control.errors import RobotControlError

#: Wheel speeds (m/s) beyond any robot: inputs above are scaled down to it, ratio kept.
HUGE = 1e6


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
    if not (math.isfinite(linear) and math.isfinite(angular)):
        return 0, 0
    half_track = angular * geometry.wheel_base / 2
    size = max(abs(linear), abs(half_track))
    if size > HUGE:
        # Absurd but finite: scale down, keeping the ratio, so the sums below cannot
        # overflow; such a twist saturates anyway.
        linear, half_track = linear / size * HUGE, half_track / size * HUGE
    scale = geometry.max_command / (geometry.max_wheel_speed * geometry.wheel_radius)
    left = (linear - half_track) * scale
    right = (linear + half_track) * scale
    largest = max(abs(left), abs(right))
    if largest > geometry.max_command:
        left *= geometry.max_command / largest
        right *= geometry.max_command / largest
    return round(left), round(right)


def commands_to_twist(left: float, right: float, geometry: DriveGeometry) -> tuple[float, float]:
    """The body twist (m/s, rad/s) that a pair of commands asks for (the inverse map)."""
    speed = geometry.max_wheel_speed * geometry.wheel_radius / geometry.max_command
    v_left, v_right = left * speed, right * speed
    return (v_left + v_right) / 2, (v_right - v_left) / geometry.wheel_base
