"""The demo scenario suite (``hil_scenario run ws/src/hil_testing/scenarios``): its wall time.

* Suite: every shipped scenario run as ``hil_scenario run`` does (lockstep graph,
  timeline, checks every period, the run report of each), one after the other in
  one process. Target: the whole suite in <= 60 s of wall time on this machine.
* Baseline, measured beside it in the same run: the same graphs (same options) stepped
  in lockstep for the same simulated time with no inputs, checks or reports, i.e.
  what the scenario engine costs on top of the simulation it drives.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _benchlib import emit, private_ros_domain, progress

from hil_bringup.graph_runner import GraphRunner
from hil_testing.core.scenario import Scenario, load_scenario
from hil_testing.hil_scenario import graph_options, run_scenario

NAME = "scenarios"
SCENARIOS = Path(__file__).resolve().parents[1] / "ws" / "src" / "hil_testing" / "scenarios"
TARGET_S = 60.0


def bare_run(scenario: Scenario, seconds: float) -> float:
    """Wall seconds of the scenario's graph stepped for ``seconds`` simulated, nothing else."""
    start = time.perf_counter()
    runner = GraphRunner(graph_options(scenario))
    try:
        runner.start()
        while runner.sim.sim.time < seconds - 1e-9:
            runner.step(ahead=True)  # no inputs: ahead wherever no loop frame falls
    finally:
        runner.stop()
    return time.perf_counter() - start


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    private_ros_domain()
    scenarios = [load_scenario(path) for path in sorted(SCENARIOS.glob("*.yaml"))]
    figures: dict[str, float] = {}
    simulated: dict[str, float] = {}
    passed = True
    suite = bare = 0.0
    with tempfile.TemporaryDirectory(prefix="bench-scenarios-") as out:
        # Each scenario, then its bare graph: the two see the same machine load.
        for scenario in scenarios:
            result = run_scenario(scenario, report_dir=Path(out))
            passed = passed and result.passed
            suite += result.wall_time
            simulated[scenario.name] = float(result.properties["simulated_s"])
            figures[f"{scenario.name}_wall_s"] = round(result.wall_time, 2)
            bare_s = bare_run(scenario, simulated[scenario.name])
            bare += bare_s
            progress(
                NAME,
                f"{scenario.name}: {result.wall_time:.1f} s wall ({bare_s:.1f} s bare), "
                f"{simulated[scenario.name]:.1f} s simulated",
            )
    total_simulated = sum(simulated.values())
    emit(
        NAME,
        figures={
            "suite_wall_s": round(suite, 2),
            "scenarios": len(scenarios),
            "all_passed": passed,
            "simulated_s": round(total_simulated, 2),
            "suite_rtf": round(total_simulated / suite, 2),
            **figures,
        },
        target={"suite_wall_s": f"<= {TARGET_S:g}"},
        baseline={
            "bare_graphs_wall_s": round(bare, 2),
            "engine_and_report_overhead_s": round(suite - bare, 2),
        },
        notes="one process, rtf 0 (lockstep), each scenario until every verdict is settled (an assertion "
        "over the whole run holds it to its duration); "
        "suite includes building each graph and writing each run report (report.png, metrics.json)",
    )


if __name__ == "__main__":
    main()
