"""Memory and file descriptors of a long lockstep run: nothing may grow without bound.

* Measured: ``hil_sim_runner --headless --rtf 0`` (the boards demo, seed 0) as a user
  runs it, for ``--seconds`` simulated (default one hour). Each progress line it prints
  (every 5 s of wall time) gives the simulated time; at that moment its resident set
  (``VmRSS``) and open file descriptors are read from ``/proc``. Figures: growth from
  the end of the warm-up (``--warmup`` simulated s, default 10 min) to the end, and the
  least-squares slope over that span. Target: RSS grows by at most 1 MB after the
  warm-up, file descriptors not at all.
* Baseline: the same run's warm-up (how much it takes to get going, which the target
  does not count), and the slope the issue measured before the fix (101.1 to 106.9 MB
  over 1200 s simulated).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _benchlib import emit, private_ros_domain, progress

NAME = "long_run"
#: The issue's figure before the fix: 101.1 -> 106.9 MB over 1200 s simulated.
BEFORE_SLOPE_KB_PER_SIM_S = round((106.9 - 101.1) * 1000 / 1200, 2)
#: The run goes this much longer than ``--seconds`` (see sample_run).
RUN_MARGIN = 1.1
#: A progress line of a headless run: "  t   123.4 s  RTF ...".
PROGRESS = re.compile(r"^\s+t\s+([0-9.]+) s\s+RTF")


def rss_mb(pid: int) -> float:
    """The process's resident set, MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def open_fds(pid: int) -> int:
    """How many file descriptors the process has open."""
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


def sample_run(seconds: float, report: Path) -> tuple[list[tuple[float, float, int]], float]:
    """(simulated s, RSS MB, fds) at each progress line of a lockstep run; and its RTF."""
    # A little longer than asked: progress lines come every 5 s of wall time, so the
    # last sample falls short of the run's end.
    command = [
        sys.executable, "-m", "hil_bringup.hil_sim_runner", "--headless", "--rtf", "0",
        "--duration", str(seconds * RUN_MARGIN), "--report-dir", str(report),
    ]  # fmt: skip
    samples: list[tuple[float, float, int]] = []
    rtf = 0.0
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            found = PROGRESS.match(line)
            if found is not None:
                samples.append((float(found.group(1)), rss_mb(proc.pid), open_fds(proc.pid)))
                if len(samples) % 10 == 0:
                    t, rss, fds = samples[-1]
                    progress(NAME, f"t {t:7.1f} s  RSS {rss:6.2f} MB  {fds} fds")
            elif "s simulated (" in line:  # "... in 3600.0 s simulated (180.2 s wall)"
                simulated, wall = re.findall(r"([0-9.]+) s (?:simulated|wall)", line)
                rtf = float(simulated) / float(wall)
        if proc.wait() != 0:
            raise RuntimeError(f"hil_sim_runner exited with status {proc.returncode}")
    return samples, rtf


def plot(samples: list[tuple[float, float, int]], warmup: float, path: str) -> None:
    """RSS and fds over simulated time, the warm-up shaded."""
    import matplotlib  # noqa: PLC0415 - only when a picture is asked for

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    t, rss, fds = (np.array(column) for column in zip(*samples, strict=True))
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(t / 60, rss, color="tab:blue", label="RSS")
    ax.axvspan(0, warmup / 60, color="tab:gray", alpha=0.2, label="warm-up")
    ax.set_xlabel("simulated time (min)")
    ax.set_ylabel("RSS (MB)")
    right = ax.twinx()
    right.plot(t / 60, fds, color="tab:orange", label="open fds")
    right.set_ylabel("open file descriptors")
    right.set_ylim(0, max(fds) * 1.5)
    ax.set_title("hil_sim_runner --rtf 0, boards demo")
    lines = ax.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    ax.legend(lines, [str(line.get_label()) for line in lines], loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3600.0, help="simulated seconds of the run")
    parser.add_argument("--warmup", type=float, default=600.0, help="simulated seconds of warm-up")
    parser.add_argument("--plot", default="bench/results/long_run.png", help="picture PNG ('' for none)")
    args = parser.parse_args()
    private_ros_domain()
    with tempfile.TemporaryDirectory(prefix="hil-long-run-") as folder:
        samples, rtf = sample_run(args.seconds, Path(folder) / "report")
    after = [s for s in samples if s[0] >= args.warmup]
    if len(after) < 3:
        raise RuntimeError(f"only {len(after)} samples after the warm-up: run longer")
    t, rss, fds = (np.array(column) for column in zip(*after, strict=True))
    slope = float(np.polyfit(t, rss, 1)[0]) * 1000  # KB per simulated s
    first = samples[0]
    if args.plot:
        plot(samples, args.warmup, args.plot)
    emit(
        NAME,
        figures={
            "simulated_s": round(float(t[-1]), 1),
            "rss_growth_after_warmup_mb": round(float(rss[-1] - rss[0]), 2),
            "rss_max_minus_warmup_end_mb": round(float(rss.max() - rss[0]), 2),
            "rss_slope_after_warmup_kb_per_sim_s": round(slope, 3),
            "fd_growth_after_warmup": int(fds[-1] - fds[0]),
            "rss_end_mb": round(float(rss[-1]), 1),
            "open_fds_end": int(fds[-1]),
            "rtf": round(rtf, 1),
        },
        target={"rss_growth_after_warmup_mb": "<= 1", "fd_growth_after_warmup": "<= 0"},
        baseline={
            "warmup_s": args.warmup,
            "rss_first_sample_mb": round(first[1], 1),
            "rss_growth_during_warmup_mb": round(float(rss[0] - first[1]), 2),
            "open_fds_first_sample": first[2],
            "before_fix_rss_slope_kb_per_sim_s": BEFORE_SLOPE_KB_PER_SIM_S,
        },
        notes=(
            f"one hil_sim_runner process, --headless --rtf 0, boards demo, seed 0; {len(samples)} "
            "samples of /proc/<pid>/status VmRSS and /proc/<pid>/fd, one per progress line (5 s wall)"
        ),
    )


if __name__ == "__main__":
    main()
