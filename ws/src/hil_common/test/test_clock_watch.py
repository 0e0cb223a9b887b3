"""ClockWatch: a simulated clock that stops changing counts as stalled after its timeout (wall s)."""

from __future__ import annotations

import math

import pytest

from hil_common.core.clock_watch import ClockWatch
from hil_common.errors import HilError

START = 50.0
TIMEOUT = 1.0

#: (readings of the simulated clock, one every 0.1 wall s from START; stalled after the last?)
CASES = [
    ([], False),  # just started: not yet
    ([0.0] * 10, False),  # no /clock for 1.0 s: at the timeout, not past it
    ([0.0] * 12, True),  # no /clock for 1.1 s: the world never came
    ([0.1 * k for k in range(1, 30)], False),  # moving
    ([1.0, 2.0] + [2.0] * 11, True),  # stopped at 2.0 s for 1.1 s: the world is gone
    ([1.0] + [1.0] * 11 + [1.5], False),  # moves again: clears at once
    ([30.0] + [30.0] * 11 + [0.2], False),  # a world that restarts begins again near 0
    ([3.0] + [0.0] * 12, True),  # back to "no clock" (0) is no move
]


@pytest.mark.parametrize(("readings", "stalled"), CASES)
def test_the_clock_counts_as_stalled_once_its_reading_has_not_changed_for_the_timeout(
    readings: list[float], stalled: bool
) -> None:
    watch = ClockWatch(TIMEOUT, start=START)
    now = START
    for k, reading in enumerate(readings, start=1):
        now = START + 0.1 * k
        watch.observe(reading, now)
    assert watch.stalled(now) is stalled


def test_observe_says_which_readings_are_moves() -> None:
    watch = ClockWatch(TIMEOUT, start=START)
    readings = [0.0, 1.0, 1.0, 2.0, 0.0, 2.0, 0.5]
    moves = [watch.observe(reading, START + k) for k, reading in enumerate(readings)]
    assert moves == [False, True, False, True, False, False, True]


def test_describe_says_what_the_clock_does() -> None:
    watch = ClockWatch(TIMEOUT, start=START)
    assert watch.describe(START + 3.0) == "no simulated clock (/clock) for 3.0 s"
    watch.observe(12.3456, START + 3.0)
    assert watch.describe(START + 3.5) == "simulated clock at 12.346 s"
    assert watch.describe(START + 5.5) == "simulated clock (/clock) stopped at 12.346 s, 2.5 s ago"


@pytest.mark.parametrize("timeout", [0.0, -1.0, math.inf, math.nan])
def test_a_timeout_that_is_not_a_positive_number_is_refused(timeout: float) -> None:
    with pytest.raises(HilError, match="clock_timeout"):
        ClockWatch(timeout, start=START)
