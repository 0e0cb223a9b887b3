"""``hil_goto``: drive to a pose with a closed-loop controller on ``odom``, and report how it went.

Speaks only ROS topics, so it runs unchanged against any graph with a control loop
and an ``odom`` (``make sim``, ``sim.launch.py`` with any MCU, ``hardware.launch.py``):
with every ``odom`` message it sends the ``cmd_vel`` of the go-to controller of
:mod:`hil_testing.core.goto` (turn towards the goal, drive, turn to the goal's yaw)
until the robot is within ``--tolerance`` and ``--yaw-tolerance`` of (``--x``,
``--y``, ``--yaw``), or ``--timeout`` seconds have passed; then it commands zero,
lets the robot settle and reports the final error, the time it took and the path in
``goto.json`` and ``goto.png``. Exit 0 if reached, 1 if not.

Time is the stamps of ``odom`` (simulated time against the simulator). The control
loop must be in MANUAL (``robotCommand`` ``MANUAL``).

    hil_goto --x 1.0 --y 0.5 --yaw 1.57 --output-dir /tmp/goto
    hil_goto --x 0 --y 0 --ros-args -r odom:=/robot_0/odom -r cmd_vel:=/robot_0/cmd_vel
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from nav_msgs.msg import Odometry
from rclpy.node import Node
from transforms3d.euler import quat2euler  # type: ignore[import-untyped]

from hil_common import qos
from hil_common.core.param_spec import ParamSpec
from hil_common.parameters import declare_parameters
from hil_testing.core.goto import GotoGains, GotoGoal, GotoResult, GotoRun, write_goto_report
from hil_testing.errors import HilTestingError
from hil_testing.tool_runtime import Driver, tool_main

NODE_NAME = "hil_goto"

_GAINS = GotoGains()
PARAMETERS = (
    ParamSpec("x", 0.5, "Goal x in the odom frame, m.", min=-1e4, max=1e4),
    ParamSpec("y", 0.0, "Goal y in the odom frame, m.", min=-1e4, max=1e4),
    ParamSpec("yaw", 0.0, "Goal yaw in the odom frame, rad.", min=-2 * math.pi, max=2 * math.pi),
    ParamSpec("tolerance", 0.03, "Distance from the goal that counts as there, m.", min=0.001, max=10.0),
    ParamSpec("yaw_tolerance", 0.05, "Yaw error that counts as aligned, rad.", min=0.001, max=math.pi),
    ParamSpec("timeout", 20.0, "Seconds (odom time) before the run gives up.", min=0.1, max=3600.0),
    ParamSpec(
        "settle",
        0.3,
        "Seconds at zero command after reaching, before the error is measured.",
        min=0.0,
        max=60.0,
    ),
    ParamSpec("max_linear", _GAINS.max_linear, "Fastest forward speed, m/s.", min=0.01, max=10.0),
    ParamSpec("max_angular", _GAINS.max_angular, "Fastest turn rate, rad/s.", min=0.01, max=50.0),
    ParamSpec(
        "min_linear",
        _GAINS.min_linear,
        "Slowest forward speed while driving (motor stiction), m/s.",
        min=0.001,
        max=10.0,
    ),
    ParamSpec(
        "min_angular",
        _GAINS.min_angular,
        "Slowest turn rate while turning (motor stiction), rad/s.",
        min=0.001,
        max=50.0,
    ),
    ParamSpec("k_distance", _GAINS.k_distance, "Forward speed per metre to go, 1/s.", min=0.01, max=100.0),
    ParamSpec(
        "k_heading", _GAINS.k_heading, "Turn rate per radian of heading error, 1/s.", min=0.01, max=100.0
    ),
    ParamSpec(
        "k_yaw", _GAINS.k_yaw, "Turn rate per radian of yaw error while aligning, 1/s.", min=0.01, max=100.0
    ),
    ParamSpec(
        "turn_threshold",
        _GAINS.turn_threshold,
        "Heading error above which the robot turns first, rad.",
        min=0.01,
        max=math.pi,
    ),
    ParamSpec(
        "wait",
        10.0,
        "Wall seconds without odom (or a cmd_vel subscriber) before the run gives up.",
        min=0.1,
        max=3600.0,
    ),
    ParamSpec("output_dir", "", "Folder of goto.json and goto.png; empty: runs/hil_goto-<time>."),
)


def yaw_of(message: Odometry) -> float:
    """The yaw of an odometry message's orientation."""
    q = message.pose.pose.orientation
    return float(quat2euler((q.w, q.x, q.y, q.z), "sxyz")[2])


