"""``gz_adapter``: Gazebo (gz sim) in place of the ``sim`` node, so the HIL chain runs unchanged.

Takes the MCU's pins from ``hil/signals/to_sim`` and publishes the same sensor signals
as the simulator on ``hil/signals/from_sim``, once per odometry message from Gazebo
(``signal_rate`` of Gazebo time), stamped with Gazebo's time. From Gazebo, through
ros_gz_bridge (``bridge.yaml`` of ``hil_gazebo export``): ``odom``
(nav_msgs/Odometry), ``joint_states`` (sensor_msgs/JointState), ``gz/<ranger>`` per
ranger and ``gz/bumper`` (sensor_msgs/LaserScan) and each compass's topic (``mag`` of
the demo robot; sensor_msgs/MagneticField). To Gazebo: the wheel torques on
``gz/left_wheel/cmd_force`` and ``gz/right_wheel/cmd_force`` (std_msgs/Float64, drive
``torque``, one pair per joint state) or ``gz/cmd_vel`` (geometry_msgs/Twist, drive
``velocity``, one per odometry message). The conversions are
:mod:`hil_gazebo.core.gz_adapter`'s; ``diagnostics`` once a second.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import JointState, LaserScan, MagneticField
from std_msgs.msg import Float64

from hil_common import qos
from hil_common.core.param_spec import ParamSpec
from hil_common.errors import HilError
from hil_common.node_runtime import diagnostic_array, run_node
from hil_common.parameters import declare_parameters
from hil_devices.core.defaults import device_library
from hil_devices.core.profile import load_profile
from hil_gazebo.core.gz_adapter import DRIVES, GzAdapter, bridged_topics, magnetometers, scanners
from hil_msgs.msg import Signal, SignalArray
from hil_sim.core.build import world_path
from hil_sim.core.robot_model import RobotModel, demo_robot, robot_model_from_profile
from hil_sim.core.world import load_world

NODE_NAME = "gz_adapter"

PARAMETERS = (
    ParamSpec("world", "", "World YAML file (its light); empty: worlds/demo.yaml of hil_sim."),
    ParamSpec(
        "drive",
        "torque",
        "How the wheels are driven: torque (motor torque on Gazebo's wheel joints) or velocity "
        "(the motors run here, Gazebo's DiffDrive takes the twist); as exported.",
        choices=DRIVES,
    ),
    ParamSpec(
        "seed", 0, "Seed of the sensor noise (robot 0's stream of the simulator).", min=0, max=2**31 - 1
    ),
    ParamSpec("sensor_rate", 50.0, "Sensor samples per second of Gazebo time.", min=1.0, max=1000.0),
    ParamSpec(
        "signal_rate",
        200.0,
        "Joint states and odometry per second of Gazebo time, as exported (the torque drive's "
        "electrical step is its period).",
        min=1.0,
        max=1000.0,
    ),
    ParamSpec(
        "physics_rate",
        1000.0,
        "Steps per second of the motors' own integration (velocity drive).",
        min=100.0,
        max=100000.0,
    ),
    ParamSpec(
        "pin_timeout",
        0.1,
        "Seconds (wall clock) without MCU pins before the motors coast.",
        min=0.001,
        max=60.0,
    ),
    ParamSpec("device_configs", [], "Device config files or folders; empty: hil_devices' library."),
    ParamSpec(
        "robot",
        "",
        "Robot profile (a shipped robot's name, a robot folder or its robot.yaml) whose model Gazebo"
        " runs (as exported); empty: the demo robot.",
    ),
)


def seconds(stamp: Time) -> float:
    """A ROS time stamp in seconds."""
    return float(stamp.sec) + float(stamp.nanosec) * 1e-9


def yaw_of(x: float, y: float, z: float, w: float) -> float:
    """The rotation about z of a quaternion (a planar robot's heading)."""
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


class GzAdapterNode(Node):
    """Gazebo's topics to the signal side and the MCU's pins to Gazebo's wheels (module docstring)."""

    #: The robot's model the next node adapts (None: the demo robot); set by whoever
    #: builds the node in its own process before it does.
    robot: RobotModel | None = None

    def __init__(self, **node_options: Any) -> None:
        super().__init__(NODE_NAME, **node_options)
        params = declare_parameters(self, PARAMETERS)
        world_file = str(world_path(params.as_str("world")))
        library = device_library(params.as_strings("device_configs"))
        profile = params.as_str("robot")
        robot = self.robot or (
            robot_model_from_profile(load_profile(profile, library=library))
            if profile
            else demo_robot(library)
        )
        self.drive = params.as_str("drive")
        self.core = GzAdapter(
            load_world(world_file),
            robot=robot,
            drive=self.drive,
            seed=params.as_int("seed"),
            sensor_rate=params.as_float("sensor_rate"),
            wheel_period=1.0 / params.as_float("signal_rate"),
            physics_rate=params.as_float("physics_rate"),
            pin_timeout=params.as_float("pin_timeout"),
        )
        topics = bridged_topics(self.drive, robot=robot)
        self.from_sim = self.create_publisher(SignalArray, "hil/signals/from_sim", qos.PUBLISHER)
        self.forces = []
        self.cmd_vel = None
        if self.drive == "torque":
            self.forces = [
                self.create_publisher(Float64, topics[f"{side}_force"].ros, qos.PUBLISHER)
                for side in ("left", "right")
            ]
        else:
            self.cmd_vel = self.create_publisher(Twist, topics["cmd_vel"].ros, qos.PUBLISHER)
        self.diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", qos.PUBLISHER)
        self.create_subscription(SignalArray, "hil/signals/to_sim", self.on_to_sim, qos.SENSOR)
        self.create_subscription(JointState, topics["joint_states"].ros, self.on_joint_states, qos.SENSOR)
        self.create_subscription(Odometry, topics["odom"].ros, self.on_odometry, qos.SENSOR)
        for role in magnetometers(robot):
            self.create_subscription(MagneticField, topics[role].ros, self.on_field, qos.SENSOR)
        for name in scanners(robot):
            self.create_subscription(
                LaserScan, topics[name].ros, lambda m, n=name: self.on_scan(n, m), qos.SENSOR
            )
        self.create_timer(1.0, self.publish_diagnostics)
        self._warned: set[str] = set()
        self.get_logger().info(f"world {world_file}, drive {self.drive}, seed {params.as_int('seed')}")

    # It has no thread of its own: everything happens in callbacks.
    def start(self) -> None:
        """Nothing to start."""

    def stop(self) -> None:
        """Nothing to stop."""

    # --- MCU side ---------------------------------------------------------------------

    def on_to_sim(self, message: SignalArray) -> None:
        """Take the MCU's pins."""
        unknown = self.core.take_pins(
            [(s.device, s.name, s.value) for s in message.signals], mcu_time=time.monotonic()
        )
        for name in unknown:
            if name not in self._warned:
                self._warned.add(name)
                self.get_logger().warning(
                    f"hil/signals/to_sim: {name} is not a pin of the robot model; ignored"
                )

    def _check_silence(self) -> None:
        if self.core.check_silence(mcu_time=time.monotonic()):
            self.get_logger().warning(f"no MCU pins for {self.core.pin_timeout:g} s, motors coast")

    # --- Gazebo side ------------------------------------------------------------------

    def on_joint_states(self, message: JointState) -> None:
        """Torque drive: the motors' torques for the wheels' speeds, back to Gazebo."""
        speeds = self.core.wheel_speeds(message.name, message.velocity, message.position)
        if speeds is None or self.drive != "torque":
            return
        self._check_silence()
        for publisher, torque in zip(self.forces, self.core.wheel_torques(speeds), strict=True):
            publisher.publish(Float64(data=torque))

    def on_odometry(self, message: Odometry) -> None:
        """The robot's pose; then the signals (and the velocity drive's twist) at this Gazebo time."""
        pose = message.pose.pose
        q = pose.orientation
        now = seconds(message.header.stamp)
        speed = message.twist.twist
        self.core.take_odometry(
            pose.position.x,
            pose.position.y,
            yaw_of(q.x, q.y, q.z, q.w),
            stamp=now,
            v=speed.linear.x,
            w=speed.angular.z,
        )
        if self.cmd_vel is not None:
            self._check_silence()
            v, w = self.core.twist(now)
            twist = Twist()
            twist.linear.x, twist.angular.z = v, w
            self.cmd_vel.publish(twist)
        signals = SignalArray(signals=[Signal(device=d, name=n, value=v) for d, n, v in self.core.signals()])
        signals.header.stamp = message.header.stamp
        self.from_sim.publish(signals)

    def on_scan(self, name: str, message: LaserScan) -> None:
        """A lidar standing in for a ranger or the bumpers."""
        if not self.core.take_scan(
            name,
            message.ranges,
            angle_min=message.angle_min,
            angle_increment=message.angle_increment,
            range_min=message.range_min,
            range_max=message.range_max,
            stamp=seconds(message.header.stamp),
        ):
            key = f"scan:{name}"
            if key not in self._warned:
                self._warned.add(key)
                self.get_logger().warning(f"{name}: a malformed LaserScan from Gazebo was dropped (counted)")

    def on_field(self, message: MagneticField) -> None:
        """Gazebo's magnetometer (body frame, T)."""
        field = message.magnetic_field
        self.core.take_field((field.x, field.y, field.z), stamp=seconds(message.header.stamp))

    def publish_diagnostics(self) -> None:
        """What was taken and dropped; a warning while Gazebo's odometry has not arrived."""
        counters = self.core.counters
        values = {**vars(counters), "drive": self.drive, "coasting": self.core.coasting}
        level, text = DiagnosticStatus.OK, f"Gazebo time {self.core.now:.3f} s"
        if counters.odometry == 0:
            level, text = (
                DiagnosticStatus.WARN,
                "no odometry from Gazebo yet (is gz sim running, the bridge up?)",
            )
        self.diagnostics.publish(
            diagnostic_array(self, name="gazebo", level=level, message=text, values=values)
        )


def main(args: list[str] | None = None) -> int:
    """Run the adapter until shut down; exit 2 on a bad configuration."""
    return run_node(GzAdapterNode, name=NODE_NAME, config_errors=(HilError,), args=args)


if __name__ == "__main__":
    sys.exit(main())
