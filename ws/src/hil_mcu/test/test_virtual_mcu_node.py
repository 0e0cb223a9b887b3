"""The virtual MCU node as a process, with peers on its two ptys using raw os.read/os.write."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import termios
import time
import tty
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from diagnostic_msgs.msg import DiagnosticArray

from hil_bridge.core.line_protocol import (
    Drive,
    ErrorReport,
    Heartbeat,
    LineDecoder,
    LineEncoder,
    Message,
    Telemetry,
)
from hil_bridge.core.signal_protocol import Frame, FrameDecoder, FrameEncoder, SignalLayout
from hil_common import qos
from hil_common.core.param_spec import yaml_defaults
from hil_devices.core.devices import load_device_set
from hil_devices.core.library import load_device_library
from hil_devices.core.telemetry import TelemetrySchema
from hil_mcu.virtual_mcu_node import NODE_NAME, PARAMETERS
from support.ros_probe import RosProbe
from support.unsafe_folders import MAIN_KINDS, Make, snapshot

SRC = Path(__file__).resolve().parents[2]
PACKAGE = SRC / "hil_mcu"
BRIDGE_CONFIG = SRC / "hil_devices" / "config"
LAYOUT = SignalLayout(
    load_device_set(
        BRIDGE_CONFIG / "demo_robot_devices.yaml", load_device_library([BRIDGE_CONFIG / "devices"])
    )
)
SCHEMA = TelemetrySchema.from_yaml(BRIDGE_CONFIG / "telemetry.yaml")
INPUT_KEYS = [slot.key for slot in LAYOUT.inputs]
SENSORS = {
    ("bumper_left", "pressed"): 1.0,
    ("bumper_right", "pressed"): 0.0,
    ("ultrasonic", "distance"): 123.4,
    ("ir", "voltage"): 2.0,
    ("light_0", "reading"): 0.0,
    ("light_1", "reading"): 500.0,
    ("light_2", "reading"): 1000.0,
    ("light_3", "reading"): 1023.0,
    ("compass", "heading"): 271.0,
}
HEARTBEAT_LOST = ErrorReport("heartbeat lost")
T = TypeVar("T")


def node_command(tmp_path: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "hil_mcu.virtual_mcu_node",
        "--ros-args",
        "-p",
        f"command_port:={tmp_path}/cmd",
        "-p",
        f"signal_port:={tmp_path}/sig",
        *extra,
    ]


def wait_for(condition: Callable[[], T], *, timeout: float = 10.0, what: str) -> T:
    """Poll ``condition`` until it returns something truthy; fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(0.005)
    raise AssertionError(f"{what}: not within {timeout:g} s")


class Port:
    """One end of a link, opened as the control loop or the signal bridge opens it."""

    def __init__(self, path: Path) -> None:
        # Generous: the node imports rclpy before it creates its ptys.
        wait_for(path.exists, timeout=30.0, what=f"{path} appears")
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self.fd)
        # What piled up before anyone listened (as pyserial's reset_input_buffer()).
        termios.tcflush(self.fd, termios.TCIFLUSH)

    def write(self, data: bytes) -> None:
        assert os.write(self.fd, data) == len(data)

    def read(self) -> bytes:
        data = b""
        while select.select([self.fd], [], [], 0.005)[0]:
            data += os.read(self.fd, 65536)
        return data

    def close(self) -> None:
        os.close(self.fd)


class CommandPeer(Port):
    """The control loop's side: messages out; replies in, decoded and kept raw."""

    def __init__(self, path: Path, *, checked: bool = False) -> None:
        super().__init__(path)
        self.encoder = LineEncoder(checked=checked)
        self.decoder = LineDecoder(schema=SCHEMA, checked=checked)
        self.raw = b""
        self.messages: list[Message] = []

    def send(self, message: Message) -> None:
        self.write(self.encoder.encode(message))

    def poll(self) -> list[Message]:
        """Read what arrived; returns the new messages (all are kept in ``messages``)."""
        data = self.read()
        self.raw += data
        new = self.decoder.feed(data)
        self.messages += new
        return new

    def wait_message(self, match: Callable[[Message], bool], *, what: str, timeout: float = 10.0) -> Message:
        """The first message from now on that ``match`` accepts."""
        return wait_for(lambda: next((m for m in self.poll() if match(m)), None), what=what, timeout=timeout)


