"""The runner holds the CPUs' wake-up latency low while the run lasts, as ``cpu_latency`` asks."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner
from hil_common.core import cpu_latency


@pytest.mark.ros
@pytest.mark.parametrize(
    ("option", "rtf", "asked"),
    [("auto", 0.0, True), ("auto", 1.0, False), ("on", 1.0, True), ("off", 0.0, False)],
)
def test_the_run_holds_the_cpu_latency_from_start_to_stop_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str, rtf: float, asked: bool
) -> None:
    device = tmp_path / "cpu_dma_latency"
    device.write_bytes(b"")
    monkeypatch.setattr(cpu_latency, "DEVICE", str(device))
    runner = GraphRunner(GraphOptions(rtf=rtf, cpu_latency=option))
    try:
        assert runner.cpu_latency is None  # nothing before start()
        runner.start()
        hold = runner.cpu_latency
        assert (hold is not None) == asked
        if hold is not None:
            assert hold.held and hold.device == str(device)
            assert struct.unpack("=i", device.read_bytes()) == (0,)
    finally:
        runner.stop()
    assert runner.cpu_latency is None or not runner.cpu_latency.held
    assert device.read_bytes() == (struct.pack("=i", 0) if asked else b"")


@pytest.mark.ros
def test_a_run_goes_on_where_the_device_cannot_be_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = str(tmp_path / "none")
    monkeypatch.setattr(cpu_latency, "DEVICE", missing)
    runner = GraphRunner(GraphOptions(rtf=0.0))
    try:
        runner.start()
        assert runner.cpu_latency is not None and not runner.cpu_latency.held
        assert missing in runner.cpu_latency.describe()
        for _ in range(20):
            runner.step()
        assert runner.sim.sim.time == pytest.approx(0.1)
    finally:
        runner.stop()
