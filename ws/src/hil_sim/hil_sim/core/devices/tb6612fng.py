"""``tb6612fng``: one channel of a TB6612FNG (PWMx, xIN1, xIN2, STBY).

STBY low: standby, the motor coasts. IN1/IN2 high/low: forward while PWM is high,
short brake while it is low; low/high: back; both high: short brake; both low: stop
(outputs off, the motor coasts). Inputs: ``pwm`` (0..1024), ``in1``, ``in2``, ``stby``
(levels; STBY is often tied high).
"""

from __future__ import annotations

from hil_sim.core.devices.base import Array, BoolArray
from hil_sim.core.devices.bridge import Driver, duty, level


class Tb6612fng(Driver):
    """Every TB6612FNG channel of a group of robots (module docstring)."""

    KIND = "tb6612fng"
    INPUTS = ("pwm", "in1", "in2", "stby")

    def bridge(self, inputs: Array) -> tuple[Array, BoolArray]:
        """(IN1 - IN2) x PWM duty; coasting in standby or with both inputs low."""
        in1, in2, standby = level(inputs[..., 1]), level(inputs[..., 2]), level(inputs[..., 3])
        fraction = (in1 - in2) * duty(inputs[..., 0]) * standby
        closed: BoolArray = (standby > 0) & ((in1 > 0) | (in2 > 0))
        return fraction, closed
