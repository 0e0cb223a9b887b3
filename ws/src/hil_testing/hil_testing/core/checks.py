"""The assertions of a HIL scenario, judged on observations of the run.

A run is seen as one :class:`Observation` per lockstep period (the robot's pose and
speed, boards down, the loop's failsafes, the latest telemetry, the tasks' state;
the heartbeat round trips in the final one). Each check takes every observation,
says which simulated interval it is about (:meth:`Check.window`), when its verdict
can no longer change (:meth:`Check.decided`) and gives a :class:`Verdict` at the
end, and the signals it read against time (:meth:`Check.series`, each a
:class:`~hil_bringup.core.report.Series` with the bounds it held them to), which the
run report draws beside the verdicts: a new kind of check is drawn by the report as
it is. Checks keep state: make fresh ones per run.

Time windows are closed intervals of simulated seconds; ``None`` is the whole run,
``[0, duration]``: such a check is decided early only by a failure, so a run ends
before its duration only when every verdict is settled. :class:`Judged` keeps a
check's account of a run: the span its verdict covers, and an error (never a pass)
when the run ended before the check's window did.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from hil_bringup.core.report import Series, SeriesRecorder
from hil_testing.core.goto import GotoResult

__all__ = [
    "BoardsDown",
    "Bounded",
    "Check",
    "FailsafeTrips",
    "GotoCheck",
    "Inside",
    "Judged",
    "NoFailsafe",
    "Observation",
    "Region",
    "RttBelow",
    "Series",
    "SeriesRecorder",
    "TaskDone",
    "Verdict",
]

#: Slack on window edges, against the rounding of accumulated step times.
EPS = 1e-9
Window = tuple[float, float]


@dataclass(frozen=True)
class Observation:
    """The run at one moment, as the checks see it (simulated seconds, SI units)."""

    t: float
    x: float
    y: float
    yaw: float
    v: float
    w: float
    boards_down: int
    boards: int
    #: The loop's failsafes holding the motors now.
    failsafes: frozenset[str] = frozenset()
    #: Latest value of every telemetry field, by list (``{"TL2": {"heading_deg": 12.0}}``).
    telemetry: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    #: Whether each task (``boards``, ``light``) is done now.
    tasks: Mapping[str, bool] = field(default_factory=dict)
    #: Heartbeat round trips in ms by link: the latest (``{"mcu": {"last": 33.3}}``) in
    #: every one, every statistic (``last``, ``p50``, ``p99``, ``max``) in the final one.
    rtt_ms: Mapping[str, Mapping[str, float]] | None = None
    #: What robot 0's serial ports received in this period, by UART number, as text
    #: (each byte one character, latin-1): the command UART with brain none, the aux UARTs.
    serial: Mapping[int, str] = field(default_factory=dict)
    #: The values the checks read (their :attr:`reads`), by name: ``input:<device>.<signal>``
    #: (a pin signal the MCU drives, as the simulator took it), ``output:<device>.<column>``
    #: (a device's simulated output: a signal the MCU reads, or a physical value).
    values: Mapping[str, float] = field(default_factory=dict)

    def state(self, name: str) -> float:
        """The robot state field ``name`` (x, y, yaw, v, w)."""
        value: float = getattr(self, name)
        return value


@dataclass(frozen=True)
class Verdict:
    """A check's outcome, with what was seen."""

    passed: bool
    detail: str
    #: The simulated interval the verdict covers; None: none of the check's window.
    span: Window | None = None
    #: The run did not reach what the check needs (an error, not a failure).
    error: bool = False


class Check(Protocol):
    """An assertion of a scenario, judged on the run's observations.

    What it judged, for a report: a check may also offer ``series() -> list[Series]``
    (the values it looked at over time, bounded) and ``events() -> list[Event]`` (what
    it saw happen: serial matches, tones). A check that reads values of the run
    (:attr:`Observation.values`) names them in a ``reads`` attribute.
    """

    #: What it asserts, in words (the JUnit test case's name).
    label: str

    def window(self, duration: float) -> Window:
        """The simulated interval it is about, in a run of ``duration`` s (the whole run: [0, duration])."""

    def observe(self, obs: Observation) -> None:
        """One period's observation."""

    def decided(self) -> bool:
        """The verdict can no longer change."""

    def verdict(self, final: Observation) -> Verdict:
        """The outcome, given the last observation of the run."""

    def series(self) -> list[Series]:
        """The signals it read against time, with the bounds it held them to (the run report draws them)."""


