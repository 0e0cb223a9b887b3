"""The motion_platform node, in-process, against the platform emulator on a loopback UDP port."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import rclpy
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter

from hil_common import qos
from hil_common.core.param_spec import yaml_defaults
from hil_common.errors import HilError
from hil_msgs.msg import LinkStatus
from hil_platform.core.motion_platform import (
    Command,
    PlatformGeometry,
    PlatformState,
    PlatformStateMachine,
    Reply,
    actuator_lengths,
    unpack,
)
from hil_platform.core.udp_link import UdpLink
from hil_platform.motion_platform_node import NODE_NAME, PARAMETERS, MotionPlatformNode
from hil_platform.platform_emulator import serve
from support.ros_probe import RosProbe

CONFIG = Path(__file__).resolve().parents[1] / "config"
GEOMETRY = PlatformGeometry()
ROLL, PITCH, HEAVE, SURGE, YAW, LATERAL = range(6)
TIMEOUT_S = 20.0


class RecordingPlatform(PlatformStateMachine):
    """The emulator's state machine, keeping its state changes and the setpoints it accepted."""

    def __init__(self) -> None:
        super().__init__(GEOMETRY)
        self.lock = threading.Lock()
        self.transitions: list[tuple[PlatformState, PlatformState]] = []
        self.setpoints: list[tuple[float, ...]] = []

    def handle(self, datagram: bytes) -> bytes:
        before = self.state
        reply = super().handle(datagram)
        with self.lock:
            if self.state != before:
                self.transitions.append((before, self.state))
            if unpack(reply).type == Reply.STATE and unpack(datagram).type == Command.DOF:
                self.setpoints.append(unpack(datagram).values)
        return reply


class StopRequest:
    """What ``serve`` waits on besides the link: readable (and ``requested``) once set."""

    def __init__(self) -> None:
        self._reader, self._writer = socket.socketpair()
        self.requested = False

    def fileno(self) -> int:
        return self._reader.fileno()

    def set(self) -> None:
        self.requested = True
        self._writer.send(b"x")

    def close(self) -> None:
        self._reader.close()
        self._writer.close()


@contextmanager
def emulator(machine: PlatformStateMachine) -> Iterator[int]:
    """hil_platform_emulator's serve loop in a thread on a loopback port; yields the port."""
    link = UdpLink(("127.0.0.1", 0))
    stop = StopRequest()
    thread = threading.Thread(target=serve, args=(link, machine, stop), daemon=True)
    thread.start()
    try:
        yield link.local_address[1]
    finally:
        stop.set()
        thread.join(timeout=5.0)
        link.close()
        stop.close()
    assert not thread.is_alive()


@contextmanager
def running_node(port: int, **overrides: Any) -> Iterator[MotionPlatformNode]:
    """The node in its own context, spun in a thread, started; stopped and shut down after."""
    context = rclpy.Context()
    rclpy.init(context=context)
    values = {"port": port, "local_host": "127.0.0.1", "diagnostics_period": 0.1, **overrides}
    node: MotionPlatformNode | None = None
    executor = SingleThreadedExecutor(context=context)
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set() and context.ok():
            executor.spin_once(timeout_sec=0.05)

    spinner = threading.Thread(target=spin, daemon=True)
    try:
        node = MotionPlatformNode(
            context=context, parameter_overrides=[Parameter(k, value=v) for k, v in values.items()]
        )
        executor.add_node(node)
        spinner.start()
        node.start()
        yield node
    finally:
        stop.set()
        if spinner.is_alive():
            spinner.join(timeout=5.0)
        if node is not None:
            node.stop()
            node.destroy_node()
        executor.shutdown()
        rclpy.try_shutdown(context=context)


@pytest.fixture
def probe() -> Iterator[RosProbe]:
    probe = RosProbe("motion_platform_test")
    probe.record(DiagnosticArray, "diagnostics")
    probe.record(LinkStatus, "hil/link")
    yield probe
    probe.close()


def platform_status(probe: RosProbe) -> tuple[DiagnosticStatus, dict[str, str]] | None:
    for array in reversed(probe.messages("diagnostics")):
        for status in array.status:
            if status.name == f"{NODE_NAME}: motion platform":
                return status, {kv.key: kv.value for kv in status.values}
    return None


def odometry(t: float, speed: float, turn: float) -> Odometry:
    message = Odometry()
    message.header.stamp = Time(sec=int(t), nanosec=int((t % 1.0) * 1e9))
    message.header.frame_id, message.child_frame_id = "odom", "base_link"
    message.twist.twist.linear.x = speed
    message.twist.twist.angular.z = turn
    return message


def assert_within_limits(pose: tuple[float, ...]) -> None:
    assert all(abs(v) <= np.float32(limit) for v, limit in zip(pose, GEOMETRY.dof_limits, strict=True)), pose
    lengths = actuator_lengths(pose, GEOMETRY)
    assert GEOMETRY.min_length <= lengths.min() and lengths.max() <= GEOMETRY.max_length, pose


