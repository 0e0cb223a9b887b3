"""``encoder``: a wheel encoder, quadrature (A/B) or single channel.

Its wheel's position in counts, ``floor(angle / 2 pi * counts_per_rev * gear_ratio *
edges)`` where ``edges`` is 4 for a quadrature encoder decoded on every edge of both
channels (``quadrature`` 1) and 1 for a single channel; ``direction`` -1 for an
encoder that counts down when its wheel turns forward (mounted mirrored). The signal
link carries it as a 16-bit value that wraps (-32768..32767); the simavr harness turns
each change into that many edges. Signal ``position`` (counts), read as the wheel is
at that moment; ``count`` the same, unwrapped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from hil_sim.core.devices.base import DeviceModel, Scene
from hil_sim.core.robot_model import WHEELS, DeviceSpec, RobotModel

#: The link's position signal is a 16-bit counter.
WRAP = 1 << 16


class Encoder(DeviceModel):
    """Every wheel encoder of a group of robots (module docstring)."""

    KIND = "encoder"
    OUTPUTS = ("position", "count")
    WHEEL = True

    def __init__(self, specs: Sequence[DeviceSpec], *, robots: int, model: RobotModel, where: str) -> None:
        super().__init__(specs, robots=robots, model=model, where=where)
        self.wheel = np.array([WHEELS.index(spec.wheel) for spec in self.specs], dtype=np.intp)
        self.per_radian = np.array(
            [
                p["counts_per_rev"] * p["gear_ratio"] * (4 if p["quadrature"] else 1) / (2 * math.pi)
                for p in self.params
            ]
        )
        self.sign = np.array([-1.0 if p["direction"] < 0 else 1.0 for p in self.params])

    @classmethod
    def signals(
        cls, spec: DeviceSpec, params: Mapping[str, object]
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``position`` (counts, 16-bit)."""
        del spec, params
        return (), ("position",)

    def refresh(self, scene: Scene) -> None:
        """Counts of the wheels as they are now."""
        count = np.floor(self.sign * scene.wheel_angle[:, self.wheel] * self.per_radian)
        self.outputs[..., 1] = count
        self.outputs[..., 0] = (count + WRAP // 2) % WRAP - WRAP // 2
