"""The sim node as a process: pins in, motion and sensors out, services, swarms, errors."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState, MagneticField, Range
from std_msgs.msg import Float32
from std_srvs.srv import Trigger
from visualization_msgs.msg import MarkerArray

from hil_common import qos
from hil_common.core.param_spec import yaml_defaults
from hil_devices.core.defaults import device_library
from hil_msgs.msg import Signal, SignalArray
from hil_msgs.srv import TeleportRobot
from hil_sim.core.devices.imu import Imu as ImuKind
from hil_sim.core.robot_model import DeviceSpec, Mount, RobotModel
from hil_sim.sim_node import NODE_NAME, PARAMETERS, SimNode, profile_models
from support.ros_probe import RosProbe

CONFIG = Path(__file__).resolve().parents[1] / "config"
IMU_AXES = ImuKind.OUTPUTS
FORWARD = [
    Signal(device=f"motor_{side}", name=name, value=value)
    for side in ("left", "right")
    for name, value in (("enable", 1024.0), ("a", 1.0), ("b", 0.0))
]


def sim_command(*params: str) -> list[str]:
    args = [sys.executable, "-m", "hil_sim.sim_node", "--ros-args"]
    for param in params:
        args += ["-p", param]
    return args


@pytest.fixture
def probe() -> Iterator[RosProbe]:
    probe = RosProbe("sim_test")
    yield probe
    probe.close()


def call(probe: RosProbe, service_type: Any, name: str, request: Any) -> Any:
    client = probe.node.create_client(service_type, name)
    assert client.wait_for_service(timeout_sec=20.0), f"service {name} not available"
    future = client.call_async(request)
    probe.wait_for(future.done, what=f"{name} answered")
    return future.result()


@pytest.mark.ros
def test_pins_drive_the_robot_and_services_reset_and_teleport(spawn: Any, probe: RosProbe) -> None:
    spawn(sim_command("rtf:=0.0", "seed:=3"), name="sim")
    probe.record(Odometry, "odom", qos.SENSOR)
    probe.record(Range, "range/ultrasonic", qos.SENSOR)
    probe.record(JointState, "joint_states", qos.SENSOR)
    probe.record(SignalArray, "hil/signals/from_sim", qos.SENSOR)
    probe.record(Clock, "clock", qos.COMMAND)
    probe.record(MarkerArray, "world/markers", qos.LATCHED)
    pins = probe.publisher(SignalArray, "hil/signals/to_sim", qos.SENSOR)
    probe.wait_for(lambda: probe.latest("odom"), timeout=30.0, what="odom")

    # Forward at full enable: odom x grows, the clock runs, the sensors report.
    probe.wait_for(
        lambda: (pins.publish(SignalArray(signals=FORWARD)), probe.latest("odom").pose.pose.position.x > 0.3)[
            1
        ],
        timeout=30.0,
        what="robot drives forward",
    )
    odom = probe.latest("odom")
    assert abs(odom.pose.pose.position.y) < 0.01
    assert probe.latest("clock").clock.sec >= 0
    signals = {(s.device, s.name) for s in probe.latest("hil/signals/from_sim").signals}
    assert {("ultrasonic", "distance"), ("bumper_left", "pressed"), ("compass", "heading")} <= signals
    assert probe.latest("range/ultrasonic").radiation_type == Range.ULTRASOUND
    assert any(m.ns == "boards" for m in probe.latest("world/markers").markers)

    # Stop the motors, then teleport: the robot is where it was put.
    stop = [Signal(device=s.device, name=s.name, value=0.0) for s in FORWARD]
    # Stopped by the pins (no motor torque), not just stalled against a wall.
    probe.wait_for(
        lambda: (
            pins.publish(SignalArray(signals=stop)),
            abs(probe.latest("odom").twist.twist.linear.x) < 1e-6
            and max(abs(e) for e in probe.latest("joint_states").effort) < 1e-9,
        )[1],
        timeout=20.0,
        what="robot stopped",
    )
    reply = call(probe, TeleportRobot, "teleport", TeleportRobot.Request(robot=0, x=-1.0, y=0.5, yaw=0.0))
    assert reply.success, reply.message
    probe.wait_for(
        lambda: (
            pins.publish(SignalArray(signals=stop)),
            abs(probe.latest("odom").pose.pose.position.x + 1.0) < 1e-6,
        )[1],
        timeout=20.0,
        what="odom at the teleported pose",
    )
    bad = call(probe, TeleportRobot, "teleport", TeleportRobot.Request(robot=7, x=0.0, y=0.0, yaw=0.0))
    assert not bad.success and "no robot 7" in bad.message

    reset = call(probe, Trigger, "reset_world", Trigger.Request())
    assert reset.success
    probe.wait_for(
        lambda: (
            abs(probe.latest("odom").pose.pose.position.x) < 1e-6
            and abs(probe.latest("odom").pose.pose.position.y) < 1e-6
        ),
        timeout=20.0,
        what="odom back at the start",
    )


@pytest.mark.ros
def test_motors_coast_when_the_mcu_pins_stop_even_far_faster_than_real_time(
    spawn: Any, probe: RosProbe
) -> None:
    # rtf 0 runs tens of simulated seconds per wall second; silence counts on the
    # MCU's (wall) clock, so pins at wall pace keep driving and their absence stops it.
    spawn(sim_command("rtf:=0.0", "pin_timeout:=0.3"), name="sim")
    probe.record(Odometry, "odom", qos.SENSOR)
    pins = probe.publisher(SignalArray, "hil/signals/to_sim", qos.SENSOR)
    probe.wait_for(lambda: probe.latest("odom"), timeout=30.0, what="odom")
    probe.wait_for(
        lambda: (pins.publish(SignalArray(signals=FORWARD)), probe.latest("odom").twist.twist.linear.x > 0.2)[
            1
        ],
        timeout=30.0,
        what="robot driving under pins",
    )
    probe.wait_for(
        lambda: abs(probe.latest("odom").twist.twist.linear.x) < 1e-3,
        timeout=20.0,
        what="robot coasting to a stop once the pins stop",
    )


@pytest.mark.ros
def test_several_robots_get_one_namespace_each(spawn: Any, probe: RosProbe) -> None:
    spawn(
        sim_command(
            "rtf:=0.0",
            "robots:=3",
            "hil_robots:=3",
            "robot_spacing:=0.3",
            "world:=" + str(CONFIG.parent / "worlds" / "empty.yaml"),
        ),
        name="sim",
    )
    for index in range(3):
        probe.record(Odometry, f"robot_{index}/odom", qos.SENSOR)
    first = probe.publisher(SignalArray, "robot_1/hil/signals/to_sim", qos.SENSOR)
    probe.wait_for(
        lambda: all(probe.latest(f"robot_{i}/odom") for i in range(3)), timeout=30.0, what="three odoms"
    )
    assert len({round(probe.latest(f"robot_{i}/odom").pose.pose.position.x, 3) for i in range(3)}) > 1

    def only_robot_1_moves() -> bool:
        first.publish(SignalArray(signals=FORWARD))
        moved = [probe.latest(f"robot_{i}/odom").twist.twist.linear.x for i in range(3)]
        return moved[1] > 0.2 and moved[0] == 0.0 and moved[2] == 0.0

    probe.wait_for(only_robot_1_moves, timeout=30.0, what="only robot_1 drives")
    assert probe.latest("robot_1/odom").child_frame_id == "robot_1/base_link"


@pytest.mark.ros
def test_robots_without_an_mcu_follow_their_cmd_vel(spawn: Any, probe: RosProbe) -> None:
    spawn(
        sim_command(
            "rtf:=1.0",
            "robots:=3",
            "hil_robots:=1",
            "robot_spacing:=0.3",
            "world:=" + str(CONFIG.parent / "worlds" / "empty.yaml"),
        ),
        name="sim",
    )
    for index in range(3):
        probe.record(Odometry, f"robot_{index}/odom", qos.SENSOR)
    drive = probe.publisher(Twist, "robot_2/cmd_vel", qos.COMMAND)
    probe.wait_for(
        lambda: all(probe.latest(f"robot_{i}/odom") for i in range(3)), timeout=30.0, what="three odoms"
    )
    forward = Twist()
    forward.linear.x = 0.2

    def only_robot_2_moves() -> bool:
        drive.publish(forward)
        moved = [probe.latest(f"robot_{i}/odom").twist.twist.linear.x for i in range(3)]
        return moved[2] > 0.15 and moved[0] == 0.0 and moved[1] == 0.0

    probe.wait_for(only_robot_2_moves, timeout=30.0, what="only robot_2 drives on its cmd_vel")
    # No cmd_vel for cmd_vel_timeout (0.5 s): it stops.
    probe.wait_for(
        lambda: abs(probe.latest("robot_2/odom").twist.twist.linear.x) < 0.01,
        timeout=30.0,
        what="robot_2 stops",
    )


@pytest.mark.ros
def test_bad_world_exits_2_naming_the_file_and_key(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text("arena: {width: -1}\n")
    result = subprocess.run(
        sim_command(f"world:={world}"), capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 2
    assert f"{world}: arena.width: -1 must be greater than 0" in result.stderr


def test_declared_defaults_match_the_package_yaml() -> None:
    defaults = yaml_defaults(CONFIG / "hil_sim.yaml", NODE_NAME)
    assert defaults == {spec.name: spec.default for spec in PARAMETERS}


@pytest.mark.ros
def test_every_device_of_any_robot_model_has_its_topic(probe: RosProbe) -> None:
    servo = Mount(0.0, 0.0, 0.09, 0.0)
    robot = RobotModel(
        "gadgets",
        devices=(
            DeviceSpec("motor_left", "tb6612fng", wheel="left", ties={"stby": 1}),
            DeviceSpec("motor_right", "tb6612fng", wheel="right", ties={"stby": 1}),
            DeviceSpec("pan", "servo", servo),
            DeviceSpec("sonar", "ranger", Mount(0.03, 0.0, 0.1, servo="pan"), {"max_range_cm": 300}),
            DeviceSpec("front", "ranger", Mount(0.09, 0.0, 0.07), {"max_range_cm": 300}),
            DeviceSpec("imu", "imu", Mount(0.0, 0.0, 0.05)),
            DeviceSpec("floor", "line", Mount(0.06, 0.0, 0.01)),
            DeviceSpec("compass", "compass", Mount(0.0, 0.0, 0.08)),
        ),
    )
    SimNode.models = robot
    try:
        node = SimNode(context=probe.context, parameter_overrides=[Parameter("rtf", value=0.0)])
    finally:
        SimNode.models = None
    kinds = {
        "range/sonar": Range,
        "range/front": Range,
        "imu/imu": Imu,
        "line/floor": Float32,
        "mag/compass": MagneticField,
        "joint_states": JointState,
        "hil/signals/from_sim": SignalArray,
    }
    for topic, kind in kinds.items():
        probe.record(kind, topic, qos.SENSOR)
    node.start()
    try:
        node.set_pins(0, [("pan", "pulse_us", 2400.0), ("motor_left", "pwm", 0.0)])
        probe.wait_for(lambda: all(probe.latest(t) for t in kinds), timeout=30.0, what="every device's topic")
        assert probe.latest("range/front").max_range == pytest.approx(3.0)
        assert probe.latest("range/front").header.frame_id == "front_link"
        assert probe.latest("imu/imu").linear_acceleration.z == pytest.approx(9.81, abs=0.5)
        probe.wait_for(
            lambda: (
                "pan_joint" in probe.latest("joint_states").name
                and probe.latest("joint_states").position[2] == pytest.approx(math.pi / 2)
            ),
            timeout=30.0,
            what="the servo's joint at 90 degrees",
        )
        names = [(s.device, s.name) for s in probe.latest("hil/signals/from_sim").signals]
        assert names == [
            ("sonar", "distance"),
            ("front", "distance"),
            *[("imu", a) for a in IMU_AXES],
            ("floor", "reading"),
            ("compass", "heading"),
        ]
    finally:
        node.stop()
        node.destroy_node()


def test_each_robot_is_its_profiles_model_the_last_for_the_rest() -> None:
    library = device_library()
    models = profile_models("demo,line_follower", 3, library)
    assert [m.name for m in models] == ["demo", "line_follower", "line_follower"]
    assert models[1] is models[2]  # one model: one group of the simulation
    assert [d.kind for d in models[1].of_kind("line")] == ["line"] * 3
    assert [m.name for m in profile_models("", 2, library)] == ["demo", "demo"]
