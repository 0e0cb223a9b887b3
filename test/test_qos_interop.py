"""A plain ROS 2 subscriber gets every topic of the graph (REP-2003).

A user's node or ``ros2 topic echo`` subscribes with the default QoS (reliable,
volatile, depth 10). A best-effort publisher gives such a subscriber nothing, so every
publisher of the graph must be reliable; streams stay best effort on the subscriber
side, where the subscriber chooses. Latched topics are the exception REP-2003 makes:
their subscribers ask for transient local to get the message published before they
joined.
"""

from __future__ import annotations

import time

import pytest
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
from std_msgs.msg import String

from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner
from hil_bringup.recorder_node import message_class
from hil_common import qos
from support.ros_probe import RosProbe

#: Topics only the probe publishes, and rclpy's own: not the graph's output.
NOT_THE_GRAPHS = {"/rosout", "/parameter_events", "/cmd_vel"}
#: What a run of the demo graph publishes (the probe must find all of these).
EXPECTED = {
    "/odom",
    "/tf",
    "/tf_static",
    "/joint_states",
    "/range/ultrasonic",
    "/range/ir",
    "/light/front",
    "/mag",
    "/clock",
    "/telemetry",
    "/hil/link",
    "/diagnostics",
    "/robotCommand",
    "/robot_description",
    "/world/markers",
    "/hil/signals/to_sim",
    "/hil/signals/from_sim",
    "/hil/wire/command/tx",
    "/hil/wire/signal/rx",
}


@pytest.mark.ros
def test_a_default_qos_subscriber_receives_every_topic_the_graph_publishes() -> None:
    runner = GraphRunner(GraphOptions(rtf=0.0, behaviour="boards"))
    probe = RosProbe("qos_probe")
    try:
        node = probe.node

        def graph_topics() -> dict[str, str]:
            return {
                name: types[0]
                for name, types in node.get_topic_names_and_types()
                if name not in NOT_THE_GRAPHS and node.count_publishers(name) > 0
            }

        topics = probe.wait_for(
            lambda: (t := graph_topics()) and t.keys() >= EXPECTED and t, what="the graph's topics"
        )
        latched = set()
        for name, msgtype in topics.items():
            durable = any(
                info.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                for info in node.get_publishers_info_by_topic(name)
            )
            if durable:
                latched.add(name)
            probe.record(message_class(msgtype), name, qos.LATCHED if durable else 10)
        # Every publisher is reliable, so even a subscriber asking for reliable delivery connects.
        for name in topics:
            for info in node.get_publishers_info_by_topic(name):
                assert info.qos_profile.reliability == ReliabilityPolicy.RELIABLE, (name, info.node_name)
        station = probe.publisher(String, "robotCommand")  # the loop answers a station heartbeat
        time.sleep(0.5)  # let the new subscriptions match before the run publishes
        runner.start()
        while runner.sim.sim.time < 3.0:
            if round(runner.sim.sim.time * 1000) % 500 == 0:
                station.publish(String(data=f"HBB,{runner.sim.sim.time:.3f}"))
            runner.step()
        time.sleep(0.5)  # the last messages in flight
        silent = sorted(name for name in topics if not probe.messages(name))
        assert not silent, f"a default-QoS subscriber got nothing on {silent}"
        assert {"/robot_description", "/tf_static", "/world/markers"} <= latched
    finally:
        runner.stop()
        probe.close()
