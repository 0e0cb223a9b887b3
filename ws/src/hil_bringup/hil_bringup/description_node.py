"""``robot_description``: the robot's URDF on a latched topic, and its transforms.

Publishes the URDF (the ``urdf`` file's, else the one generated from the robot
profile's model, :func:`hil_sim.core.robot_urdf.robot_urdf`, else the demo robot's) on
``robot_description`` (transient local, like robot_state_publisher), the fixed joints
once on ``/tf_static``, and the moving joints' transforms (wheels, servos) on ``/tf``
from ``joint_states``, so rviz shows the robot without robot_state_publisher (which is
not on PyPI). ``frame_prefix`` names the frames of
one robot among several (``robot_0/``). In one process the simulator hands it the
joint states by call (:attr:`DescriptionNode.joint_states`). It has no thread and
nothing to step: a :class:`~hil_common.core.stepping.Stepped` part whose work is all
in callbacks.
"""

from __future__ import annotations

from typing import Any

from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from hil_common import qos
from hil_common.core.param_spec import ParamSpec
from hil_common.core.paths import share_dir
from hil_common.core.ports import InPort
from hil_common.core.stepping import SimulatedClock
from hil_common.errors import HilError
from hil_common.node_runtime import run_node
from hil_common.parameters import declare_parameters
from hil_devices.core.profile import load_profile
from hil_sim.core.robot_model import robot_model_from_profile
from hil_sim.core.robot_urdf import robot_urdf
from hil_sim.core.urdf import Joint, joints, load_urdf

NODE_NAME = "robot_description"

PARAMETERS = (
    ParamSpec("urdf", "", "URDF file; empty: generated from the robot profile's model."),
    ParamSpec(
        "robot",
        "",
        "Robot profile (a shipped robot's name, a robot folder or its robot.yaml) whose URDF is"
        " generated; empty: the demo robot's (urdf/hil_robot.urdf of hil_sim).",
    ),
    ParamSpec("frame_prefix", "", "Prefix of every frame of this robot, e.g. robot_0/."),
)

#: /tf_static is latched for late joiners (tf2's own convention).
STATIC_QOS = QoSProfile(
    depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


class DescriptionNode(Node):
    """Publishes the URDF and the transforms of its joints."""

    def __init__(self, **node_options: Any) -> None:
        super().__init__(NODE_NAME, **node_options)
        params = declare_parameters(self, PARAMETERS)
        path, robot = params.as_str("urdf"), params.as_str("robot")
        if path or not robot:
            path = path or str(share_dir("hil_sim") / "urdf" / "hil_robot.urdf")
            self.urdf = load_urdf(path)
        else:
            profile = load_profile(robot)
            path = f"{profile.source} (generated)"
            self.urdf = robot_urdf(robot_model_from_profile(profile))
        self.prefix = params.as_str("frame_prefix")
        all_joints = joints(self.urdf, source=path)
        self.moving = {j.name: j for j in all_joints if not j.fixed}
        self.create_publisher(String, "robot_description", qos.LATCHED).publish(String(data=self.urdf))
        static = self.create_publisher(TFMessage, "/tf_static", STATIC_QOS)
        static.publish(TFMessage(transforms=[self.transform(j, 0.0) for j in all_joints if j.fixed]))
        self.tf = self.create_publisher(TFMessage, "tf", qos.PUBLISHER)
        self._joint_states = self.create_subscription(
            JointState, "joint_states", self.on_joint_states, qos.SENSOR
        )
        #: Joint states by call (the simulator's robot port); the subscription goes once
        #: connected, so the node has no callback left for an executor to serve.
        self.joint_states: InPort[[JointState]] = InPort(
            self.on_joint_states, on_connect=lambda: self.destroy_subscription(self._joint_states)
        )
        self.get_logger().info(f"publishing {path}: {len(all_joints)} joints, {len(self.moving)} moving")

    def transform(self, joint: Joint, position: float, stamp: object = None) -> TransformStamped:
        """The transform of ``joint`` at ``position``."""
        transform = TransformStamped()
        transform.header.stamp = stamp if stamp is not None else self.get_clock().now().to_msg()
        transform.header.frame_id = self.prefix + joint.parent
        transform.child_frame_id = self.prefix + joint.child
        translation = transform.transform.translation
        translation.x, translation.y, translation.z = joint.xyz
        rotation = transform.transform.rotation
        rotation.x, rotation.y, rotation.z, rotation.w = joint.rotation_at(position)
        return transform

    def on_joint_states(self, message: JointState) -> None:
        """Wheel transforms from the wheel angles."""
        if not self.tf.get_subscription_count():
            return  # nobody to send them to (it is asked anew each time: a viewer may join)
        transforms = [
            self.transform(self.moving[name], position, message.header.stamp)
            for name, position in zip(message.name, message.position, strict=False)
            if name in self.moving
        ]
        if transforms:
            self.tf.publish(TFMessage(transforms=transforms))

    # It has no thread of its own and nothing to step.
    def start(self) -> None:
        """Nothing to start: everything happens in callbacks."""

    def stop(self) -> None:
        """Nothing to stop."""

    def follow(self, clock: SimulatedClock) -> None:
        """Nothing runs on a clock of its own (stamps come with the joint states)."""

    def advance_to(self, t: float) -> None:
        """Nothing is ever due."""


def main(args: list[str] | None = None) -> int:
    """Publish the description until shut down."""
    return run_node(DescriptionNode, name=NODE_NAME, config_errors=(HilError,), args=args)
