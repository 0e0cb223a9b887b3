"""Every part the one-process runner drives offers the one stepping interface (``Stepped``)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from hil_bridge.core.fault_proxy import FaultProxy
from hil_bringup.core.graph import GraphOptions, describe
from hil_bringup.graph_runner import GraphRunner
from hil_bringup.recorder_node import RecorderNode
from hil_common.core.stepping import Stepped

#: Graphs that, together, hold every kind of node the runner builds.
GRAPHS = [
    GraphOptions(mcu="virtual", radio=True, live=True, behaviour="swarm", world="swarm"),
    GraphOptions(mcu="simavr", brain="none"),
]


def _node_classes() -> dict[str, type]:
    classes: dict[str, type] = {}
    for options in GRAPHS:
        for spec in describe(options)[0]:
            module, name = spec.module.split(":")
            classes[spec.module] = getattr(importlib.import_module(module), name)
    return classes


def test_the_graphs_hold_every_kind_of_node() -> None:
    names = {key.split(":")[1] for key in _node_classes()}
    assert names == {
        "SimNode",
        "VirtualMcuNode",
        "SimavrMcuNode",
        "SignalBridgeNode",
        "ControlLoopNode",
        "DescriptionNode",
        "RadioModuleNode",
        "LiveViewNode",
    }


@pytest.mark.parametrize(
    "part", [*_node_classes().values(), RecorderNode, FaultProxy], ids=lambda part: part.__name__
)
def test_every_part_the_runner_drives_is_stepped(part: type) -> None:
    assert issubclass(part, Stepped)


@pytest.mark.ros
def test_a_lockstep_runs_parts_are_stepped_instances(tmp_path: Path) -> None:
    options = GraphOptions(rtf=0.0, mcu="virtual", radio=True, record=str(tmp_path / "bag"), faults=True)
    runner = GraphRunner(options)
    try:
        parts: list[object] = [*runner.nodes.values(), *runner.proxies]
        assert {type(part).__name__ for part in parts} >= {"SimNode", "RecorderNode", "FaultProxy"}
        assert all(isinstance(part, Stepped) for part in parts)
    finally:
        runner.stop()
