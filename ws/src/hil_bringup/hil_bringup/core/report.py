"""What a run leaves behind: a metrics JSON and a picture of the arena (its floor markings too).

:class:`RunLog` collects, while the run goes, the trajectory of robot 0 (and of the
others in a swarm, :data:`MAX_DRAWN` at most), the moments robot 0's LED came on,
when each board fell (noted every period), and the link and loop figures at the end; :func:`write_report`
writes ``metrics.json`` and ``report.png`` into the run's folder. What it keeps is
bounded whatever the run's length: each path and the LED moments are :class:`Track`
objects of at most :data:`TRACK_CAPACITY` samples.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from hil_bringup.core.done import GATHER_RADIUS, TASK_TEXT
from hil_sim.core.track import TRACK_CAPACITY, Track
from hil_sim.core.world import WorldConfig, marking_outline, rectangle_corners

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "MAX_DRAWN",
    "TRACK_CAPACITY",
    "Judgement",
    "RunLog",
    "Series",
    "SeriesRecorder",
    "Track",
    "report_figure",
    "task_judgement",
    "write_report",
]

#: Robots whose trajectories a report keeps and draws (a swarm of 100 would be a smudge).
MAX_DRAWN = 20


@dataclass(frozen=True, eq=False)
class Series:
    """A signal against simulated time, as something judged it (a scenario check, a run's task)."""

    name: str
    #: Simulated seconds, increasing.
    t: npt.NDArray[np.float64]
    values: npt.NDArray[np.float64]
    unit: str = ""
    #: The bounds it was held to (drawn as dashed lines); None: none on that side.
    low: float | None = None
    high: float | None = None
    #: A state that holds until its next sample (a count, a flag): drawn as steps.
    step: bool = False


class SeriesRecorder:
    """One signal's samples over a run in bounded memory (a :class:`Track`); :meth:`series` gives them.

    A ``step`` signal keeps only its changes (and how long its last value lasted), so
    a flag or a count costs nothing while it stays put.
    """

    def __init__(
        self,
        name: str,
        *,
        unit: str = "",
        low: float | None = None,
        high: float | None = None,
        step: bool = False,
        capacity: int = TRACK_CAPACITY,
    ) -> None:
        self.name, self.unit, self.low, self.high, self.step = name, unit, low, high, step
        self._track = Track(capacity, width=1)
        self._last: float | None = None
        self._end: float | None = None

    def add(self, t: float, value: float) -> None:
        """The signal's value at simulated time ``t``."""
        self._end = t
        if self.step and value == self._last:
            return
        self._last = value
        self._track.add(t, value)

    def series(self) -> Series:
        """The samples kept, to the latest time (a step signal's last value held to it)."""
        rows = self._track.rows
        t, values = rows[:, 0], rows[:, 1]
        if self.step and len(t) and self._end is not None and self._end > t[-1]:
            t, values = np.append(t, self._end), np.append(values, values[-1])
        return Series(self.name, t, values, self.unit, self.low, self.high, self.step)


@dataclass(frozen=True)
class Judgement:
    """One thing a run was judged on, for its picture: the verdict and the signals it read."""

    label: str
    #: PASS, FAIL or ERROR (a scenario's assertion); DONE or NOT DONE (a run's task).
    verdict: str
    detail: str = ""
    #: The simulated interval the verdict covers; None: none.
    span: tuple[float, float] | None = None
    series: Sequence[Series] = ()


@dataclass
class RunLog:
    """The record of one run (times are simulated seconds), bounded in memory."""

    world: WorldConfig
    trajectory: Track = field(default_factory=Track)  # robot 0
    #: Where robot 0 was when its LED came on (the latest moments, thinned like a path).
    led_on: Track = field(default_factory=Track)
    #: How many times robot 0's LED came on.
    led_switch_ons: int = 0
    board_falls: dict[int, float] = field(default_factory=dict)  # board index -> t
    metrics: dict[str, Any] = field(default_factory=dict)
    #: Robots 1.. (up to MAX_DRAWN): robot -> its track.
    others: dict[int, Track] = field(default_factory=dict)
    #: What the run was judged on (a scenario's assertions, the runner's task), drawn beside the arena.
    judgements: list[Judgement] = field(default_factory=list)
    #: The picture's title: the run's name and outcome.
    heading: str = ""
    #: The run's planned length (simulated s; its time axes span at least this).
    duration: float | None = None
    _led_was_on: bool = False

    def sample_others(self, t: float, xs: Any, ys: Any) -> None:
        """Record robots 1.. (at most MAX_DRAWN in all) at time ``t``."""
        for robot in range(1, min(len(xs), MAX_DRAWN)):
            self.others.setdefault(robot, Track()).add(t, float(xs[robot]), float(ys[robot]))

    @property
    def tracks(self) -> dict[int, Track]:
        """Every robot's trajectory kept, robot 0 first."""
        return {0: self.trajectory, **self.others}

    def first_within(self, radius: float, x: float, y: float) -> dict[int, float | None]:
        """Per robot drawn, the first sampled time it was within ``radius`` of (x, y)."""
        return {
            robot: next((t for t, px, py in track if math.hypot(px - x, py - y) <= radius), None)
            for robot, track in self.tracks.items()
        }

    def sample(self, t: float, x: float, y: float, led: bool, standing: Sequence[bool]) -> None:
        """Record the robot's position, an LED switching on, boards that fell since last time."""
        self.trajectory.add(t, x, y)
        if led and not self._led_was_on:
            self.led_on.add(t, x, y)
            self.led_switch_ons += 1
        self._led_was_on = led
        self.note_boards(t, standing)

    def note_boards(self, t: float, standing: Sequence[bool] | npt.NDArray[np.bool_]) -> None:
        """Boards that fell since the last call, at ``t``.

        The runners call it every period, not only at the path's samples: a board's
        fall is timed to its period, and one that falls as a run ends is counted.
        """
        down = np.flatnonzero(~np.asarray(standing, dtype=bool))
        if len(down) == len(self.board_falls):
            return
        for index in down:
            self.board_falls.setdefault(int(index), t)


def task_judgement(
    log: RunLog, task: str, *, done_at: float | None, end: float, robots: int = 1
) -> Judgement:
    """A run's task (:mod:`hil_bringup.core.done`) as its picture shows it: done or not, and what it read.

    Args:
        log: the run's log (board falls, robots' paths).
        task: ``boards``, ``light`` or ``swarm`` (another: its verdict only).
        done_at: since when the task was done (None: not done).
        end: the run's last simulated second.
        robots: the robots the task is about (swarm: the HIL robots).
    """
    world = log.world
    light = world.light
    series: list[Series] = []
    if task == "boards":
        falls = sorted(log.board_falls.values())
        t = np.array([0.0, *falls, max([end, *falls])])
        values = np.array([0.0, *range(1, len(falls) + 1), len(falls)], dtype=float)
        series.append(Series("boards down", t, values, low=len(world.boards), step=True))
    elif task in ("light", "swarm"):
        limit = light.reference_distance if task == "light" else GATHER_RADIUS
        for robot, track in log.tracks.items():
            if robot >= (1 if task == "light" else robots):
                continue
            rows = track.rows
            distance = np.hypot(rows[:, 1] - light.x, rows[:, 2] - light.y)
            series.append(Series(f"robot {robot} to the light", rows[:, 0], distance, unit="m", high=limit))
    done = done_at is not None
    return Judgement(
        f"task {task}: {TASK_TEXT.get(task, task)}",
        "DONE" if done else "NOT DONE",
        f"at {done_at:.2f} s" if done_at is not None else f"in {end:.1f} s",
        (0.0, done_at if done_at is not None else end),
        series,
    )


def write_report(log: RunLog, folder: Path) -> tuple[Path, Path]:
    """Write ``metrics.json`` and ``report.png``; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    metrics_path = folder / "metrics.json"
    metrics = dict(log.metrics)
    metrics["board_fall_times_s"] = {str(k): round(v, 3) for k, v in sorted(log.board_falls.items())}
    metrics["led_switch_ons"] = log.led_switch_ons
    metrics_path.write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    picture_path = folder / "report.png"
    _draw(log, picture_path)
    return metrics_path, picture_path


def _draw(log: RunLog, path: Path) -> None:
    report_figure(log).savefig(path, dpi=100)


#: Colours of the verdicts (a scenario's assertions, a run's task).
VERDICT_COLOURS = {
    "PASS": "tab:green",
    "DONE": "tab:green",
    "FAIL": "tab:red",
    "NOT DONE": "tab:red",
    "ERROR": "tab:orange",
}
#: Inches of the arena's square (the floor markings' tape is drawn as wide as it is at this size).
ARENA_INCHES = 7.0


def report_figure(log: RunLog) -> Figure:
    """The run's picture as a matplotlib figure, apart from pyplot (nothing to close; no display needed).

    Without judgements: the arena (walls, boxes, boards standing or fallen with their
    fall times, floor markings, the light, each robot's path, robot 0's LED). With
    them (:attr:`RunLog.judgements`): the arena beside the verdicts, each a bar over
    the span it covers, and one panel per judgement with series: the signals it read
    against simulated time, the bounds it held them to dashed, its span shaded in its
    verdict's colour. :attr:`RunLog.heading` is the figure's title.
    """
    # Without pyplot, whose import was a fifth of a report's time (a run draws one).
    from matplotlib.figure import Figure  # noqa: PLC0415 - only when a report is drawn

    judged = list(log.judgements)
    panels = [j for j in judged if j.series]
    if not judged:
        fig = Figure(figsize=(ARENA_INCHES, ARENA_INCHES))
        arena = fig.subplots()
    else:
        verdict_height = 0.7 + 0.32 * len(judged)
        # Each panel 2 inches, or more to fill the arena's height.
        panel_height = max(2.0, (ARENA_INCHES - 1.0 - verdict_height) / len(panels)) if panels else 2.0
        heights = [verdict_height] + [panel_height] * len(panels)
        fig = Figure(figsize=(2 * ARENA_INCHES + 1.0, max(ARENA_INCHES, sum(heights) + 1.0)))
        grid = fig.add_gridspec(len(heights), 2, width_ratios=[1.0, 1.15], height_ratios=heights)
        arena = fig.add_subplot(grid[:, 0])
        end = _end_of(log)
        verdicts = fig.add_subplot(grid[0, 1])
        _draw_verdicts(verdicts, judged, end)
        shared = None
        for row, judgement in enumerate(panels, start=1):
            ax = fig.add_subplot(grid[row, 1], sharex=shared)
            shared = shared or ax
            _draw_series(ax, judgement, end)
        fig.axes[-1].set_xlabel("simulated time (s)")
    _draw_arena(arena, log)
    if log.heading:
        fig.suptitle(log.heading, fontsize=12, fontweight="bold")
    fig.tight_layout()
    return fig


def _end_of(log: RunLog) -> float:
    """The last simulated second a picture's time axes show: the run's, or what its judgements cover."""
    ends = [float(log.metrics.get("sim_duration_s", 0.0)), log.duration or 0.0]
    for judgement in log.judgements:
        if judgement.span is not None:
            ends.append(judgement.span[1])
        ends.extend(float(one.t[-1]) for one in judgement.series if len(one.t))
    return max(ends) or 1.0


def _draw_verdicts(ax: Axes, judged: Sequence[Judgement], end: float) -> None:
    """Each verdict a bar over its span, top to bottom in the judgements' order."""
    for row, judgement in enumerate(judged):
        colour = VERDICT_COLOURS.get(judgement.verdict, "grey")
        if judgement.span is not None:
            start, stop = judgement.span
            ax.barh(row, max(stop - start, end * 0.004), left=start, color=colour, height=0.6)
        ax.text(
            judgement.span[0] if judgement.span is not None else 0.0,
            row,
            f" {judgement.detail}",
            va="center",
            fontsize=7,
            color="black",
            clip_on=True,
        )
    ax.set_yticks(range(len(judged)), [_short(f"{j.verdict}  {j.label}", 60) for j in judged], fontsize=8)
    for tick, judgement in zip(ax.get_yticklabels(), judged, strict=True):
        tick.set_color(VERDICT_COLOURS.get(judgement.verdict, "black"))
    ax.set_ylim(len(judged) - 0.5, -0.5)
    ax.set_xlim(0.0, end)
    ax.set_title("verdicts (bars: the simulated span each covers)", fontsize=10)
    ax.grid(axis="x", alpha=0.3)


def _draw_series(ax: Axes, judgement: Judgement, end: float) -> None:
    """The signals a judgement read, its bounds dashed, its span shaded in its verdict's colour."""
    colour = VERDICT_COLOURS.get(judgement.verdict, "grey")
    if judgement.span is not None:
        ax.axvspan(*judgement.span, color=colour, alpha=0.12, lw=0)
    bounds: dict[tuple[str, float], list[str]] = {}
    for index, one in enumerate(judgement.series):
        line_colour = f"C{index % 10}"
        if one.step:
            ax.step(one.t, one.values, where="post", color=line_colour, lw=1.2, label=one.name)
        else:
            ax.plot(one.t, one.values, color=line_colour, lw=1.0, label=one.name)
        for bound, word in ((one.low, "min"), (one.high, "max")):
            if bound is not None:
                bounds.setdefault((word, bound), []).append(line_colour)
    for (word, bound), colours in bounds.items():  # a bound shared by several signals drawn once, black
        colour = colours[0] if len(colours) == 1 else "black"
        ax.axhline(bound, color=colour, ls="--", lw=0.9, label=f"{word} {bound:g}")
    if all(one.step and set(np.unique(one.values)) <= {0.0, 1.0} for one in judgement.series):
        ax.set_ylim(-0.15, 1.15)  # flags: held (1) or not (0)
        ax.set_yticks([0.0, 1.0], ["no", "yes"])
    units = {one.unit for one in judgement.series}
    if len(units) == 1 and "" not in units:
        ax.set_ylabel(units.pop())
    ax.set_xlim(0.0, end)
    ax.set_title(
        _short(f"{judgement.verdict}: {judgement.label} ({judgement.detail})", 95), fontsize=9, color=colour
    )
    ax.legend(loc="best", fontsize=7)
    ax.grid(alpha=0.3)


def _short(text: str, length: int) -> str:
    """``text`` cut to ``length`` characters, with an ellipsis where cut."""
    return text if len(text) <= length else text[: length - 1] + "\u2026"


def _draw_arena(ax: Axes, log: RunLog) -> None:
    """The arena and what happened in it: boards, light, robots' paths, robot 0's LED."""
    from matplotlib import colormaps  # noqa: PLC0415 - only when a report is drawn
    from matplotlib.patches import Circle, Polygon, Rectangle  # noqa: PLC0415

    world = log.world
    ax.add_patch(
        Rectangle((-world.width / 2, -world.height / 2), world.width, world.height, fill=False, lw=2)
    )
    for marking in world.markings:
        line_x, line_y = marking_outline(marking)
        # The tape as wide as it is (points per metre of the axes at this figure size).
        points = marking.width * ARENA_INCHES * 72 * 0.8 / max(world.width, world.height)
        shade = str(min(max(marking.reflectance, 0.0), 1.0))
        ax.plot(line_x, line_y, color=shade, lw=max(points, 0.5), solid_capstyle="butt", zorder=0)
    for box in world.boxes:
        ax.add_patch(Polygon(rectangle_corners(box.x, box.y, box.width, box.depth, box.yaw), color="tan"))
    for index, board in enumerate(world.boards):
        fallen = index in log.board_falls
        if fallen:
            # Lying flat, fallen outward from where it stood.
            dx, dy = -math.cos(board.yaw) * board.height / 2, -math.sin(board.yaw) * board.height / 2
            corners = rectangle_corners(board.x + dx, board.y + dy, board.height, board.width, board.yaw)
            ax.add_patch(Polygon(corners, color="sienna", alpha=0.6))
            ax.annotate(f"{log.board_falls[index]:.1f} s", (board.x + 2 * dx, board.y + 2 * dy), fontsize=7)
        else:
            corners = rectangle_corners(board.x, board.y, board.thickness * 3, board.width, board.yaw)
            ax.add_patch(Polygon(corners, color="orange"))
    ax.add_patch(Circle((world.light.x, world.light.y), 0.06, color="gold", zorder=3))
    led = log.led_on.rows
    if len(led):  # under the paths: small rings, so robot 0's path shows through them
        ax.plot(
            led[:, 1], led[:, 2], "o", mfc="none", mec="limegreen", ms=5, mew=1.0, zorder=4, label="LED on"
        )
    tracks = {robot: track.rows for robot, track in log.tracks.items() if len(track.rows)}
    colours = colormaps["tab10" if len(tracks) <= 10 else "tab20"]
    # The last robot first, widest; robot 0 last, on top, narrowest: paths that overlap
    # show as nested stripes, and every robot's path stays in sight.
    order = sorted(tracks, reverse=True)
    step = min(1.2, 6.0 / max(len(order) - 1, 1))
    for rank, robot in enumerate(order):
        rows = tracks[robot]
        colour = colours(robot % colours.N)
        width = 1.2 + step * (len(order) - 1 - rank)
        ax.plot(rows[:, 1], rows[:, 2], color=colour, lw=width, zorder=5 + rank, label=f"robot {robot}")
        ax.plot(rows[-1:, 1], rows[-1:, 2], "o", color=colour, ms=6, zorder=5 + len(order) + rank)
    simulated = f"{log.metrics.get('sim_duration_s', 0):.1f} s simulated"
    physics = f"({log.metrics.get('physics', 'native')} physics)"
    if world.boards:
        ax.set_title(f"{len(log.board_falls)} of {len(world.boards)} boards down, {simulated} {physics}")
    else:
        robots = len(tracks)
        ax.set_title(f"{robots} robot{'s' if robots != 1 else ''}, {simulated} {physics}")
    ax.set_xlim(-world.width / 2 - 0.1, world.width / 2 + 0.1)
    ax.set_ylim(-world.height / 2 - 0.1, world.height / 2 + 0.1)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    handles, labels = ax.get_legend_handles_labels()
    robots_first = sorted(zip(labels, handles, strict=True), key=lambda pair: (pair[0] == "LED on", pair[0]))
    ax.legend(
        [h for _, h in robots_first],
        [label for label, _ in robots_first],
        loc="upper left",
        fontsize=8,
        ncol=2 if len(tracks) > 10 else 1,
    )
