"""``l298n``: one channel of an L298 dual H-bridge (ENA, IN1, IN2).

ENA low: the outputs are off and the motor coasts. ENA high: IN1/IN2 high/low drive
forward, low/high back, and both low or both high brake (the L298 shorts the motor).
PWM on ENA with levels on IN1/IN2 (the common wiring) scales the voltage by ENA's duty
(its off-phase counted as the closed circuit, as the averaged model takes it); ENA
tied high with PWM on IN1 or IN2 (ROSArduinoBridge's wiring) drives for the duty
difference and brakes for the rest. Inputs: ``enable`` (0..1024), ``a``, ``b`` (IN1,
IN2: 0..``in_full_scale``; 1 for levels, 1024 for PWM duties).
"""

from __future__ import annotations

import numpy as np

from hil_sim.core.devices.base import Array, BoolArray
from hil_sim.core.devices.bridge import Driver, duty


class L298n(Driver):
    """Every L298 channel of a group of robots (module docstring)."""

    KIND = "l298n"
    INPUTS = ("enable", "a", "b")

    def bridge(self, inputs: Array) -> tuple[Array, BoolArray]:
        """(IN1 - IN2) x ENA duty; coasting while ENA is low."""
        full = np.array([p["in_full_scale"] for p in self.params])
        enable = inputs[..., 0]
        fraction = (duty(inputs[..., 1], full) - duty(inputs[..., 2], full)) * duty(enable)
        closed: BoolArray = enable > 0
        return fraction, closed
