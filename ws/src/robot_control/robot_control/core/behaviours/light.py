"""``light``: find the light with the four photoresistors, drive to it, stop there.

Bearing: of the four pairs of adjacent sensors (90 degrees apart), the brightest pair
gives the sector; the share of the first sensor in the pair's sum gives the angle
inside it, by inverting the sensors' angular response (``photoresistor.json``): for a
light at angle t from the first sensor's axis (toward the second), the share is
``g(t) / (g(t) + g(90 deg - t))``, which falls monotonically from 1 to 0 across the
sector. The robot turns toward the bearing, drives when it is nearly ahead, and stops
when the brightest reading passes ``stop_level``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_control.core.behaviours.base import Sensors
from robot_control.errors import RobotControlError

#: Mounting angles of light_0..light_3 (front, left, back, right), counter-clockwise.
MOUNTS = (0.0, math.pi / 2, math.pi, 3 * math.pi / 2)


@dataclass(frozen=True)
class PhotoresistorResponse:
    """The sensors' angular response and its inverse for a pair 90 degrees apart."""

    angle_rad: npt.NDArray[np.float64]
    response: npt.NDArray[np.float64]

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> PhotoresistorResponse:
        """From the ``table`` of the photoresistor device config.

        Raises:
            RobotControlError: the table lacks angle_deg/response lists of one length.
        """
        try:
            angle = np.radians(np.asarray(table["angle_deg"], dtype=float))
            response = np.asarray(table["response"], dtype=float)
        except (KeyError, TypeError, ValueError) as exc:
            raise RobotControlError(f"photoresistor table: {exc}") from exc
        if angle.shape != response.shape or angle.size < 2:
            raise RobotControlError("photoresistor table: angle_deg and response must be lists of one length")
        return cls(angle, response)

    def gain(self, angle: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Relative response at ``angle`` off the axis (0 beyond +-90 degrees)."""
        return np.interp(angle, self.angle_rad, self.response, left=0.0, right=0.0)

    def share_curve(self, samples: int = 901) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Angles t across a sector and the first sensor's share g(t) / (g(t) + g(90 - t))."""
        t = np.linspace(0.0, math.pi / 2, samples)
        first, second = self.gain(t), self.gain(math.pi / 2 - t)
        return t, first / (first + second)

    def angle_in_sector(self, share: float) -> float:
        """Inverse of the share curve: the angle from the first sensor's axis."""
        t, curve = self.share_curve()
        # The curve falls from 1 to 0: reverse both for np.interp's increasing x.
        return float(np.interp(share, curve[::-1], t[::-1]))

    def bearing(self, readings: tuple[float, float, float, float]) -> float | None:
        """Bearing of the light (rad, counter-clockwise from the front, -pi..pi); None if dark."""
        sums = [readings[k] + readings[(k + 1) % 4] for k in range(4)]
        k = int(np.argmax(sums))
        if sums[k] <= 0:
            return None
        angle = MOUNTS[k] + self.angle_in_sector(readings[k] / sums[k])
        return (angle + math.pi) % (2 * math.pi) - math.pi


@dataclass
class LightBehaviour:
    """Turn to the light, drive to it, stop in its glow."""

    response: PhotoresistorResponse
    stop_level: float = 900.0
    forward_speed: float = 0.3
    turn_gain: float = 2.0
    max_turn: float = 2.0
    drive_within: float = math.radians(15.0)
    name: str = "light"
    last_bearing: float | None = field(default=None, init=False)

    def reset(self) -> None:
        """Forget the last bearing."""
        self.last_bearing = None

    def update(self, sensors: Sensors | None, now: float) -> tuple[float, float]:
        """Twist for the latest sensors."""
        del now
        if sensors is None:
            return 0.0, 0.0
        if max(sensors.light) >= self.stop_level:
            return 0.0, 0.0
        bearing = self.response.bearing(sensors.light)
        self.last_bearing = bearing
        if bearing is None:
            return 0.0, self.max_turn / 2  # dark all round: look around
        turn = max(-self.max_turn, min(self.max_turn, self.turn_gain * bearing))
        return (self.forward_speed if abs(bearing) < self.drive_within else 0.0), turn
