"""Declared parameters always have a value, so ``ros2 param dump`` shows every one.

A string list declared by type alone stays "not set" in rclpy, and one unset parameter
empties the whole batched GetParameters answer that ``ros2 param dump`` prints. A list
given no value reads back as a typed empty list; one given a value keeps it, from
overrides and from a parameter file alike (rcl reads ``[]`` in a file as no value).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rclpy
import yaml
from rcl_interfaces.msg import ParameterType
from rclpy.node import Node
from rclpy.parameter import Parameter

from hil_common.core.param_spec import ParamSpec
from hil_common.parameters import declare_parameters

SPECS = (
    ParamSpec("configs", [], "A string list, empty by default."),
    ParamSpec("rate", 30.0, "A number.", min=1.0, max=100.0),
    ParamSpec("port", "mcu_command", "A text."),
)


@pytest.fixture
def context() -> Iterator[rclpy.Context]:
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        yield context
    finally:
        rclpy.try_shutdown(context=context)


def node_with(context: rclpy.Context, **options: Any) -> Node:
    return rclpy.create_node("parameters_test", context=context, **options)


@pytest.mark.ros
def test_every_declared_parameter_has_a_value_a_list_without_one_a_typed_empty_list(
    context: rclpy.Context,
) -> None:
    node = node_with(context)
    try:
        values = declare_parameters(node, SPECS)
        assert values["configs"] == []
        names = node.list_parameters([], 0).names
        for name in names:
            value = node.get_parameter(name).get_parameter_value()
            assert value.type != ParameterType.PARAMETER_NOT_SET, name
        configs = node.get_parameter("configs").get_parameter_value()
        assert configs.type == ParameterType.PARAMETER_STRING_ARRAY
        # Still a string list: a later set of one is taken.
        assert node.set_parameters([Parameter("configs", value=["a.json"])])[0].successful
    finally:
        node.destroy_node()


@pytest.mark.ros
@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ([], []),  # rcl reads an empty YAML list as no value
        (["a.json", "b"], ["a.json", "b"]),
    ],
)
def test_a_list_from_a_parameter_file_round_trips(
    context: rclpy.Context, tmp_path: Path, given: list[str], expected: list[str]
) -> None:
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump({"/**": {"ros__parameters": {"configs": given, "rate": 12.5}}}))
    node = node_with(context, cli_args=["--ros-args", "--params-file", str(path)])
    try:
        values = declare_parameters(node, SPECS)
        assert values["configs"] == expected
        assert values["rate"] == 12.5
        assert node.get_parameter("configs").value == expected
        assert node.get_parameter("configs").type_ == Parameter.Type.STRING_ARRAY
    finally:
        node.destroy_node()
