"""``buzzer``: a passive buzzer driven by ``tone()``; the simulator shows and logs its tones.

Input ``frequency`` (Hz, 0 while silent) as the MCU side measures the square wave on
its pin; nothing goes back to the MCU. The run report lists the tones (frequency and
duration) and a scenario's ``tone:`` assertion judges them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hil_sim.core.devices.base import DeviceModel
from hil_sim.core.robot_model import DeviceSpec


class Buzzer(DeviceModel):
    """Every buzzer of a group of robots (module docstring)."""

    KIND = "buzzer"
    INPUTS = ("frequency",)

    @classmethod
    def signals(cls, spec: DeviceSpec, params: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Takes ``frequency``; gives nothing to the MCU."""
        del spec, params
        return ("frequency",), ()