class GotoNode(Node):
    """Drives to a goal pose on cmd_vel, closed loop on odom."""

    def __init__(self, **node_options: Any) -> None:
        super().__init__(NODE_NAME, **node_options)
        params = declare_parameters(self, PARAMETERS)
        goal = GotoGoal(
            params.as_float("x"),
            params.as_float("y"),
            params.as_float("yaw"),
            tolerance=params.as_float("tolerance"),
            yaw_tolerance=params.as_float("yaw_tolerance"),
            timeout=params.as_float("timeout"),
            settle=params.as_float("settle"),
        )
        gains = GotoGains(**{f.name: params.as_float(f.name) for f in fields(GotoGains)})
        self.run = GotoRun(goal, gains)
        self.output_dir = params.as_str("output_dir")
        self.error: str | None = None
        self.result: GotoResult | None = None
        #: Called once the test is done (the console script shuts its context down there).
        self.on_done: Callable[[], None] | None = None
        self.driver = Driver(self, source="odom", patience=params.as_float("wait"))
        self.create_subscription(Odometry, "odom", self.on_odom, qos.SENSOR)
        self.create_timer(0.5, self.check_quiet)
        self.get_logger().info(
            f"to ({goal.x:g}, {goal.y:g}, {goal.yaw:g} rad) within {goal.tolerance:g} m and "
            f"{goal.yaw_tolerance:g} rad, at most {goal.timeout:g} s"
        )

    @property
    def finished(self) -> bool:
        """The run is over (reached and settled, or timed out)."""
        return self.result is not None

    @property
    def passed(self) -> bool:
        """The goal was reached."""
        return self.result is not None and self.result.reached

    def on_odom(self, message: Odometry) -> None:
        """One pose: command what the controller says now."""
        if self.finished or self.error is not None or not self.driver.ready():
            return
        t = message.header.stamp.sec + message.header.stamp.nanosec * 1e-9
        position = message.pose.pose.position
        self.publish(*self.run.update(t, position.x, position.y, yaw_of(message)))
        if self.run.finished:
            self.result = self.run.result()
            self._done()

    def check_quiet(self) -> None:
        """Give up when odom is silent, or nobody takes cmd_vel, for ``wait`` wall seconds."""
        if self.finished or self.error is not None:
            return
        reason = self.driver.silence()
        if reason is not None:
            self.error = reason
            self.publish(0.0, 0.0)
            self._done()

    def publish(self, linear: float, angular: float) -> None:
        """Send a twist on cmd_vel."""
        self.driver.publish(linear, angular)

    def _done(self) -> None:
        if self.on_done is not None:
            self.on_done()

    def write_report(self, folder: Path) -> list[Path]:
        """``goto.json`` and ``goto.png``."""
        if self.result is None:
            raise HilTestingError("hil_goto: no result to report")
        return list(write_goto_report(self.result, folder))

    def summary(self) -> str:
        """Reached or not, final error, time."""
        if self.result is None:
            return self.error or "not finished"
        r = self.result
        return (
            f"{'reached' if r.reached else 'NOT reached'} in {r.time:.2f} s: final error "
            f"{r.position_error * 100:.1f} cm, {math.degrees(r.yaw_error):+.1f} deg, "
            f"path {r.distance_travelled:.2f} m"
        )

    def start(self) -> None:
        """Nothing to start: the run goes on from the odom callbacks."""

    def stop(self) -> None:
        """Leave the robot commanded to a stop (if the context is still up)."""
        if self.context.ok():
            self.publish(0.0, 0.0)


def main(argv: Sequence[str] | None = None) -> int:
    """Drive to the goal; exit 0 if reached, 1 if not, 2 on a bad configuration."""

    def make(**options: Any) -> GotoNode:
        node = GotoNode(**options)
        node.on_done = node.context.try_shutdown
        return node

    return tool_main(argv, prog=NODE_NAME, description=__doc__ or "", parameters=PARAMETERS, make=make)


if __name__ == "__main__":
    sys.exit(main())
