"""A part of an in-process run that dies is named, in real time and in lockstep; nothing hangs."""

from __future__ import annotations

import os
import signal
import time

import pytest

from hil_bringup.core.graph import GraphOptions
from hil_bringup.errors import HilBringupError
from hil_bringup.graph_runner import GraphRunner
from hil_common.errors import HilError
from hil_testing.session import HilSession
from robot_control.core.loop import ControlLoop


class BrokenPartError(RuntimeError):
    """What the broken part raises."""


def break_the_control_loop(monkeypatch: pytest.MonkeyPatch, *, after: int) -> None:
    """The control loop's frame raises from its ``after``-th call on (a bug in a user's loop)."""
    frame = ControlLoop.frame
    calls = 0

    def failing(self: ControlLoop, *args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        if calls > after:
            raise BrokenPartError("the user's loop broke")
        return frame(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ControlLoop, "frame", failing)


def step_a_second(runner: GraphRunner) -> None:
    """One simulated second of lockstep periods (every loop frame comes in it)."""
    end = runner.sim.sim.time + 1.0
    while runner.sim.sim.time < end:
        runner.step()


@pytest.mark.ros
def test_a_node_thread_that_fails_in_real_time_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    break_the_control_loop(monkeypatch, after=10)
    runner = GraphRunner(GraphOptions(rtf=1.0, behaviour="boards"))
    try:
        assert runner.failure() is None
        runner.start()
        deadline = time.monotonic() + 20.0  # the loop runs 30 frames a second
        while runner.failure() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert runner.failure() == "control_loop failed: the user's loop broke"
    finally:
        runner.stop()


@pytest.mark.ros
def test_a_part_that_raises_in_lockstep_is_named_and_the_caller_s_errors_pass_as_they_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runner = GraphRunner(GraphOptions(rtf=0.0, behaviour="boards"))
    runner.start()
    try:
        for _ in range(10):
            runner.step()

        def feed(now: float) -> None:
            raise BrokenPartError("a scenario hook")

        runner.input_feeds.append(feed)
        with pytest.raises(BrokenPartError):
            step_a_second(runner)  # the feed runs at the next loop frame
        assert runner.failure() is None
        runner.input_feeds.remove(feed)
        break_the_control_loop(monkeypatch, after=0)
        with pytest.raises(HilBringupError, match=r"^control_loop failed: the user's loop broke$"):
            step_a_second(runner)
        assert runner.failure() == "control_loop failed: the user's loop broke"
    finally:
        runner.stop()


@pytest.mark.ros
def test_a_session_whose_firmware_harness_dies_raises_naming_it() -> None:
    with HilSession(GraphOptions(mcu="simavr", behaviour="boards")) as hil:
        hil.run(0.5)
        mcu = hil.runner.mcu
        assert mcu is not None and mcu.process is not None  # type: ignore[union-attr]
        os.kill(mcu.process.process.pid, signal.SIGKILL)  # type: ignore[union-attr]
        with pytest.raises(HilError, match=r"simavr_mcu failed: hil_simavr has exited: killed by SIGKILL"):
            hil.run(1.0)
