"""Long campaigns: the demo task on faulty links, and with its cable pulled 100 times.

All runs are the one-process runner in lockstep (rtf 0), ended a settle second after
the boards task is done, or at ``--limit`` simulated seconds (``hil_testing.soak``).

1. Faulty links: a fault proxy on both links (command and signal), each direction
   dropping ``--drop`` (1 %) and corrupting ``--corrupt`` (1 %) of the bytes, in plain
   and in checked mode, for ``--seeds`` seeds (0, 1, ...; the seed drives the sensor
   noise and the faults). Figures: runs done, simulated time to done, boards down,
   messages sent / damaged by the proxy / counted lost / detected bad per link and
   direction (summed over the seeds), and the account: in checked mode every message
   the proxy damaged must be counted lost by its receiver (``checked_unaccounted``
   0); plain mode cannot count losses, and its figures say what it can tell.
2. Unplug/replug: the virtual MCU's cable pulled and put back ``--cycles`` (100)
   times during a run (both ptys hang up and are made again, the MCU core runs on):
   recoveries (the loop and the bridge reopen their ports and traffic flows both
   ways on both links again, no restart), recovery time, and the task.

Target (issue 15): the task completes in every run; every damaged message accounted
for in checked mode; 100 recoveries. Baseline: the same runs without faults.
The full accounts (per run, link and direction, with what each figure means) are
in the result's ``accounting``.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from _benchlib import emit, private_ros_domain, progress

from hil_bringup.core.graph import GraphOptions
from hil_testing.soak import run_faulty, run_replug

NAME = "soak"
MODES = ("plain", "checked")
DIRECTIONS = {
    "command": ("mcu_to_loop", "loop_to_mcu"),
    "signal": ("mcu_to_bridge", "bridge_to_mcu"),
}


def task_figures(prefix: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Done count, time to done (mean, max over the runs that finished) and boards down."""
    done = [r["done_at_s"] for r in runs if r["done"]]
    return {
        f"{prefix}_runs_done": len(done),
        f"{prefix}_done_s": [r["done_at_s"] for r in runs],
        f"{prefix}_done_s_mean": round(statistics.fmean(done), 2) if done else None,
        f"{prefix}_boards_down_min": min(r["boards_down"] for r in runs),
    }


