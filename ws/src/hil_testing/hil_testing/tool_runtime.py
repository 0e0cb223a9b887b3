"""What ``hil_step`` and ``hil_goto`` share: options from parameters, a run to the end, a report.

A test tool is a node that speaks only ROS topics and tells when it is done
(``on_done``); :func:`tool_main` parses its options (every parameter is an option,
:mod:`hil_testing.core.tool_args`), runs it with :func:`hil_common.node_runtime.run_node`
until it is done (its ``on_done`` shuts the context down) or SIGINT/SIGTERM, and
then has it write its report. Exit status: 0 when the test passed (or was
interrupted by a signal, like every executable here), 1 when it failed or could not
finish, 2 on a bad configuration.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from geometry_msgs.msg import Twist
from rclpy.node import Node
from rclpy.parameter import Parameter

from hil_bringup.hil_sim_runner import check_report_folder
from hil_common import qos
from hil_common.core.param_spec import ParamSpec
from hil_common.errors import HilError
from hil_common.node_runtime import run_node
from hil_testing.core.tool_args import add_parameter_options, parameter_overrides, split_ros_args


class Driver:
    """A test tool's side of the robot: ``cmd_vel`` out, and patience with its input topic.

    The test begins only once ``cmd_vel`` has a subscriber (the control loop): samples
    before that are ignored, so a step or a run is not commanded into a void while
    discovery is still under way (in lockstep, a simulated second or more). A test that
    hears nothing on its input for ``patience`` wall seconds, or finds no subscriber
    for that long, is given up with the reason (:meth:`silence`).
    """

    def __init__(self, node: Node, *, source: str, patience: float) -> None:
        self.node = node
        self.cmd_vel = node.create_publisher(Twist, "cmd_vel", qos.PUBLISHER)
        #: The input topic, resolved (for the messages).
        self.source = node.resolve_topic_name(source)
        self.patience = patience
        self._started = self._heard = node.get_clock().now()
        self._listened = False

    def ready(self) -> bool:
        """An input message came: True once the loop listens on cmd_vel (the test may go on)."""
        self._heard = self.node.get_clock().now()
        if not self._listened:
            self._listened = self.cmd_vel.get_subscription_count() > 0
        return self._listened

    def silence(self) -> str | None:
        """Why the test should give up now (nothing heard, nobody listening), or None."""
        now = self.node.get_clock().now()
        quiet = (now - self._heard).nanoseconds * 1e-9
        if quiet >= self.patience:
            return f"no {self.source} for {quiet:.1f} s: is the simulator (or the robot's graph) running?"
        waited = (now - self._started).nanoseconds * 1e-9
        if not self._listened and waited >= self.patience:
            topic = self.node.resolve_topic_name("cmd_vel")
            return f"nobody subscribes to {topic} after {waited:.1f} s: is the control loop running?"
        return None

    def publish(self, linear: float, angular: float) -> None:
        """Send a twist on cmd_vel."""
        twist = Twist()
        twist.linear.x, twist.angular.z = linear, angular
        self.cmd_vel.publish(twist)


class TestTool(Protocol):
    """A test tool's node, as :func:`tool_main` uses it."""

    #: Why the test could not finish (no data, no fit), or None.
    error: str | None
    #: Where the report goes; empty: ``runs/<tool>-<time>``.
    output_dir: str

    @property
    def finished(self) -> bool:
        """The test has all it needs."""

    @property
    def passed(self) -> bool:
        """The finished test's verdict."""

    def write_report(self, folder: Path) -> list[Path]:
        """Write the report files into ``folder``; returns their paths."""

    def summary(self) -> str:
        """One or two lines on the outcome."""

    def start(self) -> None:
        """Nothing to start: the node works from its subscriptions."""

    def stop(self) -> None:
        """Leave the robot commanded to a stop."""

    def destroy_node(self) -> Any:
        """Rclpy's Node.destroy_node."""


def tool_main(
    argv: Sequence[str] | None,
    *,
    prog: str,
    description: str,
    parameters: Sequence[ParamSpec],
    make: Callable[..., TestTool],
) -> int:
    """Run the tool node ``make`` builds until its test is done; write its report."""
    own, ros = split_ros_args(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog=prog,
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="ROS arguments (remappings...) after --ros-args, e.g. --ros-args -r odom:=/robot_0/odom.",
    )
    add_parameter_options(parser, parameters)
    overrides = [
        Parameter(name, value=value)
        for name, value in parameter_overrides(parser.parse_args(own), parameters).items()
    ]
    made: list[TestTool] = []

    def factory() -> TestTool:
        node = make(parameter_overrides=overrides)
        made.append(node)
        folder = Path(node.output_dir or Path("runs") / f"{prog}-{datetime.now():%Y%m%d-%H%M%S}")
        check_report_folder(folder)  # before the test: its result is lost if this fails after
        node.output_dir = str(folder)
        return node

    status = run_node(
        factory,
        name=prog,
        config_errors=(HilError,),
        args=[prog, *ros],
    )
    if status != 0 or not made:
        return status
    tool = made[0]
    if tool.error is not None:
        print(f"{prog}: {tool.error}", file=sys.stderr)
        return 1
    if not tool.finished:
        print(f"{prog}: interrupted before the test was done", file=sys.stderr)
        return 0
    for path in tool.write_report(Path(tool.output_dir)):
        print(f"{path.suffix[1:]}: {path}")
    print(f"{prog}: {tool.summary()}", flush=True)
    return 0 if tool.passed else 1
