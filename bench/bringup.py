"""The one-process runner (``make sim``): start-up, memory, real-time pace with a swarm.

1. Warm start to first ``odom``: from launching ``hil_sim_runner --headless`` to the
   first odom message received here (second of two launches, so caches are warm).
   Target <= 5 s. Baseline: the same for a bare rclpy process publishing one odom.
2. Resident memory of the whole graph in one process (VmRSS after it runs), with 1
   robot and with 100 robots. Baseline: a bare rclpy node process.
3. Real-time pace over ``--seconds`` (60) with 100 robots: simulated / wall time of
   the run, and CPU cores used (the child's user + system time / wall). Target RTF
   >= 0.98 on <= 1.5 cores. Baseline: the same run with 1 robot.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import rclpy
from _benchlib import emit, private_ros_domain, progress
from nav_msgs.msg import Odometry

from hil_common import qos

BARE_NODE = (
    "import rclpy, time\n"
    "from nav_msgs.msg import Odometry\n"
    "rclpy.init(); n = rclpy.create_node('bare')\n"
    "p = n.create_publisher(Odometry, 'odom', 10)\n"
    "print('ready', flush=True)\n"
    "while rclpy.ok():\n"
    "    p.publish(Odometry()); rclpy.spin_once(n, timeout_sec=0.05)\n"
)


def runner(*args: str) -> list[str]:
    return [sys.executable, "-m", "hil_bringup.hil_sim_runner", "--headless", *args]


def first_message(
    command: list[str], topic: str, *, timeout: float = 60.0
) -> tuple[float, subprocess.Popen[str]]:
    """Seconds from spawning ``command`` to the first message on ``topic`` (the process keeps running)."""
    node = rclpy.create_node("bench_bringup_probe")
    got: list[float] = []
    node.create_subscription(Odometry, topic, lambda _m: got.append(time.monotonic()), qos.SENSOR)
    start = time.monotonic()
    proc = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True, start_new_session=True
    )
    try:
        while not got and time.monotonic() - start < timeout:
            rclpy.spin_once(node, timeout_sec=0.01)
    finally:
        node.destroy_node()
    if not got:
        stop(proc)
        raise RuntimeError(f"no {topic} from {' '.join(command[:4])} within {timeout:g} s")
    return got[0] - start, proc


def stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def memory(robots: int, folder: Path) -> float:
    topic = "/robot_0/odom" if robots > 1 else "/odom"
    _, proc = first_message(
        runner("--robots", str(robots), "--report-dir", str(folder / f"rss{robots}")), topic
    )
    time.sleep(5.0)
    try:
        return rss_mb(proc.pid)
    finally:
        stop(proc)


def pace(robots: int, seconds: float, folder: Path) -> tuple[float, float]:
    """RTF and CPU cores of a real-time run of ``seconds`` simulated seconds."""
    report = folder / f"pace{robots}"
    start = time.monotonic()
    proc = subprocess.Popen(
        runner("--robots", str(robots), "--duration", str(seconds), "--report-dir", str(report)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    metrics = json.loads((report / "metrics.json").read_text())
    return float(metrics["rtf"]), (usage.ru_utime + usage.ru_stime) / wall


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="simulated seconds of the pace runs")
    args = parser.parse_args()
    private_ros_domain()
    folder = Path(tempfile.mkdtemp(prefix="hil-bench-bringup-"))
    rclpy.init()
    try:
        progress("bringup", "start-up (cold, then warm) ...")
        for _ in range(2):
            warm, proc = first_message(runner("--report-dir", str(folder / "start")), "/odom")
            stop(proc)
        bare_start, bare = first_message([sys.executable, "-c", BARE_NODE], "/odom")
        bare_rss = rss_mb(bare.pid)
        stop(bare)
        progress("bringup", "memory with 1 and 100 robots ...")
        rss_1, rss_100 = memory(1, folder), memory(100, folder)
    finally:
        rclpy.try_shutdown()
    progress("bringup", f"real time for {args.seconds:g} s with 100 robots, then 1 ...")
    rtf_100, cores_100 = pace(100, args.seconds, folder)
    rtf_1, cores_1 = pace(1, args.seconds, folder)
    emit(
        "bringup",
        figures={
            "warm_start_to_first_odom_s": round(warm, 2),
            "rss_1_robot_mb": round(rss_1, 1),
            "rss_100_robots_mb": round(rss_100, 1),
            "realtime_rtf_100_robots": round(rtf_100, 3),
            "realtime_cores_100_robots": round(cores_100, 2),
        },
        target={
            "warm_start_to_first_odom_s": "<= 5",
            "realtime_rtf_100_robots": ">= 0.98",
            "realtime_cores_100_robots": "<= 1.5",
        },
        baseline={
            "bare_rclpy_process_to_first_odom_s": round(bare_start, 2),
            "bare_rclpy_node_rss_mb": round(bare_rss, 1),
            "realtime_rtf_1_robot": round(rtf_1, 3),
            "realtime_cores_1_robot": round(cores_1, 2),
        },
        notes=" ".join(
            (
                "hil_sim_runner --headless, demo world, boards behaviour, 1 kHz physics, the HIL chain",
                "(virtual MCU, bridge, control loop) on robot 0; RSS from /proc after 5 s of running;",
                f"pace: {args.seconds:g} s simulated at rtf 1, CPU from the child's rusage",
            )
        ),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
