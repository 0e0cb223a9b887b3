"""``boards``: the HIL demo task, knock down the boards standing around the robot.

Drive forward while the ultrasonic ranger sees something within ``range_cm`` (150 cm);
after a bumper hit, back off for ``backoff_s`` (2 s), then turn left for ``turn_s``
(1 s, about 86 degrees); otherwise spin left in place to look for the next board.
A bump's compass heading is remembered for ``ignore_s`` (20 s): nothing is charged
within ``ignore_deg`` (20 degrees) of it, since what stood there did not fall (a wall,
the box). Without this the robot backed off, saw the same obstacle and charged it
again forever: the firmware in simavr, whose HC-SR04 is read every 60 ms like the
real one, ran into that against the box within 25 s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from robot_control.core.behaviours.base import Sensors


@dataclass
class BoardsBehaviour:
    """Spin, charge, back off."""

    forward_speed: float = 0.4
    spin_rate: float = 1.5
    backoff_speed: float = 0.2
    backoff_s: float = 2.0
    turn_s: float = 1.0
    range_cm: float = 150.0
    ignore_deg: float = 20.0
    ignore_s: float = 20.0
    name: str = "boards"
    _backing_until: float = float("-inf")
    #: (time, heading in degrees) of recent bumps.
    _bumps: list[tuple[float, float]] = field(default_factory=list)

    def reset(self) -> None:
        """Forget a back-off in progress and the bumps."""
        self._backing_until = float("-inf")
        self._bumps.clear()

    def _bumped_towards(self, heading: float, now: float) -> bool:
        self._bumps = [(t, h) for t, h in self._bumps if now - t < self.ignore_s]
        return any(abs((heading - h + 180.0) % 360.0 - 180.0) < self.ignore_deg for _, h in self._bumps)

    def update(self, sensors: Sensors | None, now: float) -> tuple[float, float]:
        """Twist for the latest sensors."""
        if sensors is None:
            return 0.0, 0.0
        if sensors.bumped and now >= self._backing_until:
            self._backing_until = now + self.backoff_s
            self._bumps.append((now, sensors.heading_deg))
        if now < self._backing_until:
            return -self.backoff_speed, 0.0
        if now < self._backing_until + self.turn_s:
            return 0.0, self.spin_rate
        if sensors.ultrasonic_cm < self.range_cm and not self._bumped_towards(sensors.heading_deg, now):
            return self.forward_speed, 0.0
        return 0.0, self.spin_rate
