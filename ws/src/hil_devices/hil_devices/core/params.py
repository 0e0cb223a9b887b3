"""Parameters a device may be given: a number in a range, one of some texts, or a table.

One declaration (:class:`DeviceParam`) per parameter, read from JSON: the simulator's
model kinds declare theirs in ``config/models.json`` (:mod:`hil_devices.core.models`),
a device type of the library the ones it adds of its own (a harness parameter such as
a push button's ``bounce_us``, a driver's ``wheel``) in its ``params`` section
(:mod:`hil_devices.core.devices`). The form:

.. code-block:: json

    {"default": 0.3, "min": 0, "max": 100, "unit": "cm", "description": "..."}
    {"choices": ["left", "right"], "default": "left", "description": "..."}
    {"table": true, "default": [], "unit": "cm", "description": "..."}

No ``default`` means whoever gives the device must give it.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from hil_devices.errors import HilDevicesError

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: The fields of a parameter's declaration.
PARAM_KEYS = ("default", "min", "max", "unit", "description", "choices", "table")

#: A parameter's value: a number, a text (choices) or a table of numbers.
ParamValue = float | str | tuple[float, ...]


@dataclass(frozen=True)
class DeviceParam:
    """A parameter of a device: a number in a range, one of ``choices``, or a table of numbers."""

    name: str
    #: None: whoever gives the device must give it.
    default: ParamValue | None
    description: str = ""
    min: float = -math.inf
    max: float = math.inf
    unit: str = ""
    #: Non-empty: the value is one of these texts.
    choices: tuple[str, ...] = ()
    #: The value is a list of at least two numbers (a lookup table); an empty default: none.
    table: bool = False

    def check(self, value: Any, where: str) -> ParamValue:
        """``value`` if it fits, as a float (numbers), text (choices) or tuple (tables).

        Raises:
            HilDevicesError: naming ``where``, the value and what would fit.
        """
        if self.choices:
            if not isinstance(value, str) or value not in self.choices:
                raise HilDevicesError(f"{where}: {value!r:.40} is not one of {', '.join(self.choices)}")
            return value
        if self.table:
            if isinstance(value, (list, tuple)) and not value and self.default == ():
                return ()
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) < 2:
                raise HilDevicesError(f"{where}: expected a list of at least two numbers")
            return tuple(_finite(item, f"{where}[{k}]") for k, item in enumerate(value))
        number = _finite(value, where)
        if not self.min <= number <= self.max:
            unit = f" {self.unit}" if self.unit else ""
            raise HilDevicesError(f"{where}: {number:g} is outside {self.min:g}..{self.max:g}{unit}")
        return number


def _finite(value: Any, where: str) -> float:
    number = math.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        with contextlib.suppress(OverflowError):  # an int beyond float range stays NaN
            number = float(value)
    if not math.isfinite(number):
        raise HilDevicesError(f"{where}: {value!r:.40} is not a finite number")
    return number


def _text(raw: dict[str, Any], key: str, at: str) -> str:
    value = raw.get(key, "")
    if not isinstance(value, str):
        raise HilDevicesError(f"{at}: field {key!r}: expected text")
    return value


def param_from_mapping(name: str, raw: Any, at: str) -> DeviceParam:
    """One parameter's declaration (module docstring); ``at`` names it in errors.

    Raises:
        HilDevicesError: naming ``at`` and the field at fault.
    """
    if not _IDENTIFIER.fullmatch(name):
        raise HilDevicesError(f"{at}: {name!r:.40} is not an identifier")
    if not isinstance(raw, dict):
        raise HilDevicesError(
            f"{at}: expected {{default, min, max, unit, description}}, {{choices}} or {{table}}"
        )
    unknown = sorted(set(raw) - set(PARAM_KEYS))
    if unknown:
        raise HilDevicesError(f"{at}: unknown field(s) {unknown} (known: {', '.join(sorted(PARAM_KEYS))})")
    description, unit = _text(raw, "description", at), _text(raw, "unit", at)
    if raw.get("table", False) is not False:
        if raw["table"] is not True or "choices" in raw or "min" in raw or "max" in raw:
            raise HilDevicesError(f"{at}: a table parameter has table: true and no choices, min or max")
        param = DeviceParam(name, None, description, unit=unit, table=True)
        if raw.get("default") == []:
            return replace(param, default=())
        return _with_default(param, raw, at)
    if "choices" in raw:
        choices = raw["choices"]
        if not isinstance(choices, list) or not choices or not all(isinstance(c, str) for c in choices):
            raise HilDevicesError(f"{at}: field 'choices': expected a non-empty list of texts")
        if "min" in raw or "max" in raw:
            raise HilDevicesError(f"{at}: a parameter has either choices or min and max")
        return _with_default(DeviceParam(name, None, description, unit=unit, choices=tuple(choices)), raw, at)
    for key in ("min", "max"):
        if key not in raw:
            raise HilDevicesError(f"{at}: missing field {key!r}")
    low, high = _finite(raw["min"], f"{at}: field 'min'"), _finite(raw["max"], f"{at}: field 'max'")
    if not low <= high:
        raise HilDevicesError(f"{at}: field 'max': {high:g} is below min {low:g}")
    return _with_default(DeviceParam(name, None, description, low, high, unit), raw, at)


def _with_default(param: DeviceParam, raw: dict[str, Any], at: str) -> DeviceParam:
    default = raw.get("default")
    return param if default is None else replace(param, default=param.check(default, f"{at}.default"))
