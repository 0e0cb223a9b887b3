"""The whole HIL loop, through real ptys: control loop -> MCU -> bridge -> simulator.

Every test runs twice (the one on mujoco once): with the virtual MCU, and with the
compiled robot_mcu firmware in simavr (the program that is flashed to the robot). Run
in one process in lockstep (rtf 0), so every figure here is in simulated time and
does not depend on the machine's load.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest
import rclpy
from geometry_msgs.msg import Twist

from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner
from hil_common import qos
from hil_mcu.simavr_mcu_node import SimavrMcuNode
from hil_sim.core.motor import MotorBank
from hil_sim.core.robot_model import demo_robot

#: The demo task's limit: with seed 0 the six boards fell by 25.6 s of simulated time
#: (virtual MCU) and 27.1 s (firmware in simavr), about 30 s on MuJoCo, when this was
#: written. 60 s leaves room for model changes. (Seeds 0-4 finish with the virtual MCU,
#: 0-3 with the firmware; DESIGN.md "Control loop".)
DEMO_LIMIT_S = 60.0


@pytest.fixture(params=["virtual", "simavr"])
def make_runner(request: pytest.FixtureRequest) -> Iterator[object]:
    runners: list[GraphRunner] = []

    def make(**options: object) -> GraphRunner:
        runner = GraphRunner(GraphOptions(rtf=0.0, mcu=request.param, **options))  # type: ignore[arg-type]
        runners.append(runner)
        runner.start()
        return runner

    yield make
    for runner in runners:
        runner.stop()


def run_until(runner: GraphRunner, condition: object, *, limit: float, what: str) -> float:
    """Step until ``condition()`` holds; returns the simulated time it took."""
    start = runner.sim.sim.time
    while runner.sim.sim.time - start < limit:
        runner.step()
        if condition():  # type: ignore[operator]
            return runner.sim.sim.time - start
    raise AssertionError(f"{what}: not within {limit:g} s of simulated time")


def predicted_distance(enable: float, seconds: float) -> float:
    """How far the motor model alone drives the robot from rest at this enable duty."""
    robot = demo_robot()
    bank = MotorBank(robot.motor, (2,), load_inertia=robot.load_inertia, dt=0.001)
    voltage = np.full(2, enable / 1024 * robot.motor.supply_voltage)
    distance = 0.0
    for _ in range(round(seconds * 1000)):
        bank.step(voltage, np.ones(2, dtype=bool))
        distance += float(bank.speed.mean()) / robot.motor.gear_ratio * robot.body.wheel_radius * 0.001
    return distance


@pytest.mark.ros
def test_cmd_vel_moves_the_robot_as_far_as_the_motor_model_predicts(make_runner: object) -> None:
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        publisher_node = rclpy.create_node("e2e_teleop", context=context)
        cmd_vel = publisher_node.create_publisher(Twist, "cmd_vel", qos.COMMAND)
        runner: GraphRunner = make_runner(behaviour="")  # type: ignore[operator]
        twist = Twist()
        twist.linear.x = 0.3
        sim = runner.sim.sim

        def motors_on() -> bool:
            cmd_vel.publish(twist)
            return bool(min(sim.input("motor_left.enable")[0], sim.input("motor_right.enable")[0]) > 0)

        run_until(runner, motors_on, limit=10.0, what="the cmd_vel reaching the motor pins")
        start_x = float(runner.sim.sim.x[0])
        end = runner.sim.sim.time + 1.0
        enable = 0.0
        while runner.sim.sim.time < end:
            cmd_vel.publish(twist)
            runner.step()
            if not enable and runner.sim.sim.time > end - 0.9:
                # The duty a bridge measures settles within two PWM periods (1 ms each):
                # the firmware's first frame can carry a partial one.
                enable = float(sim.input("motor_left.enable")[0])
        moved = float(runner.sim.sim.x[0]) - start_x
        expected = predicted_distance(enable, 1.0)
        assert abs(moved - expected) <= 0.10 * expected, (
            f"moved {moved:.3f} m, the motor model says {expected:.3f} m"
        )
        assert abs(float(runner.sim.sim.y[0])) < 0.01
    finally:
        rclpy.try_shutdown(context=context)


@pytest.mark.ros
def test_boards_demo_knocks_all_six_boards_down(make_runner: object) -> None:
    runner: GraphRunner = make_runner(behaviour="boards")  # type: ignore[operator]
    took = run_until(
        runner,
        lambda: runner.sim.sim.geometry.boards_down == 6,
        limit=DEMO_LIMIT_S,
        what="all six boards down",
    )
    assert took < DEMO_LIMIT_S


@pytest.mark.ros
@pytest.mark.parametrize("make_runner", ["virtual"], indirect=True)
def test_boards_demo_knocks_all_six_boards_down_on_mujoco(make_runner: object) -> None:
    """The same demo on physics mujoco: boards topple as free bodies (down past 60 degrees).

    With seed 0 the six fell by 25 s (virtual MCU) when this was written; as with native,
    not every seed finishes. The MCU meets the backend only through the signal bridge,
    the same for both MCUs: the firmware in simavr is proven on native (above), and the
    pair of them on mujoco is not run again here (17 s of a test run).
    """
    runner: GraphRunner = make_runner(behaviour="boards", physics="mujoco")  # type: ignore[operator]
    assert runner.sim.sim.backend == "mujoco"
    took = run_until(
        runner,
        lambda: runner.sim.sim.geometry.boards_down == 6,
        limit=DEMO_LIMIT_S,
        what="all six boards down (mujoco)",
    )
    assert took < DEMO_LIMIT_S


@pytest.mark.ros
def test_killed_mcu_stops_the_robot_and_a_restarted_one_lets_it_go_on(make_runner: object) -> None:
    runner: GraphRunner = make_runner(behaviour="boards")  # type: ignore[operator]
    loop = runner.loop
    run_until(
        runner, lambda: runner.sim.sim.geometry.boards_down >= 1, limit=DEMO_LIMIT_S, what="a first board"
    )

    runner.kill_mcu()
    timeout = loop.loop.config.mcu_heartbeat_timeout
    took = run_until(
        runner,
        lambda: "mcu" in loop.loop.holding_reasons and not loop.loop.mcu.alive(loop.clock()),
        limit=10.0,
        what="the loop holding the motors for the lost MCU",
    )
    assert took <= timeout + 2 * loop.period
    run_until(runner, lambda: float(np.abs(runner.sim.sim.v[0])) < 1e-3, limit=5.0, what="the robot stopping")

    runner.restart_mcu()
    run_until(
        runner,
        lambda: loop.loop.mcu.alive(loop.clock()) and not loop.loop.holding_reasons,
        limit=10.0,
        what="the loop driving again",
    )
    sim = runner.sim.sim
    x, y, yaw = float(sim.x[0]), float(sim.y[0]), float(sim.yaw[0])

    def moved() -> bool:
        return bool(math.hypot(sim.x[0] - x, sim.y[0] - y) > 0.05 or abs(sim.yaw[0] - yaw) > 0.3)

    run_until(  # the restarted MCU drives the motors again (it backs off in 0.2 s)
        runner,
        moved,
        limit=5.0,
        what="the robot moving again after the restart",
    )


@pytest.mark.ros
def test_firmware_restarts_when_the_loop_opens_its_port_and_on_request() -> None:
    """Auto-reset (DTR) as the control loop opens the command pty, and the reset service, in lockstep.

    The firmware holds in the bootloader's wait (the Nano's 1.375 s), then answers the
    loop; a reset asked between steps happens at the start of the next one.
    """
    runner = GraphRunner(GraphOptions(rtf=0.0, mcu="simavr", behaviour="boards", auto_reset=True))
    runner.start()
    try:
        mcu, loop = runner.mcu, runner.loop
        assert isinstance(mcu, SimavrMcuNode) and mcu.process is not None
        runner.step()  # the loop opens its port in its first step
        runner.step()  # and the firmware resets at the start of the next
        assert {k: mcu.process.stats()[k] for k in ("resets", "command_opens", "booting")} == {
            "resets": 1,
            "command_opens": 1,
            "booting": 1,
        }
        took = run_until(runner, lambda: loop.loop.mcu.alive(loop.clock()), limit=5.0, what="the MCU heard")
        assert 1.375 <= took <= 1.375 + 0.5
        mcu.reset_mcu()
        assert mcu.process.stats()["booting"] == 0  # not yet: at the next step
        runner.step()
        assert (mcu.process.stats()["resets"], mcu.process.stats()["booting"]) == (2, 1)
        run_until(runner, lambda: mcu.process.stats()["booting"] == 0, limit=2.0, what="the sketch again")
    finally:
        runner.stop()
