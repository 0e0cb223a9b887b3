"""The run log and report: what a run keeps stays bounded however long it runs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from hil_bringup.core.report import RunLog, write_report
from hil_sim.core.world import WorldConfig, ring_of_boards

#: The runners sample the log every 50 ms of simulated time.
SAMPLE_PERIOD = 0.05
#: A generous bound on what a track may keep: a log that grows with the run is far past it.
KEPT_AT_MOST = 20_000


def long_run(hours: float, *, robots: int = 3) -> RunLog:
    """A log sampled as the runners do for ``hours`` simulated: a circle, the LED on every 2 s."""
    log = RunLog(WorldConfig(boards=ring_of_boards(6, 1.0)))
    samples = round(hours * 3600 / SAMPLE_PERIOD)
    for n in range(samples):
        t = n * SAMPLE_PERIOD
        x, y = math.cos(t / 10), math.sin(t / 10)
        log.sample(t, x, y, n % 40 < 20, [t < 1000.0] * 6)
        log.sample_others(t, np.array([x, x + 0.1, x + 0.2][:robots]), np.array([y, y, y][:robots]))
    return log


def test_a_long_runs_log_stays_bounded_and_spans_the_whole_run() -> None:
    log = long_run(2.0)  # 144 000 samples per robot
    end = (round(2.0 * 3600 / SAMPLE_PERIOD) - 1) * SAMPLE_PERIOD
    for robot, track in log.tracks.items():
        rows = track.rows
        assert len(rows) <= KEPT_AT_MOST, f"robot {robot} kept {len(rows)} samples"
        assert rows[0, 0] == 0.0 and rows[-1, 0] == pytest.approx(end)  # the whole run, to its end
        assert np.all(np.diff(rows[:, 0]) > 0)
    assert len(log.led_on) <= KEPT_AT_MOST
    assert log.led_switch_ons == 3600  # every one counted, one per 2 s
    assert log.board_falls == dict.fromkeys(range(6), 1000.0)


def test_first_within_finds_the_first_sample_in_reach() -> None:
    log = RunLog(WorldConfig())
    for n in range(100):
        log.sample(n * 0.05, n * 0.01, 0.0, False, [])
    assert log.first_within(0.1, 0.5, 0.0)[0] == pytest.approx(40 * 0.05)
    assert log.first_within(0.1, 5.0, 0.0)[0] is None


def test_the_report_of_a_long_run_has_its_counts_and_picture(tmp_path: Path) -> None:
    metrics_path, picture_path = write_report(long_run(0.5), tmp_path)
    metrics = json.loads(metrics_path.read_text())
    assert metrics["led_switch_ons"] == 900
    assert metrics["board_fall_times_s"] == {str(k): 1000.0 for k in range(6)}
    assert picture_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
