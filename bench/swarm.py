"""K HIL robots in real time: the largest swarm whose simulator holds RTF >= 0.98.

Each run is ``hil_sim_runner --rtf 1`` in a process of its own: K robots, each with its
MCU (virtual, or the robot firmware in simavr), signal bridge, control loop and radio
module, the swarm behaviour in the swarm world, for DURATION simulated seconds. The
ladder of K stops at the first run below 0.98. Targets (issue 13): K >= 10 with virtual
MCUs, K >= 3 with the firmware. Baseline: one robot, the same run. Also the radio
packets (copies resolved at a receiver) per second that the runs handled.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _benchlib import bar_plot, emit, private_ros_domain, progress

NAME = "swarm"
ROOT = Path(__file__).resolve().parents[1]
WORLD = ROOT / "ws" / "src" / "hil_sim" / "worlds" / "swarm.yaml"
RESULTS = ROOT / "bench" / "results"
DURATION = 10.0
HOLD = 0.98
LADDERS = {"virtual": (1, 2, 4, 6, 8, 10, 12, 14, 16), "simavr": (1, 2, 3, 4, 5, 6)}
TARGETS = {"virtual": 10, "simavr": 3}


def run(mcu: str, k: int) -> dict[str, Any]:
    """One real-time run of K robots; its metrics."""
    with tempfile.TemporaryDirectory(prefix="hil-bench-swarm-") as folder:
        command = [
            sys.executable,
            "-m",
            "hil_bringup.hil_sim_runner",
            "--headless",
            "--rtf",
            "1",
            "--mcu",
            mcu,
            "--robots",
            str(k),
            "--hil-robots",
            str(k),
            "--robot-spacing",
            "0.8",
            "--radio",
            "--behaviour",
            "swarm",
            "--world",
            str(WORLD),
            "--duration",
            str(DURATION),
            "--report-dir",
            folder,
        ]
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=300, env=os.environ.copy(), check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{mcu} K={k}: exit {done.returncode}: {done.stderr[-500:]}")
        metrics: dict[str, Any] = json.loads((Path(folder) / "metrics.json").read_text())
    return metrics


def ladder(mcu: str) -> tuple[int, list[dict[str, Any]]]:
    """Runs up the ladder until one falls below HOLD; the largest K that held, and every run."""
    held, runs = 0, []
    for k in LADDERS[mcu]:
        metrics = run(mcu, k)
        radio = metrics.get("radio", {})
        row = {
            "k": k,
            "rtf": metrics["rtf"],
            "radio_delivered_per_s": round(radio.get("delivered", 0) / max(metrics["sim_duration_s"], 1e-9)),
            "radio_lost_random": radio.get("lost_random", 0),
            "arrived": sum(1 for t in metrics.get("arrival_times_s", {}).values() if t is not None),
        }
        runs.append(row)
        progress(NAME, f"{mcu} K={k}: RTF {row['rtf']:.3f}, {row['arrived']}/{k} at the light")
        if metrics["rtf"] < HOLD:
            break
        held = k
    return held, runs


def main() -> None:
    private_ros_domain()
    results = {mcu: ladder(mcu) for mcu in ("virtual", "simavr")}
    figures = {f"{mcu}_largest_k_at_rtf_{HOLD}": held for mcu, (held, _) in results.items()}
    best_radio = max(r["radio_delivered_per_s"] for _, runs in results.values() for r in runs)
    figures["radio_packets_delivered_per_s_max"] = best_radio
    baseline = {f"{mcu}_k1_rtf": runs[0]["rtf"] for mcu, (_, runs) in results.items()}
    bar_plot(
        {f"{mcu} K={r['k']}": r["rtf"] for mcu, (_, runs) in results.items() for r in runs},
        target=HOLD,
        unit="RTF",
        title=f"K HIL robots in real time ({DURATION:g} s runs)",
        path=str(RESULTS / f"{NAME}.png"),
        thousands=False,
        target_label=f"RTF {HOLD} to hold",
    )
    emit(
        NAME,
        figures=figures,
        target={f"{mcu}_largest_k_at_rtf_{HOLD}": f">= {k}" for mcu, k in TARGETS.items()},
        baseline=baseline,
        details={"runs": {mcu: runs for mcu, (_, runs) in results.items()}},
    )


if __name__ == "__main__":
    main()
