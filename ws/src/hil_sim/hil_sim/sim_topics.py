"""The simulator's ROS topics of one robot: ground truth, joints, and a topic per device.

Each robot publishes ``odom``, ``joint_states`` (its wheels, then its servos) and
``hil/signals/from_sim``, and every device of a kind that has a topic publishes its
own, named by the device (its model's ``topic`` if given), in its frame
(``frame_id``, as in the robot's URDF):

* ``ranger``: ``range/<name>`` (sensor_msgs/Range: the reading, its cone and range);
* ``light``: ``light/<name>`` (sensor_msgs/Illuminance: the ADC reading);
* ``compass``: ``mag/<name>`` (sensor_msgs/MagneticField, T, body frame);
* ``imu``: ``imu/<name>`` (sensor_msgs/Imu: acceleration and rotation rate, no orientation);
* ``line``: ``line/<name>`` (std_msgs/Float32: the reflectance under it).

Topics nobody subscribes to are not filled at all (:meth:`RobotTopics.refresh`), which
keeps large swarms cheap.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from builtin_interfaces.msg import Time
from nav_msgs.msg import Odometry
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.node import Node
from sensor_msgs.msg import Illuminance, Imu, JointState, MagneticField, Range
from std_msgs.msg import Float32

from hil_common import qos
from hil_msgs.msg import SignalArray
from hil_sim.core.device_set import DeviceSet
from hil_sim.core.devices.base import DeviceModel
from hil_sim.core.robot_model import DeviceSpec
from hil_sim.core.simulation import Simulation

#: The wheels' joints (hil_sim.core.robot_urdf), left then right.
WHEEL_JOINTS = ("left_wheel_joint", "right_wheel_joint")


def stamp_of(seconds: float) -> Time:
    """A ROS time stamp for simulated seconds."""
    whole = math.floor(seconds)
    return Time(sec=int(whole), nanosec=round((seconds - whole) * 1e9) % 1_000_000_000)


def yaw_quaternion(yaw: float) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a rotation about z."""
    return (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))


def _range(spec: DeviceSpec, model: DeviceModel, index: int, row: int) -> Range:
    params = model.params[index]
    return Range(
        radiation_type=Range.ULTRASOUND if params["beam"] == "ultrasonic" else Range.INFRARED,
        field_of_view=math.radians(params["cone_deg"]),
        min_range=params["min_range_cm"] / 100,
        max_range=params["max_range_cm"] / 100,
        range=float(model.outputs[row, index, model.column("distance")]) / 100,
    )


def _light(spec: DeviceSpec, model: DeviceModel, index: int, row: int) -> Illuminance:
    return Illuminance(illuminance=float(model.outputs[row, index, 0]))


def _mag(spec: DeviceSpec, model: DeviceModel, index: int, row: int) -> MagneticField:
    message = MagneticField()
    bx, by, bz = (float(v) for v in model.outputs[row, index, 1:4])
    message.magnetic_field.x, message.magnetic_field.y, message.magnetic_field.z = bx, by, bz
    return message


def _imu(spec: DeviceSpec, model: DeviceModel, index: int, row: int) -> Imu:
    message = Imu()
    out = [float(v) for v in model.outputs[row, index]]
    message.orientation_covariance[0] = -1.0  # no orientation estimate
    acc, rate = message.linear_acceleration, message.angular_velocity
    acc.x, acc.y, acc.z, rate.x, rate.y, rate.z = out[:6]
    return message


def _line(spec: DeviceSpec, model: DeviceModel, index: int, row: int) -> Float32:
    return Float32(data=float(model.outputs[row, index, model.column("reflectance")]))


@dataclass(frozen=True)
class DeviceTopic:
    """How a kind's devices are published: message type, topic prefix, the message of one device."""

    kind: Any
    prefix: str
    message: Callable[[DeviceSpec, DeviceModel, int, int], Any]
    stamped: bool = True


