"""What the motor driver kinds share: a wheel, a direction, PWM-averaged bridge outputs.

A driver maps its inputs (PWM duties 0..1024, 1024 = always on, and levels 0/1) to its
wheel's motor as the average over a PWM period: the terminal voltage as a fraction of
the supply (forward positive) and whether the bridge is closed (any part of the period
driving or braking: the shorted terminals of a brake let back-EMF current flow; an
open bridge lets the motor coast). Aligned PWM inputs ``a`` and ``b`` (fractions of the
period) drive forward for ``a - min(a, b)``, back for ``b - min(a, b)``, and are both on
or both off for the rest, so the average voltage is ``(a - b) * supply``. The DC motor
model (:mod:`hil_sim.core.motor`) takes it from there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from hil_sim.core.devices.base import Array, BoolArray, DeviceModel
from hil_sim.core.motor import ENABLE_FULL
from hil_sim.core.robot_model import WHEELS, DeviceSpec, RobotModel


def duty(value: Array, full: float | Array = ENABLE_FULL) -> Array:
    """A PWM input (0..full) as a fraction of the period."""
    fraction: Array = np.clip(np.asarray(value, dtype=float), 0.0, full) / full
    return fraction


def level(value: Array) -> Array:
    """A digital input as 0.0 or 1.0."""
    high: Array = (value > 0.5).astype(float)
    return high


class Driver(DeviceModel):
    """A motor driver channel on one wheel (a kind of its own subclasses this)."""

    WHEEL = True
    DRIVER = True

    def __init__(self, specs: Sequence[DeviceSpec], *, robots: int, model: RobotModel, where: str) -> None:
        super().__init__(specs, robots=robots, model=model, where=where)
        self.wheel = np.array([WHEELS.index(spec.wheel) for spec in self.specs], dtype=np.intp)
        sign = np.array([-1.0 if p["direction"] < 0 else 1.0 for p in self.params])
        self.sign: Array | None = sign if (sign < 0).any() else None

    @classmethod
    def signals(
        cls, spec: DeviceSpec, params: Mapping[str, object]
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Takes its inputs but those tied to a fixed level; gives nothing."""
        del params
        return tuple(name for name in cls.INPUTS if name not in spec.ties), ()

    def drive(self) -> tuple[Array, BoolArray]:
        """(n, count) average voltage (fraction of the supply) and closed."""
        fraction, closed = self.bridge(self.inputs)
        fraction = np.where(closed, fraction, 0.0)  # an open bridge: no voltage, +0.0
        if self.sign is not None:
            fraction = fraction * self.sign
        return fraction, closed

    def bridge(self, inputs: Array) -> tuple[Array, BoolArray]:
        """The kind's truth table, PWM-averaged: inputs (n, count, INPUTS) to (fraction, closed)."""
        raise NotImplementedError