@pytest.mark.ros
def test_node_engages_starts_streams_cues_within_limits_and_parks_at_shutdown(probe: RosProbe) -> None:
    machine = RecordingPlatform()
    with emulator(machine) as port, running_node(port) as node:
        probe.wait_for(
            lambda: machine.state == PlatformState.STARTED, timeout=TIMEOUT_S, what="platform STARTED"
        )
        odom = probe.publisher(Odometry, "odom", qos.PUBLISHER)
        probe.wait_for(lambda: odom.get_subscription_count() > 0, timeout=TIMEOUT_S, what="node subscribed")

        # The robot speeds up at 0.5 m/s^2 while turning left at 1 rad/s, then drives on.
        start, t, period = time.monotonic(), 0.0, 0.02
        while t < 3.0:
            speed = 0.5 * min(t, 1.2)
            odom.publish(odometry(100.0 + t, speed, 1.0))
            t += period
            time.sleep(max(0.0, start + t - time.monotonic()))
        probe.wait_for(
            lambda: (s := platform_status(probe)) is not None and int(s[1]["odom_received"]) >= 100,
            timeout=TIMEOUT_S,
            what="the node taking the odometry",
        )
        _, values = platform_status(probe)  # type: ignore[misc]
        assert values["state"] == "STARTED"
        assert int(values["sent"]) > 50 and int(values["received"]) > 50
        assert int(values["errors"]) == 0 and int(values["timeouts"]) == 0
        assert 0 < float(values["rtt_mean_ms"]) < 1000
        link = probe.latest("hil/link")
        assert link is not None and link.link == "platform" and link.alive

        node.stop()  # as at shutdown: parks the platform
        assert node.session.parked

    assert machine.state == PlatformState.PARKED
    assert machine.transitions == [
        (PlatformState.INIT, PlatformState.ENGAGED),
        (PlatformState.ENGAGED, PlatformState.STARTED),
        (PlatformState.STARTED, PlatformState.PARKED),
    ]
    assert machine.rejected == {}
    setpoints = np.array(machine.setpoints)
    assert len(setpoints) > 100
    for pose in machine.setpoints:
        assert_within_limits(pose)
    # The cue follows the motion: onset forward and to the left, nose up and left
    # side up by tilt coordination, a yaw onset to the left.
    assert setpoints[:, SURGE].max() > 0.001
    assert setpoints[:, LATERAL].max() > 0.001
    assert setpoints[:, PITCH].min() < -0.01
    assert setpoints[:, ROLL].max() > 0.01
    assert setpoints[:, YAW].max() > 0.01


@pytest.mark.ros
def test_silent_platform_is_retried_reported_and_shutdown_stays_bounded(probe: RosProbe) -> None:
    with UdpLink(("127.0.0.1", 0)) as silent:
        with running_node(silent.local_address[1], reply_timeout=0.1, park_timeout=0.3) as node:
            probe.wait_for(
                lambda: (
                    (s := platform_status(probe)) is not None
                    and s[0].level == DiagnosticStatus.ERROR
                    and int(s[1]["timeouts"]) >= 3
                ),
                timeout=TIMEOUT_S,
                what="diagnostics reporting the silent platform",
            )
            status, values = platform_status(probe)  # type: ignore[misc]
            assert "not answering" in status.message
            assert values["state"] == "unknown"
            link = probe.latest("hil/link")
            assert link is not None and not link.alive and link.since_last_heard == -1.0
            began = time.monotonic()
            node.stop()
            assert time.monotonic() - began < 0.3 + 2.0
            assert not node.session.parked
        types = {unpack(data).type for data, _ in silent.poll()}
    # Retried with STATUS while running, PARK at shutdown.
    assert types == {Command.STATUS, Command.PARK}


@pytest.mark.ros
def test_unresolvable_host_is_refused_naming_the_parameter() -> None:
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        with pytest.raises(HilError, match="parameter 'host'"):
            MotionPlatformNode(
                context=context, parameter_overrides=[Parameter("host", value="no.such.host.")]
            )
    finally:
        rclpy.try_shutdown(context=context)


@pytest.mark.ros
def test_out_of_range_parameter_exits_2_naming_it() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "hil_platform.motion_platform_node", "--ros-args", "-p", "send_period:=1.0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert "parameter 'send_period'" in result.stderr


def test_declared_defaults_match_the_package_yaml() -> None:
    defaults = yaml_defaults(CONFIG / "hil_platform.yaml", NODE_NAME)
    assert defaults == {spec.name: spec.default for spec in PARAMETERS}


def test_every_parameter_has_a_description() -> None:
    assert all(len(spec.description) > 10 for spec in PARAMETERS)
