"""Long campaigns of the whole graph: faulty links, and a cable pulled again and again.

Both run the one-process runner in lockstep (rtf 0) until the behaviour's task is
done (or a limit of simulated time), so a campaign repeats for the same seed:

* :func:`run_faulty`: a fault proxy on both links (``GraphOptions.faults`` with
  ``fault_drop`` and ``fault_corrupt``); the result holds the account of every message
  the proxies damaged against what the receivers counted (:func:`link_fault_report`).
* :func:`run_replug`: the virtual MCU's cable is pulled and put back ``cycles`` times
  (:meth:`hil_mcu.virtual_mcu_node.VirtualMcuNode.unplug`: both ptys hang up and are
  made again at the same paths, the MCU core runs on). Each cycle waits until the
  control loop and the signal bridge have reopened their ports and traffic flows
  again both ways on both links: one recovery, without restarting anything.

In lockstep the loop's and the bridge's reconnect backoff is put on simulated time
(:meth:`hil_bridge.core.serial_link.SerialLink.use_clock`), so a recovery takes the
same simulated time on a fast machine and a loaded one. ``bench/soak.py`` runs the
full campaign, ``test/test_soak.py`` a bounded one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hil_bridge.core.serial_link import LinkState
from hil_bringup.core.done import DoneWatch, task_done
from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner
from hil_bringup.link_report import link_fault_report
from hil_mcu.virtual_mcu_node import VirtualMcuNode
from hil_testing.errors import HilTestingError

#: Simulated seconds a cycle may take to recover before the campaign gives up.
RECOVERY_LIMIT_S = 10.0


def _lockstep(options: GraphOptions) -> GraphOptions:
    if options.behaviour not in ("boards", "light"):
        raise HilTestingError(f"a soak run needs a behaviour with a task, not {options.behaviour!r}")
    return replace(options, rtf=0.0)


def _summary(runner: GraphRunner, watch: DoneWatch, wall: float) -> dict[str, Any]:
    sim = runner.sim.sim
    loop = runner.loop.loop
    mcu = runner.mcu
    summary: dict[str, Any] = {
        "done": watch.done,
        "done_at_s": None if watch.done_at is None else round(watch.done_at, 3),
        "sim_s": round(sim.time, 3),
        "wall_s": round(wall, 3),
        "boards_down": sim.geometry.boards_down,
        "boards": len(sim.world.boards),
        "failsafe_trips": {name: loop.failsafes.trips(name) for name in ("cmd_vel", "mcu", "station")},
    }
    if isinstance(mcu, VirtualMcuNode):
        summary["mcu_watchdog_trips"] = mcu.mcu.stats.watchdog_trips
    return summary


def _settled(runner: GraphRunner, watch: DoneWatch) -> bool:
    with runner.sim.lock:
        return watch.update(runner.sim.sim.time, runner.sim.sim)


def run_faulty(options: GraphOptions, *, limit_s: float = 120.0) -> dict[str, Any]:
    """Run until the task is done (and settled) or ``limit_s`` of simulated time.

    Returns:
        the summary (done, done_at_s, sim_s, wall_s, boards_down, failsafe trips) and,
        with ``options.faults``, ``link_faults``: :func:`link_fault_report`.
    """
    options = _lockstep(options)
    watch = DoneWatch(task_done(options.behaviour))
    runner = GraphRunner(options)
    try:
        runner.start()
        start = time.monotonic()
        while runner.sim.sim.time < limit_s and not _settled(runner, watch):
            runner.step()
        result = _summary(runner, watch, time.monotonic() - start)
        result["link_faults"] = link_fault_report(runner)
        return result
    finally:
        runner.stop()


def run_replug(
    options: GraphOptions,
    *,
    cycles: int,
    interval_s: float = 0.2,
    unplugged_s: float = 0.1,
    limit_s: float = 300.0,
) -> dict[str, Any]:
    """Pull and replug the virtual MCU's cable ``cycles`` times, then run until the task is done.

    Args:
        options: the run (``mcu`` must be ``virtual``; rtf is set to 0).
        cycles: how many times to unplug and plug back.
        interval_s: simulated seconds of normal running before each unplug.
        unplugged_s: simulated seconds the cable stays out.
        limit_s: simulated seconds after which the run ends, done or not.

    Returns:
        the summary of :func:`run_faulty` plus ``cycles``, ``recoveries`` (the loop's
        and the bridge's port reopenings, and the cycles after which traffic flowed
        again both ways on both links) and recovery times (simulated s, from the plug).

    Raises:
        HilTestingError: not the virtual MCU.
    """
    options = _lockstep(options)
    if options.mcu != "virtual":
        raise HilTestingError("unplugging needs the virtual MCU (mcu = virtual)")
    watch = DoneWatch(task_done(options.behaviour))
    runner = GraphRunner(options)
    try:
        runner.start()
        clock = runner.loop.clock  # the runner times the links' reopen backoff on it too
        mcu = runner.mcu
        assert isinstance(mcu, VirtualMcuNode)
        start = time.monotonic()
        settled = False

        def run_for(seconds: float, until: Callable[[], bool] | None = None) -> bool:
            nonlocal settled
            end = clock() + seconds
            while clock() < end:
                runner.step()
                settled = _settled(runner, watch) or settled
                if until is not None and until():
                    return True
            return until is None

        recovered: list[float] = []
        for _ in range(cycles):
            if clock() >= limit_s:
                break
            run_for(interval_s)
            before = _traffic(runner, mcu)
            mcu.unplug()
            run_for(unplugged_s)
            mcu.plug()
            plugged_at = clock()
            if not run_for(RECOVERY_LIMIT_S, lambda b=before: _recovered(runner, mcu, b)):
                break
            recovered.append(clock() - plugged_at)
        while clock() < limit_s and not settled:
            runner.step()
            settled = _settled(runner, watch)
        result = _summary(runner, watch, time.monotonic() - start)
        result.update(
            cycles=cycles,
            replugs=mcu.replugs,
            recoveries=len(recovered),
            reconnects={
                "loop": runner.loop.link.generation - 1,
                "bridge": runner.bridge.link.generation - 1,
            },
            recovery_s={
                "mean": round(sum(recovered) / len(recovered), 4) if recovered else None,
                "max": round(max(recovered), 4) if recovered else None,
            },
        )
        return result
    finally:
        runner.stop()


def _traffic(runner: GraphRunner, mcu: VirtualMcuNode) -> tuple[int, int, int, int, int, int]:
    """The ports' generations and what each end of both links has decoded so far."""
    counters = mcu.mcu.counters()
    return (
        runner.loop.link.generation,
        runner.bridge.link.generation,
        runner.loop.loop.decoder.stats.messages,
        runner.bridge.exchange.decoder.stats.frames,
        counters["command_messages"],
        counters["signal_frames_received"],
    )


def _recovered(runner: GraphRunner, mcu: VirtualMcuNode, before: tuple[int, ...]) -> bool:
    """Both ports reopened, and since then every end has decoded something new."""
    now = _traffic(runner, mcu)
    open_again = runner.loop.link.state is LinkState.OPEN and runner.bridge.link.state is LinkState.OPEN
    return open_again and all(n > b for n, b in zip(now, before, strict=True))
