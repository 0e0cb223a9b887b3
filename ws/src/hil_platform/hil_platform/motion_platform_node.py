"""``motion_platform``: drives a Stewart motion platform over UDP from the robot's motion.

It subscribes to the simulated robot's ``odom`` (nav_msgs/Odometry, sensor-data QoS),
derives the body-frame acceleration from successive twists
(:class:`~hil_platform.core.motion_cueing.AccelerationEstimator`) and, every
``send_period`` (default 20 ms, 50 Hz) on an absolute-deadline schedule in a thread
of its own, runs the classical washout filter
(:class:`~hil_platform.core.motion_cueing.MotionCueing`) and sends the pose as a DOF
datagram to the platform at ``host:port``. The platform session
(:class:`~hil_platform.core.platform_session.PlatformSession`) engages and starts the
platform first, finds it again when it stops answering (STATUS every
``reply_timeout``), follows its ERROR replies, and parks it when the node shuts down
(waiting up to ``park_timeout``). Without odometry for ``odom_timeout`` the cue
washes out to neutral.

Health goes to ``diagnostics`` (state, datagrams sent/received, errors by code,
timeouts, lost setpoints, round trip) and ``hil/link`` (link "platform"). A bad
parameter exits with status 2 and a message naming it.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from nav_msgs.msg import Odometry
from rclpy.node import Node

from hil_common import qos
from hil_common.core.loop_timing import DeadlineScheduler, LoopStats
from hil_common.core.param_spec import ParamSpec, ParamValues
from hil_common.errors import HilError
from hil_common.node_runtime import diagnostic_array, node_thread, run_node
from hil_common.parameters import declare_parameters
from hil_msgs.msg import LinkStatus
from hil_platform.core.motion_cueing import AccelerationEstimator, Cue, CueingConfig, MotionCueing
from hil_platform.core.motion_platform import Command, ErrorCode, PlatformGeometry
from hil_platform.core.platform_session import PlatformSession
from hil_platform.core.udp_link import Address, UdpLink
from hil_platform.errors import HilPlatformError

NODE_NAME = "motion_platform"
NEUTRAL = (0.0,) * 6

_CUE = CueingConfig()

#: Parameters that are fields of :class:`CueingConfig` (``send_period`` is its ``period``).
_CUEING = (
    ParamSpec(
        "translation_scale",
        _CUE.translation_scale,
        "Fraction of the robot's acceleration given as onset by translation.",
        min=0.0,
        max=10.0,
    ),
    ParamSpec(
        "translation_frequency",
        _CUE.translation_frequency,
        "Natural frequency of the translational high-pass, rad/s.",
        min=0.01,
        max=100.0,
    ),
    ParamSpec(
        "translation_damping",
        _CUE.translation_damping,
        "Damping ratio of that high-pass.",
        min=0.05,
        max=10.0,
    ),
    ParamSpec(
        "translation_washout",
        _CUE.translation_washout,
        "Corner of the extra high-pass that returns the platform to neutral, rad/s.",
        min=0.01,
        max=100.0,
    ),
    ParamSpec(
        "tilt_scale",
        _CUE.tilt_scale,
        "Fraction of a sustained acceleration given as tilt (tilt coordination).",
        min=0.0,
        max=10.0,
    ),
    ParamSpec(
        "tilt_frequency",
        _CUE.tilt_frequency,
        "Natural frequency of the tilt low-pass, rad/s.",
        min=0.01,
        max=100.0,
    ),
    ParamSpec("tilt_damping", _CUE.tilt_damping, "Damping ratio of the tilt low-pass.", min=0.05, max=10.0),
    ParamSpec(
        "tilt_rate_limit",
        _CUE.tilt_rate_limit,
        "Fastest tilt change, rad/s (0.052 = 3 deg/s, about the perception threshold).",
        min=0.0,
        max=10.0,
    ),
    ParamSpec(
        "rotation_scale",
        _CUE.rotation_scale,
        "Fraction of the robot's angular rates given as onset.",
        min=0.0,
        max=10.0,
    ),
    ParamSpec(
        "rotation_frequency",
        _CUE.rotation_frequency,
        "Natural frequency of the rotational high-pass, rad/s.",
        min=0.01,
        max=100.0,
    ),
    ParamSpec(
        "rotation_damping",
        _CUE.rotation_damping,
        "Damping ratio of the rotational high-pass.",
        min=0.05,
        max=10.0,
    ),
    ParamSpec(
        "max_acceleration",
        _CUE.max_acceleration,
        "Accelerations are clipped to this per axis, m/s^2.",
        min=0.1,
        max=1000.0,
    ),
    ParamSpec(
        "max_angular_rate",
        _CUE.max_angular_rate,
        "Angular rates are clipped to this, rad/s.",
        min=0.1,
        max=1000.0,
    ),
    ParamSpec(
        "limit_fraction",
        _CUE.limit_fraction,
        "Fraction of the platform's DOF limits the cue may use.",
        min=0.0,
        max=1.0,
    ),
    ParamSpec(
        "length_margin",
        _CUE.length_margin,
        "Distance kept from the actuators' length limits, m.",
        min=0.0,
        max=0.05,
    ),
)

PARAMETERS = (
    ParamSpec("host", "127.0.0.1", "Host name or IPv4 address of the motion platform."),
    ParamSpec("port", 7400, "UDP port of the motion platform.", min=1, max=65535),
    ParamSpec("local_host", "0.0.0.0", "Local address to bind (0.0.0.0: every interface)."),
    ParamSpec("local_port", 0, "Local UDP port (0: any free port).", min=0, max=65535),
    ParamSpec("send_period", _CUE.period, "Seconds between setpoints (0.02 = 50 Hz).", min=0.005, max=0.1),
    ParamSpec(
        "reply_timeout",
        0.25,
        "Seconds without a reply before a command is retried and the platform counts as silent.",
        min=0.01,
        max=10.0,
    ),
    ParamSpec(
        "park_timeout",
        1.0,
        "Seconds the node waits at shutdown for the platform to park (nodes exit within 2 s).",
        min=0.0,
        max=30.0,
    ),
    ParamSpec(
        "odom_timeout",
        0.5,
        "Seconds without odom before the cue washes out to neutral (and the next twist starts afresh).",
        min=0.01,
        max=60.0,
    ),
    ParamSpec(
        "acceleration_smoothing",
        0.02,
        "Time constant of the low-pass on the acceleration derived from odom, s (0: off).",
        min=0.0,
        max=1.0,
    ),
    ParamSpec("diagnostics_period", 1.0, "Seconds between diagnostics and link status.", min=0.05, max=60.0),
    *_CUEING,
)


def cueing_config(params: ParamValues) -> CueingConfig:
    """The washout filter's tuning from the node's parameters."""
    return CueingConfig(
        period=params.as_float("send_period"), **{spec.name: params.as_float(spec.name) for spec in _CUEING}
    )


def _code_name(code: ErrorCode | int) -> str:
    return code.name if isinstance(code, ErrorCode) else str(code)


def resolve(host: str, port: int) -> Address:
    """The IPv4 address replies come from.

    Raises:
        HilPlatformError: If ``host`` does not resolve, naming the parameter.
    """
    try:
        info = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_DGRAM)
    except (OSError, UnicodeError) as exc:
        raise HilPlatformError(f"{NODE_NAME}: parameter 'host': cannot resolve {host!r}: {exc}") from exc
    address = info[0][4]
    return (str(address[0]), int(address[1]))


class MotionPlatformNode(Node):
    """Odometry in, washout filter, DOF datagrams out to the platform at a fixed rate."""

    def __init__(self, **node_options: Any) -> None:
        super().__init__(NODE_NAME, **node_options)
        params = declare_parameters(self, PARAMETERS)
        self.geometry = PlatformGeometry()
        self.platform = resolve(params.as_str("host"), params.as_int("port"))
        self.period = params.as_float("send_period")
        self.park_timeout = params.as_float("park_timeout")
        self.odom_timeout = params.as_float("odom_timeout")
        self.diagnostics_period = params.as_float("diagnostics_period")
        self.cueing = MotionCueing(self.geometry, cueing_config(params))
        self.session = PlatformSession(self.geometry, reply_timeout=params.as_float("reply_timeout"))
        self.estimator = AccelerationEstimator(
            max_gap=self.odom_timeout, smoothing=params.as_float("acceleration_smoothing")
        )
        self.stats = LoopStats()
        self.odom_received = 0
        self.bad_odom = 0
        self.foreign = 0
        self.last_cue: Cue | None = None
        self._motion_lock = threading.Lock()
        self._acceleration = np.zeros(3)
        self._angular = np.zeros(3)
        self._odom_at: float | None = None
        self._streaming = False
        self._logged_state: str | None = None
        self._errors_reported = 0
        self._next_report = 0.0

        self.diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", qos.PUBLISHER)
        self.link_status = self.create_publisher(LinkStatus, "hil/link", qos.PUBLISHER)
        self._odom = self.create_subscription(Odometry, "odom", self.on_odom, qos.SENSOR)
        # Last, so that nothing after it can fail and leave the socket open.
        self.link = UdpLink((params.as_str("local_host"), params.as_int("local_port")), remote=self.platform)
        self._stop = threading.Event()
        self._stopped = False
        self._thread = node_thread(self, self.run, name="motion-platform", stopping=self._stop)
        host, port = self.platform
        self.get_logger().info(
            f"platform at {host}:{port} (from {self.link.local_address[0]}:{self.link.local_address[1]}), "
            f"setpoints every {self.period * 1000:g} ms"
        )

    def start(self) -> None:
        """Start the setpoint thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop the setpoint thread, park the platform and close the socket (once)."""
        if self._stopped:
            return
        self._stopped = True
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        try:
            self.park()
        finally:
            self.link.close()

    def on_odom(self, message: Odometry) -> None:
        """Take the robot's twist: acceleration and angular velocity for the filter."""
        stamp = message.header.stamp.sec + message.header.stamp.nanosec * 1e-9
        if stamp == 0:  # unstamped: when it arrived
            stamp = self.get_clock().now().nanoseconds * 1e-9
        linear, angular = message.twist.twist.linear, message.twist.twist.angular
        try:
            result = self.estimator.update(
                stamp, (linear.x, linear.y, linear.z), (angular.x, angular.y, angular.z)
            )
        except HilError as exc:
            self.bad_odom += 1
            if self.bad_odom == 1 or self.bad_odom % 100 == 0:
                self.get_logger().warning(f"odom: {exc} ({self.bad_odom} refused so far)")
            return
        self.odom_received += 1
        with self._motion_lock:
            self._odom_at = time.monotonic()
            if result is None:
                self._acceleration = np.zeros(3)
                self._angular = np.array([angular.x, angular.y, angular.z])
            else:
                self._acceleration, self._angular = result

    def motion(self, now: float) -> tuple[np.ndarray, np.ndarray, bool]:
        """The latest acceleration and angular velocity, zeros when odom is stale; and whether fresh."""
        with self._motion_lock:
            fresh = self._odom_at is not None and now - self._odom_at <= self.odom_timeout
            if not fresh:
                return np.zeros(3), np.zeros(3), False
            return self._acceleration.copy(), self._angular.copy(), True

    def run(self) -> None:
        """The setpoint loop: one :meth:`tick` per deadline until stopped."""
        scheduler = DeadlineScheduler(self.period, sleep=self.sleep_receiving)
        while not self._stop.is_set():
            tick = scheduler.wait()
            self.tick(tick.woke)
            self.stats.record(tick, time.monotonic() - tick.woke)

    def sleep_receiving(self, seconds: float) -> None:
        """The scheduler's sleep, taking replies as they arrive (exact round trips)."""
        if self.link.wait(seconds):
            self.receive(time.monotonic())

    def tick(self, now: float) -> None:
        """One frame: read replies, step the filter when streaming, send what the session says."""
        self.receive(now)
        session = self.session
        pose = NEUTRAL
        if session.streaming:
            if not self._streaming:
                self.cueing.reset()  # every session starts from neutral, where the platform is
            acceleration, angular, _ = self.motion(now)
            self.last_cue = self.cueing.step(acceleration, angular)
            pose = self.last_cue.pose
        self._streaming = session.streaming
        data = session.next_datagram(now, pose)
        if data is not None:
            self.link.send(data)
        self.log_changes()
        if now >= self._next_report:
            self._next_report = now + self.diagnostics_period
            self.publish_health(now)

    def receive(self, now: float) -> None:
        """Hand every reply from the platform to the session; count datagrams from elsewhere."""
        for data, sender in self.link.poll():
            if sender != self.platform:
                self.foreign += 1
                continue
            self.session.on_reply(now, data)

    def park(self) -> None:
        """Park the platform: PARK until it reports PARKED, for at most ``park_timeout``."""
        session = self.session
        session.park()
        deadline = time.monotonic() + self.park_timeout
        while not session.parked:
            now = time.monotonic()
            if now >= deadline:
                break
            self.receive(now)
            data = session.next_datagram(now)
            if data is not None:
                self.link.send(data)
            if not session.parked:
                self.link.wait(min(self.period, deadline - now))
        state = session.state.name if session.state is not None else "unknown"
        if session.parked:
            self.get_logger().info(f"platform parked ({state})")
        else:
            self.get_logger().warning(f"platform not parked within {self.park_timeout:g} s (state {state})")

    def log_changes(self) -> None:
        """Log the platform's state changes and new ERROR replies."""
        session = self.session
        state = session.state.name if session.state is not None else "unknown"
        if state != self._logged_state:
            self.get_logger().info(f"platform state {self._logged_state or '-'} -> {state}")
            self._logged_state = state
        errors = sum(session.errors.values())
        # The first refusal, then one line per 50: a platform refusing every setpoint
        # must not flood the log.
        if errors and (self._errors_reported == 0 or errors - self._errors_reported >= 50):
            self.get_logger().warning(f"platform refused a datagram ({errors} so far): {session.last_error}")
            self._errors_reported = errors

    def publish_health(self, now: float) -> None:
        """Publish diagnostics and hil/link."""
        session, link = self.session, self.link
        alive = session.alive(now)
        state = session.state.name if session.state is not None else "unknown"
        host, port = self.platform
        _, _, odom_fresh = self.motion(now)
        errors = sum(session.errors.values())
        if not alive and sum(session.sent.values()):
            level, text = DiagnosticStatus.ERROR, f"platform at {host}:{port} not answering"
        elif not session.streaming:
            level, text = DiagnosticStatus.WARN, f"platform {state}, starting it"
        elif not odom_fresh:
            level, text = DiagnosticStatus.WARN, f"no odom for {self.odom_timeout:g} s: cue at neutral"
        else:
            level, text = DiagnosticStatus.OK, "streaming setpoints"
        if errors and level == DiagnosticStatus.OK:
            level, text = DiagnosticStatus.WARN, f"streaming; last refusal: {session.last_error}"
        since = -1.0 if session.last_heard is None else now - session.last_heard
        status = LinkStatus(
            link="platform",
            alive=alive,
            rtt_last=session.rtt.last,
            rtt_mean=session.rtt.mean,
            rtt_max=session.rtt.max,
            sent=link.sent,
            received=session.replies,
            lost=session.lost_setpoints,
            since_last_heard=since,
            detail=text,
        )
        status.header.stamp = self.get_clock().now().to_msg()
        self.link_status.publish(status)

        timing = self.stats.summary()
        cue = self.last_cue
        values: dict[str, object] = {
            "platform": f"{host}:{port}",
            "state": state,
            "goal": session.goal.value,
            "sent": link.sent,
            "received": session.replies,
            "setpoints_sent": int(session.sent.get(Command.DOF, 0)),
            "errors": errors,
            **{f"errors_{_code_name(code)}": n for code, n in session.errors.items()},
            "last_error": session.last_error,
            "timeouts": session.timeouts,
            "lost_setpoints": session.lost_setpoints,
            "bad_replies": session.bad_replies,
            "unmatched_replies": session.unmatched,
            "foreign_datagrams": self.foreign,
            "send_errors": link.send_errors,
            "receive_errors": link.receive_errors,
            "rtt_last_ms": f"{session.rtt.last * 1e3:.3f}",
            "rtt_mean_ms": f"{session.rtt.mean * 1e3:.3f}",
            "rtt_max_ms": f"{session.rtt.max * 1e3:.3f}",
            "odom_received": self.odom_received,
            "bad_odom": self.bad_odom,
            "odom_fresh": odom_fresh,
            "limited_frames": self.cueing.limited,
            "pose": "" if cue is None else " ".join(f"{v:+.4f}" for v in cue.pose),
            "period_mean_ms": f"{timing.period_mean * 1e3:.3f}",
            "jitter_p99_us": f"{timing.jitter_p99 * 1e6:.0f}",
            "overruns": timing.overruns,
        }
        self.diagnostics.publish(
            diagnostic_array(
                self,
                name="motion platform",
                level=level,
                message=text,
                values=values,
                hardware_id=f"{host}:{port}",
            )
        )


def main(args: list[str] | None = None) -> int:
    """Run the motion platform node until shut down; exit 2 on a bad configuration."""
    return run_node(MotionPlatformNode, name=NODE_NAME, config_errors=(HilError,), args=args)


if __name__ == "__main__":
    sys.exit(main())
