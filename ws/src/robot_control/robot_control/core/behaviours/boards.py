"""``boards``: the HIL demo task, knock down the boards standing around the robot.

A star search from where the robot starts (home), steered by the compass alone:

1. **scan**: spin in place through ``scan_deg`` (380: all round, by the compass) and
   note the ultrasonic range at every heading;
2. **aim**: turn to the nearest echo within ``range_cm`` (150 cm), at the middle of the
   headings it was seen at;
3. **charge**: drive at it holding that heading, until a bumper closes or it has driven
   ``overshoot_m`` past the echo;
4. **return**: back up along the same heading until it is level with home again;
5. **check**: stand for ``check_s`` facing that heading. Something hit that is still
   there at about the same range (within ``still_cm``) did not fall (a wall, the box):
   that heading (``block_deg`` either side) is left alone for ``block_s``. A miss (no
   bump) that is still there is tried again, up to ``misses`` times. Then the next
   echo of the scan, or scan again;
6. **home**: before either, a robot more than ``home_m`` from home (a return that went
   askew, a backoff) turns to home and drives there.

A bump anywhere else (spinning into something) backs off for ``backoff_s``, goes home
and scans. Two bumps on the way home make the robot give up on it: where it stands is
home from then on.

Why a star from home rather than wandering: every trip ends where it began, so the
boards stay within range of the scan however the trips went, and a few milliseconds
of firmware timing change one trip's length, not where the rest of the search happens.
The wandering search before it (charge what is seen, back off, turn, spin, head for
far echoes) finished or trapped itself at the box depending on exactly such timing:
seed 4 with the firmware in simavr never found its last board, and a virtual MCU
whose frames came every period instead of skipping one in sixteen lost most seeds.
Where the robot is, relative to home, is dead reckoned: the odometer of the sensors
(what the MCU says its motors are doing, :mod:`robot_control.core.odometry`) along the
compass heading. Not from the commanded speed and time: a lost ``DRV`` line, a command
the MCU refused or its watchdog stopping the wheels change what the robot drove, not
what was commanded, and such a trip came home short or long; over a long run on a
faulty link (``bench/soak.py``) home wandered until the last board was out of range.
Out and back at the same speeds, the motors' lag nearly cancels. Each leg is also
bounded in time (``leg_slack`` times what it should take at its speed, plus a
second), should the odometer stop while the wheels turn.

Headings are the compass's, clockwise from north: turning left (positive angular
speed) lowers them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from robot_control.core.behaviours.base import Sensors

#: The modes of the search, in the order a trip goes through them.
MODES = ("scan", "aim", "charge", "return", "check", "home", "backoff")

#: Heading error (deg) beyond which the robot turns on the spot to face home first.
FACE_HOME_DEG = 30.0


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
    home_m: float = 0.1
    #: A leg (charge, return, the way home) may take this many times its time at speed.
    leg_slack: float = 2.0
    #: Bumps on the way home before the robot takes where it is as home.
    home_bumps: int = 2
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
    _bumped: bool = False
    _check_cm: float = math.inf
    #: (until, heading) of headings not to charge.
    _blocked: list[tuple[float, float]] = field(default_factory=list)
    #: Misses (a charge without a bump at something still there) per ``block_deg`` of heading.
    _missed: dict[int, int] = field(default_factory=dict)
    #: Dead-reckoned position (m east, m north) relative to home.
    _east: float = 0.0
    _north: float = 0.0
    _odometer_m: float | None = None
    #: The odometer when the charge began.
    _charge_from_m: float = 0.0
    #: Until when the leg in progress may go on.
    _leg_until: float = math.inf
    _bumps_going_home: int = 0

    def reset(self) -> None:
        """Start afresh: this is home now; forget blocks, misses and any trip in progress."""
        self._blocked.clear()
        self._missed.clear()
        self._target = None
        self._queue.clear()
        self._east = self._north = 0.0
        self._odometer_m = None
        self._bumps_going_home = 0
        self._scan(0.0)

    def update(self, sensors: Sensors | None, now: float) -> tuple[float, float]:
        """Twist for the latest sensors."""
        if sensors is None:
            return 0.0, 0.0
        self._track(sensors)
        if sensors.bumped:
            if self.mode == "charge":
                self._bumped = True
                self._come_back(now)
            elif self.mode not in ("return", "backoff"):
                self._bumps_going_home += self.mode == "home"
                self._go("backoff", now)
            elif self.mode == "backoff":
                self._since = now  # held against something: keep backing off
        step: Callable[[Sensors, float], tuple[float, float]] = getattr(self, f"_{self.mode}_step")
        return step(sensors, now)

    def _from_home(self) -> float:
        """Dead-reckoned distance (m) from home."""
        return math.hypot(self._east, self._north)

    def _track(self, sensors: Sensors) -> None:
        if self._odometer_m is not None:
            driven = sensors.odometer_m - self._odometer_m
            heading = math.radians(sensors.heading_deg)
            self._east += driven * math.sin(heading)
            self._north += driven * math.cos(heading)
        self._odometer_m = sensors.odometer_m

    def _go(self, mode: str, now: float) -> None:
        self.mode, self._since = mode, now

    def _leg(self, now: float, metres: float, speed: float) -> None:
        """Bound the leg starting ``now``: ``metres`` at ``speed``, with slack."""
        self._leg_until = now + self.leg_slack * metres / speed + 1.0

    def _scan(self, now: float) -> None:
        self._go("scan", now)
        self._turned_deg, self._last_heading = 0.0, None
        self._samples.clear()
        self._queue.clear()

    def _come_back(self, now: float) -> None:
        self._go("return", now)
        self._leg(now, self._along(), self.return_speed)

    def _along(self) -> float:
        """How far (m) the robot is out from home along the target's heading."""
        assert self._target is not None
        heading = math.radians(self._target[0])
        return self._east * math.sin(heading) + self._north * math.cos(heading)

    def _hold(self, heading: float, target: float | None = None) -> float:
        """Angular speed that turns towards ``target`` (default: the target echo's heading)."""
        if target is None:
            assert self._target is not None
            target = self._target[0]
        error = math.radians(heading_error(target, heading))
        return -max(-self.spin_rate, min(self.spin_rate, self.heading_gain * error))

    def _resume(self, sensors: Sensors, now: float) -> tuple[float, float]:
        """After a trip or a backoff: home first if away from it, then the next echo or a scan."""
        distance = self._from_home()
        if distance > self.home_m:
            self._go("home", now)
            self._leg(now, distance, self.return_speed)
            return self._home_step(sensors, now)
        self._bumps_going_home = 0
        if self._queue:
            return self._next(sensors, now)
        self._scan(now)
        return 0.0, self.spin_rate

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
            self._charge_from_m = sensors.odometer_m
            self._leg(now, self._charge_m(), self.forward_speed)
            return self._charge_step(sensors, now)
        return 0.0, self._turn(self._hold(sensors.heading_deg))

    def _turn(self, angular: float) -> float:
        # Not so slow near the target that the motors' dead band stalls the turn.
        floor = 0.2 * self.spin_rate
        return angular if abs(angular) >= floor else math.copysign(floor, angular)

    def _charge_m(self) -> float:
        assert self._target is not None
        return self._target[1] / 100.0 + self.overshoot_m

    def _charge_step(self, sensors: Sensors, now: float) -> tuple[float, float]:
        if sensors.odometer_m - self._charge_from_m >= self._charge_m() or now >= self._leg_until:
            self._come_back(now)
            return self._return_step(sensors, now)
        return self.forward_speed, self._hold(sensors.heading_deg)

    def _return_step(self, sensors: Sensors, now: float) -> tuple[float, float]:
        if self._along() > 0.0 and now < self._leg_until:
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
        return self._resume(sensors, now)

    def _home_step(self, sensors: Sensors, now: float) -> tuple[float, float]:
        if now >= self._leg_until or self._bumps_going_home >= self.home_bumps:
            self._east = self._north = 0.0  # as near as it will get: this is home now
            return self._resume(sensors, now)
        distance = self._from_home()
        if distance <= self.home_m / 2:
            return self._resume(sensors, now)
        bearing = math.degrees(math.atan2(-self._east, -self._north)) % 360.0
        angular = self._hold(sensors.heading_deg, bearing)
        if abs(heading_error(bearing, sensors.heading_deg)) > FACE_HOME_DEG:
            return 0.0, self._turn(angular)
        # Slower on the last few centimetres, so as not to overshoot them.
        return min(self.return_speed, 4.0 * distance), angular

    def _backoff_step(self, sensors: Sensors, now: float) -> tuple[float, float]:
        if now - self._since < self.backoff_s:
            return -self.backoff_speed, 0.0
        self._queue.clear()  # seen from where the bump was: look again
        return self._resume(sensors, now)
