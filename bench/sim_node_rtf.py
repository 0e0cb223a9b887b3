"""The sim node with its ROS topics, one robot, asked to run as fast as possible.

The node runs as its own process with ``rtf:=0``; this process subscribes to what an
rviz session would (odom, tf, both ranges, the markers) so those messages are really
built and sent, and reads the achieved RTF from the node's diagnostics over
``--seconds`` of wall time. Baseline: the headless core in this process, same world
and rates, no ROS.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time

import numpy as np
import rclpy
from _benchlib import emit, private_ros_domain, progress
from diagnostic_msgs.msg import DiagnosticArray
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Range
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from hil_common import qos
from hil_sim.core.build import build_simulation


def node_rtf(seconds: float) -> dict[str, float]:
    node = subprocess.Popen(
        [sys.executable, "-m", "hil_sim.sim_node", "--ros-args", "-p", "rtf:=0.0"], start_new_session=True
    )
    rclpy.init()
    probe = rclpy.create_node("bench_sim_probe")
    counts = {"odom": 0, "tf": 0, "range": 0}
    rtfs: list[float] = []

    def count(key: str) -> object:
        return lambda _message: counts.__setitem__(key, counts[key] + 1)

    probe.create_subscription(Odometry, "odom", count("odom"), qos.SENSOR)
    probe.create_subscription(TFMessage, "tf", count("tf"), qos.COMMAND)
    probe.create_subscription(Range, "range/ultrasonic", count("range"), qos.SENSOR)
    probe.create_subscription(Range, "range/ir", lambda _m: None, qos.SENSOR)
    probe.create_subscription(MarkerArray, "world/markers", lambda _m: None, qos.LATCHED)

    def on_diagnostics(message: DiagnosticArray) -> None:
        for status in message.status:
            values = {kv.key: kv.value for kv in status.values}
            if "rtf_achieved" in values:
                rtfs.append(float(values["rtf_achieved"]))

    probe.create_subscription(DiagnosticArray, "diagnostics", on_diagnostics, qos.COMMAND)
    try:
        deadline = time.monotonic() + 30
        while not rtfs and time.monotonic() < deadline:
            rclpy.spin_once(probe, timeout_sec=0.1)
        rtfs.clear()
        counts.update(dict.fromkeys(counts, 0))
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(probe, timeout_sec=0.1)
    finally:
        probe.destroy_node()
        rclpy.try_shutdown()
        node.send_signal(signal.SIGINT)
        node.wait(timeout=10)
    if not rtfs:
        raise RuntimeError("no diagnostics from the sim node")
    return {
        "node_rtf_mean": float(np.mean(rtfs)),
        "node_rtf_min": float(np.min(rtfs)),
        "odom_received_per_wall_s": counts["odom"] / seconds,
        "ultrasonic_received_per_wall_s": counts["range"] / seconds,
    }


def core_rtf(seconds: float) -> float:
    sim = build_simulation()
    for side, enable in (("left", 700.0), ("right", 1024.0)):
        sim.set_input(f"motor_{side}.enable", enable)
        sim.set_input(f"motor_{side}.a", 1.0)
    start = time.perf_counter()
    sim.step(round(seconds * 1000))
    return seconds / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="wall seconds to measure the node over")
    args = parser.parse_args()
    private_ros_domain()
    progress("sim_node_rtf", f"node at rtf 0 for {args.seconds:g} s ...")
    figures = node_rtf(args.seconds)
    emit(
        "sim_node_rtf",
        figures={k: round(v, 1) for k, v in figures.items()},
        target={"node_rtf_mean": "as fast as possible (no target set)"},
        baseline={"headless_core_rtf": round(core_rtf(20.0), 1)},
        notes=(
            "demo world, 1 robot, 1 kHz physics, signal exchange every 5 ms of sim time, /clock every 5 ms, "
            "topics at 50 Hz of sim time with subscribers on odom, tf, ranges and markers; RTF from the "
            "node's diagnostics (1 s windows)"
        ),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
