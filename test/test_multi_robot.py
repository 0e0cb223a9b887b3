"""Several robots on one TF tree and one /diagnostics; a namespace takes the whole graph.

Every robot's frames are prefixed ``robot_<i>/`` on the one ``/tf`` and ``/tf_static``
(as robot_state_publisher's ``frame_prefix`` does in ROS 2's multi-robot setups), so a
viewer chains ``robot_1/left_wheel`` to the shared ``odom``, whether robot 1 has a HIL
chain or is one of the simulator's own; every node's statuses are on the one
``/diagnostics``, named by the node's full name. tf2_ros is not on PyPI: the probe
resolves the chain from the transforms it received (child -> parent).
A ``namespace`` moves the nodes, their topics and the graph-wide topics under it,
``/clock`` excepted.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from tf2_msgs.msg import TFMessage

from hil_bringup.core.graph import GraphOptions
from hil_bringup.description_node import STATIC_QOS
from hil_bringup.graph_runner import GraphRunner
from support.ros_probe import RosProbe

#: Wall seconds a real-time run gets to show what is asked (generous: a busy machine).
TIMEOUT_S = 30.0


def parents(probe: RosProbe) -> dict[str, str]:
    """Every frame's parent, from what /tf and /tf_static brought."""
    found = {}
    for topic in ("/tf", "/tf_static"):
        for message in probe.messages(topic):
            found |= {t.child_frame_id: t.header.frame_id for t in message.transforms}
    return found


def chain(frames: dict[str, str], frame: str) -> list[str]:
    """``frame`` and its ancestors, up to the root of what is known."""
    path = [frame]
    while path[-1] in frames and len(path) < 20:
        path.append(frames[path[-1]])
    return path


def statuses(probe: RosProbe) -> set[str]:
    """The names of every status that came on /diagnostics."""
    return {status.name for array in probe.messages("/diagnostics") for status in array.status}


@pytest.fixture
def probe() -> Any:
    probe = RosProbe("multi_robot_probe")
    yield probe
    probe.close()


@pytest.mark.ros
@pytest.mark.parametrize("hil_robots", [1, 2], ids=["robot 1 the simulator's", "robot 1 a HIL robot"])
def test_every_robots_wheels_chain_to_odom_on_the_one_tf_and_diagnostics_name_each_robot(
    probe: RosProbe, hil_robots: int
) -> None:
    probe.record(TFMessage, "/tf")
    probe.record(TFMessage, "/tf_static", STATIC_QOS)
    probe.record(DiagnosticArray, "/diagnostics")
    runner = GraphRunner(GraphOptions(rtf=1.0, robots=2, hil_robots=hil_robots, behaviour="manual"))
    try:
        runner.start()
        for robot in (0, 1):
            probe.wait_for(
                lambda r=robot: chain(parents(probe), f"robot_{r}/left_wheel")[-1] == "odom",
                timeout=TIMEOUT_S,
                what=f"robot_{robot}/left_wheel -> odom on /tf and /tf_static (known: {parents(probe)})",
            )
            path = chain(parents(probe), f"robot_{robot}/left_wheel")
            assert path == [f"robot_{robot}/left_wheel", f"robot_{robot}/base_link", "odom"]
            assert chain(parents(probe), f"robot_{robot}/ultrasonic_link")[-1] == "odom"  # a static one
        # One topic, every robot's statuses, each named by its node's full name.
        wanted = [f"robot_{r}/control_loop: " for r in range(hil_robots)] + ["sim: "]
        probe.wait_for(
            lambda: all(any(name.startswith(w) for name in statuses(probe)) for w in wanted),
            timeout=TIMEOUT_S,
            what=f"{wanted} on /diagnostics (seen: {sorted(statuses(probe))})",
        )
    finally:
        runner.stop()


@pytest.mark.ros
def test_a_namespace_puts_the_nodes_their_topics_tf_and_diagnostics_under_it_but_not_the_clock(
    probe: RosProbe,
) -> None:
    runner = GraphRunner(GraphOptions(rtf=1.0, robots=2, namespace="team_a", behaviour="manual"))
    try:
        runner.start()
        names = {
            "/team_a/robot_0/odom",
            "/team_a/robot_1/odom",
            "/team_a/robot_0/telemetry",
            "/team_a/robot_1/robot_description",
            "/team_a/world/markers",
            "/team_a/tf",
            "/team_a/tf_static",
            "/team_a/diagnostics",
            "/clock",
        }

        def published() -> set[str]:
            node = probe.node
            return {t for t, _ in node.get_topic_names_and_types() if node.get_publishers_info_by_topic(t)}

        probe.wait_for(lambda: names <= published(), timeout=TIMEOUT_S, what=f"{sorted(names)} published")
        time.sleep(0.5)  # whatever else discovery brings
        outside = sorted(t for t in published() if not t.startswith("/team_a/"))
        assert outside == ["/clock", "/parameter_events", "/rosout"]
        full = {f"{ns}/{name}".replace("//", "/") for name, ns in probe.node.get_node_names_and_namespaces()}
        assert {"/team_a/sim", "/team_a/robot_0/control_loop", "/team_a/robot_descriptions"} <= full
    finally:
        runner.stop()