def window_text(window: Window | None) -> str:
    """``during [a, b] s``, or ``over the run``."""
    return "over the run" if window is None else f"during [{window[0]:g}, {window[1]:g}] s"


def in_window(window: Window | None, t: float) -> bool:
    """``t`` is in ``window`` (None: always)."""
    return window is None or window[0] - EPS <= t <= window[1] + EPS


@dataclass
class _Deadline:
    """Passes once its condition has held at some moment up to ``by``."""

    label: str
    by: float
    passed_at: float | None = None
    last_t: float = -math.inf

    def window(self, duration: float) -> Window:
        """From the start to the deadline."""
        return 0.0, self.by

    def holds(self, obs: Observation) -> bool:
        """The condition, now."""
        raise NotImplementedError

    def missed(self, final: Observation) -> str:
        """Why it did not pass, in words."""
        return f"run ended at {final.t:.2f} s"

    def record(self, obs: Observation) -> None:
        """Note the signal the condition reads (every observation)."""

    def observe(self, obs: Observation) -> None:
        """Note the first moment the condition holds, before the deadline."""
        self.last_t = obs.t
        self.record(obs)
        if self.passed_at is None and obs.t <= self.by + EPS and self.holds(obs):
            self.passed_at = obs.t

    def decided(self) -> bool:
        """Passed, or past the deadline."""
        return self.passed_at is not None or self.last_t > self.by + EPS

    def verdict(self, final: Observation) -> Verdict:
        """When it held, or that it did not."""
        if self.passed_at is not None:
            return Verdict(True, f"at {self.passed_at:.2f} s")
        return Verdict(False, f"not by {self.by:g} s ({self.missed(final)})")


@dataclass
class BoardsDown(_Deadline):
    """At least ``count`` boards down by ``by`` (None: every board of the world)."""

    count: int | None = None
    most: int = 0
    down: SeriesRecorder = field(default_factory=lambda: SeriesRecorder("boards down", step=True))

    def holds(self, obs: Observation) -> bool:
        """Enough boards are down."""
        self.most = max(self.most, obs.boards_down)
        return obs.boards_down >= (obs.boards if self.count is None else self.count)

    def record(self, obs: Observation) -> None:
        """Boards down, against the count needed."""
        self.down.low = obs.boards if self.count is None else self.count
        self.down.add(obs.t, obs.boards_down)

    def missed(self, final: Observation) -> str:
        """How many did fall."""
        return f"{self.most} of {final.boards} down"

    def series(self) -> list[Series]:
        """Boards down."""
        return [self.down.series()]


@dataclass
class TaskDone(_Deadline):
    """A behaviour's task (:mod:`hil_bringup.core.done`) done by ``by``."""

    task: str = "boards"
    done: SeriesRecorder | None = None

    def holds(self, obs: Observation) -> bool:
        """The task is done."""
        return bool(obs.tasks.get(self.task, False))

    def record(self, obs: Observation) -> None:
        """Whether the task is done (1) or not (0)."""
        if self.done is None:
            self.done = SeriesRecorder(f"task {self.task} done", low=1.0, step=True)
        self.done.add(obs.t, float(self.holds(obs)))

    def series(self) -> list[Series]:
        """The task done or not."""
        return [] if self.done is None else [self.done.series()]


@dataclass(frozen=True)
class Region:
    """An axis-aligned box (``x``, ``y`` intervals) or a circle (``center``, ``radius``)."""

    x: Window | None = None
    y: Window | None = None
    center: tuple[float, float] | None = None
    radius: float = 0.0

    def contains(self, px: float, py: float) -> bool:
        """(px, py) is in the region."""
        if self.center is not None:
            return math.hypot(px - self.center[0], py - self.center[1]) <= self.radius
        x, y = self.x or (-math.inf, math.inf), self.y or (-math.inf, math.inf)
        return x[0] <= px <= x[1] and y[0] <= py <= y[1]

    def __str__(self) -> str:
        if self.center is not None:
            return f"within {self.radius:g} m of ({self.center[0]:g}, {self.center[1]:g})"
        x, y = self.x or (-math.inf, math.inf), self.y or (-math.inf, math.inf)
        return f"in x [{x[0]:g}, {x[1]:g}], y [{y[0]:g}, {y[1]:g}]"


