"""The HIL chain against Gazebo's side of ros_gz_bridge: MCU, signal bridge and gz_adapter as processes.

No Gazebo here: the test publishes what ros_gz_bridge would (odometry, joint states,
lidar scans, the magnetometer; the message types it produces) and talks to the MCU's
command link as the control loop does. A drive command must come out as wheel
torques for Gazebo (MCU pins -> signal link -> signal bridge -> gz_adapter), and a
Gazebo lidar's range must come back in the MCU's telemetry (gz_adapter -> signal
bridge -> signal link -> MCU -> TL2), with nothing in the chain changed.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import serial
from builtin_interfaces.msg import Time
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState, LaserScan
from std_msgs.msg import Float64

from hil_common import qos
from hil_gazebo.core.gz_adapter import bridged_topics, scan_specs
from hil_sim.core.robot_model import demo_robot
from support.ros_probe import RosProbe

TOPICS = bridged_topics("torque")
ROBOT = demo_robot()


def module(name: str, *params: str) -> list[str]:
    args = [sys.executable, "-m", name, "--ros-args"]
    for param in params:
        args += ["-p", param]
    return args


def stamp(seconds: float) -> Time:
    whole = math.floor(seconds)
    return Time(sec=whole, nanosec=round((seconds - whole) * 1e9))


def ultrasonic_scan(at: float, distance: float) -> LaserScan:
    spec = scan_specs(ROBOT, sensor_rate=50.0)["ultrasonic"]
    message = LaserScan(
        angle_min=spec.min_angle,
        angle_max=spec.max_angle,
        angle_increment=(spec.max_angle - spec.min_angle) / (spec.samples - 1),
        range_min=spec.range_min,
        range_max=spec.range_max,
        ranges=[math.inf, math.inf, distance, math.inf, math.inf],
    )
    message.header.stamp = stamp(at)
    return message


class GazeboSide:
    """What ros_gz_bridge publishes from Gazebo, and the control loop's end of the command link."""

    def __init__(self, probe: RosProbe, port: serial.Serial) -> None:
        self.port = port
        self.joint_states = probe.publisher(JointState, TOPICS["joint_states"].ros, qos.PUBLISHER)
        self.odometry = probe.publisher(Odometry, TOPICS["odom"].ros, qos.PUBLISHER)
        self.ultrasonic = probe.publisher(LaserScan, TOPICS["ultrasonic"].ros, qos.PUBLISHER)
        self.now = 1.0
        self.heard = b""
        #: The MCU's last TL2 telemetry (ultrasonic cm first).
        self.tl2: list[float] | None = None

    def tick(self) -> None:
        """One exchange: the loop's DRV and heartbeat, Gazebo's joint states, ranger and pose."""
        self.port.write(f"DRV150,150\nHBB,{time.time():.3f}\n".encode())
        self.now += 0.02
        message = JointState(name=["left_wheel_joint", "right_wheel_joint"], velocity=[0.0, 0.0])
        message.position, message.effort = [0.0, 0.0], [0.0, 0.0]
        message.header.stamp = stamp(self.now)
        self.joint_states.publish(message)
        self.ultrasonic.publish(ultrasonic_scan(self.now, 0.8))
        pose = Odometry()
        pose.header.stamp, pose.pose.pose.orientation.w = stamp(self.now + 0.01), 1.0
        self.odometry.publish(pose)
        *lines, self.heard = (self.heard + self.port.read(4096)).split(b"\n")
        for line in lines:
            if line.startswith(b"TL2"):
                self.tl2 = [float(v) for v in line[3:].decode().strip().lstrip(",").split(",")]


@pytest.mark.ros
def test_drive_commands_reach_gazebo_as_torques_and_gazebos_ranges_reach_the_mcu(
    spawn: Any, tmp_path: Path
) -> None:
    command, link = tmp_path / "mcu_command", tmp_path / "signal_link"
    spawn(module("hil_mcu.virtual_mcu_node", f"command_port:={command}", f"signal_port:={link}"), name="mcu")
    deadline = time.monotonic() + 20.0
    while not (command.exists() and link.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert command.exists() and link.exists(), "the virtual MCU made no ptys"
    spawn(module("hil_bridge.signal_bridge_node", f"port:={link}"), name="signal_bridge")
    spawn(module("hil_gazebo.gz_adapter_node", "pin_timeout:=1.0"), name="gz_adapter")
    probe = RosProbe("gz_chain")
    port = serial.Serial(str(command), 38400, timeout=0)
    try:
        for wheel in ("left", "right"):
            probe.record(Float64, TOPICS[f"{wheel}_force"].ros, qos.SENSOR)
        side = GazeboSide(probe, port)

        def torques() -> bool:
            side.tick()
            forces = [probe.latest(TOPICS[f"{wheel}_force"].ros) for wheel in ("left", "right")]
            return all(f is not None and f.data > 0.0 for f in forces)

        probe.wait_for(torques, timeout=30.0, what="forward torques on both wheels from DRV150,150")
        forces = [probe.latest(TOPICS[f"{wheel}_force"].ros).data for wheel in ("left", "right")]
        stall = ROBOT.motor.kt * ROBOT.motor.supply_voltage / ROBOT.motor.resistance * ROBOT.motor.gear_ratio
        # 150 of 255 as the MCU's PWM duty, on a wheel at rest.
        assert forces[0] == pytest.approx(forces[1])
        assert forces[0] == pytest.approx(stall * 150 / 255, rel=0.02)

        def ranged() -> bool:
            side.tick()
            return side.tl2 is not None and abs(side.tl2[0] - 80.0) < 3.0

        probe.wait_for(ranged, timeout=20.0, what="the lidar's 0.8 m in the MCU's TL2 as 80 cm")
        assert side.tl2 is not None and np.isfinite(side.tl2).all()
    finally:
        port.close()
        probe.close()
