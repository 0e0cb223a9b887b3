"""Node parameters described once: name, default, description, range.

Every node of the workspace lists its parameters as :class:`ParamSpec` values; the
rclpy layer (:mod:`hil_common.parameters`) declares them with a
``ParameterDescriptor`` carrying the description and range, and validates what a
launch file or YAML gave. The defaults also live in one YAML file per package
(``config/<package>.yaml``); :func:`yaml_defaults` reads it so a test can check the
two agree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hil_common.core.config_file import load_yaml
from hil_common.errors import HilError

ParamValue = bool | int | float | str | list[str]


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: its default (which also fixes its type), text, and allowed values."""

    name: str
    default: ParamValue
    description: str
    min: float | None = None
    max: float | None = None
    choices: tuple[Any, ...] = ()

    def validate(self, value: Any, *, node: str = "") -> ParamValue:
        """Check ``value`` against type, range and choices; returns it (ints widened to float).

        Raises:
            HilError: naming the node, the parameter and what is wrong.
        """
        where = f"{node}: parameter {self.name!r}" if node else f"parameter {self.name!r}"
        expected = type(self.default)
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if expected is list:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise HilError(f"{where}: expected a list of strings, got {value!r}")
        elif not isinstance(value, expected) or (expected is not bool and isinstance(value, bool)):
            raise HilError(f"{where}: expected {expected.__name__}, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise HilError(f"{where}: {value!r} is not finite")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if self.min is not None and value < self.min:
                raise HilError(f"{where}: {value!r} is below the minimum {self.min:g}")
            if self.max is not None and value > self.max:
                raise HilError(f"{where}: {value!r} is above the maximum {self.max:g}")
        if self.choices and value not in self.choices:
            raise HilError(f"{where}: {value!r} is not one of {list(self.choices)}")
        return value  # type: ignore[no-any-return]


class ParamValues(dict[str, ParamValue]):
    """Validated parameter values with typed accessors."""

    def as_float(self, name: str) -> float:
        """The float parameter ``name``."""
        value = self[name]
        assert isinstance(value, (int, float)) and not isinstance(value, bool), name
        return float(value)

    def as_int(self, name: str) -> int:
        """The integer parameter ``name``."""
        value = self[name]
        assert isinstance(value, int) and not isinstance(value, bool), name
        return value

    def as_bool(self, name: str) -> bool:
        """The boolean parameter ``name``."""
        value = self[name]
        assert isinstance(value, bool), name
        return value

    def as_str(self, name: str) -> str:
        """The string parameter ``name``."""
        value = self[name]
        assert isinstance(value, str), name
        return value

    def as_strings(self, name: str) -> list[str]:
        """The string-list parameter ``name``."""
        value = self[name]
        assert isinstance(value, list), name
        return list(value)


def validate_all(specs: Sequence[ParamSpec], values: dict[str, Any], *, node: str = "") -> ParamValues:
    """Validate every parameter of ``specs`` present in ``values``.

    Raises:
        HilError: the first invalid parameter, named.
    """
    return ParamValues(
        {spec.name: spec.validate(values[spec.name], node=node) for spec in specs if spec.name in values}
    )


def yaml_defaults(path: str | Path, node: str) -> dict[str, Any]:
    """The ``ros__parameters`` of ``node`` in a ROS 2 parameter file.

    Raises:
        HilError: the file or the node's section is missing or malformed.
    """
    data = load_yaml(path, what="parameter file")
    try:
        params = data[node]["ros__parameters"]
    except (KeyError, TypeError):
        raise HilError(f"{path}: no '{node}: ros__parameters:' section") from None
    if not isinstance(params, dict):
        raise HilError(f"{path}: {node}.ros__parameters is not a mapping")
    return params
