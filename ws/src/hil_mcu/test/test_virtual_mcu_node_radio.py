"""The virtual MCU node's radio link as a process: a third pty at ``radio_port``, relayed both ways."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import termios
import time
import tty
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from hil_sim.core.radio import RadioReceive, RadioSend, RadioStatus, encode_radio

T = TypeVar("T")
RTX = encode_radio(RadioSend(5, b"hello"))
RRX = encode_radio(RadioReceive(2, -70, b"\x01\x02"))
RST = encode_radio(RadioStatus("LISTEN", 16, 0))


def wait_for(condition: Callable[[], T], *, timeout: float = 30.0, what: str) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := condition():
            return result
        time.sleep(0.005)
    raise AssertionError(f"{what}: not within {timeout:g} s")


class Port:
    """One end of a pty link, opened raw as a peer would open it."""

    def __init__(self, path: Path) -> None:
        wait_for(path.exists, what=f"{path} appears")
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(self.fd)
        termios.tcflush(self.fd, termios.TCIFLUSH)
        self.data = b""

    def write(self, text: str) -> None:
        data = text.encode()
        assert os.write(self.fd, data) == len(data)

    def lines(self) -> list[str]:
        while select.select([self.fd], [], [], 0.005)[0]:
            self.data += os.read(self.fd, 65536)
        return self.data.decode().splitlines()

    def close(self) -> None:
        os.close(self.fd)


def start(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "hil_mcu.virtual_mcu_node", "--ros-args"]
    for name, value in (("command_port", "cmd"), ("signal_port", "sig"), *extra):
        command += ["-p", f"{name}:={tmp_path / value if value else value}"]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


@pytest.mark.ros
def test_radio_port_relays_rtx_out_and_rrx_rst_in_and_goes_with_the_node(tmp_path: Path) -> None:
    node = start(tmp_path, ("radio_port", "radio"))
    ports: list[Port] = []
    try:
        loop, module = Port(tmp_path / "cmd"), Port(tmp_path / "radio")
        ports += [loop, module]
        loop.write(f"HBB,1\n{RTX}\n")
        wait_for(lambda: RTX in module.lines(), what="the RTX on the radio link")
        module.write(f"{RST}\n{RRX}\n")
        wait_for(lambda: RRX in loop.lines(), what="the RRX on the command link")
        assert [line for line in loop.lines() if line.startswith("R")] == [RST, RRX]
        assert "ERR,no radio" not in loop.lines()
    finally:
        for port in ports:
            port.close()
        node.send_signal(signal.SIGINT)
        _, stderr = node.communicate(timeout=20)
    assert node.returncode == 0, stderr
    assert not (tmp_path / "radio").exists(), "the radio link was left behind"


@pytest.mark.ros
def test_without_radio_port_rtx_gets_no_radio(tmp_path: Path) -> None:
    node = start(tmp_path)
    ports: list[Port] = []
    try:
        loop = Port(tmp_path / "cmd")
        ports.append(loop)
        loop.write(f"HBB,1\n{RTX}\n")
        wait_for(lambda: "ERR,no radio" in loop.lines(), what="ERR,no radio")
    finally:
        for port in ports:
            port.close()
        node.send_signal(signal.SIGINT)
        node.communicate(timeout=20)


@pytest.mark.ros
def test_radio_port_on_the_command_port_exits_2_naming_both(tmp_path: Path) -> None:
    node = start(tmp_path, ("radio_port", "cmd"))
    _, stderr = node.communicate(timeout=60)
    assert node.returncode == 2
    assert f"command_port and radio_port are the same path {tmp_path}/cmd" in stderr