@dataclass
class Inside:
    """Robot 0 in a region: ``at`` a moment, all ``during`` a window, or at some moment ``by``."""

    label: str
    region: Region
    at: float | None = None
    during: Window | None = None
    by: float | None = None
    failure: str | None = None
    success: str | None = None
    seen: bool = False
    #: What it reads, by name: ``x`` and ``y`` (a box), ``distance`` to the centre (a circle).
    signals: dict[str, SeriesRecorder] = field(default_factory=dict)

    def __post_init__(self) -> None:
        region = self.region
        if region.center is not None:
            name = f"robot 0 distance to ({region.center[0]:g}, {region.center[1]:g})"
            self.signals["distance"] = SeriesRecorder(name, unit="m", high=region.radius)
        for axis, bounds in (("x", region.x), ("y", region.y)):
            if bounds is not None:
                low, high = bounds
                self.signals[axis] = SeriesRecorder(f"robot 0 {axis}", unit="m", low=low, high=high)

    def window(self, duration: float) -> Window:
        """The moment, the window, or from the start to the deadline."""
        if self.at is not None:
            return self.at, self.at
        if self.during is not None:
            return self.during
        return 0.0, self.by if self.by is not None else duration

    def observe(self, obs: Observation) -> None:
        """Judge the moment, the window or the deadline."""
        center = self.region.center or (0.0, 0.0)
        values = {"x": obs.x, "y": obs.y, "distance": math.hypot(obs.x - center[0], obs.y - center[1])}
        for name, recorder in self.signals.items():
            recorder.add(obs.t, values[name])
        if self.decided():
            return
        inside = self.region.contains(obs.x, obs.y)
        where = f"({obs.x:.3f}, {obs.y:.3f}) at {obs.t:.2f} s"
        if self.at is not None:
            if obs.t >= self.at - EPS:
                self.success, self.failure = (where, None) if inside else (None, f"at {where}")
        elif self.during is not None:
            if in_window(self.during, obs.t):
                self.seen = True
                if not inside:
                    self.failure = f"left it: {where}"
            elif obs.t > self.during[1] and self.seen:
                self.success = "throughout"
        elif self.by is not None:
            if obs.t <= self.by + EPS and inside:
                self.success = where
            elif obs.t > self.by + EPS:
                self.failure = f"not by {self.by:g} s (at {where})"

    def decided(self) -> bool:
        """Judged."""
        return self.failure is not None or self.success is not None

    def verdict(self, final: Observation) -> Verdict:
        """Where the robot was."""
        if self.failure is not None:
            return Verdict(False, self.failure)
        if self.success is not None:
            return Verdict(True, self.success)
        if self.during is not None and self.seen:
            return Verdict(True, f"throughout (run ended at {final.t:.2f} s)")
        return Verdict(False, f"not judged: the run ended at {final.t:.2f} s")

    def series(self) -> list[Series]:
        """Robot 0's coordinates (a box) or distance to the centre (a circle)."""
        return [recorder.series() for recorder in self.signals.values()]


@dataclass
class Bounded:
    """A value (a robot state, or a telemetry field) within [minimum, maximum] all ``during`` a window."""

    label: str
    minimum: float
    maximum: float
    during: Window | None
    state: str = ""  # a robot state field, or ...
    telemetry: tuple[str, str] | None = None  # ... a telemetry (list, field), or ...
    read: str = ""  # ... a value of Observation.values (a pin, a sensor)
    failure: str | None = None
    samples: int = 0
    low: float = math.inf
    high: float = -math.inf
    last_t: float = -math.inf
    recorder: SeriesRecorder | None = None

    @property
    def reads(self) -> tuple[str, ...]:
        """The observation values it reads."""
        return (self.read,) if self.read else ()

    def window(self, duration: float) -> Window:
        """Its window, or the whole run."""
        return self.during if self.during is not None else (0.0, duration)

    @property
    def name(self) -> str:
        """The value's name: ``TL2.heading_deg``, ``robot 0 v``, or a read (``input:motor_left.enable``)."""
        if self.read:
            return self.read
        return ".".join(self.telemetry) if self.telemetry is not None else f"robot 0 {self.state}"

    def value(self, obs: Observation) -> float | None:
        """The value now (None: no such telemetry yet)."""
        if self.read:
            return obs.values.get(self.read)
        if self.telemetry is None:
            return obs.state(self.state)
        values = obs.telemetry.get(self.telemetry[0])
        return None if values is None else values.get(self.telemetry[1])

    def observe(self, obs: Observation) -> None:
        """Check the value if the moment is in the window."""
        self.last_t = obs.t
        value = self.value(obs)
        if value is not None:
            if self.recorder is None:
                self.recorder = SeriesRecorder(self.name, low=self.minimum, high=self.maximum)
            self.recorder.add(obs.t, value)
        if value is None or self.failure is not None or not in_window(self.during, obs.t):
            return
        self.samples += 1
        self.low, self.high = min(self.low, value), max(self.high, value)
        if not self.minimum <= value <= self.maximum:
            self.failure = f"{value:g} at {obs.t:.2f} s"

    def decided(self) -> bool:
        """Out of bounds, or the window is over."""
        return self.failure is not None or (self.during is not None and self.last_t > self.during[1] + EPS)

    def verdict(self, final: Observation) -> Verdict:
        """The range seen, or the first value out of bounds."""
        if self.failure is not None:
            return Verdict(False, self.failure)
        if self.samples == 0:
            what = "telemetry" if self.telemetry else "observation"
            return Verdict(False, f"no {what} {window_text(self.during)}")
        return Verdict(True, f"{self.samples} samples in [{self.low:g}, {self.high:g}]")

    def series(self) -> list[Series]:
        """The value (none before the first telemetry)."""
        return [] if self.recorder is None else [self.recorder.series()]


