"""Signal bridge node at 200 Hz over a pty: CPU use and lost frames.

The node runs as its own process on the demo robot's device set; this process plays
the bridge board on the pty's master end, sending one INPUT frame every 5 ms on a
deadline schedule and reading the node's OUTPUT frames, for ``--duration`` seconds
(default 60). The node's CPU time comes from /proc over exactly that window; lost
frames compare what the peer sent with what the node counted (hil/link), and what
the node sent with what the peer decoded.

Baseline, in the same window: a plain rclpy node whose 200 Hz ``create_timer``
callback does nothing, i.e. the cost of just waking up 200 times a second in rclpy.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import rclpy
from _benchlib import emit, private_ros_domain, progress
from rclpy.executors import ExternalShutdownException

from hil_bridge.core.pty_link import PtyPair
from hil_bridge.core.signal_protocol import FrameDecoder, FrameEncoder, SignalLayout
from hil_common import qos
from hil_common.core.loop_timing import DeadlineScheduler
from hil_common.core.paths import share_dir
from hil_devices.core.devices import load_device_set
from hil_devices.core.library import load_device_library
from hil_msgs.msg import LinkStatus

PERIOD = 0.005
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime


def run_timer_baseline() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    rclpy.init()
    node = rclpy.create_node("bench_timer_baseline")
    node.create_timer(PERIOD, lambda: None)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException, SystemExit):
        pass
    finally:
        rclpy.try_shutdown()
    return 0


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


class Peer:
    """The bridge board's side: frames out every 5 ms, the node's frames in."""

    def __init__(self, pty: PtyPair, layout: SignalLayout) -> None:
        self.pty = pty
        self.encoder, self.decoder = FrameEncoder(layout.inputs), FrameDecoder(layout.outputs)
        self.row = [s.spec.default for s in layout.inputs]

    def exchange(self, count: int, *, between: Any = None) -> int:
        """Send ``count`` frames on a deadline schedule; returns the node frames decoded."""
        scheduler = DeadlineScheduler(PERIOD)
        frames = 0
        for index in range(count):
            scheduler.wait()
            self.pty.write(self.encoder.encode(self.row))
            frames += len(self.decoder.feed(self.pty.read()))
            if between is not None and index % 20 == 0:
                between()
        return frames


class Probe:
    """Listens to the node's hil/link."""

    def __init__(self) -> None:
        rclpy.init()
        self.node = rclpy.create_node("bench_bridge_probe")
        self.statuses: list[LinkStatus] = []
        self.node.create_subscription(LinkStatus, "hil/link", self.statuses.append, qos.COMMAND)

    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.01)

    def spin_once(self) -> None:
        rclpy.spin_once(self.node, timeout_sec=0)

    def alive(self) -> bool:
        return bool(self.statuses) and self.statuses[-1].alive

    def quiet_status(self) -> LinkStatus:
        """The node's counters once it has seen no frame for a while."""
        for _ in range(100):
            self.spin_for(0.1)
            if self.statuses and not self.statuses[-1].alive:
                self.spin_for(0.3)
                return self.statuses[-1]
        raise RuntimeError("the bridge never reported the link quiet")

    def close(self) -> None:
        self.node.destroy_node()
        rclpy.try_shutdown()


def measure(duration: float) -> dict[str, Any]:
    config = share_dir("hil_devices") / "config"
    devices = load_device_set(config / "demo_robot_devices.yaml", load_device_library([config / "devices"]))
    folder = Path(tempfile.mkdtemp(prefix="hil-bench-"))
    pty = PtyPair(folder / "signal_link")
    peer = Peer(pty, SignalLayout(devices))
    command = [sys.executable, "-m", "hil_bridge.signal_bridge_node", "--ros-args"]
    node = subprocess.Popen(
        [*command, "-p", f"port:={pty.path}", "-p", "diagnostics_period:=0.2"], start_new_session=True
    )
    baseline = subprocess.Popen([sys.executable, __file__, "--timer-baseline"], start_new_session=True)
    probe = Probe()
    try:
        deadline = time.monotonic() + 30
        while not probe.alive():
            if time.monotonic() > deadline:
                raise RuntimeError("the bridge never heard the peer")
            peer.exchange(20, between=probe.spin_once)
        before = probe.quiet_status().received
        peer.decoder.stats.skipped_bytes = peer.decoder.stats.bad_ids = 0
        count = int(duration / PERIOD)
        progress("bridge_cpu", f"{count} frames over {duration:g} s ...")
        cpu0, base0, wall0 = cpu_seconds(node.pid), cpu_seconds(baseline.pid), time.monotonic()
        answered = peer.exchange(count)
        cpu1, base1, wall1 = cpu_seconds(node.pid), cpu_seconds(baseline.pid), time.monotonic()
        after = probe.quiet_status()
    finally:
        probe.close()
        stop(node)
        stop(baseline)
        pty.close()
        shutil.rmtree(folder, ignore_errors=True)
    wall = wall1 - wall0
    return {
        "figures": {
            "node_cpu_percent": round(100 * (cpu1 - cpu0) / wall, 2),
            "frames_sent_by_peer": count,
            "lost_frames": count - (after.received - before),
            "node_frames_decoded_by_peer": answered,
            "peer_bad_ids": peer.decoder.stats.bad_ids,
            "peer_skipped_bytes": peer.decoder.stats.skipped_bytes,
            "duration_s": round(wall, 1),
        },
        "baseline": {"rclpy_200hz_empty_timer_cpu_percent": round(100 * (base1 - base0) / wall, 2)},
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of exchange to measure")
    parser.add_argument("--timer-baseline", action="store_true", help="run the baseline node (internal)")
    args = parser.parse_args()
    if args.timer_baseline:
        return run_timer_baseline()
    private_ros_domain()
    result = measure(args.duration)
    emit(
        "bridge_cpu",
        figures=result["figures"],
        target={"node_cpu_percent": "<= 5", "lost_frames": "<= 0"},
        baseline=result["baseline"],
        notes=(
            "demo robot device set (7 signals in, 9 out), plain mode, 115200 baud pty, "
            "200 Hz both ways; CPU from /proc utime+stime of the node process"
        ),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
