"""Fixed-rate loops on absolute deadlines, and their timing statistics.

Frame k of a :class:`DeadlineScheduler` is due at ``start + k * period``. Sleeping
toward an absolute deadline corrects every timing error of the frame before (the
"sleep with error correction" of the original loop), so the mean rate never drifts.
A frame that would start a whole period or more late is an overrun: it is counted,
the deadlines already missed are skipped, and the loop sleeps to the next deadline
still ahead, so the next frame is on schedule again rather than late forever. A frame
less than a period late runs at once (that is jitter, not an overrun).

A simulator must not skip: each skipped frame is simulated time lost, and its real-time
factor falls below 1. With ``catch_up`` = n, frames up to n periods late run back to
back until the loop is on schedule again; only beyond that are deadlines skipped.

Time comes from an injectable clock and sleep, so tests run 100k frames in
milliseconds with a fake clock. :class:`LoopStats` keeps the last samples of wake-up
jitter, period and work time in ring buffers and reports means and percentiles.
:class:`RateLimit` paces events that come when they come (at most a rate on average).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from hil_common.errors import HilError


@dataclass(frozen=True)
class Tick:
    """One frame's timing: when it was due, when it woke, and how many frames it skipped."""

    index: int
    deadline: float
    woke: float
    skipped: int

    @property
    def lateness(self) -> float:
        """Seconds the frame woke after its deadline (>= 0 unless the clock sleeps short)."""
        return self.woke - self.deadline


class DeadlineScheduler:
    """Wakes at absolute deadlines ``start + k * period``."""

    def __init__(
        self,
        period: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        start: float | None = None,
        catch_up: int = 1,
    ) -> None:
        if not (math.isfinite(period) and period > 0.0):
            raise HilError(f"loop period must be a positive number of seconds, got {period!r}")
        if catch_up < 1:
            raise HilError(f"catch_up must be at least 1 period, got {catch_up!r}")
        self.period = period
        self.catch_up = catch_up
        self._clock = clock
        self._sleep = sleep
        self.start = clock() if start is None else start
        self.index = 0
        self.overruns = 0
        self.skipped = 0

    @property
    def next_deadline(self) -> float:
        """When the next frame is due."""
        return self.start + self.index * self.period

    def wait(self) -> Tick:
        """Sleep until the next frame is due; after an overrun, until the next deadline ahead."""
        now = self._clock()
        skipped = (
            int((now - self.next_deadline) // self.period) + 1
            if now >= self.next_deadline + self.catch_up * self.period
            else 0
        )
        if skipped:
            self.overruns += 1
            self.skipped += skipped
            self.index += skipped
        deadline = self.next_deadline
        while now < deadline:
            self._sleep(deadline - now)
            now = self._clock()
        tick = Tick(self.index, deadline, now, skipped)
        self.index += 1
        return tick


class _Ring:
    """The last ``size`` float samples."""

    def __init__(self, size: int) -> None:
        self.data = np.zeros(size)
        self.count = 0

    def add(self, value: float) -> None:
        self.data[self.count % self.data.size] = value
        self.count += 1

    def values(self) -> np.ndarray:
        return self.data[: min(self.count, self.data.size)]


@dataclass(frozen=True)
class TimingSummary:
    """Loop timing over the recent window (seconds)."""

    frames: int
    overruns: int
    period_mean: float
    jitter_p50: float
    jitter_p99: float
    jitter_max: float
    work_mean: float
    work_p99: float
    work_max: float


class LoopStats:
    """Wake-up jitter, period and work time of a loop over its last ``window`` frames."""

    def __init__(self, *, window: int = 10_000) -> None:
        self._jitter = _Ring(window)
        self._period = _Ring(window)
        self._work = _Ring(window)
        self._last_woke: float | None = None
        self.frames = 0
        self.overruns = 0

    def record(self, tick: Tick, work: float) -> None:
        """Add one frame: its tick and the seconds its work took."""
        self.frames += 1
        self.overruns += 1 if tick.skipped else 0
        self._jitter.add(abs(tick.lateness))
        self._work.add(work)
        if self._last_woke is not None:
            self._period.add(tick.woke - self._last_woke)
        self._last_woke = tick.woke

    def summary(self) -> TimingSummary:
        """Means, percentiles and maxima of the window (zeros before the first frames)."""

        def pct(ring: _Ring, q: float) -> float:
            values = ring.values()
            return float(np.percentile(values, q)) if values.size else 0.0

        def mean(ring: _Ring) -> float:
            values = ring.values()
            return float(values.mean()) if values.size else 0.0

        return TimingSummary(
            frames=self.frames,
            overruns=self.overruns,
            period_mean=mean(self._period),
            jitter_p50=pct(self._jitter, 50),
            jitter_p99=pct(self._jitter, 99),
            jitter_max=pct(self._jitter, 100),
            work_mean=mean(self._work),
            work_p99=pct(self._work, 99),
            work_max=pct(self._work, 100),
        )


class RateLimit:
    """At most ``rate`` events a second on average, at most ``burst`` at once; 0: no limit.

    A token bucket: it fills at ``rate`` tokens a second up to ``burst``, and an event
    that finds a whole token passes and takes it. Events offered at the rate itself
    all pass even when they come early or late, by up to ``(burst - 1) / 2`` of a period
    (a gap "at least 1/rate since the last one" drops every one jitter brings in early);
    over any span, at most ``burst`` more than the rate allows pass.

    Raises:
        HilError: a negative rate, or a burst below 1.
    """

    def __init__(self, rate: float, *, burst: float = 1.5) -> None:
        if not (math.isfinite(rate) and rate >= 0):
            raise HilError(f"rate = {rate!r}: must be a number >= 0")
        if not burst >= 1:
            raise HilError(f"burst = {burst!r}: must be >= 1")
        self.rate, self.burst = rate, burst
        self._tokens = burst
        self._last: float | None = None

    def allow(self, now: float) -> bool:
        """Whether an event at ``now`` (s, any monotonic clock) passes; it takes a token if so."""
        if self.rate == 0:
            return True
        if self._last is not None:
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        return False