@dataclass
class NoFailsafe:
    """None of ``reasons`` holds the motors at any moment of the window."""

    label: str
    reasons: tuple[str, ...]
    during: Window | None
    failure: str | None = None
    last_t: float = -math.inf
    holding: dict[str, SeriesRecorder] = field(default_factory=dict)

    def window(self, duration: float) -> Window:
        """Its window, or the whole run."""
        return self.during if self.during is not None else (0.0, duration)

    def observe(self, obs: Observation) -> None:
        """Note the first failsafe in the window."""
        self.last_t = obs.t
        for reason in self.reasons:
            if reason not in self.holding:
                self.holding[reason] = SeriesRecorder(f"{reason} failsafe holding", high=0.0, step=True)
            self.holding[reason].add(obs.t, float(reason in obs.failsafes))
        if self.failure is None and in_window(self.during, obs.t):
            tripped = sorted(set(self.reasons) & obs.failsafes)
            if tripped:
                self.failure = f"{', '.join(tripped)} failsafe at {obs.t:.2f} s"

    def decided(self) -> bool:
        """A failsafe came, or the window is over."""
        return self.failure is not None or (self.during is not None and self.last_t > self.during[1] + EPS)

    def verdict(self, final: Observation) -> Verdict:
        """The first failsafe, or none."""
        return Verdict(self.failure is None, self.failure or "none")

    def series(self) -> list[Series]:
        """Each failsafe holding (1) or not (0)."""
        return [recorder.series() for recorder in self.holding.values()]


@dataclass
class FailsafeTrips:
    """The ``reason`` failsafe begins to hold the motors at a moment within ``between``."""

    label: str
    reason: str
    between: Window
    tripped_at: float | None = None
    trips: list[float] = field(default_factory=list)
    active: bool = False
    last_t: float = -math.inf
    holding: SeriesRecorder | None = None

    def window(self, duration: float) -> Window:
        """Where the trip must begin."""
        return self.between

    def observe(self, obs: Observation) -> None:
        """Note when the failsafe begins to hold."""
        self.last_t = obs.t
        now_active = self.reason in obs.failsafes
        if self.holding is None:
            self.holding = SeriesRecorder(f"{self.reason} failsafe holding", step=True)
        self.holding.add(obs.t, float(now_active))
        if now_active and not self.active:
            self.trips.append(obs.t)
            if self.tripped_at is None and in_window(self.between, obs.t):
                self.tripped_at = obs.t
        self.active = now_active

    def decided(self) -> bool:
        """Tripped in the window, or the window is over."""
        return self.tripped_at is not None or self.last_t > self.between[1] + EPS

    def verdict(self, final: Observation) -> Verdict:
        """When it tripped."""
        if self.tripped_at is not None:
            return Verdict(True, f"tripped at {self.tripped_at:.2f} s")
        seen = ", ".join(f"{t:.2f}" for t in self.trips) or "never"
        return Verdict(False, f"trips at: {seen} s")

    def series(self) -> list[Series]:
        """The failsafe holding (1) or not (0)."""
        return [] if self.holding is None else [self.holding.series()]


