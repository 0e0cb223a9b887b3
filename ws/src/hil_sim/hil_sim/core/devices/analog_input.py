"""``analog_input``: a voltage a user sets on an analog input (a potentiometer, a mode button).

Output ``voltage`` (V, 0..5): what the MCU's ADC reads on its pin, ``rest_v`` until a
user sets it (a scenario's ``set:``, the ``hil/set/<device>`` topic) and again when a
set's ``for:`` runs out: a potentiometer stays where it was turned (a set without
``for:``), a resistor-ladder mode button springs back to its open level.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from hil_sim.core.devices.base import DeviceModel, IndexArray, finite_number
from hil_sim.errors import HilSimError

#: The highest voltage an input takes (the AVR's supply).
MAX_V = 5.0


class AnalogInput(DeviceModel):
    """Every user-set analog input of a group of robots (module docstring)."""

    KIND = "analog_input"
    OUTPUTS = ("voltage",)
    USER = True

    @classmethod
    def user_value(cls, value: float | Mapping[str, float]) -> dict[str, float]:
        """A voltage in 0..5 V.

        Raises:
            HilSimError: not a number in that range.
        """
        if isinstance(value, Mapping):
            raise HilSimError(f"an analog input takes a voltage (0..5 V), got {value!r}")
        volts = finite_number(value, "analog input: value")
        if not 0.0 <= volts <= MAX_V:
            raise HilSimError(f"an analog input takes 0..{MAX_V:g} V, got {volts:g}")
        return {"voltage": volts}

    def _rest(self) -> np.ndarray:
        return np.array([params["rest_v"] for params in self.params], dtype=float)

    def reset(self) -> None:
        """Every input at its rest voltage."""
        super().reset()
        self.outputs[..., 0] = self._rest()[None, :]

    def let_go(self, rows: IndexArray, index: int) -> None:
        """Back to the rest voltage."""
        self.outputs[rows, index, 0] = self.params[index]["rest_v"]
