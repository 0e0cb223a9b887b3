"""``boards``: the HIL demo task, knock down the boards standing around the robot.

A star search from where the robot starts (home), steered by the compass alone:

1. **scan**: spin in place through ``scan_deg`` (380: all round, by the compass) and
   note the ultrasonic range at every heading;
2. **aim**: turn to the nearest echo within ``range_cm`` (150 cm), at the middle of the
   headings it was seen at;
3. **charge**: drive at it holding that heading, until a bumper closes or it has driven
   ``overshoot_m`` past the echo;
4. **return**: back up along the same heading for as long as it charged (scaled by the
   speeds), which brings it home again;
5. **check**: stand for ``check_s`` facing that heading. Something hit that is still
   there at about the same range (within ``still_cm``) did not fall (a wall, the box):
   that heading (``block_deg`` either side) is left alone for ``block_s``. A miss (no
   bump) that is still there is tried again, up to ``misses`` times. Then scan again.

A bump anywhere else (spinning into something) backs off for ``backoff_s`` and scans.

Why a star from home rather than wandering: every trip ends where it began, so the
boards stay within range of the scan however the trips went, and a few milliseconds
of firmware timing change one trip's length, not where the rest of the search happens.
The wandering search before it (charge what is seen, back off, turn, spin, head for
far echoes) finished or trapped itself at the box depending on exactly such timing:
seed 4 with the firmware in simavr never found its last board, and a virtual MCU
whose frames came every period instead of skipping one in sixteen lost most seeds.
Distance is dead reckoned from the commanded speed and time: out and back at the same
speeds, the motors' lag nearly cancels.

Headings are the compass's, clockwise from north: turning left (positive angular
speed) lowers them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from robot_control.core.behaviours.base import Sensors

#: The modes of the search, in the order a trip goes through them.
MODES = ("scan", "aim", "charge", "return", "check", "backoff")


def heading_error(target: float, heading: float) -> float:
    """``target - heading`` in degrees, wrapped to [-180, 180)."""
    return (target - heading + 180.0) % 360.0 - 180.0


@dataclass
class BoardsBehaviour:
    """Scan from home, charge the nearest echo, come back, check it fell."""

    forward_speed: float = 0.4
    return_speed: float = 0.4
    spin_rate: float = 1.5
    backoff_speed: float = 0.2
    backoff_s: float = 2.0
    range_cm: float = 150.0
    scan_deg: float = 380.0
    aim_deg: float = 4.0
    #: Angular speed (rad/s) per radian of heading error when aiming and holding a heading.
    heading_gain: float = 4.0
    overshoot_m: float = 0.25
    check_s: float = 0.3
    still_cm: float = 30.0
    block_deg: float = 20.0
    block_s: float = 60.0
    misses: int = 3
    name: str = "boards"
    mode: str = "scan"
    _since: float = 0.0
    _turned_deg: float = 0.0
    _last_heading: float | None = None
    #: (heading, cm) of every report in the scan in progress.
    _samples: list[tuple[float, float]] = field(default_factory=list)
    #: (heading, cm) of the echoes the last scan saw and no trip has gone to yet.
    _queue: list[tuple[float, float]] = field(default_factory=list)
    #: (heading, cm) of the echo being charged.
    _target: tuple[float, float] | None = None
    _charge_s: float = 0.0
    _bumped: bool = False
    _check_cm: float = math.inf
    #: (until, heading) of headings not to charge.
    _blocked: list[tuple[float, float]] = field(default_factory=list)
    #: Misses (a charge without a bump at something still there) per ``block_deg`` of heading.
    _missed: dict[int, int] = field(default_factory=dict)

    def reset(self) -> None:
        """Start afresh: this is home now; forget blocks, misses and any trip in progress."""
        self._blocked.clear()
        self._missed.clear()
        self._target = None
        self._queue.clear()
        self._scan(0.0)

    def update(self, sensors: Sensors | None, now: float) -> tuple[float, float]:
        """Twist for the latest sensors."""
        if sensors is None:
            return 0.0, 0.0
        if sensors.bumped:
            if self.mode == "charge":
                self._bumped = True
                self._come_back(now)
            elif self.mode not in ("return", "backoff"):
                self._go("backoff", now)
            elif self.mode == "backoff":
                self._since = now  # held against something: keep backing off
        step: Callable[[Sensors, float], tuple[float, float]] = getattr(self, f"_{self.mode}_step")
        return step(sensors, now)

    def _go(self, mode: str, now: float) -> None:
        self.mode, self._since = mode, now

    def _scan(self, now: float) -> None:
        self._go("scan", now)
        self._turned_deg, self._last_heading = 0.0, None
        self._samples.clear()
        self._queue.clear()

    def _come_back(self, now: float) -> None:
        self._charge_s = now - self._since
        self._go("return", now)

    def _hold(self, heading: float) -> float:
        """Angular speed that turns towards the target's heading (clockwise headings)."""
        assert self._target is not None
        error = math.radians(heading_error(self._target[0], heading))
        return -max(-self.spin_rate, min(self.spin_rate, self.heading_gain * error))

    def _is_blocked(self, heading: float, now: float) -> bool:
        self._blocked = [(until, h) for until, h in self._blocked if now < until]
        return any(abs(heading_error(h, heading)) < self.block_deg for _, h in self._blocked)

    def _scan_step(self, sensors: Sensors, now: float) -> tuple[float, float]:
        heading = sensors.heading_deg
        if self._last_heading is not None:
            # Wrapped steps add up to the whole turn, whatever the compass noise.
            self._turned_deg += heading_error(heading, self._last_heading)
        self._last_heading = heading
        self._samples.append((heading, sensors.ultrasonic_cm))
        if abs(self._turned_deg) < self.scan_deg:
            return 0.0, self.spin_rate
        self._queue = self._echoes(now)
        if not self._queue:
            self._scan(now)  # nothing to charge: keep looking
            return 0.0, self.spin_rate
        return self._next(sensors, now)

    def _next(self, sensors: Sensors, now: float) -> tuple[float, float]:
        """Aim at the queued echo nearest in heading (the boards do not move unless hit)."""
        self._target = min(self._queue, key=lambda echo: abs(heading_error(echo[0], sensors.heading_deg)))
        self._queue.remove(self._target)
        self._go("aim", now)
        return self._aim_step(sensors, now)

    def _echoes(self, now: float) -> list[tuple[float, float]]:
        """What the scan saw in range and not blocked: (middle heading, nearest cm) each.

        Consecutive reports in range at about the same distance are one object (the
        ranger's cone spreads one board over some 30 degrees of a scan); the scan's
        overlap with its own start sees some twice, kept once.
        """
        runs: list[tuple[float, float, float]] = []  # (middle, cm, width in degrees)
        run: list[tuple[float, float]] = []
        for heading, cm in [*self._samples, (0.0, math.inf)]:
            in_range = cm < self.range_cm and not self._is_blocked(heading, now)
            if run and (not in_range or abs(cm - run[-1][1]) > 25.0):
                first, last = run[0][0], run[-1][0]
                width = heading_error(last, first)
                runs.append(((first + width / 2) % 360.0, min(c for _, c in run), abs(width)))
                run = []
            if in_range:
                run.append((heading, cm))
        # Of two sightings of one object (overlapping in heading) keep the wider: the
        # first may have been cut short by the scan's start.
        kept: list[tuple[float, float, float]] = []
        for middle, cm, width in sorted(runs, key=lambda r: -r[2]):
            if all(abs(heading_error(middle, m)) > (width + w) / 2 for m, _, w in kept):
                kept.append((middle, cm, width))
        return [(middle, cm) for middle, cm, _ in kept]

    def _aim_step(self, sensors: Sensors, now: float) -> tuple[float, float]:
        assert self._target is not None
        if abs(heading_error(self._target[0], sensors.heading_deg)) <= self.aim_deg:
            self._bumped = False
            self._go("charge", now)
            return self._charge_step(sensors, now)
        angular = self._hold(sensors.heading_deg)
        # Not so slow near the target that the motors' dead band stalls the turn.
        floor = 0.2 * self.spin_rate
        return 0.0, angular if abs(angular) >= floor else math.copysign(floor, angular)

    def _charge_step(self, sensors: Sensors, now: float) -> tuple[float, float]:
        assert self._target is not None
        if (now - self._since) * self.forward_speed >= self._target[1] / 100.0 + self.overshoot_m:
            self._come_back(now)
            return self._return_step(sensors, now)
        return self.forward_speed, self._hold(sensors.heading_deg)

    def _return_step(self, sensors: Sensors, now: float) -> tuple[float, float]:
        if now - self._since < self._charge_s * self.forward_speed / self.return_speed:
            return -self.return_speed, self._hold(sensors.heading_deg)
        self._check_cm = math.inf
        self._go("check", now)
        return self._check_step(sensors, now)

    def _check_step(self, sensors: Sensors, now: float) -> tuple[float, float]:
        assert self._target is not None
        self._check_cm = min(self._check_cm, sensors.ultrasonic_cm)
        if now - self._since < self.check_s:
            return 0.0, self._hold(sensors.heading_deg)
        heading, cm = self._target
        if self._check_cm < cm + self.still_cm:
            key = int(heading // self.block_deg)
            self._missed[key] = self._missed.get(key, 0) + (not self._bumped)
            if self._bumped or self._missed[key] >= self.misses:
                self._blocked.append((now + self.block_s, heading))
        self._target = None
        if self._queue:
            return self._next(sensors, now)
        self._scan(now)
        return 0.0, self.spin_rate

    def _backoff_step(self, sensors: Sensors, now: float) -> tuple[float, float]:
        if now - self._since < self.backoff_s:
            return -self.backoff_speed, 0.0
        self._scan(now)
        return 0.0, self.spin_rate
