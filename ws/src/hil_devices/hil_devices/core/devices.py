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

A config may also describe the device for robot profiles
(:mod:`hil_devices.core.profile`), in four optional sections:

.. code-block:: json

    {"pins": [{"name": "ena", "mcu": "output", "needs": "pwm", "signal": "enable"},
              {"name": "in1", "mcu": "output", "needs": "digital", "signal": "a"}],
     "params": {"wheel": {"choices": ["left", "right"], "description": "..."},
                "direction": {}},
     "model": {"kind": "l298n", "role": "driver", "in_full_scale": 1024},
     "coupling": {"kind": "hc_sr04"}}

* ``pins``: the device's MCU pins as a profile wires them, seen from the MCU
  (``mcu``: ``output`` the MCU drives it, ``input`` the MCU reads it, ``bus`` both);
  ``needs`` what the pin must be able to do (:data:`PIN_NEEDS`); ``signal`` the
  signal it carries (default: the signal of the same name, if any; a handler's pins
  carry none of their own). A PWM-mode INPUT signal on a pin that ``needs``
  ``digital`` is measured as a duty on a timer pin and as a level elsewhere (the
  inputs of an L298 take either).
* ``params``: what a profile may set per device. A parameter of the model's kind
  (declared once, in ``config/models.json``: :mod:`hil_devices.core.models`) is listed
  with only a ``default`` of the type's, or ``{}`` for the kind's; any other (a
  harness's, a driver's ``wheel``) is declared here (:mod:`hil_devices.core.params`: a
  number with ``default``, ``min``, ``max``, ``unit``, ``description``, or one of
  ``choices``); no ``default`` means the profile must give it.
* ``model``: the simulator's model ``kind`` (one of ``config/models.json``) and fixed
  values of its parameters, checked against their declarations; ``role`` ``driver``
  (drives the wheel named by the ``wheel`` parameter) or ``joint`` (devices may ride
  on it, a servo).
* ``coupling``: the ``kind`` of the firmware-in-the-loop harness's model
  (``hil_mcu.core.simavr.HANDLER_KINDS``; default: the handler's template).

Device configs in the HIL thesis' shape (``handler: {name, file, pins: [{name, mode,
direction}]}`` with a ``.hlr`` handler file) are recognised by
:func:`load_device_config` and imported by :mod:`hil_devices.core.thesis_format`.

Every validation error raises :class:`~hil_devices.errors.HilDevicesError` naming the
file, the device, the signal and the field at fault.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

from hil_common.core.config_file import load_json, load_yaml
from hil_devices.core.models import MODELS_FILE, ModelKind, model_kinds
from hil_devices.core.params import DeviceParam, param_from_mapping
from hil_devices.errors import HilDevicesError

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


#: What a device's pin may need of the MCU pin it is wired to.
PIN_NEEDS = ("digital", "pwm", "analog", "interrupt", "i2c_sda", "i2c_scl", "uart_rx", "uart_tx")
#: How the MCU uses a device pin.
PIN_USES = ("output", "input", "bus")
#: Roles of a device's simulator model that a profile checks.
MODEL_ROLES = ("driver", "joint")


@dataclass(frozen=True)
class DevicePin:
    """One MCU pin of a device, as a robot profile wires it."""

    name: str
    #: ``output``: the MCU drives it; ``input``: the MCU reads it; ``bus``: both (I2C).
    mcu: str
    #: What the MCU pin must be able to do (one of :data:`PIN_NEEDS`).
    needs: str
    #: The signal it carries, or "" (a handler pin: the handler serves the signals).
    signal: str = ""
    description: str = ""


@dataclass(frozen=True)
class ModelSpec:
    """The simulator's model of a device: its kind, role and fixed data."""

    kind: str
    #: ``driver``, ``joint`` or "" (:data:`MODEL_ROLES`).
    role: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DeviceConfig:
    """One kind of device: its signals and optional handler and data table.

    ``pins``, ``params``, ``model`` and ``coupling`` describe it for robot profiles
    (module docstring); a config without them serves device sets as before.
    """

    name: str
    signals: tuple[SignalSpec, ...]
    description: str = ""
    handler: Handler | None = None
    table: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    pins: tuple[DevicePin, ...] = ()
    params: Mapping[str, DeviceParam] = field(default_factory=dict)
    model: ModelSpec | None = None
    #: The harness model's kind (``HANDLER_KINDS``), or "" (the handler's template).
    coupling: str = ""

    def pin(self, name: str) -> DevicePin | None:
        """The pin called ``name``, or None."""
        return next((pin for pin in self.pins if pin.name == name), None)

    def pin_of_signal(self, signal: str) -> DevicePin | None:
        """The pin carrying ``signal``, or None."""
        return next((pin for pin in self.pins if pin.signal == signal), None)

    def signal(self, name: str) -> SignalSpec:
        """The signal called ``name``.

        Raises:
            HilDevicesError: no such signal.
        """
        for spec in self.signals:
            if spec.name == name:
                return spec
        raise HilDevicesError(f"device {self.name}: no signal {name!r}")


