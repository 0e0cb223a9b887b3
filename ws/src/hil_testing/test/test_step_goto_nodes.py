"""hil_step and hil_goto speak only ROS topics: the same nodes against each MCU and physics.

The tool node runs in a context of its own (as in a process of its own) and meets the
graph only through DDS: ``cmd_vel`` out, ``joint_states``/``telemetry``/``odom`` in.
The graph runs in lockstep, so the figures are in simulated time; DDS delivery adds
a period or so of lag, which the tools must cope with as they would with a real link.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter

from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner
from hil_common.core.param_spec import yaml_defaults
from hil_testing import goto_node, step_node

CONFIG = Path(__file__).resolve().parents[1] / "config" / "hil_testing.yaml"
EMPTY_WORLD = str(Path(__file__).resolve().parents[2] / "hil_sim" / "worlds" / "empty.yaml")


@pytest.fixture(
    params=[("virtual", "native"), ("simavr", "native"), ("virtual", "mujoco")],
    ids=["virtual-native", "simavr-native", "virtual-mujoco"],
)
def graph(request: pytest.FixtureRequest) -> Iterator[tuple[GraphRunner, rclpy.Context]]:
    """A MANUAL lockstep graph in the empty world, and a context for the tool beside it."""
    mcu, physics = request.param
    context = rclpy.Context()
    rclpy.init(context=context)
    options = GraphOptions(rtf=0.0, behaviour="", world=EMPTY_WORLD, mcu=mcu, physics=physics)
    runner = GraphRunner(options)
    try:
        runner.start()
        yield runner, context
    finally:
        runner.stop()
        rclpy.try_shutdown(context=context)


def run_tool(runner: GraphRunner, context: rclpy.Context, node: Any, *, limit: float) -> None:
    """Step the graph and serve the tool until it is done (or ``limit`` simulated seconds)."""
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        start = runner.sim.sim.time
        while not node.finished and node.error is None and runner.sim.sim.time - start < limit:
            runner.step()
            executor.spin_once(timeout_sec=0.0)
    finally:
        executor.remove_node(node)
        executor.shutdown()


def overrides(**values: Any) -> list[Parameter]:
    return [Parameter(name, value=value) for name, value in values.items()]


@pytest.mark.ros
def test_step_tool_fits_each_wheel_as_the_motor_model_expects(
    graph: tuple[GraphRunner, rclpy.Context], tmp_path: Path
) -> None:
    runner, context = graph
    node = step_node.StepNode(
        context=context, parameter_overrides=overrides(settle=0.5, duration=1.0, left=120, right=120)
    )
    try:
        run_tool(runner, context, node, limit=20.0)
        assert node.error is None
        assert node.finished, "no result within 20 s of simulated time"
        assert node.passed, node.summary()
        assert node.result is not None
        for wheel in node.result.wheels.values():
            assert abs(wheel.gain_error) < 0.05, node.summary()
            assert abs(wheel.tau_error) < 0.1, node.summary()
            assert 0.0 <= wheel.fit.dead_time < 0.1, node.summary()  # a loop frame and DDS, not more
        assert node.result.mcu_command == (120.0, 120.0)
        paths = node.write_report(tmp_path)
        assert [p.name for p in paths] == ["step.json", "step.png"]
    finally:
        node.destroy_node()


@pytest.mark.ros
def test_goto_tool_reaches_the_pose_and_reports_the_path(
    graph: tuple[GraphRunner, rclpy.Context], tmp_path: Path
) -> None:
    runner, context = graph
    node = goto_node.GotoNode(
        context=context, parameter_overrides=overrides(x=0.4, y=-0.3, yaw=math.pi / 2, timeout=10.0)
    )
    try:
        run_tool(runner, context, node, limit=20.0)
        assert node.error is None
        assert node.finished
        result = node.result
        assert result is not None
        assert result.reached, node.summary()
        assert result.position_error < 2 * 0.03
        assert abs(result.yaw_error) < 2 * 0.05
        x, y, _ = result.final_pose
        assert (
            math.hypot(x - float(runner.sim.sim.x[0]), y - float(runner.sim.sim.y[0])) < 0.01
        )  # odom is the truth
        assert result.distance_travelled > 0.45
        node.write_report(tmp_path)
        assert (tmp_path / "goto.png").stat().st_size > 10_000
    finally:
        node.destroy_node()


@pytest.mark.parametrize(("package_node", "name"), [(step_node, "hil_step"), (goto_node, "hil_goto")])
def test_tool_parameters_match_the_yaml_defaults(package_node: Any, name: str) -> None:
    assert yaml_defaults(CONFIG, name) == {spec.name: spec.default for spec in package_node.PARAMETERS}
    assert all(len(spec.description) > 10 for spec in package_node.PARAMETERS)
