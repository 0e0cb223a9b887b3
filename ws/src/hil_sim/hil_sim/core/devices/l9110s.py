"""``l9110s``: one channel of an L9110S (IA, IB, both PWM-capable).

IA/IB high/low: forward; low/high: back; both low or both high: both outputs low, the
motor's terminals shorted (it brakes). The average voltage is (IA - IB) x supply and
the bridge is always closed. Inputs: ``ia``, ``ib`` (0..1024).
"""

from __future__ import annotations

import numpy as np

from hil_sim.core.devices.base import Array, BoolArray
from hil_sim.core.devices.bridge import Driver, duty


class L9110s(Driver):
    """Every L9110S channel of a group of robots (module docstring)."""

    KIND = "l9110s"
    INPUTS = ("ia", "ib")

    def bridge(self, inputs: Array) -> tuple[Array, BoolArray]:
        """IA - IB, always closed."""
        a, b = duty(inputs[..., 0]), duty(inputs[..., 1])
        return a - b, np.ones(a.shape, dtype=bool)
