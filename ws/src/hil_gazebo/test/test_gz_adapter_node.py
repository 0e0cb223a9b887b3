"""The gz_adapter node as a process, fed the message types ros_gz_bridge produces from Gazebo.

The test stands in for Gazebo behind ros_gz_bridge: it publishes nav_msgs/Odometry,
sensor_msgs/JointState, LaserScan and MagneticField exactly as the bridge converts
Gazebo's messages (``+inf`` for a lidar ray without return, float32 ranges, Gazebo's
time in the stamps), and reads what the adapter sends back: std_msgs/Float64 wheel
torques or a geometry_msgs/Twist, and hil_msgs/SignalArray on hil/signals/from_sim.
"""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState, LaserScan, MagneticField
from std_msgs.msg import Float64

from hil_common import qos
from hil_common.core.param_spec import yaml_defaults
from hil_devices.core.library import load_device_library
from hil_gazebo.core.gz_adapter import bridged_topics, scan_specs
from hil_gazebo.gz_adapter_node import NODE_NAME, PARAMETERS
from hil_msgs.msg import Signal, SignalArray
from hil_sim.core.robot_model import demo_robot
from hil_sim.core.sensors import EarthField, SharpIrModel
from support.ros_probe import RosProbe

SRC = Path(__file__).resolve().parents[2]
CONFIG = SRC / "hil_gazebo" / "config"
IR = SharpIrModel.from_table(
    load_device_library([SRC / "hil_devices" / "config" / "devices"])["sharp_ir"].table
)
ROBOT = demo_robot()
MOTOR = ROBOT.motor
STALL = MOTOR.kt * MOTOR.supply_voltage / MOTOR.resistance * MOTOR.gear_ratio
TORQUE, VELOCITY = bridged_topics("torque"), bridged_topics("velocity")
FORWARD = SignalArray(
    signals=[
        Signal(device=f"motor_{side}", name=name, value=value)
        for side in ("left", "right")
        for name, value in (("enable", 1024.0), ("a", 1.0), ("b", 0.0))
    ]
)


def adapter_command(*params: str) -> list[str]:
    args = [sys.executable, "-m", "hil_gazebo.gz_adapter_node", "--ros-args"]
    for param in params:
        args += ["-p", param]
    return args


def stamp(seconds: float) -> Time:
    whole = math.floor(seconds)
    return Time(sec=whole, nanosec=round((seconds - whole) * 1e9))


def joint_state(at: float, left: float, right: float) -> JointState:
    """What the bridge makes of JointStatePublisher's gz.msgs.Model: every axis field filled."""
    message = JointState(
        name=["left_wheel_joint", "right_wheel_joint"],
        position=[0.0, 0.0],
        velocity=[left, right],
        effort=[0.0, 0.0],
    )
    message.header.stamp = stamp(at)
    return message


def odometry(at: float, x: float, y: float, yaw: float) -> Odometry:
    """What the bridge makes of OdometryPublisher's gz.msgs.Odometry (frames as exported)."""
    message = Odometry()
    message.header.stamp, message.header.frame_id, message.child_frame_id = stamp(at), "odom", "base_link"
    message.pose.pose.position.x, message.pose.pose.position.y = x, y
    message.pose.pose.orientation.z, message.pose.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return message


def laser_scan(at: float, name: str, hits: dict[int, float]) -> LaserScan:
    """A gpu_lidar scan as exported: ``hits`` maps ray index to range, every other ray +inf."""
    spec = scan_specs(ROBOT, sensor_rate=50.0)[name]
    message = LaserScan(
        angle_min=spec.min_angle,
        angle_max=spec.max_angle,
        angle_increment=(spec.max_angle - spec.min_angle) / (spec.samples - 1),
        range_min=spec.range_min,
        range_max=spec.range_max,
        ranges=[hits.get(i, math.inf) for i in range(spec.samples)],
    )
    message.header.stamp, message.header.frame_id = stamp(at), f"hil_robot/base_link/{name}"
    return message


def magnetic_field(at: float, yaw: float) -> MagneticField:
    """Gazebo's magnetometer (noise-free) for a robot facing ``yaw``, north along +y."""
    bx, by, bz = EarthField().body(np.array([yaw]))[0]
    message = MagneticField()
    message.header.stamp = stamp(at)
    message.magnetic_field.x, message.magnetic_field.y, message.magnetic_field.z = (
        float(bx),
        float(by),
        float(bz),
    )
    return message


@pytest.fixture
def probe() -> Iterator[RosProbe]:
    probe = RosProbe("gz_test")
    yield probe
    probe.close()


def publishers(probe: RosProbe, topics: dict[str, Any]) -> dict[str, Any]:
    """The bridge's side of the Gazebo topics (its publishers are reliable, depth 10)."""
    kinds = {"odom": Odometry, "joint_states": JointState, "mag:compass": MagneticField}
    found = {name: probe.publisher(kind, topics[name].ros, qos.PUBLISHER) for name, kind in kinds.items()}
    for name in ("ultrasonic", "ir", "bumper"):
        found[name] = probe.publisher(LaserScan, topics[name].ros, qos.PUBLISHER)
    found["to_sim"] = probe.publisher(SignalArray, "hil/signals/to_sim", qos.PUBLISHER)
    return found


def signal_values(message: SignalArray) -> dict[tuple[str, str], float]:
    return {(s.device, s.name): s.value for s in message.signals}


