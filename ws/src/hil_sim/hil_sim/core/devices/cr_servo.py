"""``cr_servo``: a continuous-rotation servo as a wheel (pulse width to speed).

The servo's own controller drives its motor from the pulse width: ``centre_us`` stops
it (within ``deadband_us``, braked), ``centre_us`` +- ``span_us`` is full speed forward
or back (beyond: clipped); no pulse (0) lets it coast. The drive is the DC motor model
with the servo's motor and gearbox (the robot model's motor parameters) at that
fraction of the supply. Input ``pulse_us``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hil_sim.core.devices.base import Array, BoolArray
from hil_sim.core.devices.bridge import Driver
from hil_sim.core.robot_model import DeviceSpec, RobotModel


class CrServo(Driver):
    """Every continuous-rotation servo wheel of a group of robots (module docstring)."""

    KIND = "cr_servo"
    INPUTS = ("pulse_us",)

    def __init__(self, specs: Sequence[DeviceSpec], *, robots: int, model: RobotModel, where: str) -> None:
        super().__init__(specs, robots=robots, model=model, where=where)
        self.centre = np.array([p["centre_us"] for p in self.params])
        self.span = np.array([p["span_us"] for p in self.params])
        self.deadband = np.array([p["deadband_us"] for p in self.params])

    def bridge(self, inputs: Array) -> tuple[Array, BoolArray]:
        """Speed fraction from the pulse width; coasting without pulses."""
        pulse = inputs[..., 0]
        offset = pulse - self.centre
        fraction = np.where(np.abs(offset) <= self.deadband, 0.0, np.clip(offset / self.span, -1.0, 1.0))
        closed: BoolArray = pulse > 0
        return np.where(closed, fraction, 0.0), closed
