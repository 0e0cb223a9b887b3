"""Failsafes on a fake clock: each trips once per outage, in the first update past its timeout."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robot_control.core.failsafe import FailsafeChange, Failsafes

FRAME = 1 / 30
START = 100.0
TIMEOUTS = {"cmd_vel": 0.5, "mcu": 1.5, "station": 2.0}


def make(start: float = START) -> Failsafes:
    return Failsafes(
        cmd_vel_timeout=TIMEOUTS["cmd_vel"],
        mcu_timeout=TIMEOUTS["mcu"],
        station_timeout=TIMEOUTS["station"],
        start=start,
    )


def frame_times(first: float, seconds: float) -> list[float]:
    """Frame times at 30 Hz from ``first`` (computed, not accumulated)."""
    return [first + k * FRAME for k in range(round(seconds / FRAME) + 1)]


def run(
    failsafes: Failsafes, times: list[float], feed: tuple[str, ...] = ()
) -> list[tuple[float, FailsafeChange]]:
    """Update at every time, feeding ``feed`` first each time; the changes with their times."""
    changes = []
    for now in times:
        for name in feed:
            failsafes.feed(name, now)
        changes += [(now, change) for change in failsafes.update(now)]
    return changes


def test_nothing_trips_before_any_timeout() -> None:
    failsafes = make()
    assert run(failsafes, frame_times(START, 0.45)) == []
    assert failsafes.active == []


@pytest.mark.parametrize("name", ["cmd_vel", "mcu"])
def test_watchdog_armed_from_start_trips_when_never_fed(name: str) -> None:
    failsafes = make()
    others = tuple(n for n in ("cmd_vel", "mcu") if n != name)
    changes = run(failsafes, frame_times(START, 10.0), feed=others)
    assert [change for _, change in changes] == [
        FailsafeChange(name, True, f"{name}: never heard (timeout {TIMEOUTS[name]:g} s)")
    ]
    tripped_at = changes[0][0]
    assert START + TIMEOUTS[name] < tripped_at <= START + TIMEOUTS[name] + FRAME
    assert failsafes.active == [name]
    assert failsafes.trips(name) == 1


def test_station_is_not_armed_until_heard() -> None:
    failsafes = make()
    run(failsafes, frame_times(START, 60.0), feed=("cmd_vel", "mcu"))
    assert failsafes.active == []
    assert failsafes.trips("station") == 0


@pytest.mark.parametrize("name", ["cmd_vel", "mcu", "station"])
def test_trips_in_the_first_update_after_the_timeout_and_only_once(name: str) -> None:
    failsafes = make()
    others = tuple(n for n in TIMEOUTS if n != name)
    run(failsafes, frame_times(START, 1.0), feed=(*others, name))
    # Last fed between two frames, so the deadline is not at a frame time.
    last = START + 1.0 + FRAME / 3
    failsafes.feed(name, last)
    changes = run(failsafes, frame_times(START + 1.0 + FRAME, 20.0), feed=others)
    assert len(changes) == 1
    tripped_at, change = changes[0]
    assert change.name == name
    assert change.active
    assert name in change.reason
    assert f"timeout {TIMEOUTS[name]:g} s" in change.reason
    assert last + TIMEOUTS[name] < tripped_at <= last + TIMEOUTS[name] + FRAME
    assert failsafes.trips(name) == 1


def test_deadline_itself_does_not_trip_only_past_it() -> None:
    failsafes = make()
    failsafes.feed("cmd_vel", 1000.0)
    failsafes.feed("mcu", 1000.0)
    assert failsafes.update(1000.5) == []
    assert [c.name for c in failsafes.update(1000.5 + 1e-6)] == ["cmd_vel"]


@pytest.mark.parametrize("name", ["cmd_vel", "mcu", "station"])
def test_recovers_when_fed_again_and_clears_once(name: str) -> None:
    failsafes = make()
    others = tuple(n for n in TIMEOUTS if n != name)
    failsafes.feed(name, START)
    run(failsafes, frame_times(START, 5.0), feed=others)
    assert failsafes.active == [name]
    failsafes.feed(name, START + 5.01)
    changes = run(failsafes, frame_times(START + 5.0 + FRAME, 0.3), feed=(*others, name))
    assert [change for _, change in changes] == [FailsafeChange(name, False, f"{name}: back")]
    assert failsafes.active == []


@pytest.mark.parametrize("name", ["cmd_vel", "mcu", "station"])
def test_each_outage_trips_once(name: str) -> None:
    failsafes = make()
    others = tuple(n for n in TIMEOUTS if n != name)
    changes: list[tuple[float, FailsafeChange]] = []
    now = START
    for _ in range(3):
        changes += run(failsafes, frame_times(now, 1.0), feed=(*others, name))  # alive for 1 s
        changes += run(failsafes, frame_times(now + 1.0 + FRAME, 5.0), feed=others)  # silent for 5 s
        now += 7.0
    assert [change.active for _, change in changes] == [True, False, True, False, True]
    assert failsafes.trips(name) == 3


def test_several_failsafes_hold_together_and_clear_separately() -> None:
    failsafes = make()
    failsafes.feed("station", START)
    run(failsafes, frame_times(START, 3.0))
    assert sorted(failsafes.active) == ["cmd_vel", "mcu", "station"]
    failsafes.feed("mcu", START + 3.0)
    assert failsafes.update(START + 3.0) == [FailsafeChange("mcu", False, "mcu: back")]
    assert sorted(failsafes.active) == ["cmd_vel", "station"]


def test_reason_of_a_trip_after_silence_says_how_long() -> None:
    failsafes = make()
    failsafes.feed("mcu", START)
    failsafes.feed("cmd_vel", START + 2.0)
    [change] = failsafes.update(START + 2.0)
    assert change.reason == "mcu: nothing for 2.00 s (timeout 1.5 s)"


def test_forgotten_station_is_disarmed() -> None:
    failsafes = make()
    failsafes.feed("station", START)
    failsafes.feed("cmd_vel", START + 3.0)
    failsafes.feed("mcu", START + 3.0)
    assert [c.name for c in failsafes.update(START + 3.0)] == ["station"]
    failsafes.forget("station")
    assert failsafes.update(START + 3.1) == [FailsafeChange("station", False, "station: back")]
    failsafes.feed("cmd_vel", START + 60.0)
    failsafes.feed("mcu", START + 60.0)
    assert failsafes.update(START + 60.0) == []


def overdue_edges(feeds: list[float], times: list[float], timeout: float, armed_from: float | None) -> int:
    """Reference model: rising edges of 'overdue' over the update times."""
    edges, was = 0, False
    for now in times:
        fed = [t for t in feeds if t <= now]
        reference = fed[-1] if fed else armed_from
        overdue = reference is not None and now - reference > timeout
        edges += overdue and not was
        was = overdue
    return edges


@settings(deadline=None, derandomize=True, max_examples=200)
@given(
    name=st.sampled_from(["cmd_vel", "mcu", "station"]),
    steps=st.lists(st.tuples(st.floats(0.001, 1.2), st.booleans()), min_size=1, max_size=60),
)
def test_trips_match_the_outages_of_any_feed_schedule(name: str, steps: list[tuple[float, bool]]) -> None:
    """Updates at random gaps, the watched cause fed before some of them."""
    failsafes = make(start=0.0)
    now, feeds, times, active_changes = 0.0, [], [], []
    for gap, fed in steps:
        now += gap
        if fed:
            failsafes.feed(name, now)
            feeds.append(now)
        times.append(now)
        active_changes += [c.active for c in failsafes.update(now) if c.name == name]
    armed_from = None if name == "station" else 0.0
    expected = overdue_edges(feeds, times, TIMEOUTS[name], armed_from)
    # Trips and clears alternate, starting with a trip; one trip per outage.
    assert active_changes == [k % 2 == 0 for k in range(len(active_changes))]
    assert active_changes.count(True) == expected == failsafes.trips(name)
    assert (name in failsafes.active) == (len(active_changes) % 2 == 1)
