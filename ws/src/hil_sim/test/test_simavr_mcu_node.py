"""The simavr_mcu node as a process: the firmware in simavr on the wall clock, over its ptys."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest
import serial
from diagnostic_msgs.msg import DiagnosticArray

from hil_bridge import qos
from hil_bridge.core.param_spec import yaml_defaults
from hil_bridge.core.paths import share_dir
from hil_sim.simavr_mcu_node import NODE_NAME, PARAMETERS
from support.ros_probe import RosProbe


def node_command(tmp_path: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "hil_sim.simavr_mcu_node",
        "--ros-args",
        "-p",
        f"command_port:={tmp_path}/cmd",
        "-p",
        f"signal_port:={tmp_path}/sig",
        "-p",
        "stats_period:=0.2",
        *extra,
    ]


def test_declared_defaults_match_the_package_yaml() -> None:
    defaults = yaml_defaults(share_dir("hil_sim") / "config" / "hil_sim.yaml", NODE_NAME)
    assert defaults == {spec.name: spec.default for spec in PARAMETERS}
    assert all(len(spec.description) > 10 for spec in PARAMETERS)


@pytest.mark.ros
def test_firmware_echoes_a_heartbeat_in_real_time_and_reports_its_speed(tmp_path: Path, spawn: Any) -> None:
    probe = RosProbe("simavr_mcu_test")
    port: serial.Serial | None = None
    try:
        probe.record(DiagnosticArray, "diagnostics", qos.COMMAND)
        spawn(node_command(tmp_path), name="simavr_mcu")
        RosProbe.wait_for((tmp_path / "cmd").exists, timeout=60.0, what="the command pty")
        port = serial.Serial(str(tmp_path / "cmd"), 38400, timeout=0)
        received = b""

        def echoed() -> bool:
            nonlocal received
            port.write(b"HBB,42.5\n")  # type: ignore[union-attr]
            time.sleep(0.05)
            received += port.read(65536)  # type: ignore[union-attr]
            return b"HBB,42.5\n" in received

        RosProbe.wait_for(echoed, timeout=30.0, what="the firmware's heartbeat echo")

        def telemetry() -> bool:
            nonlocal received
            received += port.read(65536)  # type: ignore[union-attr]
            return b"\nTL1" in received  # sent on its own timer, in AVR time

        RosProbe.wait_for(telemetry, timeout=10.0, what="telemetry")

        def stats() -> dict[str, str] | None:
            for array in reversed(probe.messages("diagnostics")):
                for status in array.status:
                    if status.name.endswith("firmware in simavr"):
                        values = {kv.key: kv.value for kv in status.values}
                        return values if float(values["mhz"]) > 0 else None
            return None

        values = RosProbe.wait_for(stats, timeout=30.0, what="diagnostics with the AVR's speed")
        assert values["command_port"] == str(tmp_path / "cmd")
        assert int(values["uart_rx"]) > 0 and int(values["frames_sent"]) > 0
        # robot_mcu's motor enables (5, 6) run on Timer0, which simavr runs: no warning;
        # no DRV came, so neither was ever driven
        assert (values["simavr_warnings"], values["pwm_idle_pins"]) == ("0", "[5, 6]")
    finally:
        if port is not None:
            port.close()
        probe.close()


@pytest.mark.ros
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("-p", "wiring:=/nowhere/wiring.yaml"), "cannot read the robot wiring"),
        (("-p", "firmware_defines:=['NOVALUE']"), "expected NAME=VALUE"),
        (("-p", "firmware:=/nowhere/robot.elf"), "firmware /nowhere/robot.elf: no such file"),
        (("-p", "firmware:=/bin/sh"), "firmware /bin/sh: an ELF for machine"),  # the host's, not AVR
        (("-p", "signal_port:=CMD"), "command_port and signal_port are the same path"),
        (("-p", "board:=mega2560"), "board nano (atmega328p) is not the firmware's board mega2560"),
    ],
)
def test_bad_configuration_exits_2_naming_the_problem(
    tmp_path: Path, spawn: Any, extra: tuple[str, ...], message: str
) -> None:
    extra = tuple(arg.replace("CMD", str(tmp_path / "cmd")) for arg in extra)
    proc = spawn(node_command(tmp_path, *extra), name="simavr_mcu_bad")
    assert proc.wait(timeout=60) == 2
    assert message in (tmp_path / "simavr_mcu_bad.log").read_text()
    assert not (tmp_path / "cmd").exists()
