"""What every HIL node's ``main()`` and diagnostics share.

The nodes each run a thread of their own beside the rclpy executor (the loops keep
their own deadlines), so they all start, spin, stop and report the same way:

* :func:`run_node`: ``rclpy.init``, build the node, ``start()`` its thread, spin until
  SIGINT/SIGTERM, then ``stop()``, destroy and ``rclpy.try_shutdown()`` (``with
  rclpy.init()`` is not used: it breaks on Jazzy). A configuration error exits 2 with
  the message on stderr; a node whose thread failed (``failure`` set) exits 1; a
  signal, at any moment, exits 0. The signals are the process's own
  (:mod:`hil_common.core.shutdown`), not rclpy's: a handler only notes the request,
  the main thread spins in short slices and looks at it, so nothing is interrupted
  half way and a second signal changes nothing. Fast DDS segments left by killed
  processes are removed first (:mod:`hil_common.core.leftovers`).
* :func:`node_thread`: the worker thread, whose unexpected exception is logged as
  fatal, kept as the node's ``failure`` and shuts the node's context down, so the
  process exits 1 instead of running on without its loop.
* :func:`diagnostic_array`: one stamped DiagnosticArray with one status.
* :data:`CLOCK_TIMEOUT` and :func:`sim_clock_of`: a node on ``use_sim_time`` watches
  its simulated clock (:mod:`hil_common.core.clock_watch`) and reports a clock that
  stopped (the world is gone) as an ERROR in its diagnostics.
* :class:`SharedClock`: the ROS clocks of one process's nodes driven as one (the
  one-process runner): from one ``/clock`` subscription, or set by call in lockstep.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import rclpy
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import ROSClock
from rclpy.clock_type import ClockType
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rclpy.subscription import Subscription
from rclpy.time import Time as RosTime
from rclpy.time_source import TimeSource
from rosgraph_msgs.msg import Clock

from hil_common.core.clock_watch import ClockWatch
from hil_common.core.leftovers import remove_dead_dds_segments
from hil_common.core.param_spec import ParamSpec
from hil_common.core.shutdown import deferred_signals, shutdown_signals

#: Longest the main thread spins before it looks at the stop request again (a signal
#: handler runs only between Python bytecodes, not inside the executor's wait).
SPIN_SLICE_S = 0.05

#: The parameter of the nodes that watch their simulated clock (robot side: MCUs, bridge, loop).
CLOCK_TIMEOUT = ParamSpec(
    "clock_timeout",
    1.0,
    "With use_sim_time: wall seconds without /clock progress before the simulated clock counts as"
    " stopped (the world is gone): an ERROR in diagnostics, and the control loop stops the motors.",
    min=0.05,
    max=3600.0,
)


class ThreadedNode(Protocol):
    """A node with a worker thread."""

    def start(self) -> None:
        """Start the worker thread."""

    def stop(self) -> None:
        """Stop the worker thread and release what it holds."""

    def destroy_node(self) -> Any:
        """Rclpy's Node.destroy_node."""


def run_node(
    factory: Callable[[], ThreadedNode],
    *,
    name: str,
    config_errors: tuple[type[Exception], ...],
    args: list[str] | None = None,
) -> int:
    """Run one node until SIGINT/SIGTERM or its thread fails; returns the exit status."""
    signals = shutdown_signals()  # a console_main entry installed them before the imports
    remove_dead_dds_segments()
    if signals.requested:
        return 0
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node: ThreadedNode | None = None
    executor: SingleThreadedExecutor | None = None
    try:
        node = factory()
        # A signal during construction is seen here: the node never starts.
        if not signals.requested:
            node.start()
            executor = SingleThreadedExecutor()
            executor.add_node(node)  # type: ignore[arg-type]
            # A failed node thread shuts the context down (node_thread).
            while not signals.requested and rclpy.ok():
                executor.spin_once(timeout_sec=SPIN_SLICE_S)
    except config_errors as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    except ExternalShutdownException:
        pass
    finally:
        with deferred_signals():
            if executor is not None:
                executor.shutdown(timeout_sec=1.0)
            if node is not None:
                node.stop()
                node.destroy_node()
            rclpy.try_shutdown()
    return 1 if getattr(node, "failure", None) is not None else 0


def node_thread(
    node: Node, body: Callable[[], None], *, name: str, stopping: threading.Event
) -> threading.Thread:
    """A daemon thread running ``body`` for ``node`` (not started).

    An exception while ``stopping`` is clear and the context is up is a failure:
    logged, stored as ``node.failure`` and the context shut down. During shutdown
    (``stop()`` set ``stopping``, or the context went down) it is expected and dropped.
    """

    def guarded() -> None:
        try:
            body()
        except Exception as exc:
            if stopping.is_set() or not node.context.ok():
                return
            node.failure = exc  # type: ignore[attr-defined]
            node.get_logger().fatal(f"{name} thread stopped: {type(exc).__name__}: {exc}")
            node.context.try_shutdown()

    node.failure = None  # type: ignore[attr-defined]
    return threading.Thread(target=guarded, name=name, daemon=True)


def can_take(subscription: Subscription) -> bool:
    """Whether :func:`take` works with this rclpy (it reaches into rclpy's subscription handle)."""
    return callable(getattr(subscription.handle, "take_message", None))


