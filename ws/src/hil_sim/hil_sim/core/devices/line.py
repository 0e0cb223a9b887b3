"""``line``: an IR line sensor (TCRT5000-style), analog or digital, over the floor's markings.

The sensor looks straight down from its mount and sees the floor's reflectance
(:class:`~hil_sim.core.world.FloorMap`: the world's floor and its markings, lines and
arcs of tape) averaged over a spot of ``spot_mm`` radius (seven points: its centre and
six round it), so crossing a line's edge is gradual. Analog (``output`` analog): the
module's ADC reading falls with reflectance, ``counts_black`` over a reflectance of 0
to ``counts_white`` over 1, plus Gaussian noise of ``sigma_counts``, rounded and
clipped to 0..1023; signal ``reading``. Digital (``output`` digital): its comparator's
output, 1 over a dark line (reflectance below ``threshold``; the usual modules' DO is
high over black), 0 elsewhere; signal ``detected``. One normal per sample.
Outputs also ``reflectance`` (the spot's noise-free average).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hil_sim.core.devices.base import Array, DeviceModel, Mounts, Scene
from hil_sim.core.robot_model import DeviceSpec, RobotModel
from hil_sim.core.sensors import ADC_MAX, clip

#: The spot's sample points as fractions of its radius: the centre and six round it.
SPOT = np.array([[0.0, 0.0]] + [[math.cos(k * math.pi / 3), math.sin(k * math.pi / 3)] for k in range(6)])


class LineSensor(DeviceModel):
    """Every line sensor of a group of robots (module docstring)."""

    KIND = "line"
    OUTPUTS = ("reading", "detected", "reflectance")

    def __init__(self, specs: Sequence[DeviceSpec], *, robots: int, model: RobotModel, where: str) -> None:
        super().__init__(specs, robots=robots, model=model, where=where)
        self.spot = np.array([p["spot_mm"] / 1000.0 for p in self.params])
        self.black = np.array([p["counts_black"] for p in self.params])
        self.white = np.array([p["counts_white"] for p in self.params])
        self.sigma = np.array([p["sigma_counts"] for p in self.params])
        self.threshold = np.array([p["threshold"] for p in self.params])

    @classmethod
    def signals(cls, spec: DeviceSpec, params: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``reading`` (analog) or ``detected`` (digital)."""
        del spec
        return (), ("reading",) if params["output"] == "analog" else ("detected",)

    @classmethod
    def noise(cls, params: Mapping[str, Any]) -> tuple[int, int]:
        """One normal (the analog reading's noise; drawn for either output)."""
        del params
        return 0, 1

    def sample(self, scene: Scene, mounts: Mounts, uniform: Array, normal: Array) -> None:
        """Reflectance under each sensor's spot, and what its output makes of it."""
        del uniform
        seen = np.empty((self.robots, self.count))
        c, s = np.cos(scene.yaw), np.sin(scene.yaw)
        for k, name in enumerate(self.names):
            x, y, _ = mounts.pose(name)
            px = scene.x + c * x - s * y
            py = scene.y + s * x + c * y
            points_x = px[:, None] + self.spot[k] * SPOT[None, :, 0]
            points_y = py[:, None] + self.spot[k] * SPOT[None, :, 1]
            seen[:, k] = scene.floor.reflectance(points_x, points_y).mean(axis=1)
        noise = normal[:, np.concatenate(self.normal_columns)] if self.count else normal[:, :0]
        reading = self.black + (self.white - self.black) * seen + self.sigma * noise
        self.outputs[..., 0] = clip(np.rint(reading), 0.0, ADC_MAX)
        self.outputs[..., 1] = seen < self.threshold
        self.outputs[..., 2] = seen
