"""``tb6612fng``: one channel of a TB6612FNG (PWMx, xIN1, xIN2, STBY).

STBY low: standby, the motor coasts. IN1/IN2 high/low: forward while PWM is high,
short brake while it is low; low/high: back; both high: short brake; both low: stop
(outputs off, the motor coasts). Inputs: ``pwm`` (0..1024), ``in1``, ``in2``, ``stby``
(levels; STBY is often tied high).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from hil_sim.core.devices.base import Array, BoolArray, Param
from hil_sim.core.devices.bridge import DIRECTION, Driver, duty, level


class Tb6612fng(Driver):
    """Every TB6612FNG channel of a group of robots (module docstring)."""

    KIND = "tb6612fng"
    DESCRIPTION = "TB6612FNG H-bridge channel: PWM, IN1, IN2, STBY"
    PARAMS: ClassVar[Mapping[str, Param]] = {"direction": DIRECTION}
    INPUTS = ("pwm", "in1", "in2", "stby")

    def bridge(self, inputs: Array) -> tuple[Array, BoolArray]:
        """(IN1 - IN2) x PWM duty; coasting in standby or with both inputs low."""
        in1, in2, standby = level(inputs[..., 1]), level(inputs[..., 2]), level(inputs[..., 3])
        fraction = (in1 - in2) * duty(inputs[..., 0]) * standby
        closed: BoolArray = (standby > 0) & ((in1 > 0) | (in2 > 0))
        return fraction, closed
