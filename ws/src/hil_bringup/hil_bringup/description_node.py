"""``robot_description``: the robot's URDF on a latched topic, and its transforms.

Publishes the URDF (the ``urdf`` file's, else the one generated from the robot
profile's model, :func:`hil_sim.core.robot_urdf.robot_urdf`, else the demo robot's) on
``robot_description`` (transient local, like robot_state_publisher), the fixed joints
once on ``/tf_static``, and the moving joints' transforms (wheels, servos) on ``/tf``
from ``joint_states``, so rviz shows the robot without robot_state_publisher (which is
not on PyPI). ``frame_prefix`` names the frames of one robot among several
(``robot_0/``): every robot's transforms go to the one ``/tf`` and ``/tf_static``, as
robot_state_publisher's ``frame_prefix`` does in multi-robot setups (a graph's
``namespace`` remaps both into it). With ``prefixes`` one node describes several robots
of one profile (the simulator's robots without a chain): each robot's topics are under
its prefix (``robot_2/``) and its frames prefixed by it; it takes their joint states
only while somebody listens to ``/tf``. In one process the simulator hands a chain's
description the joint states by call (:attr:`DescriptionNode.joint_states`). It has no
thread and nothing to step: a :class:`~hil_common.core.stepping.Stepped` part whose
work is all in callbacks.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from geometry_msgs.msg import TransformStamped
from rclpy.event_handler import PublisherEventCallbacks
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
    ParamSpec(
        "prefixes",
        [],
        "Robots this node describes, by prefix (robot_2/): each one's topics under it and its "
        "frames prefixed by it; empty: one robot, its topics in the node's namespace, its frames "
        "prefixed by frame_prefix.",
    ),
)
#: Seconds (of the node's clock) between looks at whether somebody listens to /tf (several robots).
LISTEN_CHECK_S = 0.5

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
        prefixes = params.as_strings("prefixes")
        #: (topic namespace, frame prefix) of each robot described.
        self.robots = [(p, p) for p in prefixes] if prefixes else [("", self.prefix)]
        all_joints = joints(self.urdf, source=path)
        self.moving = {j.name: j for j in all_joints if not j.fixed}
        fixed = [j for j in all_joints if j.fixed]
        static = self.create_publisher(TFMessage, "/tf_static", STATIC_QOS)
        # A swarm's many publishers without rclpy's QoS event handlers, as the simulator's
        # (hil_sim.sim_topics.RobotTopics): each one costs every wake of the executor.
        events = PublisherEventCallbacks(use_default_callbacks=False) if prefixes else None
        for topics, _ in self.robots:
            self.create_publisher(
                String, f"{topics}robot_description", qos.LATCHED, event_callbacks=events
            ).publish(String(data=self.urdf))
        static.publish(
            TFMessage(transforms=[self.transform(j, 0.0, frames=f) for _, f in self.robots for j in fixed])
        )
        self.tf = self.create_publisher(TFMessage, "/tf", qos.PUBLISHER)
        self._joint_states: list[Any] = []
        self._listen_check: Any = None
        #: Per robot described (``prefixes``' order): its joint states by call (from the
        #: simulator, which sends them while /tf is watched). Once one is connected the
        #: subscriptions and the look for /tf listeners go, so the node has no callback
        #: left for an executor to serve.
        self.joint_states: list[InPort[[JointState]]] = [
            InPort(partial(self.on_joint_states, frames=frames), on_connect=self._by_call)
            for _, frames in self.robots
        ]
        if prefixes:  # a swarm's robots: their joint states only while /tf is watched
            self._listen_check = self.create_timer(LISTEN_CHECK_S, self.follow_listeners)
        else:
            self._subscribe()
        self.get_logger().info(
            f"publishing {path}: {len(all_joints)} joints, {len(self.moving)} moving"
            + (f", for {len(prefixes)} robots" if prefixes else "")
        )

    def _subscribe(self) -> None:
        self._joint_states = [
            self.create_subscription(
                JointState,
                f"{topics}joint_states",
                lambda m, f=frames: self.on_joint_states(m, f),
                qos.SENSOR,
            )
            for topics, frames in self.robots
        ]

    def follow_listeners(self) -> None:
        """Take the robots' joint states while somebody listens to /tf, and only then."""
        listened = self.tf.get_subscription_count() > 0
        if listened and not self._joint_states:
            self._subscribe()
        elif not listened and self._joint_states:
            for subscription in self._joint_states:
                self.destroy_subscription(subscription)
            self._joint_states = []

    def transform(
        self, joint: Joint, position: float, stamp: object = None, *, frames: str | None = None
    ) -> TransformStamped:
        """The transform of ``joint`` at ``position`` (``frames``: the frame prefix; None: the node's)."""
        prefix = self.prefix if frames is None else frames
        transform = TransformStamped()
        transform.header.stamp = stamp if stamp is not None else self.get_clock().now().to_msg()
        transform.header.frame_id = prefix + joint.parent
        transform.child_frame_id = prefix + joint.child
        translation = transform.transform.translation
        translation.x, translation.y, translation.z = joint.xyz
        rotation = transform.transform.rotation
        rotation.x, rotation.y, rotation.z, rotation.w = joint.rotation_at(position)
        return transform

    def on_joint_states(self, message: JointState, frames: str | None = None) -> None:
        """Wheel transforms from the wheel angles (``frames``: the robot's frame prefix; None: the node's)."""
        if not self.tf.get_subscription_count():
            return  # nobody to send them to (it is asked anew each time: a viewer may join)
        transforms = [
            self.transform(self.moving[name], position, message.header.stamp, frames=frames)
            for name, position in zip(message.name, message.position, strict=False)
            if name in self.moving
        ]
        if transforms:
            self.tf.publish(TFMessage(transforms=transforms))

    def _by_call(self) -> None:
        if self._listen_check is not None:
            self.destroy_timer(self._listen_check)
            self._listen_check = None
        for subscription in self._joint_states:
            self.destroy_subscription(subscription)
        self._joint_states = []

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
