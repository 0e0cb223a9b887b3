"""Device configs (JSON) and device sets (YAML) of the signal link.

A device config describes one kind of device by its pin signals (DESIGN.md):

.. code-block:: json

    {"name": "limit_switch",
     "description": "...",
     "signals": [{"name": "pressed", "direction": "OUTPUT", "type": "INTEGER",
                  "min": 0, "max": 1, "mode": "DIGITAL"}],
     "handler": {"template": "hc_sr04", "pins": ["trigger", "echo"]},
     "table": {...}}

``direction`` is seen from the simulator: INPUT signals go into the simulator (the
MCU drives the pin, e.g. a motor enable), OUTPUT signals come out of it (the MCU
reads the pin, e.g. a bumper switch). ``handler`` (devices with special timing) and
``table`` (device data such as a driver's truth table) are optional; an optional
``default`` per signal is the value sent before the simulator has sent one
(``min`` if absent) and ``unit`` names the physical unit.

A device set lists the device instances on one signal link, in signal-id order:

.. code-block:: yaml

    devices:
      - {name: motor_left, device: dc_motor}
      - {name: bumper_left, device: limit_switch}

Every validation error raises :class:`~hil_bridge.errors.HilBridgeError` naming the
file, the device, the signal and the field at fault.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import yaml

from hil_bridge.errors import HilBridgeError

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Widest INTEGER range whose Arduino map() onto int16 stays inside 32-bit arithmetic:
#: (max - min) * 65535 must fit a signed 32-bit long.
MAX_INTEGER_SPAN = 32767


class Direction(str, Enum):
    """Signal direction, seen from the simulator."""

    INPUT = "INPUT"
    OUTPUT = "OUTPUT"


class SignalType(str, Enum):
    """Value type of a signal's physical value."""

    INTEGER = "INTEGER"
    FLOAT = "FLOAT"


class PinMode(str, Enum):
    """How the signal is wired to an MCU pin."""

    DIGITAL = "DIGITAL"
    ANALOG = "ANALOG"
    PWM = "PWM"
    INTERRUPT = "INTERRUPT"


@dataclass(frozen=True)
class SignalSpec:
    """One pin signal of a device config."""

    name: str
    direction: Direction
    type: SignalType
    min: float
    max: float
    mode: PinMode
    default: float
    unit: str = ""
    description: str = ""


@dataclass(frozen=True)
class Handler:
    """Sketch template for a device with special timing, and the pins it uses."""

    template: str
    pins: tuple[str, ...]


@dataclass(frozen=True)
class DeviceConfig:
    """One kind of device: its signals and optional handler and data table."""

    name: str
    signals: tuple[SignalSpec, ...]
    description: str = ""
    handler: Handler | None = None
    table: dict[str, Any] = field(default_factory=dict)
    source: str = ""

    def signal(self, name: str) -> SignalSpec:
        """The signal called ``name``.

        Raises:
            HilBridgeError: no such signal.
        """
        for spec in self.signals:
            if spec.name == name:
                return spec
        raise HilBridgeError(f"device {self.name}: no signal {name!r}")


@dataclass(frozen=True)
class DeviceInstance:
    """A named device on a signal link, e.g. ``motor_left`` of kind ``dc_motor``."""

    name: str
    config: DeviceConfig


_DEVICE_KEYS = {"name", "description", "signals", "handler", "table"}
_SIGNAL_KEYS = {"name", "direction", "type", "min", "max", "mode", "default", "unit", "description"}


def _enum(cls: type[Enum], value: Any, where: str, key: str) -> Any:
    try:
        return cls(value)
    except ValueError:
        allowed = "|".join(str(member.value) for member in cls)
        raise HilBridgeError(f"{where}: field {key!r}: {value!r} is not one of {allowed}") from None


