"""hil_common.core.stepping: a part's own time across a world reset."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hil_common.core.stepping import RunningTime


def test_running_time_is_the_simulated_time_until_it_runs_back() -> None:
    running = RunningTime()
    assert [running.at(t) for t in (0.0, 0.005, 1.25)] == [0.0, 0.005, 1.25]  # exactly


def test_after_a_reset_the_running_time_goes_on_from_where_it_was() -> None:
    running = RunningTime()
    assert [running.at(t) for t in (0.0, 0.005, 0.01)] == [0.0, 0.005, 0.01]
    # The world ran the period from 0.01 to 0.015, then went back to 0.
    assert running.at(0.0) == pytest.approx(0.015)
    assert running.at(0.005) == pytest.approx(0.02)
    assert running.at(0.0) == pytest.approx(0.025)  # and again: every period counts in full


@given(st.lists(st.floats(min_value=0.0, max_value=1e6), min_size=1, max_size=50))
def test_running_time_never_runs_back(times: list[float]) -> None:
    running = RunningTime()
    seen = [running.at(t) for t in times]
    assert seen == sorted(seen)


def test_reads_at_the_same_time_do_not_shorten_the_period_a_reset_counts() -> None:
    """A part's clock read again within a period (a stamp) is no period of its own."""
    running = RunningTime()
    for t in (0.0, 0.005, 0.01):
        running.at(t)
        running.at(t)  # the part read its clock again at the same time
    assert running.at(0.0) == pytest.approx(0.015)  # the last period, 5 ms, counted in full


@given(st.lists(st.floats(min_value=0.0, max_value=1e6), min_size=1, max_size=50))
def test_a_peek_says_what_the_next_read_gives_and_changes_nothing(times: list[float]) -> None:
    running, twin = RunningTime(), RunningTime()
    for t in times:
        peeked = running.peek(t)
        assert running.peek(t) == peeked  # changed nothing
        assert running.at(t) == peeked == twin.at(t)
