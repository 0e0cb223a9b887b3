"""``recorder``: every topic of the run, and the links' raw traffic, into a rosbag2 (MCAP).

Topics are discovered as they appear (every ``discovery_period``) and recorded raw,
without deserializing, stamped with their receive time (simulated time under
``use_sim_time``). Latched topics (robot_description, /tf_static, world/markers) are
subscribed transient-local so their one message is not missed; everything else
best effort, which takes messages from reliable and best-effort publishers alike.
The link owners publish the wire traffic on ``hil/wire/<link>/<tx|rx>`` once someone
listens, so it lands in the bag too. ``ros2 bag info`` and ``ros2 bag play`` read
the result. Each topic's offered QoS profiles go into the bag, as rosbag2's recorder
writes them: those its publishers offer (as DDS reports them), or, for a topic with
no publisher to ask, :data:`hil_common.qos.PUBLISHER`, what every publisher of the
project offers; ``ros2 bag play`` then plays a latched topic latched again.

In the one-process runner the recorder can be fed by call instead (:meth:`record`):
the control loop hands it every operator input (``cmd_vel``, ``robotCommand``) as it
takes it. A second DDS reader of those topics could take a message in another period
than the loop, or miss the first ones before it discovered the topic, which made a
replay of a loaded run diverge. (In lockstep the runner sets every node's ROS clock to
the simulated time, so the stamps are simulated time too, not ``/clock`` through DDS.)
"""

from __future__ import annotations

import importlib
from typing import Any

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from rclpy.subscription import Subscription
from rosbags.interfaces import Qos

from hil_bringup.core.bag import BagWriter, offered_profile
from hil_bringup.errors import HilBringupError
from hil_common import qos
from hil_common.core.param_spec import ParamSpec
from hil_common.core.stepping import SimulatedClock
from hil_common.errors import HilError
from hil_common.node_runtime import run_node
from hil_common.parameters import declare_parameters

NODE_NAME = "recorder"

PARAMETERS = (
    ParamSpec("path", "", "Folder of the bag to write (must not exist yet)."),
    ParamSpec("discovery_period", 0.5, "Seconds between looks for new topics.", min=0.01, max=60.0),
)

_LIVE = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100, reliability=ReliabilityPolicy.BEST_EFFORT)
_LATCHED = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=10,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)


def bag_profile(profile: QoSProfile) -> Qos:
    """An rclpy QoS profile as a bag records it."""
    return offered_profile(
        history=int(profile.history),
        depth=profile.depth,
        reliability=int(profile.reliability),
        durability=int(profile.durability),
        deadline_ns=profile.deadline.nanoseconds,
        lifespan_ns=profile.lifespan.nanoseconds,
        liveliness=int(profile.liveliness),
        liveliness_lease_ns=profile.liveliness_lease_duration.nanoseconds,
        avoid_ros_namespace_conventions=profile.avoid_ros_namespace_conventions,
    )


def message_class(msgtype: str) -> Any:
    """The Python class of ``pkg/msg/Name``."""
    package, kind, name = msgtype.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


class RecorderNode(Node):
    """Records what is published, as it is published."""

    def __init__(self, path: str = "", **node_options: Any) -> None:
        super().__init__(NODE_NAME, **node_options)
        params = declare_parameters(self, PARAMETERS)
        target = path or params.as_str("path")
        if not target:
            raise HilBringupError(f"{NODE_NAME}: parameter 'path' is empty")
        self.bag = BagWriter(target)
        self._finished = False
        self.run_options: dict[str, Any] | None = None
        self._subscribed: dict[str, Subscription] = {}
        self._skipped: set[str] = set()
        #: Topics fed by :meth:`record` instead of a subscription.
        self._by_call: set[str] = set()
        #: Each subscribed topic's offered QoS profiles, as its publishers offered them.
        self._offered: dict[str, list[Qos]] = {}
        self.discover()
        self.create_timer(params.as_float("discovery_period"), self.discover)
        self.get_logger().info(f"recording to {target}")

    def discover(self) -> None:
        """Subscribe to topics that appeared since the last look."""
        for topic, types in self.get_topic_names_and_types():
            if topic in self._subscribed or topic in self._skipped or topic in self._by_call:
                continue
            msgtype = types[0]
            if not self.bag.knows(msgtype):
                self._skipped.add(topic)
                self.get_logger().warning(f"not recording {topic}: no definition of {msgtype}")
                continue
            offered = self.offered(topic)
            latched = any(profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for profile in offered)
            self._offered[topic] = [bag_profile(profile) for profile in offered]
            self._subscribed[topic] = self.create_subscription(
                message_class(msgtype),
                topic,
                lambda data, topic=topic, msgtype=msgtype: self.on_message(topic, msgtype, data),
                _LATCHED if latched else _LIVE,
                raw=True,
            )

    def offered(self, topic: str) -> list[QoSProfile]:
        """The QoS profiles ``topic``'s publishers offer; :data:`qos.PUBLISHER` if none is there."""
        return [info.qos_profile for info in self.get_publishers_info_by_topic(topic)] or [qos.PUBLISHER]

    def record_by_call(self, topics: list[str]) -> None:
        """Take ``topics`` (fully qualified) from :meth:`record` only, never from DDS."""
        for topic in topics:
            self._by_call.add(topic)
            subscription = self._subscribed.pop(topic, None)
            if subscription is not None:
                self.destroy_subscription(subscription)

    def record(self, topic: str, message: Any) -> None:
        """Write ``message`` on ``topic`` as taken now by the node that fed it."""
        kind = type(message)
        msgtype = f"{kind.__module__.split('.')[0]}/msg/{kind.__name__}"  # a rosidl class: pkg.msg._name
        offered = () if self.bag.has(topic) else [bag_profile(p) for p in self.offered(topic)]
        stamp = self.get_clock().now().nanoseconds
        self.bag.write(topic, msgtype, stamp, serialize_message(message), offered=offered)

    def on_message(self, topic: str, msgtype: str, data: bytes) -> None:
        """Write one serialized message, stamped now."""
        stamp = self.get_clock().now().nanoseconds
        self.bag.write(topic, msgtype, stamp, data, offered=self._offered.get(topic, ()))

    def start(self) -> None:
        """Nothing to start: recording happens in callbacks."""

    def follow(self, clock: SimulatedClock) -> None:
        """Nothing runs on a clock of its own (the runner sets its ROS clock)."""

    def advance_to(self, t: float) -> None:
        """Nothing is due: recording happens in callbacks and calls."""

    def stop(self) -> None:
        """Finish the bag (again: nothing)."""
        if not self._finished:
            self._finished = True
            self.bag.close(self.run_options)


def main(args: list[str] | None = None) -> int:
    """Record until shut down."""
    return run_node(RecorderNode, name=NODE_NAME, config_errors=(HilError,), args=args)
