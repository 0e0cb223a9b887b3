"""How far the robot drove and turned: its motor commands, checked against the MCU's.

The demo robot has no wheel encoders. The odometer integrates the loop's own motor
commands, from the moment each is written, through a model of each wheel
(:class:`~robot_control.core.kinematics.DriveGeometry`): a driven wheel reaches
its command's speed with the motor's first-order lag (``time_constant``); a wheel
whose command is zero is not driven at all (an L298 with its enable low lets the
motor coast) and slows by friction alone, at ``coast_decel``. That coast is long:
the demo robot rolls some 20 cm after a stop from 0.4 m/s, and a trip that ends
where the commands stop ends that far beyond home.

What the loop commands is not always what the wheels get: a ``DRV`` line lost on the
link (the MCU keeps the old command), one damaged into other numbers in plain mode,
the MCU's watchdog (both at zero until the next heartbeat). ``TL1`` says what the MCU
applies, every telemetry period. A report that matches none of the commands of the
last ``fresh_s`` (a report and a half) overrides them for ``fresh_s``: the wheels run
at what it says. A report that matches changes nothing, so the commands' own timing
holds (a report lags a change by up to a period), and when reports go missing on a
bad link, whole seconds at a time, the commands carry on alone. Where the telemetry
has no ``TL1`` it is the commands throughout. Report values beyond ``max_command``
(a damaged line in plain mode that still parsed) are clipped and counted.

Distance (forward positive) and turn (clockwise, as compass headings go) are at the
commands' nominal speed (a command is its share of ``max_wheel_speed``): estimates,
as dead reckoning is.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from robot_control.core.kinematics import DriveGeometry
from robot_control.errors import RobotControlError


@dataclass
class Odometer:
    """Distance driven (m) and turn (deg) since the start, dead reckoned."""

    geometry: DriveGeometry = field(default_factory=DriveGeometry)
    fresh_s: float = 0.15
    #: Metres driven since the start (forward positive).
    distance_m: float = 0.0
    #: Degrees turned since the start, clockwise (as compass headings go).
    turned_deg: float = 0.0
    #: MCU reports fed in.
    reports: int = 0
    #: Reports that matched no recent command (the wheels went by the report).
    overrides: int = 0
    #: Reports with a value beyond ``max_command`` (clipped).
    clipped: int = 0
    #: (time, left, right) of the recent commands, oldest first.
    _commands: deque[tuple[float, float, float]] = field(default_factory=deque)
    #: (left, right) of the loop's command, and of an overriding report until when.
    _commanded: tuple[float, float] = (0.0, 0.0)
    _reported: tuple[float, float] = (0.0, 0.0)
    _override_until: float = -math.inf
    #: (left, right) rim speeds (m/s) of the wheels as the model has them.
    _wheels: tuple[float, float] = (0.0, 0.0)
    _counted_to: float | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.fresh_s) and self.fresh_s > 0):
            raise RobotControlError(f"odometer: fresh_s = {self.fresh_s!r} must be a positive number")

    def command(self, now: float, left: float, right: float) -> None:
        """The loop commands (``left``, ``right``) from ``now`` on."""
        self.advance(now)
        if not self._commands or self._commands[-1][1:] != (left, right):
            self._commands.append((now, left, right))
        self._commanded = (left, right)

    def report(self, now: float, left: float, right: float) -> None:
        """The MCU says its motors run at (``left``, ``right``) (TL1)."""
        self.advance(now)
        self.reports += 1
        limit = self.geometry.max_command
        if not all(math.isfinite(v) and abs(v) <= limit for v in (left, right)):
            self.clipped += 1
            left, right = (max(-limit, min(limit, v)) if math.isfinite(v) else 0.0 for v in (left, right))
        # Commands older than the window go, but the one in force at its start stays.
        while len(self._commands) > 1 and self._commands[1][0] <= now - self.fresh_s:
            self._commands.popleft()
        if any(command[1:] == (left, right) for command in self._commands):
            self._override_until = -math.inf
            return
        self.overrides += 1
        self._reported = (left, right)
        self._override_until = now + self.fresh_s

    def advance(self, now: float) -> float:
        """Bring the distance and turn up to ``now``; returns the distance."""
        start = now if self._counted_to is None else self._counted_to
        overridden_until = min(now, self._override_until)
        if overridden_until > start:
            self._add(self._reported, overridden_until - start)
            start = overridden_until
        if now > start:
            self._add(self._commanded, now - start)
        self._counted_to = max(now, start)
        return self.distance_m

    def _add(self, commands: tuple[float, float], seconds: float) -> None:
        """``seconds`` of ``commands`` (left, right) through the wheel model, exactly."""
        geometry = self.geometry
        per_count = geometry.max_wheel_speed * geometry.wheel_radius / geometry.max_command
        driven = [
            _wheel(speed, command * per_count, seconds, geometry)
            for speed, command in zip(self._wheels, commands, strict=True)
        ]
        (left_m, left_speed), (right_m, right_speed) = driven
        self._wheels = (left_speed, right_speed)
        self.distance_m += (left_m + right_m) / 2
        self.turned_deg -= math.degrees((right_m - left_m) / geometry.wheel_base)  # left turn: lower


def _wheel(speed: float, target: float, seconds: float, geometry: DriveGeometry) -> tuple[float, float]:
    """(metres, end speed) of a wheel at rim ``speed`` after ``seconds`` driven to ``target``.

    A target of zero is no drive: the wheel coasts down at ``coast_decel`` and stays
    stopped; any other is approached with the first-order lag ``time_constant``.
    """
    if target == 0.0:
        decel = geometry.coast_decel
        stop_s = abs(speed) / decel if decel > 0 else math.inf
        if seconds >= stop_s:
            return speed * stop_s / 2, 0.0
        slowing = math.copysign(decel, speed)
        return speed * seconds - slowing * seconds**2 / 2, speed - slowing * seconds
    lag = geometry.time_constant
    decay = math.exp(-seconds / lag) if lag > 0 else 0.0
    return target * seconds + (speed - target) * lag * (1.0 - decay), target + (speed - target) * decay
