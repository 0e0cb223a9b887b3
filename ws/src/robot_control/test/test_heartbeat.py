"""Heartbeat bookkeeping: round trips from echoes, lost heartbeats, when a link is alive."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robot_control.core.heartbeat import HeartbeatTracker, LinkHealth


def test_link_never_heard_is_not_alive_and_reports_minus_one() -> None:
    tracker = HeartbeatTracker(timeout=1.5)
    assert not tracker.alive(0.0)
    assert tracker.health(100.0) == LinkHealth(
        alive=False,
        rtt_last=0.0,
        rtt_mean=0.0,
        rtt_max=0.0,
        sent=0,
        received=0,
        lost=0,
        since_last_heard=-1.0,
    )


@pytest.mark.parametrize(("later", "alive"), [(0.0, True), (1.0, True), (1.5, True), (1.5001, False)])
def test_link_is_alive_within_the_timeout_of_the_last_message(later: float, alive: bool) -> None:
    tracker = HeartbeatTracker(timeout=1.5)
    tracker.heard(10.0)
    assert tracker.alive(10.0 + later) is alive
    assert tracker.health(10.0 + later).since_last_heard == pytest.approx(later)


def test_echo_gives_round_trip_from_send_to_arrival() -> None:
    tracker = HeartbeatTracker(timeout=1.5)
    tracker.sent_heartbeat("10.000000", 10.0)
    assert tracker.echoed("10.000000", 10.025) == pytest.approx(0.025)
    health = tracker.health(10.03)
    assert health.rtt_last == pytest.approx(0.025)
    assert health.alive
    assert (health.sent, health.received, health.lost) == (1, 1, 0)


def test_round_trip_statistics_over_several_echoes() -> None:
    tracker = HeartbeatTracker(timeout=1.5)
    for k, rtt in enumerate([0.010, 0.030, 0.020]):
        tracker.sent_heartbeat(str(k), float(k))
        assert tracker.echoed(str(k), k + rtt) == pytest.approx(rtt)
    health = tracker.health(3.0)
    assert health.rtt_last == pytest.approx(0.020)
    assert health.rtt_mean == pytest.approx(0.020)
    assert health.rtt_max == pytest.approx(0.030)
    assert tracker.echoes == 3


def test_echo_of_a_stamp_never_sent_is_heard_but_has_no_round_trip() -> None:
    tracker = HeartbeatTracker(timeout=1.5)
    assert tracker.echoed("123.0", 5.0) is None
    assert tracker.alive(5.0)
    assert tracker.received == 1
    assert tracker.echoes == 0
    assert tracker.health(5.0).rtt_last == 0.0


def test_duplicated_echo_counts_once() -> None:
    tracker = HeartbeatTracker(timeout=1.5)
    tracker.sent_heartbeat("1", 1.0)
    assert tracker.echoed("1", 1.01) is not None
    assert tracker.echoed("1", 1.02) is None
    assert tracker.echoes == 1


def test_heartbeat_unanswered_for_lost_after_counts_as_lost_once() -> None:
    tracker = HeartbeatTracker(timeout=1.5, lost_after=1.0)
    tracker.sent_heartbeat("1", 1.0)
    tracker.expire(1.99)
    assert tracker.lost == 0
    tracker.expire(2.0)
    assert tracker.lost == 1
    tracker.expire(10.0)
    assert tracker.lost == 1
    # Its late echo still means the link is there, but is no round trip.
    assert tracker.echoed("1", 10.0) is None
    assert tracker.alive(10.0)


def test_lost_after_defaults_to_the_timeout() -> None:
    tracker = HeartbeatTracker(timeout=1.5)
    assert tracker.lost_after == 1.5


def test_heartbeats_beyond_memory_count_as_lost() -> None:
    tracker = HeartbeatTracker(timeout=100.0, memory=4)
    for k in range(10):
        tracker.sent_heartbeat(str(k), float(k))
    assert tracker.lost == 6
    assert tracker.echoed("0", 10.0) is None
    assert tracker.echoed("9", 10.0) == pytest.approx(1.0)


@settings(deadline=None, derandomize=True, max_examples=200)
@given(
    st.lists(
        st.tuples(st.floats(0.01, 1.0), st.one_of(st.none(), st.floats(0.0, 3.0))),
        min_size=1,
        max_size=40,
    )
)
def test_every_heartbeat_is_echoed_or_lost_never_both(schedule: list[tuple[float, float | None]]) -> None:
    """Send heartbeats at increasing times, echo some after a delay (None: never)."""
    tracker = HeartbeatTracker(timeout=1.5, lost_after=1.0)
    now = 0.0
    events: list[tuple[float, int, str]] = []  # (time, order, what)
    for index, (gap, delay) in enumerate(schedule):
        now += gap
        events.append((now, 0, f"send {index}"))
        if delay is not None:
            events.append((now + delay, 1, f"echo {index}"))
    sent_at: dict[str, float] = {}
    expected_echoes = 0
    for at, _, what in sorted(events):
        kind, stamp = what.split()
        tracker.expire(at)
        if kind == "send":
            tracker.sent_heartbeat(stamp, at)
            sent_at[stamp] = at
        else:
            rtt = tracker.echoed(stamp, at)
            if at - sent_at[stamp] < 1.0:
                expected_echoes += 1
                assert rtt == pytest.approx(at - sent_at[stamp])
            else:
                assert rtt is None
    tracker.expire(now + 10.0)
    assert tracker.echoes == expected_echoes
    assert tracker.echoes + tracker.lost == tracker.sent == len(schedule)
