"""``live_view``: the run live in the Foxglove app or Lichtblick, no rviz needed (Foxglove WebSocket).

Serves every topic of the graph over the Foxglove WebSocket protocol with the
``foxglove-sdk`` package, at ``ws://<host>:<port>`` (127.0.0.1:8765 by default; only
this machine). Each topic is a channel of its own: its messages as they are on the
wire (``cdr``) with the message definition a bag embeds (``ros2msg``, from
:func:`hil_bringup.core.bag.typestore`), so the app decodes them as it decodes a
recorded run. Topics are advertised as they appear (every ``discovery_period``) and
subscribed in ROS only while an app subscribes to them: a run nobody watches pays
nothing, and a watched one only for what is watched.

The scene is the simulator's ``hil/scene`` (visualization_msgs/MarkerArray,
:mod:`hil_sim.core.scene`: arena, boards, robots, their rangers' beams, paths, LEDs,
MCU pins), which the app's 3D panel draws; the simulator paces it (``scene_period``,
``scene_max_rate``). Every other channel passes at most ``max_rate`` messages per
wall second (a lockstep run publishes far faster than anyone watches; the rest are
dropped here). Messages are stamped with the graph's clock, simulated time, which
the server also gives the app as its time (``time`` capability).

A port already taken or an address that cannot be had is a configuration error
naming it (exit 2).
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.subscription import Subscription

from hil_bringup.core.bag import typestore
from hil_bringup.core.live import RateGate, live_url
from hil_bringup.errors import HilBringupError
from hil_bringup.recorder_node import message_class
from hil_common import qos
from hil_common.core.param_spec import ParamSpec
from hil_common.errors import HilError
from hil_common.node_runtime import run_node
from hil_common.parameters import declare_parameters
from hil_sim.sim_markers import SCENE_TOPIC

if TYPE_CHECKING:
    import foxglove

NODE_NAME = "live_view"
#: What the server calls itself to the apps.
SERVER_NAME = "hil"

PARAMETERS = (
    ParamSpec(
        "host",
        "127.0.0.1",
        "Address the WebSocket server listens on: 127.0.0.1 this machine only, 0.0.0.0 every interface.",
    ),
    ParamSpec("port", 8765, "WebSocket port; 0: any free port (logged).", min=0, max=65535),
    ParamSpec(
        "max_rate",
        30.0,
        "Most messages per wall second on each channel but the scene (paced by the simulator); 0: all.",
        min=0.0,
        max=10000.0,
    ),
    ParamSpec(
        "discovery_period",
        0.5,
        "Wall seconds between looks for new topics and subscribers.",
        min=0.05,
        max=60.0,
    ),
)

#: Streams: newest wins. Latched state (robot_description, /tf_static, world/markers):
#: transient local, so an app that subscribes late still gets it.
_STREAM = qos.SENSOR
_LATCHED = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=10,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)


def _foxglove() -> Any:
    """The foxglove SDK module, or a configuration error saying how to get it."""
    try:
        import foxglove  # noqa: PLC0415 - only the live view needs it
    except ImportError:
        raise HilBringupError(
            "live view: the foxglove-sdk package is not installed (pip install foxglove-sdk)"
        ) from None
    return foxglove


class LiveViewNode(Node):
    """Serves the graph's topics to Foxglove WebSocket clients (module docstring)."""

    def __init__(self, **node_options: Any) -> None:
        super().__init__(NODE_NAME, **node_options)
        params = declare_parameters(self, PARAMETERS)
        self._fox = _foxglove()
        self._store = typestore()
        self._gate = RateGate(params.as_float("max_rate"))
        self._scene = self.resolve_topic_name(SCENE_TOPIC)
        host, port = params.as_str("host"), params.as_int("port")
        self._sdk_context: foxglove.Context = self._fox.Context()
        try:
            self.server: foxglove.WebSocketServer = self._fox.start_server(
                name=SERVER_NAME,
                host=host,
                port=port,
                capabilities=[self._fox.Capability.Time],
                context=self._sdk_context,
            )
        except RuntimeError as exc:
            reason = str(exc).removeprefix("FoxgloveError: ")
            raise HilBringupError(f"live view at {host}:{port}: {reason}") from None
        #: Where an app connects (the port the server got, with port 0).
        self.url = live_url(host, self.server.port)
        self._served: dict[str, foxglove.Channel] = {}
        self._watched: dict[str, Subscription] = {}
        self._skipped: set[str] = set()
        self._stopped = False
        # On the wall clock: in lockstep the graph's clock runs far ahead of the apps.
        self.create_timer(
            params.as_float("discovery_period"), self.refresh, clock=Clock(clock_type=ClockType.STEADY_TIME)
        )
        self.refresh()
        self.get_logger().info(f"live view on {self.url} (Foxglove app or Lichtblick: Foxglove WebSocket)")

    @property
    def channels(self) -> list[str]:
        """The topics advertised so far."""
        return list(self._served)

    def refresh(self) -> None:
        """Advertise new topics, follow the apps' subscriptions, tell the apps the time."""
        if self._stopped:
            return
        self.discover()
        for topic, channel in self._served.items():
            wanted, subscription = channel.has_sinks(), self._watched.get(topic)
            if wanted and subscription is None:
                self._subscribe(topic)
            elif not wanted and subscription is not None:
                self.destroy_subscription(self._watched.pop(topic))
        self.server.broadcast_time(self.get_clock().now().nanoseconds)

    def discover(self) -> None:
        """A channel for each topic that appeared since the last look (whose type a bag knows)."""
        for topic, types in self.get_topic_names_and_types():
            if topic in self._served or topic in self._skipped:
                continue
            msgtype = types[0]
            if msgtype not in self._store.types:
                self._skipped.add(topic)
                self.get_logger().warning(f"not serving {topic}: no definition of {msgtype}")
                continue
            definition, _ = self._store.generate_msgdef(msgtype, ros_version=2)
            self._served[topic] = self._fox.Channel(
                topic,
                schema=self._fox.Schema(name=msgtype, encoding="ros2msg", data=definition.encode()),
                message_encoding="cdr",
                context=self._sdk_context,
            )

    def _subscribe(self, topic: str) -> None:
        publishers = self.get_publishers_info_by_topic(topic)
        latched = any(info.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for info in publishers)
        msgtype = self._served[topic].schema_name()
        self._watched[topic] = self.create_subscription(
            message_class(msgtype),
            topic,
            lambda data, topic=topic: self.on_message(topic, data),
            _LATCHED if latched else _STREAM,
            raw=True,
        )

    def on_message(self, topic: str, data: bytes) -> None:
        """Pass one serialized message on to the apps (unless its channel is over its rate)."""
        if topic != self._scene and not self._gate.allow(topic, time.monotonic()):
            return
        channel = self._served.get(topic)
        if channel is not None:
            channel.log(data, log_time=self.get_clock().now().nanoseconds)

    def start(self) -> None:
        """Nothing to start: the server runs from construction, messages come in callbacks."""

    def stop(self) -> None:
        """Close the channels and stop the server (again: nothing)."""
        if self._stopped:
            return
        self._stopped = True
        for channel in self._served.values():
            channel.close()
        self.server.stop()

    def destroy_node(self) -> None:
        """Stop serving (a node destroyed unstarted too), then destroy the node."""
        self.stop()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    """Serve until shut down; exit 2 on a bad configuration (port taken, SDK missing)."""
    return run_node(LiveViewNode, name=NODE_NAME, config_errors=(HilError,), args=args)


if __name__ == "__main__":
    sys.exit(main())
