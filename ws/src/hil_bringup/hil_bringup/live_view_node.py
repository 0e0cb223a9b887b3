"""``live_view``: the run live in the Foxglove app or Lichtblick, no rviz needed (Foxglove WebSocket).

Serves every topic of the graph over the Foxglove WebSocket protocol with the
``foxglove-sdk`` package, at ``ws://<host>:<port>`` (127.0.0.1:8765 by default; only
this machine). Each topic is a channel of its own: its messages as they are on the
wire (``cdr``) with the message definition a bag embeds (``ros2msg``, from
:func:`hil_bringup.core.bag.typestore`), so the app decodes them as it decodes a
recorded run. Topics are advertised as they appear (every ``discovery_period``) and
subscribed in ROS only while an app subscribes to them: a run nobody watches pays
nothing, and a watched one only for what is watched.

A watched topic is looked at ``look_rate`` times a wall second, and each look passes
on what waits, at most the newest :data:`DEPTH` messages (a latched topic's
:data:`LATCHED_DEPTH`). The subscriptions belong to a second node that no executor
serves (``live_view_taps``), and a look takes their messages directly
(:func:`hil_common.node_runtime.take`): a message arriving wakes nobody. A lockstep
run publishes ``/tf`` and ``odom`` hundreds of times a wall second; a callback for
each, to drop most of them, cost it a third of its speed. (Where rclpy cannot take
so, the live view's own callbacks pass at most ``look_rate`` messages a second on
each topic, :class:`~hil_bringup.core.live.RateGate`.)

The scene is the simulator's ``hil/scene`` (visualization_msgs/MarkerArray,
:mod:`hil_sim.core.scene`: arena, boards, robots, their rangers' beams, paths, LEDs,
MCU pins), which the app's 3D panel draws; the simulator paces it (``scene_period``,
``scene_max_rate``). Messages are stamped with the graph's clock, simulated time,
which the server also gives the app as its time (``time`` capability).

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
from hil_common.core.param_spec import ParamSpec
from hil_common.core.stepping import SimulatedClock
from hil_common.errors import HilError
from hil_common.node_runtime import can_take, run_node, take
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
        "look_rate",
        20.0,
        "Looks per wall second at each watched topic; each passes on the newest messages waiting.",
        min=1.0,
        max=1000.0,
    ),
    ParamSpec(
        "discovery_period",
        0.5,
        "Wall seconds between looks for new topics and subscribers.",
        min=0.05,
        max=60.0,
    ),
)

#: Messages of a stream a look passes on at most (the newest); of a latched topic.
DEPTH = 4
LATCHED_DEPTH = 10
#: Streams: the newest wins. Latched state (robot_description, /tf_static, world/markers):
#: transient local, so an app that subscribes late still gets it.
_STREAM = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=DEPTH, reliability=ReliabilityPolicy.BEST_EFFORT)
_LATCHED = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=LATCHED_DEPTH,
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
        look_rate = params.as_float("look_rate")
        self._gate = RateGate(look_rate)
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
        #: Subscriptions no executor serves, read by take() (None: callbacks, see the module text).
        self._taps: Node | None = Node(
            f"{NODE_NAME}_taps",
            context=self.context,
            namespace=self.get_namespace(),
            start_parameter_services=False,  # nobody would serve them
            enable_rosout=False,
        )
        self._served: dict[str, foxglove.Channel] = {}
        #: Topic -> (the node its subscription belongs to, the subscription).
        self._watched: dict[str, tuple[Node, Subscription]] = {}
        self._skipped: set[str] = set()
        self._stopped = False
        # On the wall clock: in lockstep the graph's clock runs far ahead of the apps.
        wall = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(params.as_float("discovery_period"), self.refresh, clock=wall)
        #: Looks at the watched topics; off while nothing is watched.
        self._look_timer = self.create_timer(1.0 / look_rate, self.look, clock=wall, autostart=False)
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
            wanted, watched = channel.has_sinks(), topic in self._watched
            if wanted and not watched:
                self._subscribe(topic)
            elif watched and not wanted:
                owner, subscription = self._watched.pop(topic)
                owner.destroy_subscription(subscription)
        if self._watched and self._taps is not None:
            if self._look_timer.is_canceled():
                self._look_timer.reset()
        elif not self._look_timer.is_canceled():
            self._look_timer.cancel()
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
        kind, profile = message_class(self._served[topic].schema_name()), _LATCHED if latched else _STREAM
        if self._taps is not None:
            subscription = self._taps.create_subscription(kind, topic, lambda _: None, profile, raw=True)
            if can_take(subscription):
                self._watched[topic] = (self._taps, subscription)
                return
            self._taps.destroy_subscription(subscription)
            self._taps.destroy_node()
            self._taps = None
            self.get_logger().warning(
                "this rclpy cannot take messages without an executor: callbacks instead"
            )
        self._watched[topic] = (
            self,
            self.create_subscription(
                kind, topic, lambda data, topic=topic: self.on_message(topic, data), profile, raw=True
            ),
        )

    def look(self) -> None:
        """Pass on what waits on each watched topic (at most its depth, the newest)."""
        if self._stopped or self._taps is None:
            return
        now = self.get_clock().now().nanoseconds
        for topic, (_, subscription) in self._watched.items():
            channel = self._served[topic]
            for _ in range(subscription.qos_profile.depth):
                data = take(subscription)
                if data is None:
                    break
                channel.log(data, log_time=now)

    def on_message(self, topic: str, data: bytes) -> None:
        """Without taps: pass one message on to the apps, unless its channel is over its rate."""
        if topic != self._scene and not self._gate.allow(topic, time.monotonic()):
            return
        channel = self._served.get(topic)
        if channel is not None:
            channel.log(data, log_time=self.get_clock().now().nanoseconds)

    def start(self) -> None:
        """Nothing to start: the server runs from construction, messages come in callbacks."""

    def follow(self, clock: SimulatedClock) -> None:
        """Nothing runs on a clock of its own: it looks on its own executor's timer."""

    def advance_to(self, t: float) -> None:
        """Nothing is due: what it passes on never waits for a lockstep period."""

    def stop(self) -> None:
        """Close the channels and stop the server (again: nothing)."""
        if self._stopped:
            return
        self._stopped = True
        for channel in self._served.values():
            channel.close()
        self.server.stop()

    def destroy_node(self) -> None:
        """Stop serving (a node destroyed unstarted too), then destroy the node and its taps."""
        self.stop()
        if self._taps is not None:
            self._taps.destroy_node()
            self._taps = None
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    """Serve until shut down; exit 2 on a bad configuration (port taken, SDK missing)."""
    return run_node(LiveViewNode, name=NODE_NAME, config_errors=(HilError,), args=args)


if __name__ == "__main__":
    sys.exit(main())