def take(subscription: Subscription) -> Any | None:
    """The next message waiting on ``subscription`` (bytes for a raw one), taken now; None if none waits.

    What an executor does after its wait, without the wait and without a callback: a
    subscription read this way wakes nobody when a message arrives (its reader keeps
    the newest ``depth``). rclpy has no public take; check :func:`can_take` first.
    """
    with subscription.handle:
        info = subscription.handle.take_message(subscription.msg_type, subscription.raw)
    return None if info is None else info[0]


def diagnostic_array(
    node: Node,
    *,
    name: str,
    level: bytes,
    message: str,
    values: Mapping[str, object],
    hardware_id: str = "",
    stamp: Time | None = None,
) -> DiagnosticArray:
    """A DiagnosticArray holding one status named ``<node>: <name>``, stamped now (or ``stamp``).

    ``<node>`` is the node's full name without its leading slash (``robot_1/control_loop``):
    every node of a graph publishes on the one ``/diagnostics``, and the name says whose
    robot a status is (rqt's monitors show the namespaces as a tree).
    """
    array = DiagnosticArray(
        status=[
            DiagnosticStatus(
                level=level,
                name=f"{node.get_fully_qualified_name().lstrip('/')}: {name}",
                message=message,
                hardware_id=hardware_id,
                values=[KeyValue(key=key, value=str(value)) for key, value in values.items()],
            )
        ]
    )
    array.header.stamp = stamp if stamp is not None else node.get_clock().now().to_msg()
    return array


class SimClock:
    """A node's simulated clock (``use_sim_time``), read as it works and watched for progress."""

    def __init__(self, node: Node, timeout: float) -> None:
        self._clock = node.get_clock()
        #: The readings against the wall clock.
        self.watch = ClockWatch(timeout, start=time.monotonic())

    def reading(self) -> float:
        """The simulated time now, s (0 before the first ``/clock``)."""
        return self._clock.now().nanoseconds * 1e-9

    def stopped(self) -> str | None:
        """Read the clock: None while it moves, else what is wrong, for diagnostics."""
        now = time.monotonic()
        self.watch.observe(self.reading(), now)
        return self.watch.describe(now) if self.watch.stalled(now) else None


def sim_clock_of(node: Node, timeout: float) -> SimClock | None:
    """``node``'s :class:`SimClock` if it is on ``use_sim_time``, else None (nothing to watch)."""
    return SimClock(node, timeout) if node.get_parameter("use_sim_time").value else None


#: The topic of the simulated time (rclpy's TimeSource subscribes to it on ``use_sim_time``).
CLOCK_TOPIC = "/clock"


class SharedClock:
    """The ROS clocks of one process's nodes, driven as one.

    rclpy gives each node on ``use_sim_time`` a ``/clock`` subscription of its own: in
    one process that is one callback per node every simulator period, and in lockstep
    a stamp that depends on when DDS delivered ``/clock``. A clock taken here
    (:meth:`take`) is set with the others instead: from one ``/clock`` subscription
    (:meth:`subscribe`, real time) or by call (:meth:`set`, lockstep, the simulated
    time of the period). Taking a node's clock destroys rclpy's ``/clock`` subscription
    of the node (the one whose callback is its TimeSource's; a recorder's own stays)
    through the node's public API; the clock stays on ROS time (the node keeps its
    ``use_sim_time`` as declared). Only rclpy's public API is used.
    """

    def __init__(self) -> None:
        self._clocks: list[ROSClock] = []
        self._subscription: Subscription | None = None

    def take(self, node: Node) -> None:
        """``node``'s ROS clock follows this one from now on; its own ``/clock`` subscription goes.

        A node off ``use_sim_time`` keeps its system clock (nothing to take).
        """
        clock = node.get_clock()
        if not isinstance(clock, ROSClock) or not clock.ros_time_is_active:
            return
        for subscription in list(node.subscriptions):
            # rclpy's own (its TimeSource's callback); a recorder's /clock subscription stays.
            if isinstance(getattr(subscription.callback, "__self__", None), TimeSource):
                node.destroy_subscription(subscription)
        if clock not in self._clocks:
            self._clocks.append(clock)

    def release(self, node: Node) -> None:
        """Stop setting ``node``'s clock (a node taken out of the run)."""
        clock = node.get_clock()
        if clock in self._clocks:
            self._clocks.remove(clock)

    @property
    def subscribed(self) -> bool:
        """Whether the clocks follow ``/clock`` (:meth:`subscribe`)."""
        return self._subscription is not None

    def subscribe(self, node: Node) -> None:
        """Real time: set every clock taken from one ``/clock`` subscription, made on ``node``."""
        if self._subscription is None:
            profile = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)  # as rclpy's own
            self._subscription = node.create_subscription(Clock, CLOCK_TOPIC, self._on_clock, profile)

    def _on_clock(self, message: Clock) -> None:
        time = RosTime.from_msg(message.clock)
        for clock in self._clocks:
            clock.set_ros_time_override(time)

    def set(self, seconds: float) -> None:
        """Lockstep: every clock taken reads ``seconds`` (simulated time) from now on."""
        time = RosTime(nanoseconds=round(seconds * 1e9), clock_type=ClockType.ROS_TIME)
        for clock in self._clocks:
            clock.set_ros_time_override(time)
