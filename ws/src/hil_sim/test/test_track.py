"""A track keeps a whole run's path in bounded memory."""

from __future__ import annotations

import pytest

from hil_sim.core.track import Track


def test_a_track_thins_out_evenly_and_keeps_the_latest_sample() -> None:
    track = Track(capacity=8)
    for n in range(21):
        track.add(float(n), float(n), 0.0)
    # Kept every 4th sample once 8 were kept twice over, then the latest (20 is on the stride).
    assert track.stride == 4
    assert [t for t, _, _ in track] == [0.0, 4.0, 8.0, 12.0, 16.0, 20.0]
    track.add(21.0, 21.0, 0.0)
    assert [t for t, _, _ in track][-2:] == [20.0, 21.0]
    with pytest.raises(ValueError, match="even"):
        Track(capacity=7)


def test_a_track_of_one_value_keeps_timed_values_the_same_way() -> None:
    track = Track(capacity=4, width=1)
    for n in range(9):
        track.add(float(n), 10.0 * n)
    assert track.rows.shape[1] == 2
    assert [v for _, v in track][-1] == 80.0  # the latest is always there
    with pytest.raises(ValueError, match="width"):
        Track(width=0)
