"""CpuLatencyHold: the PM QoS request written and kept open, or a reason naming the device."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from hil_common.core.cpu_latency import DEVICE, CpuLatencyHold


def test_a_hold_writes_the_latency_as_a_32_bit_integer_and_keeps_the_device_open(tmp_path: Path) -> None:
    device = tmp_path / "cpu_dma_latency"
    device.write_bytes(b"")
    with CpuLatencyHold(max_latency_us=20, device=str(device)) as hold:
        assert hold.held
        assert hold.describe() == "CPU wake-up latency held at 20 µs"
        assert struct.unpack("=i", device.read_bytes()) == (20,)
        fd = hold._fd
        assert fd is not None
        os.fstat(fd)  # open while held
    assert not hold.held
    with pytest.raises(OSError):
        os.fstat(fd)
    assert hold.describe() == "CPU wake-up latency held at 20 µs"  # what the request got
    hold.release()  # again: nothing


@pytest.mark.parametrize(
    ("name", "why"),
    [("missing", "No such file or directory"), ("folder", "Is a directory")],
)
def test_a_device_that_cannot_be_written_holds_nothing_and_says_why(
    tmp_path: Path, name: str, why: str
) -> None:
    (tmp_path / "folder").mkdir()
    device = str(tmp_path / name)
    hold = CpuLatencyHold(device=device)
    assert not hold.held
    assert hold.reason == f"{device}: {why}"
    assert hold.describe() == f"CPU wake-up latency not held ({device}: {why})"
    hold.release()


def test_the_default_device_is_the_kernels_pm_qos_device() -> None:
    hold = CpuLatencyHold()
    try:
        assert hold.device == DEVICE == "/dev/cpu_dma_latency"
        assert hold.held == (os.access(DEVICE, os.W_OK)), hold.reason
    finally:
        hold.release()
