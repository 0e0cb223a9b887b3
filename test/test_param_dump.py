"""``ros2 param dump`` of every node of a run: every listed parameter has a value.

What ``ros2 param dump`` does, over the ROS parameter services: ListParameters, then
one GetParameters for every name listed. A parameter that is listed but not set
reads back as NOT_SET, and ``ros2 param dump`` then prints ``ros__parameters: {}``
for the whole node. Every node of real-time runs (the runner serves the services as
separate processes do) is dumped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import GetParameters, ListParameters
from rclpy.parameter import parameter_value_to_python

from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner
from support.ros_probe import RosProbe

#: Seconds a service may take to appear or answer (generous: a loaded machine).
WAIT_S = 20.0


def call(probe: RosProbe, kind: Any, name: str, request: Any) -> Any:
    client = probe.node.create_client(kind, name)
    try:
        assert client.wait_for_service(timeout_sec=WAIT_S), f"no service {name}"
        future = client.call_async(request)
        probe.wait_for(future.done, timeout=WAIT_S, what=f"an answer from {name}")
        return future.result()
    finally:
        probe.node.destroy_client(client)


def dump(probe: RosProbe, node: str) -> dict[str, Any]:
    """``node``'s parameters as ``ros2 param dump`` gets them (NOT_SET ones as None)."""
    names = call(probe, ListParameters, f"{node}/list_parameters", ListParameters.Request()).result.names
    values = call(probe, GetParameters, f"{node}/get_parameters", GetParameters.Request(names=names)).values
    assert len(values) == len(names), node
    return {
        name: None if value.type == ParameterType.PARAMETER_NOT_SET else parameter_value_to_python(value)
        for name, value in zip(names, values, strict=True)
    }


@pytest.mark.ros
@pytest.mark.parametrize(
    "options",
    [
        GraphOptions(rtf=1.0, behaviour="manual", record="bag"),
        GraphOptions(rtf=1.0, behaviour="swarm", robots=3, hil_robots=2, radio=True, world="swarm"),
        GraphOptions(rtf=1.0, behaviour="manual", mcu="simavr", world="empty"),
    ],
    ids=["one robot, recorded", "two HIL robots with radio and one without", "firmware in simavr"],
)
def test_every_parameter_of_every_node_has_a_value(
    options: GraphOptions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the recording goes here
    runner = GraphRunner(options)
    probe = RosProbe("param_dump_probe")
    try:
        runner.start()
        expected = {"/" + key for key in runner.nodes}
        nodes = probe.wait_for(
            lambda: (
                (
                    found := {
                        f"{ns.rstrip('/')}/{name}" for name, ns in probe.node.get_node_names_and_namespaces()
                    }
                )
                >= expected
                and found
            ),
            timeout=WAIT_S,
            what="the run's nodes",
        )
        dumps = {node: dump(probe, node) for node in sorted(expected)}
        assert runner.failure() is None, runner.failure()
    finally:
        runner.stop()
        probe.close()
    assert "/param_dump_probe" in nodes
    unset = {node: sorted(k for k, v in values.items() if v is None) for node, values in dumps.items()}
    assert not any(unset.values()), f"listed but not set: { {n: u for n, u in unset.items() if u} }"
    for node, values in dumps.items():
        assert values.get("use_sim_time") is (node != "/sim"), node  # one clock
        if "device_configs" in values:
            assert values["device_configs"] == [], node