@dataclass
class RttBelow:
    """A link's heartbeat round trip statistic at most ``max_ms``, over the run."""

    label: str
    link: str
    max_ms: float
    statistic: str
    rtt: SeriesRecorder | None = None

    def window(self, duration: float) -> Window:
        """The whole run."""
        return 0.0, duration

    def observe(self, obs: Observation) -> None:
        """Note the latest round trip (the verdict reads the final statistics)."""
        last = (obs.rtt_ms or {}).get(self.link, {}).get("last")
        if last is not None and math.isfinite(last) and last > 0:
            if self.rtt is None:
                self.rtt = SeriesRecorder(f"{self.link} round trip", unit="ms", high=self.max_ms, step=True)
            self.rtt.add(obs.t, last)

    def decided(self) -> bool:
        """Only at the end."""
        return False

    def verdict(self, final: Observation) -> Verdict:
        """The statistic against the bound."""
        value = (final.rtt_ms or {}).get(self.link, {}).get(self.statistic)
        if value is None or not math.isfinite(value) or value <= 0:
            return Verdict(False, f"no round trip measured on the {self.link} link")
        return Verdict(value <= self.max_ms, f"{self.statistic} {value:.2f} ms")

    def series(self) -> list[Series]:
        """The latest round trip, heartbeat by heartbeat."""
        return [] if self.rtt is None else [self.rtt.series()]


# --- what a check judged, for a report ---------------------------------------------------


@dataclass(frozen=True)
class Event:
    """Something a check saw happen over ``[start, end]`` s (a serial match: start == end)."""

    start: float
    end: float
    text: str


# --- serial text ---------------------------------------------------------------------------

#: Characters of a serial transcript a check keeps to match in (the latest ones).
TEXT_KEPT = 65536
#: How far back of the new text a search starts: a match spans at most this many characters.
MATCH_SPAN = 4096


