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
from typing import Any

import numpy as np
import numpy.typing as npt

from hil_sim.core.track import TRACK_CAPACITY, Track
from hil_sim.core.world import WorldConfig, marking_outline, rectangle_corners

__all__ = [
    "MAX_DRAWN",
    "TRACK_CAPACITY",
    "Judgement",
    "RunLog",
    "Series",
    "SeriesRecorder",
    "Track",
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
    import matplotlib  # noqa: PLC0415 - only when a report is written

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from matplotlib.patches import Circle, Polygon, Rectangle  # noqa: PLC0415

    world = log.world
    fig, ax = plt.subplots(figsize=(7, 7))
    ax.add_patch(
        Rectangle((-world.width / 2, -world.height / 2), world.width, world.height, fill=False, lw=2)
    )
    for marking in world.markings:
        line_x, line_y = marking_outline(marking)
        # The tape as wide as it is (points per metre of the axes at this figure size).
        points = marking.width * 7 * 72 * 0.8 / max(world.width, world.height)
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
    colours = plt.get_cmap("tab10")
    for robot, track in log.tracks.items():
        rows = track.rows
        if not len(rows):
            continue
        xs, ys = rows[:, 1], rows[:, 2]
        colour = colours(robot % 10)
        ax.plot(xs, ys, color=colour, lw=1, label=f"robot {robot}" if robot < 10 else None)
        ax.plot(xs[-1:], ys[-1:], "o", color=colour)
    led = log.led_on.rows
    if len(led):
        ax.plot(
            led[:, 1],
            led[:, 2],
            ".",
            color="limegreen",
            ms=4,
            label="LED on",
        )
    simulated = f"{log.metrics.get('sim_duration_s', 0):.1f} s simulated"
    physics = f"({log.metrics.get('physics', 'native')} physics)"
    if world.boards:
        ax.set_title(f"{len(log.board_falls)} of {len(world.boards)} boards down, {simulated} {physics}")
    else:
        ax.set_title(f"{1 + len(log.others)} robot(s), {simulated} {physics}")
    ax.set_xlim(-world.width / 2 - 0.1, world.width / 2 + 0.1)
    ax.set_ylim(-world.height / 2 - 0.1, world.height / 2 + 0.1)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
