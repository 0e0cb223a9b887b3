"""``make test``: its wall time, beside the same tests run one after the other.

* Figure: the wall time of ``make test`` as a user runs it (ruff, then mypy beside the
  parallel pytest pass, then the serial pass; the workers take the slowest test files
  first when an earlier parallel run left their times in ``.pytest_cache``). Target:
  within 5 minutes on an idle machine of two cores.
* Baseline, measured beside it in the same run: ``pytest -p no:xdist`` over the same
  tests, one after the other in one process (what ``make test`` ran before it ran
  them in parallel).
* The load average before each run goes beside the figures: other work on the machine
  lengthens both, and the parallel run more (it counts on the second core).
* The machine's own speed goes beside them too: this VM's cores run at different
  speeds from hour to hour (the physics core alone between 59x and 79x real time in
  one day), and the suite's time follows. ``gauge_s``: the best of three runs of a
  fixed pure-Python workload (no project code), just before ``make test`` and after.

``--select EXPR`` runs only the tests ``-k EXPR`` selects, in both runs (a quick check
of the benchmark itself).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from _benchlib import emit, progress

NAME = "make_test"
ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 300.0


def timed(cmd: list[str], label: str) -> tuple[float, float]:
    """Wall seconds of ``cmd`` run in the repository and the 1-minute load before it."""
    load = os.getloadavg()[0]
    progress(NAME, f"{label}: {shlex.join(cmd)} (load {load:.2f})")
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        tail = proc.stdout.decode(errors="replace")[-3000:]
        sys.exit(f"{NAME}: {label} failed (exit {proc.returncode}):\n{tail}")
    progress(NAME, f"{label}: {wall:.1f} s")
    return wall, load


def gauge_s(repeats: int = 3) -> float:
    """Wall seconds of a fixed pure-Python workload (best of ``repeats``): the machine's speed now."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        total = 0
        for i in range(5_000_000):
            total += i * i % 7
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--select", default="", help="only the tests -k SELECT chooses (both runs)")
    args = parser.parse_args()
    select = ["-k", args.select] if args.select else []
    make = ["make", "--no-print-directory", "test"]
    if select:
        make.append(f"PYTEST_ARGS={shlex.join(select)}")
    before = gauge_s()
    parallel_s, parallel_load = timed(make, "make test")
    after = gauge_s()
    progress(NAME, f"machine gauge {before:.3f} s before, {after:.3f} s after")
    serial_s, serial_load = timed([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", *select], "serial")
    emit(
        NAME,
        figures={
            "make_test_wall_s": round(parallel_s, 1),
            "load_1min_before_make_test": round(parallel_load, 2),
            "serial_over_make_test": round(serial_s / parallel_s, 2),
        },
        target={"make_test_wall_s": f"<= {TARGET_S:g}"},
        baseline={
            "serial_pytest_wall_s": round(serial_s, 1),
            "load_1min_before_serial": round(serial_load, 2),
            "gauge_s_before_make_test": round(before, 3),
            "gauge_s_after_make_test": round(after, 3),
        },
        notes=f"{os.cpu_count()} CPUs; target for an idle machine; the loads say how idle it was; "
        "gauge_s: a fixed pure-Python workload's best of three, the machine's speed (lower is faster)"
        + (f"; tests -k {args.select!r} only" if args.select else ""),
    )


if __name__ == "__main__":
    main()
