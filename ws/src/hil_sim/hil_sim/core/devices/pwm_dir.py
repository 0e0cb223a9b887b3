"""``pwm_dir``: a sign-magnitude driver (Cytron MD10C/MDD10A style: PWM and DIR).

PWM high drives the motor (DIR low: forward, high: back), PWM low brakes it (both
outputs low): the average voltage is the duty, signed by DIR, and the bridge is always
closed. Inputs: ``pwm`` (0..1024), ``dir`` (level).
"""

from __future__ import annotations

import numpy as np

from hil_sim.core.devices.base import Array, BoolArray
from hil_sim.core.devices.bridge import Driver, duty, level


class PwmDir(Driver):
    """Every sign-magnitude driver channel of a group of robots (module docstring)."""

    KIND = "pwm_dir"
    INPUTS = ("pwm", "dir")

    def bridge(self, inputs: Array) -> tuple[Array, BoolArray]:
        """Duty x (1 - 2 DIR), always closed."""
        fraction = duty(inputs[..., 0]) * (1.0 - 2.0 * level(inputs[..., 1]))
        return fraction, np.ones(fraction.shape, dtype=bool)
