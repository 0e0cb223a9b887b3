"""Command-line options of the test tools, made from their nodes' parameters.

``hil_step --left 120 --duration 3`` and ``hil_step --ros-args -p left:=120 -p
duration:=3.0`` say the same: every :class:`~hil_common.core.param_spec.ParamSpec` of
a tool's node becomes an option (``_`` written ``-``), typed by its default, described
by its text, and checked by the node like any parameter. What follows ``--ros-args``
goes to rclpy untouched (remappings such as ``-r odom:=/robot_0/odom``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from hil_common.core.param_spec import ParamSpec, ParamValue

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _boolean(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not a boolean (true/false)")


def _option(spec: ParamSpec) -> str:
    return "--" + spec.name.replace("_", "-")


def add_parameter_options(parser: argparse.ArgumentParser, specs: Sequence[ParamSpec]) -> None:
    """One option per parameter (string lists excepted: those go through ``--ros-args``)."""
    for spec in specs:
        if isinstance(spec.default, list):
            continue
        kind: Any = _boolean if isinstance(spec.default, bool) else type(spec.default)
        limits = ""
        if spec.min is not None and spec.max is not None:
            limits = f", {spec.min:g}..{spec.max:g}"
        parser.add_argument(
            _option(spec),
            dest=spec.name,
            type=kind,
            default=None,
            metavar=spec.name.upper(),
            help=f"{spec.description} (default {spec.default!r}{limits})",
        )


def split_ros_args(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the tool's own arguments, ``--ros-args ...`` and what follows, for rclpy)."""
    items = list(argv)
    if "--ros-args" in items:
        at = items.index("--ros-args")
        return items[:at], items[at:]
    return items, []


def parameter_overrides(namespace: argparse.Namespace, specs: Sequence[ParamSpec]) -> dict[str, ParamValue]:
    """The parameters given as options (those left out keep the node's defaults)."""
    given: dict[str, ParamValue] = {}
    for spec in specs:
        value = getattr(namespace, spec.name, None)
        if value is not None:
            given[spec.name] = value
    return given
