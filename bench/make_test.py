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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--select", default="", help="only the tests -k SELECT chooses (both runs)")
    args = parser.parse_args()
    select = ["-k", args.select] if args.select else []
    make = ["make", "--no-print-directory", "test"]
    if select:
        make.append(f"PYTEST_ARGS={shlex.join(select)}")
    parallel_s, parallel_load = timed(make, "make test")
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
        },
        notes=f"{os.cpu_count()} CPUs; target for an idle machine; the loads say how idle it was"
        + (f"; tests -k {args.select!r} only" if args.select else ""),
    )


if __name__ == "__main__":
    main()
