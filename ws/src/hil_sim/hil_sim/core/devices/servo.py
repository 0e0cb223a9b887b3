"""``servo``: a hobby servo (SG90-like) as a joint that devices may ride on.

The MCU's pulse width (``pulse_us``, as Servo.h writes it every 20 ms) commands an
angle: ``min_pulse_us`` is 0 degrees, ``max_pulse_us`` is ``range_deg`` (pulses beyond
are clipped); the horn turns toward it at ``speed_deg_s`` (an SG90: 0.1 s per 60
degrees). No pulse (0) stops the horn where it is (the servo stops driving). The joint
angle is measured from the centre of the range (0 rad: the horn as mounted); it starts
there. A device mounted on the servo (``mount.servo``) turns with the horn about the
servo's vertical axis.
Output ``angle`` (rad, for the joint states).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from hil_sim.core.devices.base import Array, DeviceModel
from hil_sim.core.robot_model import DeviceSpec, RobotModel


class Servo(DeviceModel):
    """Every positional servo of a group of robots (module docstring)."""

    KIND = "servo"
    INPUTS = ("pulse_us",)
    OUTPUTS = ("angle",)
    JOINT = True

    def __init__(self, specs: Sequence[DeviceSpec], *, robots: int, model: RobotModel, where: str) -> None:
        super().__init__(specs, robots=robots, model=model, where=where)
        self.low = np.array([p["min_pulse_us"] for p in self.params])
        self.high = np.array([p["max_pulse_us"] for p in self.params])
        self.half_range = np.array([math.radians(p["range_deg"]) / 2 for p in self.params])
        self.speed = np.array([math.radians(p["speed_deg_s"]) for p in self.params])
        self.target: Array = np.zeros((robots, self.count))

    @classmethod
    def signals(
        cls, spec: DeviceSpec, params: Mapping[str, object]
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Takes ``pulse_us``; gives nothing to the MCU."""
        del spec, params
        return ("pulse_us",), ()

    def reset(self) -> None:
        """Horns at the centre."""
        super().reset()
        self.target[:] = 0.0

    def apply(self) -> None:
        """New targets from the pulses; without pulses the horn stops where it is."""
        pulse = self.inputs[..., 0]
        fraction = np.clip((pulse - self.low) / (self.high - self.low), 0.0, 1.0)
        self.target = np.where(pulse > 0, (2 * fraction - 1) * self.half_range, self.outputs[..., 0])

    def advance(self, seconds: float) -> None:
        """Each horn turns toward its target at its speed."""
        angle = self.outputs[..., 0]
        step = np.clip(self.target - angle, -self.speed * seconds, self.speed * seconds)
        self.outputs[..., 0] = angle + step

    def angle(self) -> Array:
        """(n, count) joint angles (rad)."""
        return self.outputs[..., 0]
