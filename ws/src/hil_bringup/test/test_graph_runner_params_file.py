"""``params_file``: a user's ROS 2 parameter file for the whole graph, over the graph's own.

The runner gives each node its parameters as launch_ros does, a parameter file, and
the user's after it, so rcl applies the user's (by node name, ``/**`` and namespaces
too) and its values win over the graph's, the run options' included (``seed``).
``hil_side`` passes it the same way; a bad file stops the run before it starts.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from hil_bringup.core.graph import GraphOptions, check_params_file
from hil_bringup.errors import HilBringupError
from hil_bringup.graph_runner import GraphRunner
from hil_bringup.hil_side import build_parser, commands

PARAMS = """\
/**:
  ros__parameters:
    clock_timeout: 2.5
control_loop:
  ros__parameters:
    frame_rate: 25.0
/sim:
  ros__parameters:
    seed: 7
/robot_1:
  control_loop:
    ros__parameters:
      frame_rate: 20.0
"""


@pytest.fixture
def params(tmp_path: Path) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(PARAMS)
    return path


@pytest.mark.ros
def test_the_users_file_wins_over_the_graphs_parameters_by_name_wildcard_and_namespace(
    params: Path,
) -> None:
    runner = GraphRunner(GraphOptions(rtf=0.0, seed=3, params_file=str(params)))
    try:
        nodes = runner.nodes
        assert nodes["sim"].get_parameter("seed").value == 7  # over the run option seed=3
        assert nodes["control_loop"].get_parameter("frame_rate").value == 25.0
        for name in ("control_loop", "signal_bridge", "virtual_mcu"):
            assert nodes[name].get_parameter("clock_timeout").value == 2.5, name  # /**
        assert nodes["signal_bridge"].get_parameter("checked").value is False  # the graph's, untouched
    finally:
        runner.stop()
    two = GraphRunner(GraphOptions(rtf=0.0, robots=2, hil_robots=2, params_file=str(params)))
    try:
        assert two.nodes["robot_1/control_loop"].get_parameter("frame_rate").value == 20.0
        assert two.nodes["robot_0/control_loop"].get_parameter("frame_rate").value == 30.0  # the graph's
    finally:
        two.stop()


def test_hil_side_passes_the_users_file_after_each_nodes_own(params: Path, tmp_path: Path) -> None:
    args = build_parser().parse_args(["robot", "--params-file", str(params)])
    assert isinstance(args, argparse.Namespace)
    for name, command in commands(args, tmp_path):
        files = [command[i + 1] for i, arg in enumerate(command) if arg == "--params-file"]
        assert files[-1] == str(params.resolve()), name
        assert len(files) == 2, name


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, ["params_file", "No such file"]),
        ("- a\n- list\n", ["params_file", "not a mapping of node names"]),
        ("control_loop: 3\n", ["params_file", "control_loop is not a mapping"]),
        ("control_loop:\n  ros__parameters: 3\n", ["params_file", "control_loop.ros__parameters"]),
        ("control_loop:\n  frame_rate: 25.0\n", ["params_file", "control_loop.frame_rate is not a mapping"]),
        ("/**:\n  other: {a: 1}\n", ["params_file", "/**.other.a is not a mapping"]),
        ("a: [\n", ["params_file", "invalid YAML"]),
    ],
)
def test_a_bad_parameter_file_is_refused_naming_the_file_and_the_key(
    tmp_path: Path, content: str | None, words: list[str]
) -> None:
    path = tmp_path / "params.yaml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(HilBringupError) as caught:
        check_params_file(str(path))
    for word in [str(path), *words]:
        assert word in str(caught.value), caught.value
