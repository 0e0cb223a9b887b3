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
    running.at(4.0)
    assert running.at(0.0) == 4.0  # the world went back to 0
    assert running.at(0.5) == pytest.approx(4.5)
    running.at(0.25)  # and again
    assert running.at(1.0) == pytest.approx(5.25)


@given(st.lists(st.floats(min_value=0.0, max_value=1e6), min_size=1, max_size=50))
def test_running_time_never_runs_back(times: list[float]) -> None:
    running = RunningTime()
    seen = [running.at(t) for t in times]
    assert seen == sorted(seen)
