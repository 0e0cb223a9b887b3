"""``bumper``: a switch that closes when the body touches something within its sector.

The physics backend reports every contact's bearing (body frame, counter-clockwise
from straight ahead, in [-180, 180) degrees); a bumper whose sector ``from_deg`` ..
``to_deg`` holds it closes and stays closed ``hold_s`` seconds, as a real switch bounces
shut. Sectors may overlap (the demo's two front switches both close on a head-on hit)
and may wrap round the back (``from_deg`` 150, ``to_deg`` -150). The mount pose only
places its frame. Signal ``pressed`` (0/1), read as the state is at that moment.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hil_sim.core.devices.base import Array, BoolArray, DeviceModel, IndexArray, Scene
from hil_sim.core.robot_model import DeviceSpec, RobotModel


class Bumper(DeviceModel):
    """Every bumper switch of a group of robots (module docstring)."""

    KIND = "bumper"
    OUTPUTS = ("pressed",)

    def __init__(self, specs: Sequence[DeviceSpec], *, robots: int, model: RobotModel, where: str) -> None:
        super().__init__(specs, robots=robots, model=model, where=where)
        self.low = [math.radians(params["from_deg"]) for params in self.params]
        self.high = [math.radians(params["to_deg"]) for params in self.params]
        self.hold = [params["hold_s"] for params in self.params]
        self.until: Array = np.full((robots, self.count), -math.inf)
        self.now = 0.0

    def reset(self) -> None:
        """Every switch open."""
        super().reset()
        self.until[:] = -math.inf

    def touch(self, rows: IndexArray, bearing: Array, now: float) -> None:
        """Close the switches whose sectors hold the contacts' bearings."""
        for k in range(self.count):
            low, high = self.low[k], self.high[k]
            inside = (
                (bearing >= low) & (bearing <= high) if low <= high else (bearing >= low) | (bearing <= high)
            )
            self.until[rows[inside], k] = now + self.hold[k]

    def refresh(self, scene: Scene) -> None:
        """``pressed`` as of now."""
        self.now = scene.time
        self.outputs[..., 0] = self.until > scene.time

    def pressed(self, now: float) -> BoolArray:
        """(n, count) closed switches at ``now``."""
        closed: BoolArray = self.until > now
        return closed

    def release(self, rows: IndexArray | slice) -> None:
        """Open the switches of these robots (a teleport)."""
        self.until[rows] = -math.inf
