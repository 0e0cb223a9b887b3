"""``drv8833``: one channel of a DRV8833 (xIN1, xIN2, both PWM-capable).

IN1/IN2 high/low: forward; low/high: back; both high: brake (slow decay); both low:
coast (fast decay). PWM on IN1 with IN2 low is forward with fast decay (drive, coast,
drive...); IN1 high with PWM on IN2 is forward with slow decay at the duty's
complement (drive, brake...): either way the average voltage is (IN1 - IN2) x supply.
The bridge counts as closed when any part of the period drives or brakes. Inputs:
``in1``, ``in2`` (0..1024).
"""

from __future__ import annotations

import numpy as np

from hil_sim.core.devices.base import Array, BoolArray
from hil_sim.core.devices.bridge import Driver, duty


class Drv8833(Driver):
    """Every DRV8833 channel of a group of robots (module docstring)."""

    KIND = "drv8833"
    INPUTS = ("in1", "in2")

    def bridge(self, inputs: Array) -> tuple[Array, BoolArray]:
        """IN1 - IN2; coasting only while both are low all the time."""
        a, b = duty(inputs[..., 0]), duty(inputs[..., 1])
        closed: BoolArray = np.maximum(a, b) > 0
        return a - b, closed
