"""The lockstep runner's pty reads: every byte the in-process peer wrote, also after a replug."""

from __future__ import annotations

import time

import pytest

from hil_bridge.core.serial_link import LinkState
from hil_bringup.core.graph import GraphOptions
from hil_bringup.runner import GraphRunner


@pytest.mark.ros
def test_lockstep_reads_are_paired_again_after_an_unplug_and_replug() -> None:
    runner = GraphRunner(GraphOptions(rtf=0.0, mcu="virtual", behaviour="boards"))
    runner.start()
    try:
        mcu = runner.mcu
        assert mcu is not None
        for _ in range(2):
            for _ in range(100):
                runner.step()
            mcu.unplug()  # type: ignore[union-attr]
            for _ in range(10):
                runner.step()
            mcu.plug()  # type: ignore[union-attr]
            deadline = time.monotonic() + 30.0  # the reconnect backoff runs on the wall clock
            while runner.loop.link.state is not LinkState.OPEN and time.monotonic() < deadline:
                runner.step()
        for _ in range(200):  # traffic on the new ptys
            runner.step()
        ends = [runner.loop.link, runner.bridge.link, mcu.command, mcu.signal]  # type: ignore[union-attr]
        assert all(end.owed is not None for end in ends)
        # A new pty counted against everything written to the old one would give up
        # waiting (a short read) on every replug.
        assert [end.owed.short_reads for end in ends if end.owed] == [0, 0, 0, 0]
        assert runner.loop.link.generation == 3  # opened, and reopened after each replug
    finally:
        runner.stop()
