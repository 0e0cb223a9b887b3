"""Deadline scheduler and loop statistics, driven by a fake clock (no real sleeping)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from hil_common.core.loop_timing import DeadlineScheduler, LoopStats, RateLimit, Tick
from hil_common.errors import HilError

PERIOD_30HZ = 1.0 / 30.0


class FakeClock:
    """Monotonic time that only moves when slept on or advanced; sleeps may overshoot."""

    def __init__(self, start: float = 0.0, overshoot: Callable[[], float] | None = None) -> None:
        self.now = start
        self.overshoot = overshoot or (lambda: 0.0)
        self.sleeps = 0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds > 0.0, f"slept for {seconds!r} s"
        self.sleeps += 1
        self.now += seconds + self.overshoot()

    def advance(self, seconds: float) -> None:
        """Time spent working in a frame."""
        self.now += seconds


def scheduler(clock: FakeClock, period: float = PERIOD_30HZ, start: float | None = None) -> DeadlineScheduler:
    return DeadlineScheduler(period, clock=clock, sleep=clock.sleep, start=start)


def test_deadlines_do_not_drift_over_100k_frames_with_a_sleep_that_overshoots() -> None:
    rng = np.random.default_rng(20240611)
    overshoots = iter(rng.uniform(0.0, 0.002, size=200_000))
    start = 12_345.678
    clock = FakeClock(start, overshoot=lambda: float(next(overshoots)))
    frames = 100_000
    sched = scheduler(clock, start=start)
    stats = LoopStats(window=frames)
    deadlines = np.empty(frames)
    woke = np.empty(frames)
    for k in range(frames):
        tick = sched.wait()
        assert tick.index == k
        assert tick.skipped == 0
        deadlines[k] = tick.deadline
        woke[k] = tick.woke
        stats.record(tick, 0.0)

    expected = start + np.arange(frames) * PERIOD_30HZ
    np.testing.assert_allclose(deadlines, expected, rtol=1e-9, atol=0.0)
    # Every frame wakes within one overshoot of its own deadline: no error accumulates.
    lateness = woke - expected
    assert lateness.min() >= -1e-9
    assert lateness.max() <= 0.002 + 1e-9
    # The schedule's mean period is the period; the measured one is off by at most one
    # overshoot spread over the whole run (a relative sleep would be ~1 ms per frame off).
    assert (deadlines[-1] - deadlines[0]) / (frames - 1) == pytest.approx(PERIOD_30HZ, rel=1e-9)
    assert abs(stats.summary().period_mean - PERIOD_30HZ) <= 0.002 / (frames - 1) + 1e-12
    assert sched.overruns == 0
    assert sched.skipped == 0
    assert stats.summary().overruns == 0


def test_first_deadline_defaults_to_the_clock_at_construction() -> None:
    clock = FakeClock(100.0)
    sched = DeadlineScheduler(0.5, clock=clock, sleep=clock.sleep)
    first = sched.wait()
    assert (first.deadline, first.woke) == (100.0, 100.0)
    assert clock.sleeps == 0
    second = sched.wait()
    assert (second.deadline, second.woke) == (100.5, 100.5)


def test_late_frame_within_a_period_is_not_an_overrun() -> None:
    clock = FakeClock()
    sched = scheduler(clock, period=0.25, start=0.0)
    sched.wait()
    clock.advance(0.375)  # work 1.5 periods: the next frame is half a period late
    tick = sched.wait()
    assert (tick.index, tick.deadline, tick.woke, tick.skipped) == (1, 0.25, 0.375, 0)
    assert sched.overruns == 0
    after = sched.wait()
    assert (after.index, after.deadline, after.woke) == (2, 0.5, 0.5)


def run_with_one_long_frame(period: float) -> tuple[DeadlineScheduler, FakeClock, list[Tick]]:
    """Frames 0 and 1 are on time; frame 1's work takes 2.5 periods; then 20 more frames."""
    clock = FakeClock()
    sched = scheduler(clock, period=period, start=0.0)
    ticks = [sched.wait()]
    clock.advance(0.2 * period)
    ticks.append(sched.wait())
    clock.advance(2.5 * period)
    for _ in range(20):
        ticks.append(sched.wait())
        clock.advance(0.2 * period)
    return sched, clock, ticks


