"""The run's link fault proxies in one process, and the account of what they did.

:func:`make_proxy` turns a :class:`~hil_bringup.core.graph.FaultLink` of the graph
into a :class:`~hil_bridge.core.fault_proxy.FaultProxy` with a message tally on each
direction (lines on the command link, frames of the link's signals on the signal
link). :func:`fault_report` sets the tallies against the receivers' counters
(:mod:`hil_bridge.core.link_accounting`), per link and direction, for ``metrics.json``
and the soak bench.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hil_bridge.core.fault_proxy import FaultProxy
from hil_bridge.core.link_accounting import (
    EXPLANATIONS,
    FrameTally,
    LineTally,
    MessageTally,
    ReceiverCounts,
    reconcile,
)
from hil_bridge.core.signal_protocol import SignalLayout
from hil_bringup.core.graph import FaultLink

#: Each link's directions: (upstream -> port, port -> upstream), i.e. from and to the MCU.
DIRECTIONS: Mapping[str, tuple[str, str]] = {
    "command": ("mcu_to_loop", "loop_to_mcu"),
    "signal": ("mcu_to_bridge", "bridge_to_mcu"),
}


def make_proxy(link: FaultLink, layout: SignalLayout, *, checked: bool) -> FaultProxy:
    """The in-process fault proxy of ``link``, counting the messages it damages.

    Args:
        link: the proxy's settings (from :func:`hil_bringup.core.graph.fault_links`).
        layout: the signal link's layout (INPUT frames come from the MCU side).
        checked: the links run in checked mode.
    """
    tallies: tuple[MessageTally, MessageTally]
    if link.link == "command":
        tallies = (LineTally(checked=checked), LineTally(checked=checked))
    else:
        tallies = (
            FrameTally(bytes(slot.id for slot in layout.inputs), checked=checked),
            FrameTally(bytes(slot.id for slot in layout.outputs), checked=checked),
        )
    return FaultProxy(link.upstream, link.port, link.model, name=link.link, observers=tallies)


#: Why a real-time account is not exact (``fault_report(lockstep=False)``).
REAL_TIME = (
    "real time: the loop and the bridge open their ports after the proxies have started, and"
    " the open flushes what a proxy had passed on before (a real serial port loses it too);"
    " at the end the threads stop one after another. Those messages are outside the proxies'"
    " view, so the account is exact only in lockstep (rtf 0); the figures are still given"
)


def fault_report(
    proxies: Sequence[FaultProxy],
    receivers: Mapping[str, ReceiverCounts | None],
    *,
    checked: bool,
    lockstep: bool = True,
) -> dict[str, Any]:
    """What the proxies damaged against what the receivers counted, per link and direction.

    Args:
        proxies: the run's proxies (made by :func:`make_proxy`).
        receivers: each direction's receiver counts (names of :data:`DIRECTIONS`);
            None where the receiver keeps none (the firmware in simavr).
        checked: the links run in checked mode.
        lockstep: the run was stepped in lockstep; in real time the account cannot be
            exact (:data:`REAL_TIME`), and ``accounted`` is None.

    Returns:
        ``{"mode", "accounted", "links": {link: {"model", "bytes", direction: {...}}},
        "explanations"}``; ``accounted`` is True when every direction reconciles
        (checked mode, lockstep), None in plain mode, in real time, or with a receiver
        that keeps no counts.
    """
    links: dict[str, Any] = {}
    verdicts: list[bool | None] = []
    for proxy in proxies:
        model = proxy.down.model
        entry: dict[str, Any] = {
            "model": {"drop": model.drop, "corrupt": model.corrupt, "baud": model.baud, "seed": model.seed},
        }
        for name, channel in zip(DIRECTIONS[proxy.name], (proxy.down, proxy.up), strict=True):
            stats = channel.stats
            direction: dict[str, Any] = {
                "bytes": {"in": stats.bytes_in, "dropped": stats.dropped, "corrupted": stats.corrupted},
            }
            tally, receiver = channel.observer, receivers.get(name)
            if isinstance(tally, MessageTally) and receiver is not None:
                direction.update(reconcile(tally, receiver))
            else:
                direction["accounted"] = None
                direction["note"] = "no receiver counts (the firmware in simavr keeps its own)"
            verdicts.append(direction["accounted"])
            entry[name] = direction
        links[proxy.name] = entry
    accounted = None if not checked or None in verdicts else all(v is True for v in verdicts)
    explanations = dict(EXPLANATIONS)
    if not lockstep:
        accounted = None
        explanations["real_time"] = REAL_TIME
    return {
        "mode": "checked" if checked else "plain",
        "timing": "lockstep" if lockstep else "real time",
        "accounted": accounted,
        "links": links,
        "explanations": explanations,
    }


def fault_summary(report: dict[str, Any]) -> str:
    """One line on a :func:`fault_report`: accounted or not, or what plain mode saw."""
    directions = [d for link in report["links"].values() for k, d in link.items() if k != "model"]
    damaged = sum(d.get("damaged", 0) + d.get("merged", 0) for d in directions)
    if report["timing"] == "real time":
        unaccounted = sum(abs(d.get("unaccounted", 0)) for d in directions)
        return (
            f"{damaged} messages damaged, {unaccounted} more or fewer counted lost: inexact in real"
            " time (start-up and shutdown), see link_faults in metrics.json; --rtf 0 accounts exactly"
        )
    if report["mode"] == "plain":
        detected = sum(d["receiver"]["bad_total"] for d in directions if "receiver" in d)
        return (
            f"{damaged} messages damaged, {detected} bad ones detected (plain mode cannot count"
            " losses: see link_faults in metrics.json)"
        )
    if report["accounted"]:
        return f"all {damaged} damaged messages counted lost by their receivers (checked mode)"
    unaccounted = sum(abs(d.get("unaccounted", 0)) for d in directions)
    return f"{damaged} messages damaged, {unaccounted} not accounted for: see link_faults in metrics.json"
