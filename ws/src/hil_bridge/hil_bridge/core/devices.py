"""Device configs (JSON) and device sets (YAML) of the signal link.

A device config describes one kind of device by its pin signals (DESIGN.md):

.. code-block:: json

    {"name": "limit_switch",
     "description": "...",
     "signals": [{"name": "pressed", "direction": "OUTPUT", "type": "INTEGER",
                  "min": 0, "max": 1, "mode": "DIGITAL"}],
     "handler": {"template": "hc_sr04", "pins": ["trigger", "echo"]},
     "table": {...}}

A handler may also give ``file``: a template file of its own, relative to the config
(then ``template`` only names it; it replaces no template of the library).

``direction`` is seen from the simulator: INPUT signals go into the simulator (the
MCU drives the pin, e.g. a motor enable), OUTPUT signals come out of it (the MCU
reads the pin, e.g. a bumper switch). ``handler`` (devices with special timing) and
``table`` (device data such as a driver's truth table) are optional; an optional
``default`` per signal is the value sent before the simulator has sent one
(``min`` if absent), ``unit`` names the physical unit and ``id`` fixes the signal's
id on the link (0..254; 0xFF is the frame's start byte).

A device set lists the device instances on one signal link, in frame order:

.. code-block:: yaml

    devices:
      - {name: motor_left, device: dc_motor}
      - {name: bumper_left, device: limit_switch, ids: {pressed: 40}}

Signal ids (:func:`assign_signal_ids`): an instance's ``ids`` or the config's ``id``
where given, every other signal the lowest id still free, in device and signal
order; without explicit ids that is 0, 1, 2... Ids are unique on a link.

Device configs in the HIL thesis' shape (``handler: {name, file, pins: [{name, mode,
direction}]}`` with a ``.hlr`` handler file) are recognised by
:func:`load_device_config` and imported by :mod:`hil_bridge.core.thesis_import`.

Every validation error raises :class:`~hil_bridge.errors.HilBridgeError` naming the
file, the device, the signal and the field at fault.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from hil_bridge.core.config_file import load_json, load_yaml
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
    #: The signal's id on the link if the config fixes it (0..254), else None.
    id: int | None = None


@dataclass(frozen=True)
class Handler:
    """Sketch template for a device with special timing, and the pins it uses.

    ``template`` names a template of the handler library (``config/handlers``), unless
    ``text`` carries the template's own text (in our syntax), read from ``file`` (a
    thesis ``.hlr`` handler beside its device config).
    """

    template: str
    pins: tuple[str, ...]
    text: str = ""
    file: str = ""


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
    #: Signal ids this instance fixes (signal name -> id), over the config's ``id``.
    ids: Mapping[str, int] = field(default_factory=dict)


#: Signal ids are bytes; 0xFF is the frame's start byte.
MAX_SIGNAL_ID = 254

_DEVICE_KEYS = {"name", "description", "signals", "handler", "table"}
_SIGNAL_KEYS = {
    "name",
    "direction",
    "type",
    "min",
    "max",
    "mode",
    "default",
    "unit",
    "description",
    "id",
}


def _enum(cls: type[Enum], value: Any, where: str, key: str) -> Any:
    try:
        return cls(value)
    except ValueError:
        allowed = "|".join(str(member.value) for member in cls)
        raise HilBridgeError(f"{where}: field {key!r}: {value!r} is not one of {allowed}") from None


def _number(value: Any, where: str, key: str) -> float:
    number = math.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        with contextlib.suppress(OverflowError):  # an int beyond float range stays NaN
            number = float(value)
    if not math.isfinite(number):
        raise HilBridgeError(f"{where}: field {key!r}: {value!r:.40} is not a finite number")
    return number


def check_signal_id(value: Any, where: str) -> int:
    """A signal id: an integer 0..254.

    Raises:
        HilBridgeError: naming ``where`` and why the value is no id.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise HilBridgeError(f"{where}: field 'id': {value!r} is not an integer 0..{MAX_SIGNAL_ID}")
    if value == 0xFF:
        raise HilBridgeError(f"{where}: field 'id': 255 (0xFF) is the frame's start byte, not an id")
    if not 0 <= value <= MAX_SIGNAL_ID:
        raise HilBridgeError(f"{where}: field 'id': {value} is outside 0..{MAX_SIGNAL_ID}")
    return value


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
    if not math.isfinite(high - low):  # the codecs scale by the span
        raise HilBridgeError(
            f"{where}: field 'max': the span max - min overflows ({data['min']!r} .. {data['max']!r})"
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
        id=check_signal_id(data["id"], where) if "id" in data else None,
    )


