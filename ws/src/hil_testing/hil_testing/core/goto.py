"""Go-to-pose test: a closed-loop controller on the robot's pose, and what it achieved.

A :class:`GotoRun` is told the time and the robot's pose (``odom`` for ``hil_goto``,
the simulator's state in the lockstep session) and answers with the body twist to
command. Time is the poses' own (their stamps). The controller has three phases:

* ``turn``: far from the goal and facing more than ``turn_threshold`` away from it,
  turn on the spot;
* ``drive``: towards the goal, speed proportional to the distance (at least
  ``min_linear``, at most ``max_linear``) times the cosine of the heading error, and
  an angular rate proportional to the heading error;
* ``align``: within ``tolerance`` of the goal, turn on the spot to the goal's yaw
  (back to ``drive`` if the robot drifts beyond twice the tolerance).

The minimum speeds exist because a DC motor with Coulomb friction does not move at
a small command: a proportional controller would stall short of the goal. Once the
position and the yaw are within their tolerances the run commands zero, lets the
robot settle for ``settle`` seconds (it coasts) and reports the final error then. A
run that has not reached the goal by ``timeout`` stops and reports not reached.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hil_common.core.kinematics import wrap_angle
from hil_testing.errors import HilTestingError

Phase = Literal["turn", "drive", "align", "settle", "done"]


@dataclass(frozen=True)
class GotoGoal:
    """Where to go, how close counts, how long it may take."""

    x: float
    y: float
    yaw: float = 0.0
    tolerance: float = 0.03  # m
    yaw_tolerance: float = 0.05  # rad
    timeout: float = 20.0  # s
    settle: float = 0.3  # s of zero command after reaching, before the error is measured

    def __post_init__(self) -> None:
        for name in ("x", "y", "yaw"):
            if not math.isfinite(getattr(self, name)):
                raise HilTestingError(f"goto: {name} = {getattr(self, name)!r} must be a finite number")
        for name in ("tolerance", "yaw_tolerance", "timeout"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise HilTestingError(f"goto: {name} = {value!r} must be a positive number")
        if not (math.isfinite(self.settle) and self.settle >= 0):
            raise HilTestingError(f"goto: settle = {self.settle!r} must be a number >= 0 (seconds)")


@dataclass(frozen=True)
class GotoGains:
    """The controller's gains and limits (m/s, rad/s)."""

    k_distance: float = 2.5  # linear speed per metre of distance, 1/s
    k_heading: float = 4.0  # angular rate per radian of heading error, 1/s
    k_yaw: float = 4.0  # angular rate per radian of yaw error while aligning, 1/s
    max_linear: float = 0.3
    max_angular: float = 2.0
    min_linear: float = 0.06
    min_angular: float = 0.7
    turn_threshold: float = 0.6  # rad of heading error above which the robot turns first

    def __post_init__(self) -> None:
        for name, value in self.__dict__.items():
            if not (math.isfinite(value) and value > 0):
                raise HilTestingError(f"goto gains: {name} = {value!r} must be a positive number")
        if self.min_linear > self.max_linear or self.min_angular > self.max_angular:
            raise HilTestingError("goto gains: a minimum speed is above its maximum")


def _at_least(value: float, minimum: float, maximum: float) -> float:
    """``value`` with its magnitude clipped to [minimum, maximum] (sign kept)."""
    return math.copysign(min(max(abs(value), minimum), maximum), value)


