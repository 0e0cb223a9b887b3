"""The run log and report: what a run keeps stays bounded however long it runs."""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from hil_bringup.core.done import DoneWatch
from hil_bringup.core.report import Judgement, RunLog, Series, report_figure, task_judgement, write_report
from hil_bringup.hil_sim_runner import boards_text, judge_task, render
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


# --- what a picture shows: the verdicts, the signals they read, the task, every robot -----------


def steps(name: str, t: list[float], values: list[float], **bounds: float) -> Series:
    return Series(name, np.array(t), np.array(values), step=True, **bounds)


def titles(fig: Figure) -> list[str]:
    return [ax.get_title() for ax in fig.axes]


def legend(ax: Axes) -> list[str]:
    box = ax.get_legend()
    return [] if box is None else [text.get_text() for text in box.get_texts()]


def test_a_judged_runs_picture_shows_each_verdict_over_its_span_and_the_signals_it_read() -> None:
    log = RunLog(WorldConfig(boards=ring_of_boards(6, 1.0)), heading="scenario s: FAIL", duration=20.0)
    log.judgements = [
        Judgement("all boards down by 10 s", "PASS", "at 8.00 s", (0.0, 8.0), [
            steps("boards down", [0.0, 4.0, 8.0], [0.0, 3.0, 6.0], low=6.0)
        ]),
        Judgement("telemetry TL2.heading_deg in [0, 360]", "FAIL", "400 at 5.00 s", (0.0, 5.0), [
            Series("TL2.heading_deg", np.array([0.0, 5.0]), np.array([10.0, 400.0]), low=0.0, high=360.0)
        ]),
        Judgement("robot in x [0, 1] at 30 s", "ERROR", "not judged", None, []),
    ]  # fmt: skip
    fig = report_figure(log)
    assert fig.get_suptitle() == "scenario s: FAIL"
    verdicts = next(ax for ax in fig.axes if ax.get_title().startswith("verdicts"))
    assert [t.get_text() for t in verdicts.get_yticklabels()] == [
        "PASS  all boards down by 10 s",
        "FAIL  telemetry TL2.heading_deg in [0, 360]",
        "ERROR  robot in x [0, 1] at 30 s",
    ]
    # A bar over each span covered, in its verdict's colour; none for what nothing covers.
    bars = [(p.get_x(), p.get_x() + p.get_width(), to_hex(p.get_facecolor())) for p in verdicts.patches]
    assert bars == [(0.0, 8.0, to_hex("tab:green")), (0.0, 5.0, to_hex("tab:red"))]
    assert verdicts.get_xlim() == (0.0, 20.0)  # the planned run, to show what the error needed
    # One panel per verdict with signals: titled with it, the signals and bounds in its legend.
    boards = next(ax for ax in fig.axes if ax.get_title().startswith("PASS: all boards down"))
    assert legend(boards) == ["boards down", "min 6"]
    heading = next(ax for ax in fig.axes if ax.get_title().startswith("FAIL: telemetry"))
    assert legend(heading) == ["TL2.heading_deg", "min 0", "max 360"]
    assert "400 at 5.00 s" in heading.get_title()
    assert list(heading.lines[0].get_ydata()) == [10.0, 400.0]
    assert len(fig.axes) == 4  # the arena, the verdicts, two panels


def test_the_runners_picture_names_its_task_and_whether_it_was_done() -> None:
    world = WorldConfig()
    log = RunLog(world)
    for n in range(101):  # three robots driving toward the light, robot 2 never arriving
        t = n * 0.1
        xs = np.array([world.light.x - 3 + 0.3 * t, world.light.x - 3 + 0.25 * t, -3.0])
        log.sample(t, float(xs[0]), world.light.y, False, [])
        log.sample_others(t, xs, np.full(3, world.light.y))
    args = argparse.Namespace(behaviour="swarm", hil_robots=3)
    judge_task(log, args, DoneWatch(lambda sim: False), end=10.0)
    fig = report_figure(log)
    assert fig.get_suptitle() == "task swarm: every HIL robot within 1 m of the light: NOT DONE in 10.0 s"
    panel = next(ax for ax in fig.axes if "task swarm" in ax.get_title() and "NOT DONE" in ax.get_title())
    assert legend(panel) == [f"robot {i} to the light" for i in range(3)] + ["max 1"]
    assert log.metrics["task"] == "swarm" and log.metrics["done"] is False


def test_boards_task_counts_the_falls_against_the_boards_of_the_world() -> None:
    log = RunLog(WorldConfig(boards=ring_of_boards(3, 1.0)))
    log.note_boards(1.0, [True, False, True])
    log.note_boards(2.5, [False, False, True])
    judgement = task_judgement(log, "boards", done_at=None, end=4.0)
    (down,) = judgement.series
    assert (list(down.t), list(down.values), down.low) == ([0.0, 1.0, 2.5, 4.0], [0.0, 1.0, 2.0, 2.0], 3)
    assert (judgement.label, judgement.verdict) == ("task boards: every board down", "NOT DONE")


def test_every_robots_path_stays_in_sight_robot_0_on_top() -> None:
    log = RunLog(WorldConfig())
    for n in range(50):  # four robots on one path: the worst case
        log.sample(n * 0.1, n * 0.02, 0.0, n % 10 == 0, [])
        log.sample_others(n * 0.1, np.full(4, n * 0.02), np.zeros(4))
    fig = report_figure(log)
    (arena,) = fig.axes
    paths = {line.get_label(): line for line in arena.lines if str(line.get_label()).startswith("robot")}
    assert sorted(paths) == [f"robot {i}" for i in range(4)]
    assert legend(arena)[:4] == [f"robot {i}" for i in range(4)]
    # Robot 0 above every other robot and the LED rings; each path narrower than the one under it.
    zorders = [paths[f"robot {i}"].get_zorder() for i in range(4)]
    widths = [paths[f"robot {i}"].get_linewidth() for i in range(4)]
    led = next(line for line in arena.lines if line.get_label() == "LED on")
    assert zorders == sorted(zorders, reverse=True) and zorders[0] > led.get_zorder()
    assert widths == sorted(widths) and len(set(widths)) == 4
    assert len({to_hex(paths[f"robot {i}"].get_color()) for i in range(4)}) == 4


def test_a_world_without_boards_says_nothing_of_boards() -> None:
    status = {
        "sim_time": 1.0, "wall_time": 1.0, "rtf": 1.0, "pose": (0.0, 0.0, 0.0), "boards_down": 0, "boards": 0,
        "mode": "MANUAL", "held_by": "-", "mcu_link": None, "mcu_rtt_ms": None, "station": "-",
        "jitter_p99_us": None, "frames": 0,
    }  # fmt: skip
    table = render(status)
    assert "boards down" not in list(table.columns[0].cells)
    assert boards_text(status) == ""
    assert boards_text({**status, "boards": 6, "boards_down": 2}) == "2 of 6 boards down in "
    fig = report_figure(RunLog(WorldConfig()))
    assert "boards" not in fig.axes[0].get_title()


def test_a_report_is_drawn_without_pyplot(tmp_path: Path) -> None:
    # pyplot's import was a fifth of a report's time, and its figures stay open until closed.
    code = (
        "import sys; from pathlib import Path; from hil_sim.core.world import WorldConfig;"
        "from hil_bringup.core.report import RunLog, write_report;"
        f"write_report(RunLog(WorldConfig()), Path({str(tmp_path)!r}));"
        "print('matplotlib.pyplot' in sys.modules, 'matplotlib.figure' in sys.modules)"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert shown.stdout.split() == ["False", "True"]
    assert (tmp_path / "report.png").stat().st_size > 0