@dataclass(frozen=True)
class DeviceInstance:
    """A named device on a signal link, e.g. ``motor_left`` of kind ``dc_motor``."""

    name: str
    config: DeviceConfig
    #: Signal ids this instance fixes (signal name -> id), over the config's ``id``.
    ids: Mapping[str, int] = field(default_factory=dict)


#: Signal ids are bytes; 0xFF is the frame's start byte.
MAX_SIGNAL_ID = 254

_DEVICE_KEYS = {"name", "description", "signals", "handler", "table", "pins", "params", "model", "coupling"}
_PIN_KEYS = {"name", "mcu", "needs", "signal", "description"}
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
        raise HilDevicesError(f"{where}: field {key!r}: {value!r} is not one of {allowed}") from None


def _number(value: Any, where: str, key: str) -> float:
    number = math.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        with contextlib.suppress(OverflowError):  # an int beyond float range stays NaN
            number = float(value)
    if not math.isfinite(number):
        raise HilDevicesError(f"{where}: field {key!r}: {value!r:.40} is not a finite number")
    return number


def check_signal_id(value: Any, where: str) -> int:
    """A signal id: an integer 0..254.

    Raises:
        HilDevicesError: naming ``where`` and why the value is no id.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise HilDevicesError(f"{where}: field 'id': {value!r} is not an integer 0..{MAX_SIGNAL_ID}")
    if value == 0xFF:
        raise HilDevicesError(f"{where}: field 'id': 255 (0xFF) is the frame's start byte, not an id")
    if not 0 <= value <= MAX_SIGNAL_ID:
        raise HilDevicesError(f"{where}: field 'id': {value} is outside 0..{MAX_SIGNAL_ID}")
    return value


def _check_integer_range(data: dict[str, Any], low: float, high: float, where: str) -> None:
    for key in ("min", "max"):
        if not float(data[key]).is_integer():
            raise HilDevicesError(f"{where}: field {key!r}: {data[key]!r} is not an integer (type INTEGER)")
    if high - low > MAX_INTEGER_SPAN:
        raise HilDevicesError(
            f"{where}: field 'max': span {high - low:g} exceeds {MAX_INTEGER_SPAN}, "
            "Arduino map() would overflow 32-bit arithmetic"
        )


def _signal_from_mapping(data: Any, where: str) -> SignalSpec:
    if not isinstance(data, dict):
        raise HilDevicesError(f"{where}: expected an object")
    unknown = sorted(set(data) - _SIGNAL_KEYS)
    if unknown:
        raise HilDevicesError(f"{where}: unknown field(s) {unknown}")
    for key in ("name", "direction", "type", "min", "max", "mode"):
        if key not in data:
            raise HilDevicesError(f"{where}: missing field {key!r}")
    name = data["name"]
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise HilDevicesError(f"{where}: field 'name': {name!r} is not an identifier")
    where = f"{where} ({name})"
    kind = _enum(SignalType, data["type"], where, "type")
    low, high = _number(data["min"], where, "min"), _number(data["max"], where, "max")
    if not low < high:
        raise HilDevicesError(
            f"{where}: field 'max': {data['max']!r} must be greater than min {data['min']!r}"
        )
    if not math.isfinite(high - low):  # the codecs scale by the span
        raise HilDevicesError(
            f"{where}: field 'max': the span max - min overflows ({data['min']!r} .. {data['max']!r})"
        )
    if kind is SignalType.INTEGER:
        _check_integer_range(data, low, high, where)
    default = _number(data.get("default", low), where, "default")
    if not low <= default <= high:
        raise HilDevicesError(f"{where}: field 'default': {default:g} outside [{low:g}, {high:g}]")
    for key in ("unit", "description"):
        if not isinstance(data.get(key, ""), str):
            raise HilDevicesError(f"{where}: field {key!r}: expected text")
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
        raise HilDevicesError(f"{where}: field 'handler': expected {{template, pins}}")
    unknown = sorted(set(raw) - {"template", "pins", "file"})
    if unknown:
        raise HilDevicesError(f"{where}: field 'handler': unknown field(s) {unknown}")
    pins = raw.get("pins", [])
    if not isinstance(pins, list) or not all(isinstance(p, str) and _IDENTIFIER.fullmatch(p) for p in pins):
        raise HilDevicesError(f"{where}: field 'handler.pins': expected a list of pin names")
    if "file" not in raw:
        return Handler(template=raw["template"], pins=tuple(pins))
    if not isinstance(raw["file"], str) or base is None:
        raise HilDevicesError(f"{where}: field 'handler.file': expected a path relative to the config file")
    path = base / raw["file"]
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise HilDevicesError(f"{where}: field 'handler.file': cannot read {path}: {exc}") from exc
    return Handler(template=raw["template"], pins=tuple(pins), text=text, file=str(path))


def _text(data: dict[str, Any], key: str, where: str, default: str = "") -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise HilDevicesError(f"{where}: field {key!r}: expected text")
    return value


def _pins_from_list(
    raw: Any, specs: Sequence[SignalSpec], handler: Handler | None, where: str
) -> tuple[DevicePin, ...]:
    if not isinstance(raw, list) or not raw:
        raise HilDevicesError(f"{where}: field 'pins': expected a non-empty list of {{name, mcu, needs}}")
    signals = {spec.name for spec in specs}
    served = set(handler.pins) if handler is not None else set()
    pins: list[DevicePin] = []
    for index, entry in enumerate(raw):
        at = f"{where}: pins[{index}]"
        if not isinstance(entry, dict):
            raise HilDevicesError(f"{at}: expected an object")
        unknown = sorted(set(entry) - _PIN_KEYS)
        if unknown:
            raise HilDevicesError(f"{at}: unknown field(s) {unknown} (known: {', '.join(sorted(_PIN_KEYS))})")
        name = entry.get("name")
        if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
            raise HilDevicesError(f"{at}: field 'name': {name!r:.40} is not an identifier")
        at = f"{at} ({name})"
        if any(pin.name == name for pin in pins):
            raise HilDevicesError(f"{at}: field 'name': {name!r} is used twice")
        mcu, needs = entry.get("mcu"), entry.get("needs")
        if mcu not in PIN_USES:
            raise HilDevicesError(f"{at}: field 'mcu': {mcu!r:.40} is not one of {'|'.join(PIN_USES)}")
        if needs not in PIN_NEEDS:
            raise HilDevicesError(f"{at}: field 'needs': {needs!r:.40} is not one of {'|'.join(PIN_NEEDS)}")
        default_signal = name if name in signals and name not in served else ""
        signal = _text(entry, "signal", at, default_signal)
        if signal and signal not in signals:
            raise HilDevicesError(f"{at}: field 'signal': the device has no signal {signal!r}")
        if signal and any(pin.signal == signal for pin in pins):
            raise HilDevicesError(f"{at}: field 'signal': {signal!r} is already another pin's")
        pins.append(DevicePin(name, mcu, needs, signal, _text(entry, "description", at)))
    missing = sorted(served - {pin.name for pin in pins})
    if missing:
        raise HilDevicesError(f"{where}: field 'pins': the handler's pin(s) {missing} are not declared")
    return tuple(pins)


def _params_from_mapping(raw: Any, where: str, kind: ModelKind | None) -> dict[str, DeviceParam]:
    """A type's ``params``: its own declarations, and the model kind's it lets a profile set.

    A parameter of the kind takes only a ``default`` of the type's (or none: the
    kind's); its range, unit and description are the kind's (``config/models.json``).
    """
    if not isinstance(raw, dict):
        raise HilDevicesError(f"{where}: field 'params': expected {{name: {{default, min, max, ...}}}}")
    params = {}
    for name, entry in raw.items():
        at = f"{where}: params.{name}"
        declared = kind.params.get(name) if kind is not None else None
        if declared is None:
            params[name] = param_from_mapping(name, entry, at)
            continue
        if not isinstance(entry, dict) or set(entry) - {"default"}:
            raise HilDevicesError(
                f"{at}: a parameter of model kind {kind.name if kind else ''} is declared in"
                f" {MODELS_FILE}: give only its default here (or {{}}: the kind's)"
            )
        param = declared
        if "default" in entry:
            param = replace(declared, default=declared.check(entry["default"], f"{at}.default"))
        params[name] = param
    return params


def _model_from_mapping(raw: Any, where: str, kinds: Mapping[str, ModelKind]) -> tuple[ModelSpec, ModelKind]:
    if not isinstance(raw, dict) or not isinstance(raw.get("kind"), str) or not raw["kind"]:
        raise HilDevicesError(f"{where}: field 'model': expected {{kind, ...}}")
    role = raw.get("role", "")
    if role not in ("", *MODEL_ROLES):
        raise HilDevicesError(
            f"{where}: field 'model.role': {role!r:.40} is not one of {'|'.join(MODEL_ROLES)}"
        )
    kind = kinds.get(raw["kind"])
    if kind is None:
        raise HilDevicesError(
            f"{where}: field 'model.kind': {raw['kind']!r:.40} is not a model kind"
            f" ({MODELS_FILE}: {', '.join(sorted(kinds))})"
        )
    data = {}
    for key, value in raw.items():
        if key in ("kind", "role"):
            continue
        param = kind.params.get(key)
        if param is None:
            raise HilDevicesError(
                f"{where}: field 'model.{key}': not a parameter of model kind {kind.name}"
                f" ({', '.join(kind.params) or 'none'})"
            )
        data[key] = param.check(value, f"{where}: field 'model.{key}'")
    return ModelSpec(kind.name, role, data), kind


def _coupling_from_mapping(raw: Any, where: str) -> str:
    if (
        not isinstance(raw, dict)
        or set(raw) != {"kind"}
        or not isinstance(raw["kind"], str)
        or not raw["kind"]
    ):
        raise HilDevicesError(f"{where}: field 'coupling': expected {{kind: <the harness's model>}}")
    return str(raw["kind"])


def device_from_mapping(
    data: Any, *, source: str, base: Path | None = None, kinds: Mapping[str, ModelKind] | None = None
) -> DeviceConfig:
    """Validate one device config given as parsed JSON.

    Args:
        data: the parsed JSON.
        source: names the config in errors (its file).
        base: the folder a ``handler.file`` (a template beside the config) is relative to.
        kinds: the simulator's model kinds (default: ``config/models.json``'s).

    Raises:
        HilDevicesError: naming ``source``, the device, the signal and the bad field.
    """
    if not isinstance(data, dict):
        raise HilDevicesError(f"{source}: expected a JSON object")
    name = data.get("name")
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise HilDevicesError(f"{source}: field 'name': {name!r} is not an identifier")
    where = f"{source}: device {name}"
    unknown = sorted(set(data) - _DEVICE_KEYS)
    if unknown:
        raise HilDevicesError(f"{where}: unknown field(s) {unknown}")
    signals = data.get("signals")
    if not isinstance(signals, list) or not signals:
        raise HilDevicesError(f"{where}: field 'signals': expected a non-empty list")
    specs = tuple(_signal_from_mapping(s, f"{where}: signal {i}") for i, s in enumerate(signals))
    names = [spec.name for spec in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise HilDevicesError(f"{where}: duplicate signal name(s) {duplicates}")
    check_unique_ids([(spec.name, spec.id) for spec in specs], where)
    handler = _handler_from_mapping(data["handler"], where, base) if "handler" in data else None
    table = data.get("table", {})
    if not isinstance(table, dict):
        raise HilDevicesError(f"{where}: field 'table': expected an object")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise HilDevicesError(f"{where}: field 'description': expected text")
    pins = _pins_from_list(data["pins"], specs, handler, where) if "pins" in data else ()
    model, kind = None, None
    if "model" in data:
        model, kind = _model_from_mapping(data["model"], where, model_kinds() if kinds is None else kinds)
    params = _params_from_mapping(data["params"], where, kind) if "params" in data else {}
    if model is not None:
        fixed = sorted(set(params) & set(model.data))
        if fixed:
            raise HilDevicesError(f"{where}: params.{fixed[0]}: fixed in model, so a profile cannot set it")
    coupling = _coupling_from_mapping(data["coupling"], where) if "coupling" in data else ""
    if model is not None and model.role == "driver" and "wheel" not in params:
        raise HilDevicesError(f"{where}: field 'params': a driver (model.role) needs the parameter 'wheel'")
    return DeviceConfig(name, specs, description, handler, table, source, pins, params, model, coupling)


def check_unique_ids(ids: Iterable[tuple[str, int | None]], where: str) -> None:
    """Explicit ids (``(signal, id or None)``) must not repeat.

    Raises:
        HilDevicesError: naming ``where``, the id and both signals.
    """
    owner: dict[int, str] = {}
    for name, value in ids:
        if value is None:
            continue
        if value in owner:
            raise HilDevicesError(f"{where}: signal {name}: id {value} is already {owner[value]}'s")
        owner[value] = name


def assign_signal_ids(devices: Sequence[DeviceInstance], *, source: str = "") -> list[int]:
    """The id of every signal of ``devices``, in device and signal order.

    Explicit ids (the instance's ``ids``, else the config's ``id``) are kept; every
    other signal gets the lowest id not yet taken, in order. Without explicit ids the
    result is 0, 1, 2...

    Raises:
        HilDevicesError: more than 255 signals, or an id given twice; names ``source``
            and the signals.
    """
    where = f"{source}: " if source else ""
    pairs: list[tuple[str, int | None]] = []
    for device in devices:
        for spec in device.config.signals:
            pairs.append((f"{device.name}.{spec.name}", device.ids.get(spec.name, spec.id)))
    if len(pairs) > MAX_SIGNAL_ID + 1:
        raise HilDevicesError(
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


def read_json(path: str | Path, *, what: str) -> Any:
    """Parse a JSON file (:func:`hil_common.core.config_file.load_json`).

    Raises:
        HilDevicesError: unreadable, invalid or out of bounds, naming the file (and the line).
    """
    return load_json(path, what=what, error=HilDevicesError)


def _instance_ids(raw: Any, config: DeviceConfig, where: str) -> dict[str, int]:
    if not isinstance(raw, dict):
        raise HilDevicesError(f"{where}: field 'ids': expected {{signal: id}}")
    names = {spec.name for spec in config.signals}
    ids: dict[str, int] = {}
    for name, value in raw.items():
        if name not in names:
            raise HilDevicesError(f"{where}: field 'ids': device {config.name} has no signal {name!r}")
        ids[name] = check_signal_id(value, f"{where}: ids.{name}")
    return ids


def device_set_from_mapping(
    data: Any, library: dict[str, DeviceConfig], *, source: str
) -> list[DeviceInstance]:
    """Validate a device set: ``{"devices": [{"name": ..., "device": ..., "ids": {...}}, ...]}``.

    ``ids`` (optional) fixes signal ids of that instance (signal name -> id).

    Raises:
        HilDevicesError: naming ``source``, the entry and the bad field; also when two
            signals of the set have the same id.
    """
    if not isinstance(data, dict) or not isinstance(data.get("devices"), list) or not data["devices"]:
        raise HilDevicesError(f"{source}: expected 'devices:' with a non-empty list")
    instances: list[DeviceInstance] = []
    for index, entry in enumerate(data["devices"]):
        where = f"{source}: devices[{index}]"
        if not isinstance(entry, dict) or not {"name", "device"} <= set(entry) <= {"name", "device", "ids"}:
            raise HilDevicesError(
                f"{where}: expected exactly the fields 'name' and 'device' (and optionally 'ids')"
            )
        name, kind = entry["name"], entry["device"]
        if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
            raise HilDevicesError(f"{where}: field 'name': {name!r:.40} is not an identifier")
        if not isinstance(kind, str):
            raise HilDevicesError(f"{where} ({name}): field 'device': {kind!r:.40} is not a device name")
        if kind not in library:
            known = ", ".join(sorted(library)) or "none loaded"
            raise HilDevicesError(
                f"{where} ({name}): field 'device': unknown device {kind!r} (known: {known})"
            )
        if any(instance.name == name for instance in instances):
            raise HilDevicesError(f"{where}: field 'name': {name!r} is used twice")
        ids = _instance_ids(entry["ids"], library[kind], f"{where} ({name})") if "ids" in entry else {}
        instances.append(DeviceInstance(name, library[kind], ids))
    assign_signal_ids(instances, source=source)
    return instances


def load_device_set(path: str | Path, library: dict[str, DeviceConfig]) -> list[DeviceInstance]:
    """Load a device set YAML file against a device library.

    Raises:
        HilDevicesError: unreadable file, bad YAML or invalid entries; names the file.
    """
    data = load_yaml(path, what="device set", error=HilDevicesError)
    return device_set_from_mapping(data, library, source=str(path))
