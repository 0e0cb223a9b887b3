"""``led``: an LED on an MCU output; the simulator shows it (markers, the run's report).

Input ``active`` (1 while the MCU drives it high); output ``lit`` the same, as shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hil_sim.core.devices.base import DeviceModel
from hil_sim.core.robot_model import DeviceSpec


class Led(DeviceModel):
    """Every LED of a group of robots (module docstring)."""

    KIND = "led"
    INPUTS = ("active",)
    OUTPUTS = ("lit",)

    @classmethod
    def signals(cls, spec: DeviceSpec, params: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Takes ``active``; gives nothing to the MCU."""
        del spec, params
        return ("active",), ()

    def apply(self) -> None:
        """Lit while driven high."""
        self.outputs[..., 0] = self.inputs[..., 0] > 0.5