#: Device kinds with a topic of their own.
DEVICE_TOPICS = {
    "ranger": DeviceTopic(Range, "range", _range),
    "light": DeviceTopic(Illuminance, "light", _light),
    "compass": DeviceTopic(MagneticField, "mag", _mag),
    "imu": DeviceTopic(Imu, "imu", _imu),
    "line": DeviceTopic(Float32, "line", _line, stamped=False),
}


class RobotTopics:
    """Publishers and messages of one robot."""

    def __init__(self, node: Node, prefix: str, devices: DeviceSet, *, qos_events: bool = True) -> None:
        """Create the robot's publishers.

        Args:
            node: the simulator node.
            prefix: the robot's namespace (``robot_3/``), or empty for a single robot.
            devices: the robot's devices (its group's device set).
            qos_events: keep rclpy's per-publisher QoS event handlers (incompatible QoS
                or type warnings). A swarm drops them: rclpy rebuilds its wait set on
                every executor wake and checks each handler against a list of them, so
                2000 handlers (100 robots) cost tens of milliseconds per wake. The
                subscriber side still warns about an incompatible QoS.
        """
        events = None if qos_events else PublisherEventCallbacks(use_default_callbacks=False)

        def publisher(kind: Any, name: str) -> Any:
            return node.create_publisher(kind, f"{prefix}{name}", qos.PUBLISHER, event_callbacks=events)

        self.prefix = prefix
        self.odom = publisher(Odometry, "odom")
        self.joints = publisher(JointState, "joint_states")
        self.from_sim = publisher(SignalArray, "hil/signals/from_sim")
        #: Per device with a topic: (its spec, its kind's model, its index there, publisher, how).
        self.devices = []
        for name, model, index in devices.devices(list(DEVICE_TOPICS)):
            spec = devices.model.device(name)
            how = DEVICE_TOPICS[spec.kind]
            topic = spec.topic or f"{how.prefix}/{name}"
            self.devices.append((spec, model, index, publisher(how.kind, topic), how))
        self._listened: dict[int, bool] = {}

    def refresh(self) -> None:
        """Look up again which of this robot's topics have subscribers."""
        publishers = [self.odom, self.joints, self.from_sim, *(entry[3] for entry in self.devices)]
        self._listened = {id(p): p.get_subscription_count() > 0 for p in publishers}

    def listened(self, publisher: Any) -> bool:
        """Whether ``publisher`` had subscribers at the last :meth:`refresh`."""
        return self._listened.get(id(publisher), False)

    def frame(self, name: str) -> str:
        """A frame of this robot (``robot_3/base_link``)."""
        return f"{self.prefix}{name}"

    def publish_devices(self, row: int, stamp: Time) -> None:
        """Every device topic somebody listens to, from the last sample (``row``: the robot's row)."""
        for spec, model, index, publisher, how in self.devices:
            if self.listened(publisher):
                message = how.message(spec, model, index, row)
                if how.stamped:
                    message.header.stamp, message.header.frame_id = stamp, self.frame(spec.frame_id)
                publisher.publish(message)

    def joint_states(self, sim: Simulation, robot: int, stamp: Time) -> JointState:
        """The wheels' (position, speed, motor torque at the wheel) and the servos' positions."""
        model = sim.models[robot]
        gear, kt = model.motor.gear_ratio, model.motor.kt
        joints = JointState(name=list(WHEEL_JOINTS))
        joints.header.stamp = stamp
        joints.position = [float(a) for a in sim.wheel_angle[robot]]
        joints.velocity = [float(s) / gear for s in sim.motors.speed[robot]]
        # Electromagnetic torque at the wheel (N m): what the motor does, not friction.
        joints.effort = [float(i) * kt * gear for i in sim.motors.current[robot]]
        for name, angle in sim.joint_states(robot):
            joints.name.append(name)
            joints.position.append(angle)
            joints.velocity.append(0.0)
            joints.effort.append(0.0)
        return joints