class SignalPeer(Port):
    """The signal bridge's side: INPUT frames in, OUTPUT frames out."""

    def __init__(self, path: Path, *, checked: bool = False) -> None:
        super().__init__(path)
        self.decoder = FrameDecoder(LAYOUT.inputs, checked=checked)
        self.encoder = FrameEncoder(LAYOUT.outputs, checked=checked)
        self.frames: list[Frame] = []

    def poll(self) -> list[Frame]:
        new = self.decoder.feed(self.read())
        self.frames += new
        return new

    def send_sensors(self, values: dict[tuple[str, str], float]) -> None:
        self.write(self.encoder.encode([values[slot.key] for slot in LAYOUT.outputs]))


@pytest.fixture
def ports() -> Iterator[list[Port]]:
    opened: list[Port] = []
    yield opened
    for port in opened:
        port.close()


def motor_pins(left: int, right: int, *, checked: bool = False) -> dict[tuple[str, str], float]:
    """The motor pins of ``DRV<left>,<right>`` as the signal link delivers them (plain mode is lossy)."""
    pins: dict[tuple[str, str], float] = {}
    for device, value in (("motor_left", left), ("motor_right", right)):
        pins[(device, "enable")] = round(abs(value) * 1024 / 255)
        pins[(device, "a")] = 1 if value > 0 else 0
        pins[(device, "b")] = 1 if value < 0 else 0
    encoder = FrameEncoder(LAYOUT.inputs, checked=checked)
    (frame,) = FrameDecoder(LAYOUT.inputs, checked=checked).feed(
        encoder.encode([pins.get(key, 0.0) for key in INPUT_KEYS])
    )
    return {key: v for key, v in zip(INPUT_KEYS, frame.values, strict=True) if key in pins}


def shows(frame: Frame, pins: dict[tuple[str, str], float]) -> bool:
    values = dict(zip(INPUT_KEYS, frame.values, strict=True))
    return all(values[key] == value for key, value in pins.items())


def is_tl(list_id: str, values: tuple[float, ...]) -> Callable[[Message], bool]:
    return lambda m: isinstance(m, Telemetry) and m.list_id == list_id and m.values == values


def expected_tl2(*, checked: bool) -> tuple[float, ...]:
    """TL2 for SENSORS: the values as the MCU side decodes them, read as the firmware does."""
    encoder = FrameEncoder(LAYOUT.outputs, checked=checked)
    (frame,) = FrameDecoder(LAYOUT.outputs, checked=checked).feed(
        encoder.encode([SENSORS[slot.key] for slot in LAYOUT.outputs])
    )
    got = {slot.key: value for slot, value in zip(LAYOUT.outputs, frame.values, strict=True)}
    return (
        round(got[("ultrasonic", "distance")], 1),
        int(got[("ir", "voltage")] / 5 * 1023 + 0.5),
        *(got[(f"light_{i}", "reading")] for i in range(4)),
        got[("bumper_left", "pressed")],
        got[("bumper_right", "pressed")],
        round(got[("compass", "heading")], 1),
    )


@pytest.mark.ros
@pytest.mark.parametrize("checked", [False, True], ids=["plain", "checked"])
def test_node_echoes_drives_reports_errors_and_sensors(
    tmp_path: Path, spawn: Any, ports: list[Port], checked: bool
) -> None:
    # A long watchdog: this test is about the links, not about heartbeat loss.
    mode = "true" if checked else "false"
    node = spawn(
        node_command(tmp_path, "-p", "watchdog_timeout:=600.0", "-p", f"checked:={mode}"), name="virtual_mcu"
    )
    command = CommandPeer(tmp_path / "cmd", checked=checked)
    bridge = SignalPeer(tmp_path / "sig", checked=checked)
    ports += [command, bridge]

    # HBB: echoed with the stamp text byte for byte (trailing zeros and all).
    stamp = "1700000000.120000"
    command.send(Heartbeat(stamp))
    command.wait_message(lambda m: m == Heartbeat(stamp), what="heartbeat echo")
    line_end = b"*" if checked else b"\n"  # checked mode: the *SSSSCCCC suffix follows
    assert b"HBB," + stamp.encode() + line_end in command.raw

    # DRV: the motor pins show up in the INPUT frames on the signal link, and in TL1.
    command.send(Drive(100, -255))
    pins = motor_pins(100, -255, checked=checked)
    wait_for(lambda: any(shows(f, pins) for f in bridge.poll()), what="DRV100,-255 on the motor pins")
    command.wait_message(is_tl("TL1", (-255.0, 100.0)), what="TL1-255,100")

    # Out of range: one ERR, and the motors keep running as they were.
    command.send(Drive(300, 0))
    command.wait_message(
        lambda m: m == ErrorReport("DRV left 300 out of range -255..255"), what="ERR for DRV300,0"
    )
    start = len(bridge.frames)
    wait_for(lambda: bridge.poll() and len(bridge.frames) > start + 10, what="frames after the ERR")
    assert all(shows(frame, pins) for frame in bridge.frames[start:])
    command.send(Drive(0, 0))
    wait_for(lambda: any(shows(f, motor_pins(0, 0, checked=checked)) for f in bridge.poll()), what="DRV0,0")

    # Sensor frames written into the signal link come back in TL2.
    tl2 = expected_tl2(checked=checked)

    def tl2_seen() -> bool:
        bridge.send_sensors(SENSORS)
        return any(is_tl("TL2", tl2)(m) for m in command.poll())

    wait_for(tl2_seen, what=f"TL2 {tl2}")

    # Every line and frame the node sent was well formed.
    assert command.decoder.stats.dropped_total == 0, command.decoder.stats
    assert bridge.decoder.stats.bad_crc == 0 and bridge.decoder.stats.lost == 0
    assert node.poll() is None


