"""The simavr_mcu node as a process: the firmware in simavr on the wall clock, over its ptys."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest
import serial
from diagnostic_msgs.msg import DiagnosticArray
from std_srvs.srv import Trigger

from hil_common import qos
from hil_common.core.param_spec import yaml_defaults
from hil_common.core.paths import share_dir
from hil_mcu.simavr_mcu_node import NODE_NAME, PARAMETERS
from support.ros_probe import RosProbe


def node_command(tmp_path: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "hil_mcu.simavr_mcu_node",
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
    defaults = yaml_defaults(share_dir("hil_mcu") / "config" / "hil_mcu.yaml", NODE_NAME)
    assert defaults == {spec.name: spec.default for spec in PARAMETERS}
    assert all(len(spec.description) > 10 for spec in PARAMETERS)


def firmware_stats(probe: RosProbe) -> dict[str, str] | None:
    """The values of the last ``firmware in simavr`` status with the AVR running, or None."""
    for array in reversed(probe.messages("diagnostics")):
        for status in array.status:
            if status.name.endswith("firmware in simavr"):
                values = {kv.key: kv.value for kv in status.values}
                return values if float(values["mhz"]) > 0 else None
    return None


@pytest.mark.ros
def test_firmware_echoes_a_heartbeat_in_real_time_and_reports_its_speed(tmp_path: Path, spawn: Any) -> None:
    probe = RosProbe("simavr_mcu_test")
    port: serial.Serial | None = None
    try:
        probe.record(DiagnosticArray, "diagnostics", qos.COMMAND)
        spawn(node_command(tmp_path), name="simavr_mcu")
        # Opened once the node runs (its open watch is made just after the pty's link).
        RosProbe.wait_for(lambda: firmware_stats(probe), timeout=60.0, what="the node running")
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

        def received_some() -> dict[str, str] | None:
            values = firmware_stats(probe)
            return values if values is not None and int(values["uart0_rx"]) > 0 else None

        values = RosProbe.wait_for(received_some, timeout=30.0, what="diagnostics counting the bytes in")
        assert values["command_port"] == str(tmp_path / "cmd")
        assert int(values["frames_sent"]) > 0
        # opening the port reset the MCU (auto_reset, as DTR does), once
        assert (values["resets"], values["command_opens"]) == ("1", "1")
        # robot_mcu's motor enables (5, 6) run on Timer0, which simavr runs: no warning;
        # no DRV came, so neither was ever driven
        assert (values["simavr_warnings"], values["pwm_idle_pins"]) == ("0", "[5, 6]")
    finally:
        if port is not None:
            port.close()
        probe.close()


def call_reset(probe: RosProbe) -> Any:
    client = probe.node.create_client(Trigger, "simavr_mcu/reset")
    assert client.wait_for_service(timeout_sec=20.0), "simavr_mcu/reset not available"
    future = client.call_async(Trigger.Request())
    RosProbe.wait_for(future.done, what="simavr_mcu/reset answered")
    return future.result()


@pytest.mark.ros
def test_reset_service_restarts_the_firmware_and_auto_reset_off_leaves_opens_alone(
    tmp_path: Path, spawn: Any
) -> None:
    probe = RosProbe("simavr_mcu_reset_test")
    port: serial.Serial | None = None
    try:
        probe.record(DiagnosticArray, "diagnostics", qos.COMMAND)
        spawn(node_command(tmp_path, "-p", "auto_reset:=false", "-p", "boot_delay:=0.1"), name="simavr_mcu")
        RosProbe.wait_for((tmp_path / "cmd").exists, timeout=60.0, what="the command pty")
        port = serial.Serial(str(tmp_path / "cmd"), 38400, timeout=0)
        RosProbe.wait_for(lambda: firmware_stats(probe), timeout=30.0, what="diagnostics")
        assert "command_opens" not in firmware_stats(probe)  # type: ignore[operator]  # no open watch
        answer = call_reset(probe)
        assert answer.success, answer.message

        def reset_seen() -> bool:
            values = firmware_stats(probe)
            return values is not None and values["resets"] == "1"

        RosProbe.wait_for(reset_seen, timeout=10.0, what="a reset in the diagnostics")
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
        (("-p", "command_uart:=2"), "command_uart 2: the nano has UART 0"),
        (("-p", "uart_ports:=['1:bt']"), "uart_ports entry '1:bt': the nano has UART 0"),
        (("-p", "uart_ports:=['bt']"), "uart_ports entry 'bt': expected N:link"),
        (("-p", "soft_uart_ports:=['10:11:9600:bt']"), "soft_uart_ports[0]: pin 11 is motor_right.a in"),
        (("-p", "soft_uart_ports:=['10:10:9600:bt']"), "RX and TX must be two pins no other soft UART uses"),
        (("-p", "soft_uart_ports:=['10:A7:9600:bt']"), "A7 of the nano is an analog input only"),
        (("-p", "soft_uart_ports:=['10:11:fast:bt']"), "baud 'fast': expected a whole number 300..250000"),
        (("-p", "soft_uart_ports:=['10:11']"), "expected RX:TX:BAUD:link"),
        (("-p", "boot_delay:=20.0"), "boot_delay out of range Min: -1.0, Max: 10.0"),
        (("-p", "trace_pins:=bogus"), "trace_pins: no pin named 'bogus' on this robot"),
        (("-p", "trace_pins:=light_3"), "A6 of the nano is an analog input only"),
        (
            ("-p", "trace_pins:=D9", "-p", "trace_file:=/proc/no/pins.vcd"),
            "trace_file /proc/no/pins.vcd: cannot",
        ),
        (("-p", "trace_limit_mb:=0.0"), "trace_limit_mb out of range"),
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
