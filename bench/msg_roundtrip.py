"""Publish/subscribe round trip of hil_msgs/Telemetry across two processes.

This process publishes a ping, a second process echoes it back on another topic,
and the time from publish to the echo's arrival is one round trip. One message is in
flight at a time. std_msgs/String carrying the same raw line is measured the same
way in the same run, interleaved in blocks, as the baseline: the difference is the
cost of the typed message over the cheapest one.

Prints one JSON object (bench/ convention); with ``--plot PATH`` also draws the two
latency distributions.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from typing import Any

import rclpy
from _benchlib import emit, interleaved_round_trips, latency_histogram, latency_stats, private_ros_domain
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import String

from hil_common import qos
from hil_msgs.msg import Telemetry

RAW = "TL2187,1.27,1000,998,1003,996,1,0"
FIELDS = [
    "distance_cm",
    "ir_volts",
    "light_0",
    "light_1",
    "light_2",
    "light_3",
    "bumper_left",
    "bumper_right",
]
TYPES = {"telemetry": Telemetry, "string": String}
#: One exchange period of the signal bridge (DESIGN.md: fixed 200 Hz): a message hop
#: that takes longer cannot keep up with it.
TARGET_P99_US = 5000.0


def make_ping(kind: str, seq: int) -> Any:
    if kind == "telemetry":
        msg = Telemetry(list_id="TL2", field_names=FIELDS, raw=RAW)
        msg.values = [187.0, 1.27, 1000.0, 998.0, 1003.0, 996.0, 1.0, float(seq)]
        msg.header.frame_id = str(seq)
        return msg
    return String(data=f"{seq}:{RAW}")


def seq_of(kind: str, msg: Any) -> int:
    return int(msg.header.frame_id) if kind == "telemetry" else int(msg.data.split(":", 1)[0])


class Echo(Node):
    """Echoes every ping back on the matching pong topic."""

    def __init__(self) -> None:
        super().__init__("bench_echo")
        for kind, msg_type in TYPES.items():
            pub = self.create_publisher(msg_type, f"bench/pong_{kind}", qos.PUBLISHER)
            self.create_subscription(msg_type, f"bench/ping_{kind}", pub.publish, qos.SENSOR)


class Pinger(Node):
    """Sends pings and records when their echoes come back."""

    def __init__(self) -> None:
        super().__init__("bench_pinger")
        self.pubs = {k: self.create_publisher(t, f"bench/ping_{k}", qos.PUBLISHER) for k, t in TYPES.items()}
        self.arrived: dict[str, dict[int, float]] = {k: {} for k in TYPES}
        for kind, msg_type in TYPES.items():
            self.create_subscription(
                msg_type, f"bench/pong_{kind}", lambda m, k=kind: self.on_pong(k, m), qos.SENSOR
            )

    def on_pong(self, kind: str, msg: Any) -> None:
        self.arrived[kind][seq_of(kind, msg)] = time.perf_counter()


def round_trip(
    node: Pinger, executor: SingleThreadedExecutor, kind: str, seq: int, timeout: float
) -> float | None:
    msg = make_ping(kind, seq)
    sent = time.perf_counter()
    node.pubs[kind].publish(msg)
    deadline = sent + timeout
    while seq not in node.arrived[kind]:
        if time.perf_counter() > deadline:
            return None
        executor.spin_once(timeout_sec=0.001)
    return node.arrived[kind].pop(seq) - sent


def run_echo() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    rclpy.init()
    try:
        rclpy.spin(Echo())
    except (KeyboardInterrupt, ExternalShutdownException, SystemExit):
        pass
    finally:
        rclpy.try_shutdown()
    return 0


def measure(samples: int, block: int) -> dict[str, Any]:
    echo = subprocess.Popen([sys.executable, __file__, "--echo"], start_new_session=True)
    rclpy.init()
    node = Pinger()
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        seq = 0
        # Discovery and warm-up: until both echoes answer, then 200 more each.
        deadline = time.monotonic() + 30.0
        for kind in TYPES:
            while round_trip(node, executor, kind, seq := seq + 1, 0.2) is None:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the echo process never answered on bench/pong_{kind}")
            for _ in range(200):
                round_trip(node, executor, kind, seq := seq + 1, 1.0)
        counter = iter(range(seq + 1, 2**62))
        rtts, lost = interleaved_round_trips(
            list(TYPES),
            lambda kind, _n: round_trip(node, executor, kind, next(counter), 1.0),
            samples=samples,
            block=block,
            name="msg_roundtrip",
        )
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
        echo.send_signal(signal.SIGINT)
        try:
            echo.wait(timeout=5)
        except subprocess.TimeoutExpired:
            echo.kill()
            echo.wait()

    return {"stats": {k: latency_stats(rtts[k], prefix=f"{k}_", lost=lost[k]) for k in TYPES}, "rtts": rtts}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--echo", action="store_true", help="run the echo side (used internally)")
    parser.add_argument("--samples", type=int, default=2000, help="round trips per message type")
    parser.add_argument("--plot", help="write a PNG of the latency distributions here")
    args = parser.parse_args()
    if args.echo:
        return run_echo()
    private_ros_domain()
    result = measure(args.samples, block=100)
    if args.plot:
        latency_histogram(result["rtts"], title="pub/sub round trip across two processes", path=args.plot)
    emit(
        "msg_roundtrip",
        figures=result["stats"]["telemetry"],
        target={"telemetry_rtt_p99_us": f"<= {TARGET_P99_US:g}"},
        baseline=result["stats"]["string"],
        notes=(
            f"{args.samples} round trips per type, one in flight, sensor-data QoS, "
            "Fast DDS, localhost; baseline: std_msgs/String with the same raw line"
        ),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
