"""What behaviours see (the TL2 sensor list) and what they must provide."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from robot_control.errors import RobotControlError

#: TL2 fields a behaviour needs (hil_devices/config/telemetry.yaml).
SENSOR_FIELDS = (
    "ultrasonic_cm",
    "ir_adc",
    "light_0",
    "light_1",
    "light_2",
    "light_3",
    "bumper_left",
    "bumper_right",
    "heading_deg",
)


@dataclass(frozen=True)
class Sensors:
    """One TL2 report and the odometer (:mod:`robot_control.core.odometry`).

    Ranges, four light readings (front, left, back, right), bumpers, heading.
    """

    ultrasonic_cm: float
    ir_adc: float
    light: tuple[float, float, float, float]
    bumper_left: bool
    bumper_right: bool
    heading_deg: float
    #: Signed metres driven since the loop started (forward positive).
    odometer_m: float = 0.0

    @classmethod
    def from_telemetry(cls, fields: Mapping[str, float], *, odometer_m: float = 0.0) -> Sensors:
        """Build from TL2's named fields and the odometer's reading.

        Raises:
            RobotControlError: a field the behaviours need is missing from the list.
        """
        missing = [name for name in SENSOR_FIELDS if name not in fields]
        if missing:
            raise RobotControlError(f"TL2 lacks {missing}: the telemetry schema must name them")
        return cls(
            ultrasonic_cm=fields["ultrasonic_cm"],
            ir_adc=fields["ir_adc"],
            light=(fields["light_0"], fields["light_1"], fields["light_2"], fields["light_3"]),
            bumper_left=fields["bumper_left"] > 0.5,
            bumper_right=fields["bumper_right"] > 0.5,
            heading_deg=fields["heading_deg"],
            odometer_m=odometer_m,
        )

    @property
    def bumped(self) -> bool:
        """Either bumper switch closed."""
        return self.bumper_left or self.bumper_right


class Behaviour(Protocol):
    """A behaviour: sensors in, body twist out."""

    name: str

    def update(self, sensors: Sensors | None, now: float) -> tuple[float, float]:
        """The twist (m/s, rad/s) for the latest sensors (None before the first report)."""

    def reset(self) -> None:
        """Forget all state (on switching to the behaviour)."""
