"""The account of a graph runner's fault proxies against what the receivers counted.

:func:`hil_bringup.core.link_faults.fault_report` on a live graph runner.
"""

from __future__ import annotations

from typing import Any

from hil_bridge.core.link_accounting import ReceiverCounts
from hil_bringup.core.link_faults import fault_report
from hil_bringup.graph_runner import GraphRunner
from hil_mcu.virtual_mcu_node import VirtualMcuNode


def receiver_counts(runner: GraphRunner) -> dict[str, ReceiverCounts | None]:
    """What each direction's receiver counted (None: the firmware in simavr keeps its own)."""
    mcu = runner.mcu
    virtual = mcu.mcu if isinstance(mcu, VirtualMcuNode) else None
    return {
        "mcu_to_loop": ReceiverCounts.of_lines(runner.loop.loop.decoder.stats),
        "loop_to_mcu": None if virtual is None else ReceiverCounts.of_lines(virtual.command_stats),
        "mcu_to_bridge": ReceiverCounts.of_frames(runner.bridge.exchange.decoder.stats),
        "bridge_to_mcu": None if virtual is None else ReceiverCounts.of_frames(virtual.signal_stats),
    }


def link_fault_report(runner: GraphRunner) -> dict[str, Any] | None:
    """The account of the run's fault proxies (None without ``faults``).

    The receivers are read before the tallies, so every message a receiver took is
    already in its tally even while threads run (real time).
    """
    if not runner.proxies:
        return None
    receivers = receiver_counts(runner)
    return fault_report(runner.proxies, receivers, checked=runner.options.checked, lockstep=runner.lockstep)
