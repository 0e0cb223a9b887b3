"""``rgb_leds``: addressable RGB LEDs (WS2812) on one pin; the simulator shows their colours.

Inputs ``led<i>_r``, ``_g``, ``_b`` (0..255) for each of the strip's ``leds`` LEDs, as
the MCU side decodes them from the bit timing; nothing goes back to the MCU. The live
scene draws them as coloured spheres across the robot's top
(:func:`hil_sim.core.scene.strip_shapes`); a scenario's ``led:`` assertion judges
them, its report showing the LED's red, green and blue over time and each colour as
it began (``metrics.json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hil_sim.core.devices.base import Array, DeviceModel
from hil_sim.core.robot_model import DeviceSpec

#: The longest strip a device may be (the signal link carries at most 255 signals).
MAX_LEDS = 64
CHANNELS = "rgb"


def led_signal(index: int, channel: str) -> str:
    """The signal of LED ``index``'s ``channel`` (r, g or b): ``led3_g``."""
    return f"led{index}_{channel}"


class RgbLeds(DeviceModel):
    """Every LED strip of a group of robots (module docstring)."""

    KIND = "rgb_leds"
    INPUTS = tuple(led_signal(i, c) for i in range(MAX_LEDS) for c in CHANNELS)

    @classmethod
    def signals(cls, spec: DeviceSpec, params: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Takes the colours of its ``leds`` LEDs; gives nothing to the MCU."""
        del spec
        return cls.INPUTS[: 3 * int(params["leds"])], ()

    def colours(self, index: int) -> Array:
        """(n, leds, 3) the colours (0..255) device ``index``'s LEDs show."""
        leds = int(self.params[index]["leds"])
        colours: Array = self.inputs[:, index, : 3 * leds].reshape(self.robots, leds, 3)
        return np.clip(colours, 0.0, 255.0)
