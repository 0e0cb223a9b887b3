"""The control loop node over real ptys: against the virtual MCU, and against a raw peer."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist
from std_msgs.msg import String

from hil_bridge.core.line_protocol import Drive, Heartbeat, LineDecoder, LineEncoder
from hil_bridge.core.pty_link import PtyPair
from hil_common import qos
from hil_common.core.param_spec import yaml_defaults
from hil_msgs.msg import LinkStatus, Telemetry
from robot_control.control_loop_node import NODE_NAME, PARAMETERS
from robot_control.core.kinematics import DriveGeometry, twist_to_commands
from support.ros_probe import RosProbe

CONFIG = Path(__file__).resolve().parents[1] / "config"
FRAME = 1 / 30
MCU_TIMEOUT = 0.6


def loop_command(port: Path, *params: str) -> list[str]:
    args = [sys.executable, "-m", "robot_control.control_loop_node", "--ros-args"]
    for param in (
        f"port:={port}",
        f"mcu_heartbeat_timeout:={MCU_TIMEOUT}",
        "mcu_heartbeat_period:=0.2",
        "diagnostics_period:=0.1",
        *params,
    ):
        args += ["-p", param]
    return args


def mcu_command(tmp_path: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "hil_mcu.virtual_mcu_node",
        "--ros-args",
        "-p",
        f"command_port:={tmp_path / 'cmd'}",
        "-p",
        f"signal_port:={tmp_path / 'sig'}",
    ]


@pytest.fixture
def probe() -> Iterator[RosProbe]:
    probe = RosProbe("control_loop_test")
    probe.record(Telemetry, "telemetry", qos.SENSOR)
    probe.record(LinkStatus, "hil/link", qos.COMMAND)
    probe.record(String, "robotCommand", qos.COMMAND)
    probe.record(DiagnosticArray, "diagnostics", qos.COMMAND)
    yield probe
    probe.close()


def mcu_link(probe: RosProbe) -> LinkStatus | None:
    return next((m for m in reversed(probe.messages("hil/link")) if m.link == "mcu"), None)


def motors_reported(probe: RosProbe) -> list[float] | None:
    """TL1 of the MCU: right, left."""
    tl1 = next((m for m in reversed(probe.messages("telemetry")) if m.list_id == "TL1"), None)
    return None if tl1 is None else list(tl1.values)


def diagnostics(probe: RosProbe) -> dict[str, str]:
    latest = next(
        (
            m
            for m in reversed(probe.messages("diagnostics"))
            if m.status and m.status[0].name.startswith("control_loop")
        ),
        None,
    )
    return {} if latest is None else {kv.key: kv.value for kv in latest.status[0].values}


@pytest.mark.ros
def test_loop_drives_the_virtual_mcu_handles_the_station_and_survives_an_mcu_restart(
    tmp_path: Path, spawn: Any, probe: RosProbe
) -> None:
    mcu = spawn(mcu_command(tmp_path), name="mcu")
    # One station heartbeat arms the station failsafe; this test is about the MCU link,
    # so that watchdog gets a long timeout (its own tests are in test_loop.py).
    loop = spawn(loop_command(tmp_path / "cmd", "station_heartbeat_timeout:=600.0"), name="loop")
    twist = Twist()
    twist.linear.x, twist.angular.z = 0.2, 0.8
    left, right = twist_to_commands(0.2, 0.8, DriveGeometry())
    cmd_vel = probe.publisher(Twist, "cmd_vel", qos.COMMAND)
    station = probe.publisher(String, "robotCommand", qos.COMMAND)

    def reports(expected: list[float]) -> bool:
        cmd_vel.publish(twist)
        return motors_reported(probe) == expected

    # cmd_vel -> the DRV of the kinematics, as the MCU reports it back in TL1 (right, left).
    probe.wait_for(lambda: reports([right, left]), timeout=30.0, what="TL1 shows the kinematics' commands")

    # STOP holds zero while cmd_vel keeps coming; GO releases.
    station.publish(String(data="STOP"))
    probe.wait_for(lambda: reports([0.0, 0.0]), timeout=10.0, what="STOP holds the motors")
    station.publish(String(data="GO"))
    probe.wait_for(lambda: reports([right, left]), timeout=10.0, what="GO releases them")

    # The station's heartbeat comes back unchanged, once.
    station.publish(String(data="HBB,1700000000.125000"))
    probe.wait_for(
        lambda: sum(m.data == "HBB,1700000000.125000" for m in probe.messages("robotCommand")) >= 2,
        what="the echo of the station heartbeat",
    )
    time.sleep(0.5)
    assert sum(m.data == "HBB,1700000000.125000" for m in probe.messages("robotCommand")) == 2
    station.publish(String(data="FLY AWAY"))  # not a command: a warning, nothing else

    # The MCU dies: the link goes down and the loop holds the motors at zero.
    os.killpg(mcu.pid, signal.SIGKILL)
    mcu.wait()
    killed = time.monotonic()
    down = probe.wait_for(
        lambda: (m := mcu_link(probe)) is not None and not m.alive and m,
        timeout=10.0,
        what="the MCU link reported lost",
    )
    assert down.detail
    # Generous bound on the mechanism: the tight figure is in bench/control_loop.py.
    assert time.monotonic() - killed < 5 * (MCU_TIMEOUT + FRAME) + 2.0
    probe.wait_for(
        lambda: "mcu" in diagnostics(probe).get("motors_held_by", ""), what="motors held by the mcu failsafe"
    )

    # A new MCU at the same path: the same loop process picks it up again.
    spawn(mcu_command(tmp_path), name="mcu2")
    # Generous: the new MCU process imports rclpy first, which takes seconds on a loaded machine.
    probe.wait_for(lambda: (m := mcu_link(probe)) is not None and m.alive, timeout=60.0, what="MCU link back")
    probe.wait_for(lambda: reports([right, left]), timeout=20.0, what="driving again after the restart")
    assert loop.poll() is None, "the loop must not have restarted"


class RawMcu:
    """An MCU stand-in on the pty master: echoes heartbeats while told to, records DRV."""

    def __init__(self, path: Path) -> None:
        self.pty = PtyPair(path)
        self.decoder = LineDecoder()
        self.encoder = LineEncoder()
        self.echoing = True
        self.last_echo = 0.0
        self.drives: list[tuple[float, Drive]] = []

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            data = self.pty.read()
            now = time.monotonic()
            for message in self.decoder.feed(data):
                if isinstance(message, Heartbeat) and self.echoing:
                    self.pty.write(self.encoder.encode(message))
                    self.last_echo = now
                elif isinstance(message, Drive):
                    self.drives.append((now, message))
            time.sleep(0.001)


@pytest.mark.ros
def test_mcu_silence_puts_drv0_0_on_the_wire_within_the_timeout_and_recovers(
    tmp_path: Path, spawn: Any, probe: RosProbe
) -> None:
    peer = RawMcu(tmp_path / "cmd")
    # Only the MCU's silence may stop the motors here: a stall of this process's cmd_vel
    # (or of the loop's intake) on a busy machine must not trip the cmd_vel failsafe first.
    spawn(loop_command(tmp_path / "cmd", "cmd_vel_timeout:=30.0"), name="loop")
    twist = Twist()
    twist.linear.x = 0.3
    cmd_vel = probe.publisher(Twist, "cmd_vel", qos.COMMAND)
    try:

        def driving() -> bool:
            cmd_vel.publish(twist)
            peer.pump(0.05)
            return bool(peer.drives) and peer.drives[-1][1] != Drive(0, 0)

        probe.wait_for(driving, timeout=30.0, what="non-zero DRV on the wire")
        peer.echoing = False
        silent_from = peer.last_echo
        peer.drives.clear()

        def stopped() -> bool:
            cmd_vel.publish(twist)
            peer.pump(0.05)
            return any(d == Drive(0, 0) for _, d in peer.drives)

        probe.wait_for(stopped, timeout=10.0, what="DRV0,0 after the MCU went silent")
        first_zero = next(t for t, d in peer.drives if d == Drive(0, 0))
        delay = first_zero - silent_from
        assert MCU_TIMEOUT - FRAME <= delay < 3 * (MCU_TIMEOUT + FRAME), f"DRV0,0 after {delay:.3f} s"

        peer.echoing = True
        probe.wait_for(driving, timeout=10.0, what="driving again once the MCU answers")
    finally:
        peer.pty.close()


@pytest.mark.ros
def test_bad_parameter_exits_2_naming_it(tmp_path: Path) -> None:
    result = subprocess.run(
        loop_command(tmp_path / "cmd", "baud:=12345"), capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 2
    assert "parameter 'baud'" in result.stderr


def test_declared_defaults_match_the_package_yaml() -> None:
    defaults = yaml_defaults(CONFIG / "robot_control.yaml", NODE_NAME)
    assert defaults == {spec.name: spec.default for spec in PARAMETERS}
