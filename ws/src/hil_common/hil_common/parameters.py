"""Declare :class:`~hil_common.core.param_spec.ParamSpec` parameters on an rclpy node."""

from __future__ import annotations

from collections.abc import Sequence

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from rclpy.parameter import Parameter

from hil_common.core.param_spec import ParamSpec, ParamValues, validate_all
from hil_common.errors import HilError


def _descriptor(spec: ParamSpec) -> ParameterDescriptor:
    text = spec.description
    if spec.choices:
        text += f" One of: {', '.join(str(c) for c in spec.choices)}."
    descriptor = ParameterDescriptor(description=text)
    if isinstance(spec.default, list):
        # An empty list does not tell rclpy the parameter's type.
        descriptor.type = ParameterType.PARAMETER_STRING_ARRAY
    if isinstance(spec.default, bool) or spec.min is None or spec.max is None:
        return descriptor
    if isinstance(spec.default, int):
        descriptor.integer_range = [IntegerRange(from_value=int(spec.min), to_value=int(spec.max), step=0)]
    elif isinstance(spec.default, float):
        descriptor.floating_point_range = [
            FloatingPointRange(from_value=spec.min, to_value=spec.max, step=0.0)
        ]
    return descriptor


def declare_parameters(node: Node, specs: Sequence[ParamSpec]) -> ParamValues:
    """Declare every parameter with its default and descriptor; return validated values.

    Raises:
        HilError: a value given to the node is invalid (the message names it).
    """
    values = {}
    for spec in specs:
        # rclpy types a parameter by its default, and [] reads as a byte array: a string
        # list given on the command line was then refused. So a list is declared by its
        # type, and one given no value (none, or [] from a parameter file, which rcl
        # reads as no value) is then set to a typed empty list: a declared parameter
        # left unset reads back "not set", which empties a whole `ros2 param dump`.
        empty_list = spec.default == []
        default = Parameter.Type.STRING_ARRAY if empty_list else spec.default
        try:
            parameter = node.declare_parameter(spec.name, default, _descriptor(spec))
            if empty_list and parameter.value is None:
                parameter = Parameter(spec.name, Parameter.Type.STRING_ARRAY, [])
                result = node.set_parameters([parameter])[0]
                if not result.successful:
                    raise HilError(f"{node.get_name()}: parameter {spec.name!r}: {result.reason}")
        except ParameterException as exc:
            raise HilError(f"{node.get_name()}: parameter {spec.name!r}: {exc}") from exc
        values[spec.name] = parameter.value
    return validate_all(specs, values, node=node.get_name())