@pytest.mark.ros
def test_watchdog_stops_the_motors_once_and_a_new_heartbeat_recovers(
    tmp_path: Path, spawn: Any, ports: list[Port]
) -> None:
    spawn(node_command(tmp_path, "-p", "watchdog_timeout:=0.3"), name="virtual_mcu")
    command = CommandPeer(tmp_path / "cmd")
    bridge = SignalPeer(tmp_path / "sig")
    ports += [command, bridge]
    running = motor_pins(150, 150)
    stopped = motor_pins(0, 0)

    def drive_with_heartbeat() -> bool:
        # Re-sent on every poll: a slow test machine may miss a 0.3 s heartbeat now and then.
        command.send(Heartbeat(f"{time.time():.6f}"))
        command.send(Drive(150, 150))
        command.poll()
        return any(shows(f, running) for f in bridge.poll())

    wait_for(drive_with_heartbeat, what="motors running with heartbeats")

    # Heartbeats stop: the motors go off and one ERR says why.
    lost_at = len(command.messages)
    command.wait_message(lambda m: m == HEARTBEAT_LOST, what="ERR,heartbeat lost")
    wait_for(lambda: any(shows(f, stopped) for f in bridge.poll()), what="motors off")

    # DRV without a heartbeat is refused: the motors stay off, TL1 says 0,0.
    command.send(Drive(150, 150))
    seen = len(command.messages)
    wait_for(
        lambda: command.poll() and sum(is_tl("TL1", (0.0, 0.0))(m) for m in command.messages[seen:]) >= 3,
        what="TL1 0,0 after the refused DRV",
    )
    start = len(bridge.frames)
    wait_for(lambda: bridge.poll() and len(bridge.frames) > start + 10, what="frames after the refused DRV")
    assert all(shows(frame, stopped) for frame in bridge.frames[start:])
    assert not any(is_tl("TL1", (150.0, 150.0))(m) for m in command.messages[seen:])
    assert command.messages[lost_at:].count(HEARTBEAT_LOST) == 1

    # A new heartbeat restores normal operation; the motors wait for the next DRV.
    wait_for(drive_with_heartbeat, what="motors running again after a new heartbeat")


@pytest.mark.ros
def test_diagnostics_carry_the_counters(tmp_path: Path, spawn: Any, ports: list[Port]) -> None:
    probe = RosProbe("virtual_mcu_test")
    try:
        probe.record(DiagnosticArray, "diagnostics", qos.COMMAND)
        spawn(node_command(tmp_path, "-p", "watchdog_timeout:=600.0"), name="virtual_mcu")
        command = CommandPeer(tmp_path / "cmd")
        ports.append(command)
        for stamp in ("1", "2", "3"):
            command.send(Heartbeat(stamp))
        command.send(Drive(500, 0))

        def counters() -> dict[str, str] | None:
            for array in reversed(probe.messages("diagnostics")):
                for status in array.status:
                    if status.name.endswith("virtual MCU"):
                        return {kv.key: kv.value for kv in status.values}
            return None

        wait_for(
            lambda: (c := counters()) is not None and c["hbb_echoed"] == "3" and c,
            timeout=20.0,
            what="diagnostics with 3 heartbeats echoed",
        )
        values = counters()
        assert values is not None
        assert values["drv_rejected.out_of_range"] == "1"
        assert values["command_port"] == str(tmp_path / "cmd")
        assert "signal_unwritten_bytes" in values
    finally:
        probe.close()