def message_figures(mode: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Messages per link and direction over the runs: sent, damaged, counted lost, detected bad."""
    figures: dict[str, Any] = {}
    for link, directions in DIRECTIONS.items():
        for direction in directions:
            entries = [r["link_faults"]["links"][link][direction] for r in runs]
            key = f"{mode}_{link}_{direction}"
            figures[f"{key}_sent"] = sum(e["sent"] for e in entries)
            figures[f"{key}_damaged"] = sum(e["damaged"] + e["merged"] for e in entries)
            figures[f"{key}_lost"] = sum(e["receiver"]["lost"] for e in entries)
            figures[f"{key}_bad"] = sum(e["receiver"]["bad_total"] for e in entries)
            if mode == "checked":
                figures[f"{key}_unaccounted"] = sum(abs(e["unaccounted"]) for e in entries)
            else:
                accepted = sum(e["silently_accepted_at_least"] for e in entries)
                figures[f"{key}_silently_accepted_min"] = accepted
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--drop", type=float, default=0.01, help="probability a byte is lost")
    parser.add_argument("--corrupt", type=float, default=0.01, help="probability a byte gets a bit flipped")
    parser.add_argument("--seeds", type=int, default=3, help="runs per mode (seeds 0, 1, ...)")
    parser.add_argument("--cycles", type=int, default=100, help="unplug/replug cycles")
    parser.add_argument("--limit", type=float, default=240.0, help="simulated seconds a run may take")
    args = parser.parse_args()
    private_ros_domain()

    figures: dict[str, Any] = {}
    baseline: dict[str, Any] = {}
    accounting: dict[str, Any] = {}
    for mode in MODES:
        faulty, clean = [], []
        for seed in range(args.seeds):
            checked = mode == "checked"
            progress(NAME, f"{mode}, seed {seed}: faults {args.drop:g} drop + {args.corrupt:g} corrupt ...")
            options = GraphOptions(
                checked=checked, faults=True, fault_drop=args.drop, fault_corrupt=args.corrupt, seed=seed
            )
            faulty.append(run_faulty(options, limit_s=args.limit))
            progress(NAME, f"{mode}, seed {seed}: {summary(faulty[-1])}; the same without faults ...")
            clean.append(run_faulty(GraphOptions(checked=checked, seed=seed), limit_s=args.limit))
        figures.update(task_figures(mode, faulty))
        figures.update(message_figures(mode, faulty))
        if mode == "checked":
            figures["checked_accounted_runs"] = sum(r["link_faults"]["accounted"] is True for r in faulty)
            figures["checked_unaccounted"] = sum(
                v for k, v in figures.items() if k.startswith("checked_") and k.endswith("_unaccounted")
            )
        figures[f"{mode}_mcu_watchdog_trips"] = sum(r.get("mcu_watchdog_trips", 0) for r in faulty)
        baseline.update(task_figures(f"no_faults_{mode}", clean))
        accounting[mode] = {}
        for seed, run in enumerate(faulty):
            report = run["link_faults"]
            accounting.setdefault("explanations", report.pop("explanations"))
            accounting[mode][str(seed)] = report

    progress(NAME, f"unplug/replug {args.cycles} times ...")
    replug = run_replug(GraphOptions(), cycles=args.cycles, limit_s=max(args.limit, args.cycles * 1.5))
    progress(NAME, f"replug: {summary(replug)}, {replug['recoveries']} recoveries")
    figures.update(
        replug_cycles=replug["cycles"],
        replug_recoveries=replug["recoveries"],
        replug_reconnects_loop=replug["reconnects"]["loop"],
        replug_reconnects_bridge=replug["reconnects"]["bridge"],
        replug_recovery_mean_s=replug["recovery_s"]["mean"],
        replug_recovery_max_s=replug["recovery_s"]["max"],
        replug_done_s=replug["done_at_s"],
        replug_boards_down=replug["boards_down"],
        replug_failsafe_trips=sum(replug["failsafe_trips"].values()),
    )
    target = {
        "plain_runs_done": f">= {args.seeds}",
        "checked_runs_done": f">= {args.seeds}",
        "checked_accounted_runs": f">= {args.seeds}",
        "checked_unaccounted": "<= 0",
        "replug_recoveries": f">= {args.cycles}",
        "replug_boards_down": ">= 6",
    }
    emit(
        NAME,
        figures=figures,
        target=target,
        baseline=baseline,
        notes=(
            f"lockstep, demo world, virtual MCU; faults {args.drop:g} drop + {args.corrupt:g} corruption per"
            " byte on both links and directions (command 38400 baud, signal 115200), seeds"
            f" 0..{args.seeds - 1}, limit {args.limit:g} s simulated; messages summed over the seeds"
            " (damaged includes lines lost with their predecessor's line feed); replug: cable out"
            " 0.1 s every 0.2 s of running plus the recovery, reconnect backoff on simulated time."
            " The boards behaviour dead reckons home from its odometer (the loop's commands through"
            " a wheel model, overridden by TL1 reports that disagree) and filters implausible"
            " sensor readings; a run that is not done is its home thrown off by what no robot-side"
            " estimate sees (in plain mode, damaged pin frames that still parse drive the simulated"
            " motors); the baseline is the same runs without any fault"
        ),
        details={"accounting": accounting},
    )
    return 0


def summary(run: dict[str, Any]) -> str:
    """One progress line of a run."""
    done = f"done at {run['done_at_s']:.1f} s" if run["done"] else f"not done in {run['sim_s']:.0f} s"
    return f"{done}, {run['boards_down']}/{run['boards']} boards, {run['wall_s']:.1f} s wall"


if __name__ == "__main__":
    raise SystemExit(main())