def _handler_from_mapping(raw: Any, where: str, base: Path | None) -> Handler:
    if not isinstance(raw, dict) or not isinstance(raw.get("template"), str):
        raise HilBridgeError(f"{where}: field 'handler': expected {{template, pins}}")
    unknown = sorted(set(raw) - {"template", "pins", "file"})
    if unknown:
        raise HilBridgeError(f"{where}: field 'handler': unknown field(s) {unknown}")
    pins = raw.get("pins", [])
    if not isinstance(pins, list) or not all(isinstance(p, str) and _IDENTIFIER.fullmatch(p) for p in pins):
        raise HilBridgeError(f"{where}: field 'handler.pins': expected a list of pin names")
    if "file" not in raw:
        return Handler(template=raw["template"], pins=tuple(pins))
    if not isinstance(raw["file"], str) or base is None:
        raise HilBridgeError(f"{where}: field 'handler.file': expected a path relative to the config file")
    path = base / raw["file"]
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise HilBridgeError(f"{where}: field 'handler.file': cannot read {path}: {exc}") from exc
    return Handler(template=raw["template"], pins=tuple(pins), text=text, file=str(path))


def device_from_mapping(data: Any, *, source: str, base: Path | None = None) -> DeviceConfig:
    """Validate one device config given as parsed JSON.

    Args:
        data: the parsed JSON.
        source: names the config in errors (its file).
        base: the folder a ``handler.file`` (a template beside the config) is relative to.

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
    check_unique_ids([(spec.name, spec.id) for spec in specs], where)
    handler = _handler_from_mapping(data["handler"], where, base) if "handler" in data else None
    table = data.get("table", {})
    if not isinstance(table, dict):
        raise HilBridgeError(f"{where}: field 'table': expected an object")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise HilBridgeError(f"{where}: field 'description': expected text")
    return DeviceConfig(name, specs, description, handler, table, source)


def check_unique_ids(ids: Iterable[tuple[str, int | None]], where: str) -> None:
    """Explicit ids (``(signal, id or None)``) must not repeat.

    Raises:
        HilBridgeError: naming ``where``, the id and both signals.
    """
    owner: dict[int, str] = {}
    for name, value in ids:
        if value is None:
            continue
        if value in owner:
            raise HilBridgeError(f"{where}: signal {name}: id {value} is already {owner[value]}'s")
        owner[value] = name


def assign_signal_ids(devices: Sequence[DeviceInstance], *, source: str = "") -> list[int]:
    """The id of every signal of ``devices``, in device and signal order.

    Explicit ids (the instance's ``ids``, else the config's ``id``) are kept; every
    other signal gets the lowest id not yet taken, in order. Without explicit ids the
    result is 0, 1, 2...

    Raises:
        HilBridgeError: more than 255 signals, or an id given twice; names ``source``
            and the signals.
    """
    where = f"{source}: " if source else ""
    pairs: list[tuple[str, int | None]] = []
    for device in devices:
        for spec in device.config.signals:
            pairs.append((f"{device.name}.{spec.name}", device.ids.get(spec.name, spec.id)))
    if len(pairs) > MAX_SIGNAL_ID + 1:
        raise HilBridgeError(
            f"{where}{len(pairs)} signals on one link; ids 0..{MAX_SIGNAL_ID} allow at most "
            f"{MAX_SIGNAL_ID + 1}"
        )
    for name, value in pairs:
        if value is not None:
            check_signal_id(value, f"{where}signal {name}")
    check_unique_ids(pairs, source or "link")
    taken = {value for _, value in pairs if value is not None}
    free = (i for i in range(MAX_SIGNAL_ID + 1) if i not in taken)
    return [value if value is not None else next(free) for _, value in pairs]


def load_device_config(path: str | Path) -> DeviceConfig:
    """Load and validate one device config JSON file, ours or in the HIL thesis' shape.

    A config whose ``handler`` has ``name`` or ``file`` or pins given as objects is a
    thesis config and goes through :func:`hil_bridge.core.thesis_import.thesis_device`.

    Raises:
        HilBridgeError: unreadable file, bad JSON or invalid config; names the file.
    """
    data = read_json(path, what="device config")
    # thesis_import builds on this module, so it can only be imported here.
    from hil_bridge.core import thesis_import  # noqa: PLC0415

    if thesis_import.is_thesis_config(data):
        return thesis_import.thesis_device(data, path=Path(path)).config
    return device_from_mapping(data, source=str(path), base=Path(path).parent)


def read_json(path: str | Path, *, what: str) -> Any:
    """Parse a JSON file (:func:`hil_bridge.core.config_file.load_json`).

    Raises:
        HilBridgeError: unreadable, invalid or out of bounds, naming the file (and the line).
    """
    return load_json(path, what=what)


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


def _instance_ids(raw: Any, config: DeviceConfig, where: str) -> dict[str, int]:
    if not isinstance(raw, dict):
        raise HilBridgeError(f"{where}: field 'ids': expected {{signal: id}}")
    names = {spec.name for spec in config.signals}
    ids: dict[str, int] = {}
    for name, value in raw.items():
        if name not in names:
            raise HilBridgeError(f"{where}: field 'ids': device {config.name} has no signal {name!r}")
        ids[name] = check_signal_id(value, f"{where}: ids.{name}")
    return ids


def device_set_from_mapping(
    data: Any, library: dict[str, DeviceConfig], *, source: str
) -> list[DeviceInstance]:
    """Validate a device set: ``{"devices": [{"name": ..., "device": ..., "ids": {...}}, ...]}``.

    ``ids`` (optional) fixes signal ids of that instance (signal name -> id).

    Raises:
        HilBridgeError: naming ``source``, the entry and the bad field; also when two
            signals of the set have the same id.
    """
    if not isinstance(data, dict) or not isinstance(data.get("devices"), list) or not data["devices"]:
        raise HilBridgeError(f"{source}: expected 'devices:' with a non-empty list")
    instances: list[DeviceInstance] = []
    for index, entry in enumerate(data["devices"]):
        where = f"{source}: devices[{index}]"
        if not isinstance(entry, dict) or not {"name", "device"} <= set(entry) <= {"name", "device", "ids"}:
            raise HilBridgeError(
                f"{where}: expected exactly the fields 'name' and 'device' (and optionally 'ids')"
            )
        name, kind = entry["name"], entry["device"]
        if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
            raise HilBridgeError(f"{where}: field 'name': {name!r:.40} is not an identifier")
        if not isinstance(kind, str):
            raise HilBridgeError(f"{where} ({name}): field 'device': {kind!r:.40} is not a device name")
        if kind not in library:
            known = ", ".join(sorted(library)) or "none loaded"
            raise HilBridgeError(
                f"{where} ({name}): field 'device': unknown device {kind!r} (known: {known})"
            )
        if any(instance.name == name for instance in instances):
            raise HilBridgeError(f"{where}: field 'name': {name!r} is used twice")
        ids = _instance_ids(entry["ids"], library[kind], f"{where} ({name})") if "ids" in entry else {}
        instances.append(DeviceInstance(name, library[kind], ids))
    assign_signal_ids(instances, source=source)
    return instances


def load_device_set(path: str | Path, library: dict[str, DeviceConfig]) -> list[DeviceInstance]:
    """Load a device set YAML file against a device library.

    Raises:
        HilBridgeError: unreadable file, bad YAML or invalid entries; names the file.
    """
    data = load_yaml(path, what="device set")
    return device_set_from_mapping(data, library, source=str(path))
