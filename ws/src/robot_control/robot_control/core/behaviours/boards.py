"""``boards``: the HIL demo task, knock down the boards standing around the robot.

Drive forward while the ultrasonic ranger sees something within ``range_cm`` (150 cm);
after a bumper hit, back off for ``backoff_s`` (2 s), then turn left for ``turn_s``
(1 s, about 86 degrees); otherwise spin left in place to look for the next board.

A bump's compass heading is remembered for ``ignore_s`` (20 s): nothing is charged
within ``ignore_deg`` (45 degrees) of it, since what stood there did not fall (a
wall, the box). Without this the robot backed off, saw the same obstacle and charged
it again forever: the firmware in simavr, whose HC-SR04 is read every 60 ms like the
real one, ran into that against the box within 25 s. 45 degrees because the robot,
backed off, is about 0.4 m from what it hit: a 0.4 m box spans about 27 degrees each
side from there and the ranger's cone adds 15; at 20 it charged the box's other corner.
A bump is forgotten at once if, backed off and still facing it, the ranger sees
nothing within ``gone_cm`` (80 cm): what was hit fell, and the wide window would
hide its neighbours.

A search that turns ``search_turn_deg`` (400: a full look and a little more, so the
heading it started at is seen again) by the compass without anything to charge heads
for the nearest echo it saw beyond ``range_cm`` but short of ``far_cm`` (the ranger's
200 cm reads as nothing there), away from recent bumps: it turns to that heading and
drives towards it for ``wander_s`` (2 s), or until something comes into range. With
no echo at all it drives straight out. Without this the last boards, standing beyond
the charging range, were never found: the robot spun where the earlier ones had
fallen and charged the box again each time its bump was forgotten (seen with the
firmware in simavr and on MuJoCo, depending on a few cycles of timing).
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
    ignore_deg: float = 45.0
    ignore_s: float = 20.0
    search_turn_deg: float = 400.0
    wander_s: float = 2.0
    far_cm: float = 195.0
    aim_deg: float = 10.0
    gone_cm: float = 80.0
    name: str = "boards"
    _backing_until: float = float("-inf")
    #: (time, heading in degrees) of recent bumps.
    _bumps: list[tuple[float, float]] = field(default_factory=list)
    #: The search in progress: degrees turned so far, and the heading last seen.
    _turned_deg: float = 0.0
    _last_heading: float | None = None
    #: The nearest echo beyond charging range seen in this search: (cm, heading).
    _far: tuple[float, float] | None = None
    _aim_heading: float | None = None
    _wander_until: float = float("-inf")
    #: The ranger's last reading while backing off, facing the bump; None when no back-off is pending.
    _backing_reading: float | None = None

    def reset(self) -> None:
        """Forget a back-off in progress, the bumps and the search."""
        self._backing_until = float("-inf")
        self._bumps.clear()
        self._new_search()
        self._wander_until = float("-inf")
        self._aim_heading = None
        self._backing_reading = None

    def _new_search(self) -> None:
        self._turned_deg, self._last_heading, self._far = 0.0, None, None

    def _searched_all_round(self, heading: float) -> bool:
        """Count the turn by the compass; True once it has turned ``search_turn_deg``."""
        if self._last_heading is not None:
            # Wrapped steps add up to the whole turn, whatever the compass noise.
            self._turned_deg += (heading - self._last_heading + 180.0) % 360.0 - 180.0
        self._last_heading = heading
        return abs(self._turned_deg) >= self.search_turn_deg

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
            self._wander_until, self._aim_heading = float("-inf"), None
        if now < self._backing_until:
            self._backing_reading = sensors.ultrasonic_cm
            return -self.backoff_speed, 0.0
        if self._backing_reading is not None:
            if self._backing_reading >= self.gone_cm and self._bumps:
                self._bumps.pop()  # it fell: nothing there to avoid
            self._backing_reading = None
        return self._look(sensors, now)

    def _look(self, sensors: Sensors, now: float) -> tuple[float, float]:
        """After a back-off: turn away, charge what is in range, or search for it."""
        if now < self._backing_until + self.turn_s:
            self._new_search()  # turning away is not looking
            return 0.0, self.spin_rate
        heading, distance = sensors.heading_deg, sensors.ultrasonic_cm
        blocked = self._bumped_towards(heading, now)
        if distance < self.range_cm and not blocked:
            self._new_search()
            self._wander_until, self._aim_heading = float("-inf"), None
            return self.forward_speed, 0.0
        if self._aim_heading is not None:
            if abs((heading - self._aim_heading + 180.0) % 360.0 - 180.0) > self.aim_deg:
                return 0.0, self.spin_rate  # still turning to the echo
            self._aim_heading, self._wander_until = None, now + self.wander_s
        if now < self._wander_until:
            return self.forward_speed, 0.0
        if distance < self.far_cm and not blocked and (self._far is None or distance < self._far[0]):
            self._far = (distance, heading)
        if self._searched_all_round(heading):
            return self._leave(now)
        return 0.0, self.spin_rate

    def _leave(self, now: float) -> tuple[float, float]:
        """A full look found nothing to charge: head for the nearest far echo, or straight out."""
        far = self._far
        self._new_search()
        if far is not None:
            self._aim_heading = far[1]
            return 0.0, self.spin_rate
        self._wander_until = now + self.wander_s
        return self.forward_speed, 0.0