class SerialText:
    r"""Text a serial port received, line ends made ``\n`` (``\r\n`` and a lone ``\r``), bounded.

    :meth:`search` finds a pattern in what came since the last search (and up to
    :data:`MATCH_SPAN` characters before it, so a match may straddle two arrivals).
    ``^`` and ``$`` (re.MULTILINE) are a line's start and end.
    """

    def __init__(self) -> None:
        self.text = ""
        self._searched = 0
        self._cr = False

    def add(self, chunk: str) -> None:
        """Text as it arrived."""
        if not chunk:
            return
        if self._cr and chunk.startswith("\n"):
            chunk = chunk[1:]
        self._cr = chunk.endswith("\r")
        self.text += chunk.replace("\r\n", "\n").replace("\r", "\n")
        if len(self.text) > TEXT_KEPT:
            cut = len(self.text) - TEXT_KEPT
            self.text = self.text[cut:]
            self._searched = max(0, self._searched - cut)

    def search(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        """The first match in the text not searched yet (or None); the text counts as searched."""
        start = max(0, self._searched - MATCH_SPAN)
        self._searched = len(self.text)
        return pattern.search(self.text, start)

    def take(
        self, obs: Observation, *, uart: int, during: Window | None, pattern: re.Pattern[str]
    ) -> str | None:
        """Add what ``uart`` received in the period of ``obs`` (if in ``during``); the match it completes."""
        if not in_window(during, obs.t):
            return None
        chunk = obs.serial.get(uart, "")
        if not chunk:
            return None
        self.add(chunk)
        found = self.search(pattern)
        return None if found is None else found.group(0)


def compile_pattern(text: str) -> re.Pattern[str]:
    """A serial pattern (Python regex, MULTILINE).

    Raises:
        re.error: not a regular expression.
    """
    return re.compile(text, re.MULTILINE)


@dataclass
class SerialExpect:
    """Text matching ``pattern`` arrives on a UART of robot 0 within ``window`` (``by``: [0, by])."""

    label: str
    pattern: re.Pattern[str]
    uart: int
    during: Window
    matched_at: float | None = None
    matched: str = ""
    last_t: float = -math.inf
    text: SerialText = field(default_factory=SerialText)

    def window(self, duration: float) -> Window:
        """Its window."""
        return self.during

    def observe(self, obs: Observation) -> None:
        """Take the text of the period if it is in the window; match."""
        self.last_t = obs.t
        if self.matched_at is None:
            found = self.text.take(obs, uart=self.uart, during=self.during, pattern=self.pattern)
            if found is not None:
                self.matched_at, self.matched = obs.t, found

    def decided(self) -> bool:
        """Matched, or the window is over."""
        return self.matched_at is not None or self.last_t > self.during[1] + EPS

    def verdict(self, final: Observation) -> Verdict:
        """When it matched, or the end of what came."""
        if self.matched_at is not None:
            return Verdict(True, f"{self.matched!r} at {self.matched_at:.3f} s")
        tail = self.text.text[-80:]
        return Verdict(False, f"no match; the last text: {tail!r}" if tail else "no text came")

    def events(self) -> list[Event]:
        """The match."""
        if self.matched_at is None:
            return []
        return [Event(self.matched_at, self.matched_at, self.matched)]

    def series(self) -> list[Series]:
        """None: it judges text (its :meth:`events`), not a signal."""
        return []


@dataclass
class SerialForbid:
    """No text matching ``pattern`` arrives on a UART of robot 0 in ``during`` (None: the whole run)."""

    label: str
    pattern: re.Pattern[str]
    uart: int
    during: Window | None
    found_at: float | None = None
    found: str = ""
    last_t: float = -math.inf
    text: SerialText = field(default_factory=SerialText)

    def window(self, duration: float) -> Window:
        """Its window, or the whole run."""
        return self.during if self.during is not None else (0.0, duration)

    def observe(self, obs: Observation) -> None:
        """Take the text of the period if it is in the window; look for the pattern."""
        self.last_t = obs.t
        if self.found_at is None:
            found = self.text.take(obs, uart=self.uart, during=self.during, pattern=self.pattern)
            if found is not None:
                self.found_at, self.found = obs.t, found

    def decided(self) -> bool:
        """Found, or the window is over."""
        return self.found_at is not None or (self.during is not None and self.last_t > self.during[1] + EPS)

    def verdict(self, final: Observation) -> Verdict:
        """What came that should not have."""
        if self.found_at is not None:
            return Verdict(False, f"{self.found!r} at {self.found_at:.3f} s")
        return Verdict(True, "never")

    def events(self) -> list[Event]:
        """The forbidden text, if it came."""
        return [] if self.found_at is None else [Event(self.found_at, self.found_at, self.found)]

    def series(self) -> list[Series]:
        """None: it judges text (its :meth:`events`), not a signal."""
        return []


# --- output events: tones, LED colours ---------------------------------------------------


@dataclass
class Tone:
    """A tone: the buzzer's frequency was not zero from ``start`` to ``end`` (s), ``frequency`` its median."""

    start: float
    end: float
    frequency: float

    @property
    def duration(self) -> float:
        """How long it sounded (s)."""
        return self.end - self.start


class ToneTracker:
    """Tones of a buzzer from its frequency, sample by sample (0: silent).

    Keeps the last :data:`TONES_KEPT` tones; each tone's frequency is the median of its samples.
    """

    def __init__(self) -> None:
        self.tones: list[Tone] = []
        self.count = 0
        self._start: float | None = None
        self._samples: list[float] = []

    def add(self, t: float, frequency: float) -> Tone | None:
        """A sample; the tone that ended with it, if one did."""
        if frequency > 0:
            if self._start is None:
                self._start, self._samples = t, []
            if len(self._samples) < TONE_SAMPLES:
                self._samples.append(frequency)
            return None
        if self._start is None:
            return None
        tone = Tone(self._start, t, _median(self._samples))
        self._start = None
        self.count += 1
        self.tones.append(tone)
        del self.tones[:-TONES_KEPT]
        return tone

    def sounding(self, t: float) -> Tone | None:
        """The tone sounding now (its end: ``t``), if any."""
        if self._start is None:
            return None
        return Tone(self._start, t, _median(self._samples))


#: Tones a tracker keeps; samples a tone's median is taken of.
TONES_KEPT = 1000
TONE_SAMPLES = 2000


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else 0.0


@dataclass
class ToneHeard:
    """A tone with a frequency in ``frequency`` (and a duration in ``duration``) sounds in ``during``.

    A tone counts if it sounds at some moment of the window (None: the whole run); with
    ``duration`` it is judged once it has ended.
    """

    label: str
    read: str
    frequency: Window
    during: Window | None = None
    duration: Window | None = None
    heard: Tone | None = None
    last_t: float = -math.inf
    tracker: ToneTracker = field(default_factory=ToneTracker)
    recorder: SeriesRecorder | None = None

    @property
    def reads(self) -> tuple[str, ...]:
        """The buzzer's frequency."""
        return (self.read,)

    def window(self, duration: float) -> Window:
        """Its window, or the whole run."""
        return self.during if self.during is not None else (0.0, duration)

    def _fits(self, tone: Tone) -> bool:
        overlaps = self.during is None or (
            tone.start <= self.during[1] + EPS and tone.end >= self.during[0] - EPS
        )
        low, high = self.frequency
        if not (overlaps and low <= tone.frequency <= high):
            return False
        return self.duration is None or self.duration[0] - EPS <= tone.duration <= self.duration[1] + EPS

    def observe(self, obs: Observation) -> None:
        """Follow the tones; judge each as it ends (without ``duration``, while it sounds)."""
        self.last_t = obs.t
        frequency = obs.values.get(self.read)
        if frequency is None:
            return
        if self.recorder is None:
            low, high = self.frequency
            self.recorder = SeriesRecorder(self.read, unit="Hz", low=low, high=high)
        self.recorder.add(obs.t, frequency)
        ended = self.tracker.add(obs.t, frequency)
        if self.heard is not None:
            return
        if ended is not None and self._fits(ended):
            self.heard = ended
        now = self.tracker.sounding(obs.t)
        if self.duration is None and now is not None and in_window(self.during, obs.t) and self._fits(now):
            self.heard = now

    def decided(self) -> bool:
        """Heard, or the window is over and no tone that began in it still sounds."""
        if self.heard is not None:
            return True
        if self.during is None or self.last_t <= self.during[1] + EPS:
            return False
        now = self.tracker.sounding(self.last_t)
        return self.duration is None or now is None or now.start > self.during[1] + EPS

    def verdict(self, final: Observation) -> Verdict:
        """The tone heard, or the tones there were."""
        if self.heard is not None:
            tone = self.heard
            return Verdict(True, f"{tone.frequency:.0f} Hz from {tone.start:.3f} s for {tone.duration:.3f} s")
        tones = list(self.tracker.tones)
        now = self.tracker.sounding(final.t)
        if now is not None:
            tones.append(now)
        heard = ", ".join(
            f"{t.frequency:.0f} Hz at {t.start:.2f} s for {t.duration:.3f} s" for t in tones[-5:]
        )
        return Verdict(False, f"tones: {heard}" if heard else "no tone")

    def series(self) -> list[Series]:
        """The buzzer's frequency."""
        return [] if self.recorder is None else [self.recorder.series()]

    def events(self) -> list[Event]:
        """The tones heard, the one judged first."""
        return [Event(t.start, t.end, f"{t.frequency:.0f} Hz") for t in self.tracker.tones]


@dataclass
class LedShows:
    """An RGB LED shows ``colour`` (each channel within ``tolerance``): all ``during``, or by a moment."""

    label: str
    #: The LED's three input reads (red, green, blue).
    channels: tuple[str, str, str]
    colour: tuple[float, float, float]
    tolerance: float = 0.0
    during: Window | None = None
    by: float | None = None
    failure: str | None = None
    shown_at: float | None = None
    samples: int = 0
    last_t: float = -math.inf
    recorders: list[SeriesRecorder] = field(default_factory=list)
    #: The colours it saw, each as it began (the last :data:`TONES_KEPT`).
    changes: list[Event] = field(default_factory=list)

    @property
    def reads(self) -> tuple[str, ...]:
        """Its red, green and blue."""
        return self.channels

    def window(self, duration: float) -> Window:
        """Its window, or from the start to the deadline."""
        if self.during is not None:
            return self.during
        return 0.0, self.by if self.by is not None else duration

    def observe(self, obs: Observation) -> None:
        """Compare the colour now, in the window."""
        self.last_t = obs.t
        if self.decided() or not in_window(self.window(math.inf), obs.t):
            return
        values = [obs.values.get(name) for name in self.channels]
        if any(v is None for v in values):
            return
        colour = tuple(float(v) for v in values if v is not None)
        if not self.recorders:
            self.recorders = [
                SeriesRecorder(name, low=w - self.tolerance, high=w + self.tolerance, step=True)
                for name, w in zip(self.channels, self.colour, strict=True)
            ]
        for recorder, value in zip(self.recorders, colour, strict=True):
            recorder.add(obs.t, value)
        text = "(" + ", ".join(f"{c:g}" for c in colour) + ")"
        if not self.changes or self.changes[-1].text != text:
            self.changes.append(Event(obs.t, obs.t, text))
            del self.changes[:-TONES_KEPT]
        self.samples += 1
        fits = all(abs(c - w) <= self.tolerance + EPS for c, w in zip(colour, self.colour, strict=True))
        shown = "(" + ", ".join(f"{c:g}" for c in colour) + f") at {obs.t:.3f} s"
        if self.during is not None and not fits:
            self.failure = shown
        elif self.during is None and fits:
            self.shown_at = obs.t

    def decided(self) -> bool:
        """Judged: a colour off in the window, the colour shown by the deadline, or the window over."""
        end = self.window(math.inf)[1]
        return self.failure is not None or self.shown_at is not None or self.last_t > end + EPS

    def verdict(self, final: Observation) -> Verdict:
        """The colour off, when it showed, or that it never did."""
        if self.failure is not None:
            return Verdict(False, self.failure)
        if self.shown_at is not None:
            return Verdict(True, f"at {self.shown_at:.3f} s")
        if self.samples == 0:
            return Verdict(False, f"no colour {window_text(self.window(final.t))}")
        if self.during is not None:
            return Verdict(True, f"throughout ({self.samples} samples)")
        last = ", ".join(f"{r.series().values[-1]:g}" for r in self.recorders)
        return Verdict(False, f"not by {self.by:g} s (last ({last}))")

    def series(self) -> list[Series]:
        """Its red, green and blue over the window."""
        return [recorder.series() for recorder in self.recorders]

    def events(self) -> list[Event]:
        """The colours it saw in its window, each when it began."""
        return list(self.changes)


@dataclass
class GotoCheck:
    """A goto of the timeline reached its goal (judged from its result)."""

    label: str
    #: When the goto begins, and when it must be over (timeout and settle included).
    at: float = 0.0
    until: float = 0.0
    result: GotoResult | None = None
    started: bool = False
    #: The goal (x, y) and its tolerance (m), for the distance drawn; None: not drawn.
    goal: tuple[float, float] | None = None
    tolerance: float | None = None
    distance: SeriesRecorder | None = None

    def window(self, duration: float) -> Window:
        """From its start to its timeout and settle."""
        return self.at, self.until

    def observe(self, obs: Observation) -> None:
        """Note robot 0's distance to the goal (the runner hands over the goto's result)."""
        if self.goal is None or not in_window((self.at, self.until), obs.t):
            return
        if self.distance is None:
            name = f"robot 0 distance to ({self.goal[0]:g}, {self.goal[1]:g})"
            self.distance = SeriesRecorder(name, unit="m", high=self.tolerance)
        self.distance.add(obs.t, math.hypot(obs.x - self.goal[0], obs.y - self.goal[1]))

    def decided(self) -> bool:
        """The goto has finished."""
        return self.result is not None

    def verdict(self, final: Observation) -> Verdict:
        """Reached or not, and the final error."""
        r = self.result
        if r is None:
            state = "not started" if not self.started else "not finished"
            return Verdict(False, f"{state} when the run ended ({final.t:.2f} s)")
        return Verdict(
            r.reached,
            f"{'reached' if r.reached else 'not reached'} in {r.time:.2f} s, error "
            f"{r.position_error * 100:.1f} cm, {math.degrees(r.yaw_error):+.1f} deg",
        )

    def series(self) -> list[Series]:
        """Robot 0's distance to the goal during the goto."""
        return [] if self.distance is None else [self.distance.series()]


@dataclass
class Judged:
    """A check's account of one run: what it saw, when its verdict settled, what that covers."""

    check: Check
    #: The run's duration (the window of a check over the whole run).
    duration: float
    #: The first observation at which the check was decided; None: not (yet).
    decided_at: float | None = None
    #: The last observation's time; None: none yet.
    last_t: float | None = None

    def observe(self, obs: Observation) -> None:
        """Hand the check an observation; note when its verdict settles."""
        self.check.observe(obs)
        self.note(obs.t)

    def note(self, t: float) -> None:
        """The run has reached ``t`` (for checks decided outside :meth:`observe`, gotos)."""
        self.last_t = t
        if self.decided_at is None and self.check.decided():
            self.decided_at = t

    def decided(self) -> bool:
        """The verdict can no longer change."""
        return self.decided_at is not None

    def verdict(self, final: Observation) -> Verdict:
        """The check's verdict with the span it covers, or an error if the run fell short of it.

        A check not decided when the run ended is judged only if the run reached the
        end of its window; otherwise the run simulated less than it needs.
        """
        start, end = self.check.window(self.duration)
        reached = -math.inf if self.last_t is None else self.last_t
        if self.decided_at is None and reached < end - EPS:
            seen = "no observation" if self.last_t is None else f"the run ended at {reached:.2f} s"
            span = (start, reached) if reached >= start - EPS else None
            return Verdict(False, f"not judged: {seen}, it needs [{start:g}, {end:g}] s", span, error=True)
        settled = self.decided_at if self.decided_at is not None else reached
        return replace(self.check.verdict(final), span=(start, max(start, min(end, settled))))