@pytest.mark.parametrize("period", [PERIOD_30HZ, 0.005, 0.25])
def test_overrun_is_counted_once_and_the_schedule_resumes_on_its_deadlines(period: float) -> None:
    sched, _, ticks = run_with_one_long_frame(period)
    assert sched.overruns == 1
    assert sched.skipped >= 1
    assert [t.skipped > 0 for t in ticks].count(True) == 1
    overrun_at = next(i for i, t in enumerate(ticks) if t.skipped)
    assert overrun_at == 2
    # The missed deadlines are skipped, never served: indices jump once, then run on.
    indices = [t.index for t in ticks]
    assert indices[:2] == [0, 1]
    assert indices[2] == 2 + ticks[2].skipped
    assert indices[2:] == list(range(indices[2], indices[2] + len(ticks) - 2))
    # Every frame after the overrun frame wakes exactly on its schedule deadline.
    for tick in ticks[3:]:
        assert tick.deadline == pytest.approx(tick.index * period, rel=1e-12)
        assert tick.woke == pytest.approx(tick.deadline, abs=1e-12)
    # The overrun frame itself is less than a period late: never late forever.
    assert 0.0 <= ticks[2].lateness < period


def test_overrun_skips_missed_deadlines_and_next_frame_is_on_time() -> None:
    period = 0.25
    _, _, ticks = run_with_one_long_frame(period)
    after = ticks[2]
    assert after.skipped >= 1
    assert after.woke == pytest.approx(after.deadline, abs=1e-12)
    assert after.deadline == pytest.approx(after.index * period, rel=1e-12)


def test_an_overrun_of_many_periods_is_still_one_overrun() -> None:
    clock = FakeClock()
    sched = scheduler(clock, period=0.25, start=0.0)
    sched.wait()
    clock.advance(0.25 * 40 + 0.125)
    tick = sched.wait()
    assert sched.overruns == 1
    # Deadlines 0.25 .. 10.0 are past: the frame waits for 10.25, the next one ahead.
    assert tick.skipped == 40
    assert sched.skipped == 40
    assert (tick.index, tick.deadline, tick.woke) == (41, 10.25, 10.25)
    nxt = sched.wait()
    assert (nxt.index, nxt.deadline, nxt.woke) == (42, 10.5, 10.5)


def test_catch_up_runs_missed_frames_back_to_back_without_losing_any() -> None:
    clock = FakeClock()
    sched = DeadlineScheduler(0.25, clock=clock, sleep=clock.sleep, start=0.0, catch_up=8)
    sched.wait()
    clock.advance(0.25 * 5 + 0.125)  # five deadlines missed, fewer than catch_up
    late = [sched.wait() for _ in range(5)]
    assert [t.index for t in late] == [1, 2, 3, 4, 5]
    assert all(t.woke == 1.375 and t.skipped == 0 for t in late)  # no sleep between them
    assert sched.overruns == 0 and sched.skipped == 0
    on_time = sched.wait()
    assert (on_time.index, on_time.deadline, on_time.woke) == (6, 1.5, 1.5)


def test_catch_up_still_skips_beyond_its_limit() -> None:
    clock = FakeClock()
    sched = DeadlineScheduler(0.25, clock=clock, sleep=clock.sleep, start=0.0, catch_up=8)
    sched.wait()
    clock.advance(0.25 * 40 + 0.125)
    tick = sched.wait()
    assert (sched.overruns, tick.skipped, tick.deadline) == (1, 40, 10.25)


@pytest.mark.parametrize("catch_up", [0, -3])
def test_catch_up_below_one_period_is_rejected(catch_up: int) -> None:
    clock = FakeClock()
    with pytest.raises(HilError, match="catch_up"):
        DeadlineScheduler(0.25, clock=clock, sleep=clock.sleep, catch_up=catch_up)


def tick_at(index: int, period: float, lateness: float, skipped: int = 0) -> Tick:
    deadline = index * period
    return Tick(index, deadline, deadline + lateness, skipped)


def test_stats_are_zero_before_any_frame() -> None:
    summary = LoopStats().summary()
    assert summary.frames == 0
    assert summary.overruns == 0
    for name in (
        "period_mean",
        "jitter_p50",
        "jitter_p99",
        "jitter_max",
        "work_mean",
        "work_p99",
        "work_max",
    ):
        assert getattr(summary, name) == 0.0, name


