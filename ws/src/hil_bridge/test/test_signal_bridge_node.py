"""The signal bridge node over a real pty, against a peer using raw os.read/os.write."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hil_bridge.core.pty_link import PtyPair
from hil_bridge.core.signal_protocol import FrameDecoder, FrameEncoder, SignalLayout
from hil_bridge.signal_bridge_node import NODE_NAME, PARAMETERS
from hil_common import qos
from hil_common.core.loop_timing import DeadlineScheduler
from hil_common.core.param_spec import yaml_defaults
from hil_devices.core.devices import load_device_set
from hil_devices.core.library import load_device_library
from hil_msgs.msg import LinkStatus, Signal, SignalArray
from support.ros_probe import RosProbe

PACKAGE = Path(__file__).resolve().parents[1]
CONFIG = PACKAGE / "config"
LAYOUT = SignalLayout(
    load_device_set(
        Path(__file__).resolve().parents[2] / "hil_devices" / "config" / "demo_robot_devices.yaml",
        load_device_library([Path(__file__).resolve().parents[2] / "hil_devices" / "config" / "devices"]),
    )
)
INPUT_ROW = [512.0, 1.0, 0.0, 1024.0, 0.0, 1.0, 1.0]  # motors, led


def node_command(port: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "hil_bridge.signal_bridge_node",
        "--ros-args",
        "-p",
        f"port:={port}",
        "-p",
        "diagnostics_period:=0.1",
        *extra,
    ]


class Peer:
    """The MCU side of the link: raw reads and writes on the pty master."""

    def __init__(self, path: Path) -> None:
        self.pty = PtyPair(path)
        self.encoder = FrameEncoder(LAYOUT.inputs)
        self.decoder = FrameDecoder(LAYOUT.outputs)
        self.frames: list[Any] = []

    def exchange(self, count: int, period: float = 0.005) -> None:
        """Send ``count`` frames at the bridge's rate, reading whatever comes back."""
        scheduler = DeadlineScheduler(period)
        for _ in range(count):
            scheduler.wait()
            self.send_one()
            self.receive()

    def send_one(self) -> None:
        frame = self.encoder.encode(INPUT_ROW)
        assert self.pty.write(frame) == len(frame)

    def receive(self) -> None:
        self.frames += self.decoder.feed(self.pty.read())

    def close(self) -> None:
        self.pty.close()


@pytest.fixture
def probe() -> Iterator[RosProbe]:
    probe = RosProbe("signal_bridge_test")
    probe.record(LinkStatus, "hil/link", qos.COMMAND)
    probe.record(SignalArray, "hil/signals/to_sim", qos.SENSOR)
    yield probe
    probe.close()


def signal_status(probe: RosProbe) -> LinkStatus | None:
    return next((m for m in reversed(probe.messages("hil/link")) if m.link == "signal"), None)


def wait_link(probe: RosProbe, *, alive: bool) -> LinkStatus:
    return probe.wait_for(
        lambda: (s := signal_status(probe)) is not None and s.alive == alive and s,
        timeout=15.0,
        what=f"signal link alive={alive}",
    )


@pytest.mark.ros
def test_bridge_exchanges_at_200_hz_without_losing_a_frame_and_recovers_a_reopened_port(
    tmp_path: Path, spawn: Any, probe: RosProbe
) -> None:
    port = tmp_path / "signal_link"
    peer = Peer(port)
    node = spawn(node_command(port), name="signal_bridge")
    try:
        # Link up: the node opens the port and starts hearing frames.
        probe.wait_for(
            lambda: (peer.exchange(20), signal_status(probe) and signal_status(probe).alive)[1],
            timeout=20.0,
            what="bridge hears the peer",
        )
        from_sim = probe.publisher(SignalArray, "hil/signals/from_sim", qos.SENSOR)

        # Quiet, then a counted burst: every frame must arrive.
        peer.exchange(0)
        before = wait_link(probe, alive=False).received
        peer.frames.clear()
        from_sim.publish(
            SignalArray(
                signals=[
                    Signal(device="bumper_left", name="pressed", value=1.0),
                    Signal(device="ultrasonic", name="distance", value=123.4),
                ]
            )
        )
        peer.exchange(600)
        after = wait_link(probe, alive=False)
        assert after.received - before == 600
        assert peer.decoder.stats.skipped_bytes == 0 and peer.decoder.stats.bad_ids == 0
        assert len(peer.frames) > 500  # the node answers every period

        # The simulator's values reach the MCU side...
        last = peer.frames[-1]
        names = [slot.key for slot in LAYOUT.outputs]
        assert last.values[names.index(("bumper_left", "pressed"))] == 1.0
        assert abs(last.values[names.index(("ultrasonic", "distance"))] - 123.4) < 0.01
        # ...and the MCU's pins reach the simulator (512 arrives as 511: Arduino map()).
        to_sim = probe.latest("hil/signals/to_sim")
        assert to_sim is not None
        values = {(s.device, s.name): s.value for s in to_sim.signals}
        assert values[("motor_left", "enable")] == 511.0
        assert values[("motor_right", "enable")] == 1024.0

        # The peer goes away (MCU unplugged) and comes back at the same path.
        peer.close()
        probe.wait_for(
            lambda: (s := signal_status(probe)) is not None and "retrying" in s.detail,
            timeout=15.0,
            what="bridge reports the lost port",
        )
        peer = Peer(port)
        received_before = signal_status(probe).received
        probe.wait_for(
            lambda: (peer.exchange(20), signal_status(probe).received > received_before)[1],
            timeout=20.0,
            what="bridge recovers without restart",
        )
        assert node.poll() is None, "the node must not have exited"
    finally:
        peer.close()


@pytest.mark.ros
def test_bad_device_set_exits_2_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "devices.yaml"
    bad.write_text("devices:\n  - {name: m, device: warp_drive}\n")
    result = subprocess.run(
        node_command(tmp_path / "port", "-p", f"device_set:={bad}"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert f"{bad}: devices[0] (m): field 'device': unknown device 'warp_drive'" in result.stderr


@pytest.mark.ros
def test_out_of_range_parameter_exits_2_naming_it(tmp_path: Path) -> None:
    result = subprocess.run(
        node_command(tmp_path / "port", "-p", "exchange_period:=5.0"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "parameter 'exchange_period'" in result.stderr


def test_declared_defaults_match_the_package_yaml() -> None:
    defaults = yaml_defaults(CONFIG / "hil_bridge.yaml", NODE_NAME)
    assert defaults == {spec.name: spec.default for spec in PARAMETERS}


def test_every_parameter_has_a_description() -> None:
    assert all(len(spec.description) > 10 for spec in PARAMETERS)
