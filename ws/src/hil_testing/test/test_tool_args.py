"""The test tools' options: one per node parameter, typed by its default; --ros-args passed on."""

from __future__ import annotations

import argparse

import pytest

from hil_common.core.param_spec import ParamSpec
from hil_testing.core.tool_args import add_parameter_options, parameter_overrides, split_ros_args

SPECS = (
    ParamSpec("left", 150, "Left command.", min=-255, max=255),
    ParamSpec("settle", 1.0, "Seconds at rest."),
    ParamSpec("left_joint", "left_wheel_joint", "Joint name."),
    ParamSpec("checked", False, "Checked mode."),
    ParamSpec("configs", [], "Only through --ros-args."),
)


def parser() -> argparse.ArgumentParser:
    result = argparse.ArgumentParser(prog="tool", exit_on_error=False)
    add_parameter_options(result, SPECS)
    return result


def test_options_given_become_parameters_typed_by_their_defaults() -> None:
    args = parser().parse_args(
        ["--left", "-120", "--settle", "0.5", "--left-joint", "wheel_l", "--checked", "yes"]
    )
    assert parameter_overrides(args, SPECS) == {
        "left": -120,
        "settle": 0.5,
        "left_joint": "wheel_l",
        "checked": True,
    }


def test_options_left_out_keep_the_node_defaults() -> None:
    assert parameter_overrides(parser().parse_args([]), SPECS) == {}


@pytest.mark.parametrize("argv", [["--left", "1.5"], ["--checked", "maybe"], ["--configs", "x"]])
def test_a_bad_option_is_refused(argv: list[str]) -> None:
    with pytest.raises((argparse.ArgumentError, SystemExit)):
        parser().parse_args(argv)


def test_help_shows_the_description_default_and_range() -> None:
    text = parser().format_help()
    assert "Left command. (default 150, -255..255)" in text


@pytest.mark.parametrize(
    ("argv", "own", "ros"),
    [
        (["--left", "3"], ["--left", "3"], []),
        (
            ["--left", "3", "--ros-args", "-r", "odom:=/r0/odom"],
            ["--left", "3"],
            ["--ros-args", "-r", "odom:=/r0/odom"],
        ),
        (["--ros-args", "-p", "left:=3"], [], ["--ros-args", "-p", "left:=3"]),
    ],
)
def test_ros_args_go_to_rclpy_untouched(argv: list[str], own: list[str], ros: list[str]) -> None:
    assert split_ros_args(argv) == (own, ros)