@pytest.mark.ros
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_stops_the_node_cleanly_and_removes_the_links(
    tmp_path: Path, spawn: Any, signum: signal.Signals
) -> None:
    node = spawn(node_command(tmp_path), name="virtual_mcu")
    wait_for((tmp_path / "sig").exists, timeout=30.0, what="signal link appears")
    command = CommandPeer(tmp_path / "cmd")
    command.send(Heartbeat("1"))
    command.wait_message(lambda m: m == Heartbeat("1"), what="the node runs")
    command.close()
    node.send_signal(signum)
    assert node.wait(timeout=15) == 0
    assert not (tmp_path / "cmd").exists() and not (tmp_path / "sig").exists()
    assert not (tmp_path / "cmd").is_symlink() and not (tmp_path / "sig").is_symlink()


def run_node(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        node_command(tmp_path, *extra), capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.ros
def test_out_of_range_parameter_exits_2_naming_it(tmp_path: Path) -> None:
    result = run_node(tmp_path, "-p", "max_command:=0")
    assert result.returncode == 2
    assert "parameter 'max_command'" in result.stderr
    assert not (tmp_path / "cmd").exists()


@pytest.mark.ros
def test_device_set_without_the_motors_exits_2_naming_them(tmp_path: Path) -> None:
    devices = tmp_path / "devices.yaml"
    devices.write_text(
        "devices:\n  - {name: led, device: led}\n  - {name: bumper_left, device: limit_switch}\n"
    )
    result = run_node(tmp_path, "-p", f"device_set:={devices}")
    assert result.returncode == 2
    assert "virtual_mcu: virtual MCU: the signal layout has no INPUT signal of motor_left" in result.stderr


@pytest.mark.ros
def test_missing_telemetry_schema_exits_2_naming_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.yaml"
    result = run_node(tmp_path, "-p", f"telemetry_schema:={missing}")
    assert result.returncode == 2
    assert f"{missing}: cannot read telemetry schema" in result.stderr


@pytest.mark.ros
def test_command_port_naming_a_users_file_exits_2_and_keeps_the_file(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    result = run_node(tmp_path, "-p", f"command_port:={notes}")
    assert result.returncode == 2
    assert f"virtual_mcu: cannot create pty link {notes}: it exists and is a regular file" in result.stderr
    assert notes.read_text() == "my notes\n"
    assert not (tmp_path / "sig").exists(), "the signal link was left behind"


@pytest.mark.ros
@pytest.mark.parametrize("make", MAIN_KINDS)
def test_a_link_in_a_folder_another_user_could_change_exits_2_naming_the_folder(
    tmp_path: Path, make: Make
) -> None:
    folder, words = make(tmp_path)
    before = snapshot(tmp_path)
    result = run_node(tmp_path, "-p", f"command_port:={folder}/cmd")
    assert result.returncode == 2
    assert f"virtual_mcu: cannot create pty link {folder}/cmd: folder " in result.stderr
    for word in words:
        assert word in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(tmp_path) == before, "a link, lock file or folder was made"


@pytest.mark.ros
def test_one_path_for_both_ports_exits_2_naming_both(tmp_path: Path) -> None:
    result = run_node(tmp_path, "-p", f"signal_port:={tmp_path}/cmd")
    assert result.returncode == 2
    assert f"virtual_mcu: command_port and signal_port are the same path {tmp_path}/cmd" in result.stderr
    assert not (tmp_path / "cmd").exists()


@pytest.mark.ros
def test_non_utf8_telemetry_schema_exits_2_naming_the_byte(tmp_path: Path) -> None:
    schema = tmp_path / "telemetry.yaml"
    schema.write_bytes(b"TL1: [right, l\xe9ft]\n")
    result = run_node(tmp_path, "-p", f"telemetry_schema:={schema}")
    assert result.returncode == 2
    assert f"{schema}: cannot read telemetry schema: not UTF-8 text: byte 0xe9 at offset 14" in result.stderr
    assert "Traceback" not in result.stderr


def test_declared_defaults_match_the_package_yaml() -> None:
    defaults = yaml_defaults(PACKAGE / "config" / "hil_mcu.yaml", NODE_NAME)
    assert defaults == {spec.name: spec.default for spec in PARAMETERS}


def test_every_parameter_has_a_description() -> None:
    assert all(len(spec.description) > 10 for spec in PARAMETERS)