@dataclass(frozen=True)
class GotoResult:
    """What a go-to run achieved."""

    goal: GotoGoal
    reached: bool
    #: Simulated (or stamp) seconds from the first pose until the goal was reached, or until the timeout.
    time: float
    position_error: float  # m, at the end (after settling)
    yaw_error: float  # rad, signed, goal minus final
    path: list[tuple[float, float, float, float]]  # t (s since start), x, y, yaw
    distance_travelled: float

    @property
    def final_pose(self) -> tuple[float, float, float]:
        """(x, y, yaw) at the end."""
        _, x, y, yaw = self.path[-1]
        return x, y, yaw

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (the path included)."""
        goal = self.goal
        return {
            "goal": {"x": goal.x, "y": goal.y, "yaw": goal.yaw},
            "tolerance_m": goal.tolerance,
            "yaw_tolerance_rad": goal.yaw_tolerance,
            "timeout_s": goal.timeout,
            "reached": self.reached,
            "time_s": self.time,
            "position_error_m": self.position_error,
            "yaw_error_rad": self.yaw_error,
            "final_pose": list(self.final_pose),
            "distance_travelled_m": self.distance_travelled,
            "path": {
                "t_s": [p[0] for p in self.path],
                "x_m": [p[1] for p in self.path],
                "y_m": [p[2] for p in self.path],
                "yaw_rad": [p[3] for p in self.path],
            },
        }


@dataclass
class GotoRun:
    """One go-to run: poses in, twists out, a result at the end."""

    goal: GotoGoal
    gains: GotoGains = field(default_factory=GotoGains)
    phase: Phase = "turn"
    started: float | None = None
    #: When the goal was reached (time since start), or None.
    reached_after: float | None = None
    path: list[tuple[float, float, float, float]] = field(default_factory=list)
    _settle_until: float = math.inf

    @property
    def finished(self) -> bool:
        """The run is over (reached and settled, or timed out)."""
        return self.phase == "done"

    def errors(self, x: float, y: float, yaw: float) -> tuple[float, float, float]:
        """Distance to the goal (m), heading error towards it and yaw error (rad)."""
        dx, dy = self.goal.x - x, self.goal.y - y
        distance = math.hypot(dx, dy)
        heading = wrap_angle(math.atan2(dy, dx) - yaw) if distance > 1e-9 else 0.0
        return distance, heading, wrap_angle(self.goal.yaw - yaw)

    def update(self, t: float, x: float, y: float, yaw: float) -> tuple[float, float]:
        """The robot's pose at time ``t``; returns the twist (linear m/s, angular rad/s) to command."""
        if self.started is None:
            self.started = t
        elapsed = t - self.started
        if not self.path or elapsed > self.path[-1][0]:
            self.path.append((elapsed, x, y, yaw))
        if self.phase == "settle" and elapsed >= self._settle_until:
            self.phase = "done"
        if self.phase in ("settle", "done"):
            return 0.0, 0.0
        if elapsed >= self.goal.timeout:
            self.phase = "done"
            return 0.0, 0.0
        distance, heading, yaw_error = self.errors(x, y, yaw)
        self.phase = self._next_phase(distance, heading, yaw_error)
        gains = self.gains
        if self.phase == "settle":
            self.reached_after = elapsed
            self._settle_until = elapsed + self.goal.settle
            if self.goal.settle == 0:
                self.phase = "done"
            return 0.0, 0.0
        if self.phase == "align":
            return 0.0, _at_least(gains.k_yaw * yaw_error, gains.min_angular, gains.max_angular)
        if self.phase == "turn":
            return 0.0, _at_least(gains.k_heading * heading, gains.min_angular, gains.max_angular)
        linear = min(max(gains.k_distance * distance, gains.min_linear), gains.max_linear) * math.cos(heading)
        angular = max(min(gains.k_heading * heading, gains.max_angular), -gains.max_angular)
        return linear, angular

    def _next_phase(self, distance: float, heading: float, yaw_error: float) -> Phase:
        """The phase for these errors, with hysteresis: align near the goal, else turn or drive."""
        goal, phase = self.goal, self.phase
        if phase == "align" and distance > 2 * goal.tolerance:
            phase = "turn"
        elif phase != "align" and distance <= goal.tolerance:
            phase = "align"
        if phase == "align":
            return "settle" if abs(yaw_error) <= goal.yaw_tolerance else "align"
        if phase == "turn" and abs(heading) <= self.gains.turn_threshold / 2:
            return "drive"
        if phase == "drive" and abs(heading) > self.gains.turn_threshold:
            return "turn"
        return phase

    def result(self) -> GotoResult:
        """What the run achieved so far (final error from the last pose).

        Raises:
            HilTestingError: no pose has come yet.
        """
        if not self.path:
            raise HilTestingError("goto: no pose received, nothing to report")
        _, x, y, yaw = self.path[-1]
        distance, _, yaw_error = self.errors(x, y, yaw)
        travelled = sum(
            math.hypot(b[1] - a[1], b[2] - a[2]) for a, b in zip(self.path, self.path[1:], strict=False)
        )
        return GotoResult(
            goal=self.goal,
            reached=self.reached_after is not None
            and distance <= 2 * self.goal.tolerance
            and abs(yaw_error) <= 2 * self.goal.yaw_tolerance,
            time=self.reached_after if self.reached_after is not None else self.path[-1][0],
            position_error=distance,
            yaw_error=yaw_error,
            path=list(self.path),
            distance_travelled=travelled,
        )


def write_goto_report(result: GotoResult, folder: Path) -> tuple[Path, Path]:
    """Write ``goto.json`` and ``goto.png`` into ``folder``; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    data_path, picture_path = folder / "goto.json", folder / "goto.png"
    data_path.write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    _draw_goto(result, picture_path)
    return data_path, picture_path


def _draw_goto(result: GotoResult, path: Path) -> None:
    from matplotlib.figure import Figure  # noqa: PLC0415 - only when a report is written (no pyplot)
    from matplotlib.patches import Circle  # noqa: PLC0415

    goal = result.goal
    xs, ys = [p[1] for p in result.path], [p[2] for p in result.path]
    fig = Figure(figsize=(7, 7))
    ax = fig.subplots()
    ax.plot(xs, ys, color="tab:blue", lw=1.2, label="path")
    arrow = 0.1
    for (x, y, yaw), color, label in (
        ((xs[0], ys[0], result.path[0][3]), "tab:green", "start"),
        ((goal.x, goal.y, goal.yaw), "tab:red", "goal"),
        (result.final_pose, "tab:blue", "end"),
    ):
        ax.annotate(
            "",
            xy=(x + arrow * math.cos(yaw), y + arrow * math.sin(yaw)),
            xytext=(x, y),
            arrowprops={"arrowstyle": "->", "color": color, "lw": 2},
        )
        ax.plot([x], [y], "o", color=color, label=label)
    ax.add_patch(Circle((goal.x, goal.y), goal.tolerance, fill=False, color="tab:red", ls="--"))
    verdict = "reached" if result.reached else "NOT reached"
    ax.set_title(
        f"goto ({goal.x:g}, {goal.y:g}, {math.degrees(goal.yaw):.0f} deg): {verdict} in {result.time:.2f} s\n"
        f"final error {result.position_error * 100:.1f} cm, {math.degrees(result.yaw_error):+.1f} deg, "
        f"path {result.distance_travelled:.2f} m"
    )
    ax.set_aspect("equal")
    margin = 0.2
    ax.set_xlim(min(*xs, goal.x) - margin, max(*xs, goal.x) + margin)
    ax.set_ylim(min(*ys, goal.y) - margin, max(*ys, goal.y) + margin)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
