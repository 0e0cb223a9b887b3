"""``button``: a push button a user presses (a scenario's ``set:``, the ``hil/set/<device>`` topic).

Output ``pressed``: 1 while pressed, 0 at rest (a set's ``for:`` running out lets go).
How the pin shows it (pulled low, the contacts' bounce) is the MCU side's (the
simavr harness's ``button`` kind, a bridge board's handler).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from hil_sim.core.devices.base import DeviceModel, finite_number
from hil_sim.errors import HilSimError


class Button(DeviceModel):
    """Every push button of a group of robots (module docstring)."""

    KIND = "button"
    OUTPUTS = ("pressed",)
    USER = True

    @classmethod
    def user_value(cls, value: float | Mapping[str, float]) -> dict[str, float]:
        """0 (released) or 1 (pressed).

        Raises:
            HilSimError: anything else.
        """
        number = math.nan if isinstance(value, Mapping) else finite_number(value, "button: value")
        if number not in (0.0, 1.0):
            raise HilSimError(f"a button is pressed (1) or released (0), got {value!r}")
        return {"pressed": number}