@pytest.mark.ros
def test_torques_follow_the_pins_and_signals_follow_gazebos_sensors(spawn: Any, probe: RosProbe) -> None:
    spawn(adapter_command("pin_timeout:=0.5", "seed:=2"), name="gz_adapter")
    probe.record(Float64, TORQUE["left_force"].ros, qos.SENSOR)
    probe.record(Float64, TORQUE["right_force"].ros, qos.SENSOR)
    probe.record(SignalArray, "hil/signals/from_sim", qos.SENSOR)
    out = publishers(probe, TORQUE)

    def stalled() -> bool:
        out["to_sim"].publish(FORWARD)
        out["joint_states"].publish(joint_state(1.0, 0.0, 0.0))
        left, right = probe.latest(TORQUE["left_force"].ros), probe.latest(TORQUE["right_force"].ros)
        return left is not None and right is not None and left.data > 0 and right.data > 0

    probe.wait_for(stalled, timeout=20.0, what="stall torques on both wheels")
    assert probe.latest(TORQUE["left_force"].ros).data == pytest.approx(STALL, rel=1e-4)

    # The robot at the start facing +x: a board 0.5 m ahead of the ultrasonic, 0.6 m
    # ahead of the IR, something touching the bumper head-on.
    clock = {"t": 2.0}

    def sensed() -> bool:
        t = clock["t"]
        out["ultrasonic"].publish(laser_scan(t, "ultrasonic", {2: 0.5}))
        out["ir"].publish(laser_scan(t, "ir", {1: 0.6, 2: 0.6}))
        out["bumper"].publish(laser_scan(t, "bumper", {30: ROBOT.body.body_radius + 0.001}))
        out["mag:compass"].publish(magnetic_field(t, 0.0))
        clock["t"] = t + 0.02  # every odometry a new sensor period: a fresh sample
        out["odom"].publish(odometry(t + 0.01, 0.0, 0.0, 0.0))
        latest = probe.latest("hil/signals/from_sim")
        if latest is None:
            return False
        # Every Gazebo message has reached the adapter once a sample shows them all.
        values = signal_values(latest)
        return (
            abs(values[("ultrasonic", "distance")] - 50.0) < 2.0
            and abs(values[("compass", "heading")] - 90.0) < 5.0
            and values[("bumper_left", "pressed")] == 1.0
            and values[("ir", "voltage")] > float(IR.voltage(np.array(100.0)))
        )

    probe.wait_for(sensed, timeout=10.0, what="Gazebo's ranges, bumper and field on hil/signals/from_sim")
    latest = probe.latest("hil/signals/from_sim")
    values = signal_values(latest)
    assert [(s.device, s.name) for s in latest.signals] == [
        ("bumper_left", "pressed"),
        ("bumper_right", "pressed"),
        ("ultrasonic", "distance"),
        ("ir", "voltage"),
        *[(f"light_{k}", "reading") for k in range(4)],
        ("compass", "heading"),
    ]
    assert values[("bumper_left", "pressed")] == values[("bumper_right", "pressed")] == 1.0
    assert values[("ir", "voltage")] == pytest.approx(float(IR.voltage(np.array(60.0))), rel=0.1)
    assert values[("compass", "heading")] == pytest.approx(90.0, abs=5.0)  # facing +x: east
    # The demo light is ahead and to the left at (1.5, 1.5): front and left cells see it.
    assert values[("light_0", "reading")] > values[("light_2", "reading")]
    assert values[("light_1", "reading")] > values[("light_3", "reading")]
    assert latest.header.stamp.sec >= 2  # Gazebo's time, not the wall clock's

    # The MCU goes quiet: after pin_timeout the motors coast.
    def coasting() -> bool:
        out["joint_states"].publish(joint_state(3.0, 0.0, 0.0))
        left = probe.latest(TORQUE["left_force"].ros)
        return left is not None and left.data == 0.0

    probe.wait_for(coasting, timeout=5.0, what="zero torque once the pins stop")


@pytest.mark.ros
def test_velocity_drive_sends_the_motor_models_twist_on_gazebos_clock(spawn: Any, probe: RosProbe) -> None:
    spawn(adapter_command("drive:=velocity", "pin_timeout:=5.0"), name="gz_adapter")
    probe.record(Twist, VELOCITY["cmd_vel"].ros, qos.SENSOR)
    out = publishers(probe, VELOCITY)
    clock = {"t": 0.0}

    def moving() -> bool:
        out["to_sim"].publish(FORWARD)
        clock["t"] += 0.005
        out["odom"].publish(odometry(clock["t"], 0.0, 0.0, 0.0))
        twist = probe.latest(VELOCITY["cmd_vel"].ros)
        return twist is not None and twist.linear.x > 0.5 * ROBOT.max_wheel_speed * ROBOT.body.wheel_radius

    probe.wait_for(moving, timeout=20.0, what="a forward twist near the motors' speed")
    twist = probe.latest(VELOCITY["cmd_vel"].ros)
    assert twist.linear.x < 1.01 * ROBOT.max_wheel_speed * ROBOT.body.wheel_radius
    assert twist.angular.z == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize(
    ("param", "message"),
    [
        ("drive:=wheels", "drive"),
        ("world:=/nonexistent/world.yaml", "/nonexistent/world.yaml"),
        ("sensor_rate:=0.0", "sensor_rate"),
    ],
)
def test_bad_parameters_exit_2_naming_the_parameter_or_file(param: str, message: str) -> None:
    result = subprocess.run(adapter_command(param), capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr


def test_yaml_defaults_match_the_declared_parameters() -> None:
    defaults = yaml_defaults(CONFIG / "hil_gazebo.yaml", NODE_NAME)
    assert defaults == {spec.name: spec.default for spec in PARAMETERS}
