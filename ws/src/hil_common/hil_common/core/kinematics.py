"""Differential drive: the one rule from a body twist to wheel speeds, and back.

Every part that turns a twist into wheel speeds uses :func:`wheel_speeds`: the control
loop (its motor commands, :mod:`robot_control.core.kinematics`) and the simulator's
robots without an MCU (:mod:`hil_sim.core.cmd_drive`). The wheels' ground speeds are
``v -/+ w * wheel_base / 2``; when one would exceed ``limit``, both are scaled by the
same factor: the turn radius ``v / w`` is kept and the robot goes as fast as it can
along the asked-for arc, instead of clipping one wheel and bending the path.
"""

from __future__ import annotations

import math

#: Speeds (m/s) beyond any robot: inputs above are scaled down to it, ratio kept, so the
#: sums cannot overflow (such a twist saturates anyway).
HUGE = 1e6


def wheel_speeds(
    linear: float, angular: float, *, wheel_base: float, limit: float = math.inf
) -> tuple[float, float]:
    """Left and right wheel ground speeds (m/s) for a body twist (m/s, rad/s).

    Args:
        linear: forward speed (m/s).
        angular: turn rate (rad/s, counter-clockwise).
        wheel_base: distance between the wheels' contact lines (m).
        limit: the wheels' top ground speed (m/s); beyond it both wheels are scaled
            alike (radius-keeping saturation).

    Non-finite inputs give (0, 0).
    """
    if not (math.isfinite(linear) and math.isfinite(angular)):
        return 0.0, 0.0
    half_track = angular * wheel_base / 2
    size = max(abs(linear), abs(half_track))
    if size > HUGE:
        linear, half_track = linear / size * HUGE, half_track / size * HUGE
    left, right = linear - half_track, linear + half_track
    largest = max(abs(left), abs(right))
    if largest > limit:
        left *= limit / largest
        right *= limit / largest
    return left, right


def body_twist(left: float, right: float, *, wheel_base: float) -> tuple[float, float]:
    """The body twist (m/s, rad/s) of two wheel ground speeds (m/s): the inverse of :func:`wheel_speeds`."""
    return (left + right) / 2, (right - left) / wheel_base


def wrap_angle(angle: float) -> float:
    """``angle`` in (-pi, pi]."""
    wrapped = math.remainder(angle, 2 * math.pi)
    return math.pi if wrapped == -math.pi else wrapped