def _number(value: Any, where: str, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise HilBridgeError(f"{where}: field {key!r}: {value!r} is not a finite number")
    return float(value)


def _check_integer_range(data: dict[str, Any], low: float, high: float, where: str) -> None:
    for key in ("min", "max"):
        if not float(data[key]).is_integer():
            raise HilBridgeError(f"{where}: field {key!r}: {data[key]!r} is not an integer (type INTEGER)")
    if high - low > MAX_INTEGER_SPAN:
        raise HilBridgeError(
            f"{where}: field 'max': span {high - low:g} exceeds {MAX_INTEGER_SPAN}, "
            "Arduino map() would overflow 32-bit arithmetic"
        )


def _signal_from_mapping(data: Any, where: str) -> SignalSpec:
    if not isinstance(data, dict):
        raise HilBridgeError(f"{where}: expected an object")
    unknown = sorted(set(data) - _SIGNAL_KEYS)
    if unknown:
        raise HilBridgeError(f"{where}: unknown field(s) {unknown}")
    for key in ("name", "direction", "type", "min", "max", "mode"):
        if key not in data:
            raise HilBridgeError(f"{where}: missing field {key!r}")
    name = data["name"]
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise HilBridgeError(f"{where}: field 'name': {name!r} is not an identifier")
    where = f"{where} ({name})"
    kind = _enum(SignalType, data["type"], where, "type")
    low, high = _number(data["min"], where, "min"), _number(data["max"], where, "max")
    if not low < high:
        raise HilBridgeError(
            f"{where}: field 'max': {data['max']!r} must be greater than min {data['min']!r}"
        )
    if kind is SignalType.INTEGER:
        _check_integer_range(data, low, high, where)
    default = _number(data.get("default", low), where, "default")
    if not low <= default <= high:
        raise HilBridgeError(f"{where}: field 'default': {default:g} outside [{low:g}, {high:g}]")
    for key in ("unit", "description"):
        if not isinstance(data.get(key, ""), str):
            raise HilBridgeError(f"{where}: field {key!r}: expected text")
    return SignalSpec(
        name=name,
        direction=_enum(Direction, data["direction"], where, "direction"),
        type=kind,
        min=low,
        max=high,
        mode=_enum(PinMode, data["mode"], where, "mode"),
        default=default,
        unit=data.get("unit", ""),
        description=data.get("description", ""),
    )


def _handler_from_mapping(raw: Any, where: str) -> Handler:
    if not isinstance(raw, dict) or not isinstance(raw.get("template"), str):
        raise HilBridgeError(f"{where}: field 'handler': expected {{template, pins}}")
    pins = raw.get("pins", [])
    if not isinstance(pins, list) or not all(isinstance(p, str) and _IDENTIFIER.fullmatch(p) for p in pins):
        raise HilBridgeError(f"{where}: field 'handler.pins': expected a list of pin names")
    return Handler(template=raw["template"], pins=tuple(pins))


def device_from_mapping(data: Any, *, source: str) -> DeviceConfig:
    """Validate one device config given as parsed JSON.

    Raises:
        HilBridgeError: naming ``source``, the device, the signal and the bad field.
    """
    if not isinstance(data, dict):
        raise HilBridgeError(f"{source}: expected a JSON object")
    name = data.get("name")
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise HilBridgeError(f"{source}: field 'name': {name!r} is not an identifier")
    where = f"{source}: device {name}"
    unknown = sorted(set(data) - _DEVICE_KEYS)
    if unknown:
        raise HilBridgeError(f"{where}: unknown field(s) {unknown}")
    signals = data.get("signals")
    if not isinstance(signals, list) or not signals:
        raise HilBridgeError(f"{where}: field 'signals': expected a non-empty list")
    specs = tuple(_signal_from_mapping(s, f"{where}: signal {i}") for i, s in enumerate(signals))
    names = [spec.name for spec in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise HilBridgeError(f"{where}: duplicate signal name(s) {duplicates}")
    handler = _handler_from_mapping(data["handler"], where) if "handler" in data else None
    table = data.get("table", {})
    if not isinstance(table, dict):
        raise HilBridgeError(f"{where}: field 'table': expected an object")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise HilBridgeError(f"{where}: field 'description': expected text")
    return DeviceConfig(name, specs, description, handler, table, source)


def load_device_config(path: str | Path) -> DeviceConfig:
    """Load and validate one device config JSON file.

    Raises:
        HilBridgeError: unreadable file, bad JSON or invalid config; names the file.
    """
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise HilBridgeError(f"{path}: cannot read device config: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise HilBridgeError(
            f"{path}: line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}"
        ) from exc
    return device_from_mapping(data, source=str(path))


def load_device_library(paths: Iterable[str | Path]) -> dict[str, DeviceConfig]:
    """Load device configs from files and folders (every ``*.json`` in a folder).

    Raises:
        HilBridgeError: a config is invalid, or two configs share a name.
    """
    library: dict[str, DeviceConfig] = {}
    for entry in paths:
        path = Path(entry)
        files = sorted(path.glob("*.json")) if path.is_dir() else [path]
        for file in files:
            config = load_device_config(file)
            if config.name in library:
                raise HilBridgeError(
                    f"{file}: device {config.name} is already defined in {library[config.name].source}"
                )
            library[config.name] = config
    return library


def device_set_from_mapping(
    data: Any, library: dict[str, DeviceConfig], *, source: str
) -> list[DeviceInstance]:
    """Validate a device set: ``{"devices": [{"name": ..., "device": ...}, ...]}``.

    Raises:
        HilBridgeError: naming ``source``, the entry and the bad field.
    """
    if not isinstance(data, dict) or not isinstance(data.get("devices"), list) or not data["devices"]:
        raise HilBridgeError(f"{source}: expected 'devices:' with a non-empty list")
    instances: list[DeviceInstance] = []
    for index, entry in enumerate(data["devices"]):
        where = f"{source}: devices[{index}]"
        if not isinstance(entry, dict) or set(entry) != {"name", "device"}:
            raise HilBridgeError(f"{where}: expected exactly the fields 'name' and 'device'")
        name, kind = entry["name"], entry["device"]
        if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
            raise HilBridgeError(f"{where}: field 'name': {name!r} is not an identifier")
        if kind not in library:
            known = ", ".join(sorted(library)) or "none loaded"
            raise HilBridgeError(
                f"{where} ({name}): field 'device': unknown device {kind!r} (known: {known})"
            )
        if any(instance.name == name for instance in instances):
            raise HilBridgeError(f"{where}: field 'name': {name!r} is used twice")
        instances.append(DeviceInstance(name, library[kind]))
    return instances


def load_device_set(path: str | Path, library: dict[str, DeviceConfig]) -> list[DeviceInstance]:
    """Load a device set YAML file against a device library.

    Raises:
        HilBridgeError: unreadable file, bad YAML or invalid entries; names the file.
    """
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise HilBridgeError(f"{path}: cannot read device set: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise HilBridgeError(f"{path}: invalid YAML: {exc}") from exc
    return device_set_from_mapping(data, library, source=str(path))
