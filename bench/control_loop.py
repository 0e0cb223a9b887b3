"""The control loop: period jitter, MCU heartbeat round trip, failsafe reaction.

1. Jitter at 30 Hz over ``--frames`` frames (default 10 000, 5.5 minutes): the
   control_loop node against a virtual MCU, with cmd_vel arriving at 10 Hz; its
   diagnostics report |wake - deadline| p50/p99 over the last 10 000 frames. Beside
   it, in the same minutes, a plain rclpy ``create_timer`` loop doing the same frame
   work (poll the port, ControlLoop.frame, write) against its own virtual MCU.
2. HBB round trip through loop + pty + virtual MCU: the node's own p50/p99 over the
   same run (default heartbeat period 0.5 s). Baseline: the same send-and-stamp path
   (SerialLink + SerialReader) against a raw pty echo process.
3. Failsafe reaction: an MCU stand-in on a raw pty stops echoing heartbeats; the time
   from its last echo to the first DRV0,0 on the wire, over ``--cycles`` outages, for
   the node and for the timer loop. Target: p99 <= timeout + one frame.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import rclpy
from _benchlib import emit, private_ros_domain, progress
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from hil_bridge.core.line_protocol import Drive, Heartbeat, LineDecoder, LineEncoder
from hil_bridge.core.pty_link import PtyPair
from hil_bridge.core.serial_link import SerialLink
from hil_bridge.core.serial_reader import SerialReader
from hil_common import qos
from hil_common.core.paths import share_dir
from hil_devices.core.telemetry import TelemetrySchema
from robot_control.core.behaviours import BoardsBehaviour
from robot_control.core.loop import ControlLoop, LoopConfig

PERIOD = 1 / 30
MCU_TIMEOUT = 1.5  # the node's default mcu_heartbeat_timeout


# --- the baseline: a plain rclpy timer loop -----------------------------------------------


class TimerLoop(Node):
    """ControlLoop driven by rclpy create_timer: poll, frame, write in the timer callback."""

    def __init__(self, port: str) -> None:
        super().__init__("bench_timer_loop")
        schema = TelemetrySchema.from_yaml(share_dir("hil_devices") / "config" / "telemetry.yaml")
        self.loop = ControlLoop(
            LoopConfig(schema=schema), {"boards": BoardsBehaviour()}, start=time.monotonic()
        )
        self.link = SerialLink(port, baud=38400)
        self.lateness: list[float] = []
        self.start: float | None = None  # anchored at the first callback, like the node's scheduler
        self.ticks = 0
        self.create_subscription(Twist, "cmd_vel", self.on_cmd_vel, qos.COMMAND)
        self.create_timer(PERIOD, self.on_timer)

    def on_cmd_vel(self, message: Twist) -> None:
        self.loop.cmd_vel(message.linear.x, message.angular.z, time.monotonic())

    def on_timer(self) -> None:
        now = time.monotonic()
        if self.start is None:
            self.start = now
        else:
            self.ticks += 1
            self.lateness.append(abs(now - (self.start + self.ticks * PERIOD)))
        data = self.link.poll()
        result = self.loop.frame(now, [(now, data)] if data else [])
        if result.write:
            self.link.write(result.write)


def run_timer_loop(port: str) -> int:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    rclpy.init()
    node = TimerLoop(port)
    try:
        while not stop.is_set() and rclpy.ok():
            rclpy.spin_once(node, timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        lateness = np.array(node.lateness[-10_000:]) * 1e6
        print(
            json.dumps(
                {
                    "jitter_p50_us": float(np.percentile(lateness, 50)) if lateness.size else 0.0,
                    "jitter_p99_us": float(np.percentile(lateness, 99)) if lateness.size else 0.0,
                    "frames": node.ticks,
                    "rtt_p50_ms": node.loop.mcu.rtt_percentile(50) * 1e3,
                    "rtt_p99_ms": node.loop.mcu.rtt_percentile(99) * 1e3,
                }
            ),
            flush=True,
        )
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def run_raw_echo(path: str) -> int:
    """A pty that sends back every byte it gets: the fastest possible 'MCU'."""
    pty = PtyPair(path)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print("ready", flush=True)
    while not stop.is_set():
        readable, _, _ = select.select([pty.master_fd], [], [], 0.1)
        if readable and (data := pty.read()):
            pty.write(data)
    pty.close()
    return 0


# --- helpers --------------------------------------------------------------------------------


def start(args: list[str], **options: Any) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, *args], start_new_session=True, text=True, **options)


def stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGINT)
    try:
        out, _ = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    return out or ""


def mcu(folder: Path, name: str) -> subprocess.Popen[str]:
    return start(
        [
            "-m",
            "hil_mcu.virtual_mcu_node",
            "--ros-args",
            "-p",
            f"command_port:={folder / name}",
            "-p",
            f"signal_port:={folder / (name + '_sig')}",
        ],
        stdout=subprocess.DEVNULL,
    )


def control_loop(port: Path) -> subprocess.Popen[str]:
    return start(
        ["-m", "robot_control.control_loop_node", "--ros-args", "-p", f"port:={port}"],
        stdout=subprocess.DEVNULL,
    )


class Probe:
    """cmd_vel publisher and diagnostics listener in this process."""

    def __init__(self) -> None:
        rclpy.init()
        self.node = rclpy.create_node("bench_control_probe")
        self.cmd_vel = self.node.create_publisher(Twist, "cmd_vel", qos.COMMAND)
        self.diagnostics: dict[str, str] = {}
        self.node.create_subscription(DiagnosticArray, "diagnostics", self.on_diagnostics, qos.COMMAND)
        self.twist = Twist()
        self.twist.linear.x, self.twist.angular.z = 0.2, 0.5

    def on_diagnostics(self, message: DiagnosticArray) -> None:
        for status in message.status:
            if status.name.startswith("control_loop"):
                self.diagnostics = {kv.key: kv.value for kv in status.values}

    def run_for(self, seconds: float, *, report: str = "") -> None:
        end = time.monotonic() + seconds
        next_twist = next_report = time.monotonic()
        while time.monotonic() < end:
            now = time.monotonic()
            if now >= next_twist:
                self.cmd_vel.publish(self.twist)
                next_twist += 0.1
            if report and now >= next_report:
                progress(
                    "control_loop",
                    f"{report}: {end - now:.0f} s left, frames {self.diagnostics.get('frames')}",
                )
                next_report += 30.0
            rclpy.spin_once(self.node, timeout_sec=0.02)

    def close(self) -> None:
        self.node.destroy_node()
        rclpy.try_shutdown()


# --- the three measurements --------------------------------------------------------------------


def jitter_and_rtt(folder: Path, probe: Probe, frames: int) -> tuple[dict[str, float], dict[str, float]]:
    procs = [mcu(folder, "a"), mcu(folder, "b")]
    time.sleep(1.0)
    node = control_loop(folder / "a")
    baseline = start([__file__, "--timer-loop", str(folder / "b")], stdout=subprocess.PIPE)
    try:
        probe.run_for(frames * PERIOD + 3.0, report=f"{frames} frames at 30 Hz")
        diagnostics = dict(probe.diagnostics)
    finally:
        baseline_out = stop(baseline)
        for proc in (node, *procs):
            stop(proc)
    timer = json.loads(baseline_out.strip().splitlines()[-1])
    return (
        {
            "loop_jitter_p50_us": float(diagnostics["jitter_p50_us"]),
            "loop_jitter_p99_us": float(diagnostics["jitter_p99_us"]),
            "loop_overruns": float(diagnostics["overruns"]),
            "loop_frames": float(diagnostics["frames"]),
            "hbb_rtt_p50_ms": float(diagnostics["mcu_rtt_p50_ms"]),
            "hbb_rtt_p99_ms": float(diagnostics["mcu_rtt_p99_ms"]),
            "hbb_rtt_samples": float(diagnostics["mcu_rtt_samples"]),
        },
        {
            "timer_loop_jitter_p50_us": timer["jitter_p50_us"],
            "timer_loop_jitter_p99_us": timer["jitter_p99_us"],
            "timer_loop_hbb_rtt_p50_ms": timer["rtt_p50_ms"],
            "timer_loop_hbb_rtt_p99_ms": timer["rtt_p99_ms"],
        },
    )


def raw_echo_rtt(folder: Path, samples: int = 500) -> dict[str, float]:
    echo = start([__file__, "--raw-echo", str(folder / "echo")], stdout=subprocess.PIPE)
    assert echo.stdout is not None
    echo.stdout.readline()
    link = SerialLink(str(folder / "echo"), baud=38400)
    reader = SerialReader(link).start()
    encoder, decoder = LineEncoder(), LineDecoder()
    rtts: list[float] = []
    try:
        while not link.is_open:
            time.sleep(0.01)
        for _ in range(samples):
            sent = time.monotonic()
            link.write(encoder.encode(Heartbeat.at(sent)))
            deadline = sent + 1.0
            while time.monotonic() < deadline:
                chunks = reader.take()
                if any(decoder.feed(data) for _, data in chunks):
                    rtts.append(chunks[-1][0] - sent)
                    break
                time.sleep(0.0002)
            time.sleep(0.01)
    finally:
        reader.stop()
        link.close()
        stop(echo)
    ms = np.array(rtts) * 1e3
    return {
        "raw_pty_echo_rtt_p50_ms": float(np.percentile(ms, 50)),
        "raw_pty_echo_rtt_p99_ms": float(np.percentile(ms, 99)),
    }


def failsafe_reactions(folder: Path, probe: Probe, cycles: int, *, timer_loop: bool) -> list[float]:
    """Seconds from the stand-in MCU's last echo to the first DRV0,0, per outage."""
    pty = PtyPair(folder / ("fs_timer" if timer_loop else "fs_node"))
    loop = (
        start([__file__, "--timer-loop", pty.path], stdout=subprocess.PIPE)
        if timer_loop
        else control_loop(Path(pty.path))
    )
    decoder, encoder = LineDecoder(), LineEncoder()
    reactions: list[float] = []
    echoing, last_echo, outage_from = True, 0.0, 0.0
    try:
        deadline = time.monotonic() + 60.0 + cycles * 10.0
        while len(reactions) < cycles and time.monotonic() < deadline:
            probe.run_for(0.0)
            probe.cmd_vel.publish(probe.twist)
            readable, _, _ = select.select([pty.master_fd], [], [], 0.02)
            now = time.monotonic()
            for message in decoder.feed(pty.read()) if readable else []:
                if isinstance(message, Heartbeat) and echoing:
                    pty.write(encoder.encode(message))
                    last_echo = now
                elif isinstance(message, Drive):
                    if echoing and message != Drive(0, 0) and now - outage_from > 3.0:
                        echoing, outage_from = False, last_echo  # driving: start an outage
                    elif not echoing and message == Drive(0, 0):
                        reactions.append(now - outage_from)
                        echoing, outage_from = True, now
    finally:
        stop(loop)
        pty.close()
    return reactions


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--frames", type=int, default=10_000, help="frames of the jitter measurement")
    parser.add_argument("--cycles", type=int, default=20, help="MCU outages for the failsafe reaction")
    parser.add_argument("--timer-loop", help=argparse.SUPPRESS)
    parser.add_argument("--raw-echo", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.timer_loop:
        return run_timer_loop(args.timer_loop)
    if args.raw_echo:
        return run_raw_echo(args.raw_echo)
    private_ros_domain()
    folder = Path(tempfile.mkdtemp(prefix="hil-bench-loop-"))
    probe = Probe()
    try:
        figures, baseline = jitter_and_rtt(folder, probe, args.frames)
        progress("control_loop", "raw pty echo ...")
        baseline |= raw_echo_rtt(folder)
        progress("control_loop", f"failsafe reaction, {args.cycles} outages each ...")
        node_reactions = failsafe_reactions(folder, probe, args.cycles, timer_loop=False)
        timer_reactions = failsafe_reactions(folder, probe, args.cycles, timer_loop=True)
    finally:
        probe.close()
    figures["failsafe_reaction_p99_s"] = float(np.percentile(node_reactions, 99))
    figures["failsafe_reaction_max_s"] = float(np.max(node_reactions))
    figures["failsafe_outages"] = float(len(node_reactions))
    baseline["timer_loop_failsafe_reaction_p99_s"] = float(np.percentile(timer_reactions, 99))
    emit(
        "control_loop",
        figures={k: round(v, 4) for k, v in figures.items()},
        target={
            "loop_jitter_p99_us": "<= 1000",
            "hbb_rtt_p50_ms": "<= 0.3",
            "hbb_rtt_p99_ms": "<= 1",
            "failsafe_reaction_p99_s": f"<= {MCU_TIMEOUT + PERIOD:.4f}",
        },
        baseline={k: round(v, 4) for k, v in baseline.items()},
        notes=" ".join(
            (
                f"30 Hz, {args.frames} frames, node and timer loop each against its own virtual MCU,",
                "cmd_vel at 10 Hz; HBB every 0.5 s (node defaults); failsafe: mcu_heartbeat_timeout",
                f"1.5 s, raw pty MCU stand-in, {args.cycles} outages; baselines: rclpy create_timer",
                "loop doing the same frame work (schedule anchored at its first call), raw pty echo",
            )
        ),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
