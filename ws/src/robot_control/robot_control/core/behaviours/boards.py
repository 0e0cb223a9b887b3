"""``boards``: the HIL demo task, knock down the boards standing around the robot.

Drive forward while the ultrasonic ranger sees something within ``range_cm`` (150 cm);
after a bumper hit, back off for ``backoff_s`` (2 s), then turn left for ``turn_s``
(1 s, about 86 degrees) before charging again; otherwise spin left in place to look
for the next board. Without the turn a robot that hit a wall head-on backed off,
saw the same wall and charged it again forever: the firmware in simavr, whose
HC-SR04 is read every 60 ms like the real one, ran into that within 25 s.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    name: str = "boards"
    _backing_until: float = float("-inf")

    def reset(self) -> None:
        """Forget a back-off in progress."""
        self._backing_until = float("-inf")

    def update(self, sensors: Sensors | None, now: float) -> tuple[float, float]:
        """Twist for the latest sensors."""
        if sensors is None:
            return 0.0, 0.0
        if sensors.bumped and now >= self._backing_until:
            self._backing_until = now + self.backoff_s
        if now < self._backing_until:
            return -self.backoff_speed, 0.0
        if now < self._backing_until + self.turn_s:
            return 0.0, self.spin_rate
        if sensors.ultrasonic_cm < self.range_cm:
            return self.forward_speed, 0.0
        return 0.0, self.spin_rate
