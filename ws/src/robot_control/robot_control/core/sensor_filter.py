"""Sensor readings the robot cannot have made, kept from the behaviours.

In checked mode a damaged line never arrives. In plain mode (the thesis's protocol:
no checksum) a bit flipped in a digit still parses: a compass heading 80 degrees off
for one report, a bumper that reads closed for a tenth of a second, a phantom echo.
The behaviours steer by those readings, so one such report can end a charge, block
a heading for a minute or turn the robot off its way home. Each TL2 report goes
through :class:`SensorFilter` first:

* **range**: a value outside what the sensor can report (:data:`PLAUSIBLE`) is
  replaced by the field's last accepted value;
* **heading**: a heading more than ``heading_gate_deg`` from where the last accepted
  one and the turn since then (the odometer's, from the motor commands) put it is
  rejected, unless ``resync_after`` reports in a row say so: then the compass is
  right and the prediction wrong (the robot was pushed round), and it is taken;
* **bumpers**: a switch counts as closed once ``press_reports`` reports in a row say
  so, as firmware debounces a switch; it opens at once.

Every rejected reading is counted by field and reason (:attr:`SensorFilter.rejected`).
The filter cannot catch a damaged value that is still plausible (a heading off by a
degree, a range off by a few centimetres); the behaviours take those as noise.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from robot_control.errors import RobotControlError

#: What each TL2 field can read: (lowest, highest); heading is [0, 360).
PLAUSIBLE: dict[str, tuple[float, float]] = {
    "ultrasonic_cm": (0.0, 400.0),  # HC-SR04: 2-400 cm
    "ir_adc": (0.0, 1023.0),
    "light_0": (0.0, 1023.0),
    "light_1": (0.0, 1023.0),
    "light_2": (0.0, 1023.0),
    "light_3": (0.0, 1023.0),
    "bumper_left": (0.0, 1.0),
    "bumper_right": (0.0, 1.0),
    "heading_deg": (0.0, 360.0),
}

BUMPERS = ("bumper_left", "bumper_right")


def _wrapped(degrees: float) -> float:
    return (degrees + 180.0) % 360.0 - 180.0


@dataclass
class SensorFilter:
    """Range, heading and bumper checks on TL2's named fields."""

    heading_gate_deg: float = 25.0
    resync_after: int = 3
    press_reports: int = 2
    #: Rejected readings by ``"<field> <reason>"``.
    rejected: Counter[str] = field(default_factory=Counter)
    _accepted: dict[str, float] = field(default_factory=dict)
    #: The odometer's turn (deg, clockwise) when the accepted heading was read.
    _turned_at_heading: float = 0.0
    _heading_rejections: int = 0
    _pressed_for: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not (math.isfinite(self.heading_gate_deg) and 0 < self.heading_gate_deg < 180):
            raise RobotControlError(
                f"sensor filter: heading_gate_deg = {self.heading_gate_deg!r} must be in (0, 180)"
            )
        for name in ("resync_after", "press_reports"):
            if getattr(self, name) < 1:
                raise RobotControlError(f"sensor filter: {name} = {getattr(self, name)!r} must be at least 1")

    def filter(self, fields: Mapping[str, float], *, turned_deg: float) -> dict[str, float]:
        """The report with implausible readings replaced by the last accepted ones.

        Args:
            fields: one TL2 report's named fields.
            turned_deg: the odometer's turn so far (deg, clockwise, any origin).
        """
        out = dict(fields)
        kept: set[str] = set()
        for name, value in fields.items():
            limits = PLAUSIBLE.get(name)
            if limits is None:
                continue
            low, high = limits
            if not (math.isfinite(value) and low <= value <= high) or (
                name == "heading_deg" and value == high
            ):
                self.rejected[f"{name} out of range"] += 1
                self._keep(out, name)
                kept.add(name)
        if "heading_deg" in out and "heading_deg" not in kept:
            self._heading(out, turned_deg)
        for name in BUMPERS:
            if name in out:
                self._debounce(out, name)
        self._accepted.update(out)
        return out

    def _keep(self, out: dict[str, float], name: str) -> None:
        if name in self._accepted:
            out[name] = self._accepted[name]
        else:
            out.pop(name)  # nothing to stand in for it yet: the report lacks the field

    def _heading(self, out: dict[str, float], turned_deg: float) -> None:
        last = self._accepted.get("heading_deg")
        if last is None:
            self._turned_at_heading = turned_deg
            return
        predicted = last + turned_deg - self._turned_at_heading
        if abs(_wrapped(out["heading_deg"] - predicted)) > self.heading_gate_deg:
            self._heading_rejections += 1
            if self._heading_rejections < self.resync_after:
                self.rejected["heading_deg jump"] += 1
                out["heading_deg"] = last
                return
        self._heading_rejections = 0
        self._turned_at_heading = turned_deg

    def _debounce(self, out: dict[str, float], name: str) -> None:
        closed = out[name] > 0.5
        self._pressed_for[name] = self._pressed_for.get(name, 0) + 1 if closed else 0
        if closed and self._pressed_for[name] < self.press_reports:
            self.rejected[f"{name} not yet confirmed"] += 1
            out[name] = 0.0
