"""One clock: every stamp a graph publishes is simulated time, the time on ``/clock``.

The simulator stamps its own topics (odom, tf, sensors, markers, its diagnostics) with
simulated time; every other node follows ``/clock`` (``use_sim_time``, the graph's
default), so telemetry, link status, diagnostics, wheel transforms and the wire
traffic are stamped on the same clock. A real-time run is the case that matters: in
lockstep the runner sets every clock by call. The probe subscribes to every topic of
the run and compares each stamp with the ``/clock`` it has seen when the message
arrives: a wall-clock stamp (some 1.7e9 s) is off by decades, one of another clock
by more than the generous second allowed here for delivery.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from rosgraph_msgs.msg import Clock

from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner
from hil_bringup.recorder_node import message_class
from hil_common import qos
from support.ros_probe import RosProbe

#: Topics rclpy itself or nobody stamps.
UNSTAMPED = {"/rosout", "/parameter_events", "/clock"}
#: A stamp may differ from the /clock seen at its arrival by this much (delivery, generous), s.
SLACK_S = 1.0
#: Simulated seconds the run lasts.
RUN_S = 3.0


def stamps(message: Any) -> list[float]:
    """Every header stamp in ``message`` (a header, transforms, markers), in seconds."""
    headers = [message.header] if hasattr(message, "header") else []
    for field in ("transforms", "markers"):
        headers += [item.header for item in getattr(message, field, [])]
    return [h.stamp.sec + h.stamp.nanosec * 1e-9 for h in headers]


class ClockedRecorder:
    """Every message of the graph with the newest /clock the probe had when it arrived."""

    def __init__(self, probe: RosProbe) -> None:
        self.probe = probe
        self.clock: float | None = None
        self.seen: dict[str, list[tuple[float, float | None]]] = {}
        self.latched: set[str] = set()
        probe.node.create_subscription(Clock, "/clock", self.on_clock, qos.SENSOR)

    def on_clock(self, message: Clock) -> None:
        self.clock = message.clock.sec + message.clock.nanosec * 1e-9

    def follow(self, topic: str, msgtype: str) -> None:
        node = self.probe.node
        latched = any(
            info.qos_profile.durability == qos.LATCHED.durability
            for info in node.get_publishers_info_by_topic(topic)
        )
        if latched:
            self.latched.add(topic)
        self.seen[topic] = []

        def keep(message: Any) -> None:
            self.seen[topic] += [(stamp, self.clock) for stamp in stamps(message)]

        node.create_subscription(message_class(msgtype), topic, keep, qos.LATCHED if latched else 10)


@pytest.mark.ros
@pytest.mark.parametrize(
    "options",
    [
        GraphOptions(rtf=1.0, behaviour="boards"),
        GraphOptions(rtf=1.0, behaviour="swarm", robots=2, hil_robots=2, radio=True, world="swarm"),
    ],
    ids=["one robot", "two HIL robots with radio"],
)
def test_every_stamp_of_a_real_time_run_is_on_the_simulated_clock(options: GraphOptions) -> None:
    runner = GraphRunner(options)
    probe = RosProbe("clock_probe")
    try:
        recorder = ClockedRecorder(probe)

        def graph_topics() -> dict[str, str]:
            node = probe.node
            return {
                name: types[0]
                for name, types in node.get_topic_names_and_types()
                if name not in UNSTAMPED and node.count_publishers(name) > 0
            }

        expected = {"/odom", "/tf", "/tf_static", "/telemetry", "/hil/link", "/diagnostics", "/world/markers"}
        if options.robots > 1:
            expected = {"/tf", "/tf_static", "/world/markers", "/robot_1/telemetry", "/robot_0/hil/link"}
        topics = probe.wait_for(lambda: (t := graph_topics()) and t.keys() >= expected and t, what="topics")
        for topic, msgtype in topics.items():
            recorder.follow(topic, msgtype)
        time.sleep(0.5)  # let the new subscriptions match
        runner.start()
        deadline = time.monotonic() + 20.0 * RUN_S
        while runner.sim.sim.time < RUN_S and time.monotonic() < deadline and runner.failure() is None:
            time.sleep(0.05)
        assert runner.failure() is None, runner.failure()
        time.sleep(0.5)  # the last messages in flight
        end = runner.sim.sim.time
        stamped = {topic: seen for topic, seen in recorder.seen.items() if seen}
        assert stamped.keys() >= expected, sorted(expected - stamped.keys())
        wrong = []
        for topic, seen in sorted(stamped.items()):
            for stamp, clock in seen:
                if topic in recorder.latched:
                    # Published once (or now and then) and kept: stamped when it was published.
                    ok = 0.0 <= stamp <= (clock if clock is not None else 0.0) + SLACK_S
                else:
                    ok = abs(stamp - (clock if clock is not None else 0.0)) <= SLACK_S
                if not ok or stamp > end + SLACK_S:
                    wrong.append(f"{topic}: stamp {stamp:.3f} s with /clock at {clock} s")
                    break
        assert not wrong, "stamps off the simulated clock:\n" + "\n".join(wrong)
    finally:
        runner.stop()
        probe.close()