def test_stats_period_is_zero_after_a_single_frame() -> None:
    stats = LoopStats()
    stats.record(tick_at(0, 0.01, 0.003), 0.004)
    summary = stats.summary()
    assert summary.frames == 1
    assert summary.period_mean == 0.0
    assert summary.jitter_p50 == pytest.approx(0.003)
    assert summary.work_max == pytest.approx(0.004)


def test_stats_percentiles_and_means_of_known_samples() -> None:
    period = 0.01
    rng = np.random.default_rng(7)
    # Lateness 0, 10, ..., 1000 us and work 0, 20, ..., 2000 us, in shuffled order.
    order = rng.permutation(101)
    stats = LoopStats()
    woke: list[float] = []
    for index, k in enumerate(order):
        tick = tick_at(index, period, float(k) * 10e-6)
        woke.append(tick.woke)
        stats.record(tick, float(k) * 20e-6)
    summary = stats.summary()
    assert summary.frames == 101
    assert summary.overruns == 0
    assert summary.jitter_p50 == pytest.approx(500e-6, abs=1e-12)
    assert summary.jitter_p99 == pytest.approx(990e-6, abs=1e-12)
    assert summary.jitter_max == pytest.approx(1000e-6, abs=1e-12)
    assert summary.work_mean == pytest.approx(1000e-6, abs=1e-12)
    assert summary.work_p99 == pytest.approx(1980e-6, abs=1e-12)
    assert summary.work_max == pytest.approx(2000e-6, abs=1e-12)
    assert summary.period_mean == pytest.approx((woke[-1] - woke[0]) / 100, abs=1e-12)


def test_stats_count_overruns_and_early_wakes_as_positive_jitter() -> None:
    stats = LoopStats()
    stats.record(tick_at(0, 0.01, 0.0), 0.0)
    stats.record(tick_at(3, 0.01, 0.002, skipped=2), 0.0)
    stats.record(tick_at(4, 0.01, -0.004), 0.0)
    summary = stats.summary()
    assert summary.overruns == 1
    assert summary.jitter_max == pytest.approx(0.004)


def test_stats_window_keeps_only_the_last_frames() -> None:
    stats = LoopStats(window=10)
    for index in range(10):
        stats.record(tick_at(index, 0.01, 0.005), 0.5)
    for index in range(10, 30):
        stats.record(tick_at(index, 0.01, 0.001), 0.1)
    summary = stats.summary()
    assert summary.frames == 30
    assert summary.jitter_max == pytest.approx(0.001)
    assert summary.work_max == pytest.approx(0.1)
    assert summary.work_mean == pytest.approx(0.1)
    assert summary.period_mean == pytest.approx(0.01)


@pytest.mark.parametrize("period", [0.0, -PERIOD_30HZ, math.nan, math.inf, -math.inf])
def test_bad_period_is_rejected(period: float) -> None:
    clock = FakeClock()
    with pytest.raises(HilError, match="period"):
        DeadlineScheduler(period, clock=clock, sleep=clock.sleep)


@pytest.mark.parametrize("jitter", [0.0, 0.01, 0.02])
def test_a_rate_limit_passes_every_event_offered_at_its_rate_despite_jitter(jitter: float) -> None:
    limit = RateLimit(10.0)  # burst 1.5: a quarter of a period either way
    offered = [n * 0.1 + (jitter if n % 2 else -jitter) for n in range(1, 1001)]  # 10 Hz, early and late
    assert all(limit.allow(t) for t in offered)


def test_a_rate_limit_holds_a_faster_stream_to_its_rate_after_a_burst() -> None:
    limit = RateLimit(10.0, burst=2.0)
    passed = sum(limit.allow(n * 0.001) for n in range(10_000))  # 1 kHz for 10 s
    assert 100 <= passed <= 102  # the rate, and the burst at the start
    assert all(RateLimit(0.0).allow(0.0) for _ in range(100))  # 0: no limit


@pytest.mark.parametrize(
    ("rate", "burst", "words"), [(-1.0, 2.0, "rate"), (math.inf, 2.0, "rate"), (5.0, 0.5, "burst")]
)
def test_a_rate_limit_refuses_a_bad_rate_or_burst(rate: float, burst: float, words: str) -> None:
    with pytest.raises(HilError, match=words):
        RateLimit(rate, burst=burst)
