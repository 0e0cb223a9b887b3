"""Device configs and ``.hlr`` handlers in the HIL thesis' own format, imported unchanged.

The thesis describes a device like our configs do (``name``, ``signals[]`` with
``name``, ``direction``, ``type``, ``min``, ``max``, ``mode``, optionally ``id``), but
its handler names a handler file and declares the pins itself:

.. code-block:: json

    "handler": {"name": "hc_sr04", "file": "hc_sr04.hlr",
                "pins": [{"name": "trigger", "mode": "PCINT", "direction": "INPUT"},
                         {"name": "echo", "mode": "DIGITAL", "direction": "OUTPUT"}]}

The ``.hlr`` file has sections between ``##SECTION##`` lines and placeholders
between ``%`` signs. Both are translated into our handler template syntax
(:mod:`hil_firmware.core.sketch_gen`), so an imported device is an ordinary
:class:`~hil_devices.core.devices.DeviceConfig` whose handler carries its template
text. What we know of the format, and so assume:

* Enumerations are case-insensitive; ``INT`` means INTEGER, ``DOUBLE`` FLOAT, and a
  signal mode ``PCINT`` INTERRUPT. Pin modes are our capabilities (DIGITAL, PWM,
  ANALOG, INTERRUPT, PCINT, SDA, SCL), pin directions are seen from the bridge board
  (INPUT: it reads the pin).
* A name that is no C identifier (``HC-SR04``) becomes one (``HC_SR04``); handler
  names are also lower-cased, so they meet our models' names (``hc_sr04``).
* ``file`` is relative to the JSON; without it ``<handler name>.hlr`` beside the JSON
  is used, and without that the handler library's template of that name.
* Sections: ``INCLUDES``, ``DECLARATIONS``, ``SETUP``, ``LOOP``, ``FUNCTIONS``,
  ``UPDATE``, and ``PCINT`` / ``INTERRUPT`` (code run when the handler's interrupt
  pin changes: the one pin of mode PCINT, else of mode INTERRUPT, or the pin named
  as in ``##PCINT echo##``). Text before the first section is dropped.
* Placeholders: ``%<pin>%`` is the pin's Arduino number; ``%pin%`` the number of the
  section's interrupt pin, or of the handler's only pin; ``%<pin>PCINTE%`` the PCICR
  enable bit of the pin's port group (``PCIE0..2``), ``%<pin>PCMSK%`` its mask
  register, ``%<pin>PCINT%`` its PCINTn bit, and likewise ``PORT``, ``PIN``, ``DDR``,
  ``BIT`` (``pin`` for the contextual pin); any other ``%x%`` is the name ``x`` made
  unique per device instance, which for a signal's name is the variable holding its
  physical value. Our own ``%x.DIRECTIVE%`` placeholders pass unchanged.
* Other fields are ignored and reported (:attr:`ThesisDevice.ignored`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hil_devices.core.devices import DeviceConfig, Handler, device_from_mapping, read_json
from hil_devices.core.handler_template import PIN_DIRECTIVES, HandlerTemplate
from hil_devices.core.wiring import Capability
from hil_devices.errors import HilDevicesError

HLR_SUFFIX = ".hlr"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SECTION = re.compile(r"^\s*##\s*([A-Za-z_]+)(?:\s+([A-Za-z_][A-Za-z0-9_]*))?\s*##\s*$")
_PLACEHOLDER = re.compile(r"%([A-Za-z_][A-Za-z0-9_]*)(\.[A-Za-z_][A-Za-z0-9_]*)?%")
#: .hlr section -> ours (None: the interrupt pin's pin-change code).
_SECTIONS: dict[str, str | None] = {
    "INCLUDES": "INCLUDES",
    "INCLUDE": "INCLUDES",
    "DECLARATIONS": "DECLARATIONS",
    "DECLARATION": "DECLARATIONS",
    "SETUP": "SETUP",
    "LOOP": "LOOP",
    "FUNCTIONS": "FUNCTIONS",
    "FUNCTION": "FUNCTIONS",
    "UPDATE": "UPDATE",
    "PCINT": None,
    "INTERRUPT": None,
    "ISR": None,
}
_DIRECTIVE_ALIASES = {"PCIE": "PCINTE"}
_TYPE_ALIASES = {"INT": "INTEGER", "DOUBLE": "FLOAT"}
_MODE_ALIASES = {"PCINT": "INTERRUPT"}
_SIGNAL_FIELDS = ("name", "direction", "type", "min", "max", "mode", "default", "unit", "description", "id")
_DEVICE_FIELDS = ("name", "description", "signals", "handler", "table")


@dataclass(frozen=True)
class ThesisPin:
    """A handler pin as the thesis JSON declares it."""

    name: str
    capability: Capability
    #: INPUT in the JSON: the bridge board reads the pin.
    reads: bool

    @property
    def pins_line(self) -> str:
        """The pin as a line of our ``##PINS##`` section."""
        return f"{self.name} {self.capability.value} {'INPUT' if self.reads else 'OUTPUT'}"


@dataclass(frozen=True)
class ThesisDevice:
    """An imported device config and what the import left out."""

    config: DeviceConfig
    #: Fields of the JSON that have no meaning here, e.g. ``signals[0].color``.
    ignored: tuple[str, ...] = ()
    #: The handler's pins as declared in the JSON.
    pins: tuple[ThesisPin, ...] = ()


def is_thesis_config(data: Any) -> bool:
    """Whether parsed JSON has the thesis' shape: a handler with ``name``/``file`` or pin objects."""
    if not isinstance(data, dict):
        return False
    handler = data.get("handler")
    if not isinstance(handler, dict) or "template" in handler:
        return False
    pins = handler.get("pins")
    return (
        "name" in handler
        or "file" in handler
        or (isinstance(pins, list) and any(isinstance(p, dict) for p in pins))
    )


def identifier(text: str) -> str:
    """``text`` as a C identifier: unchanged if it is one, else ``HC-SR04`` -> ``HC_SR04``."""
    if _IDENTIFIER.fullmatch(text):
        return text
    name = re.sub(r"[^A-Za-z0-9_]+", "_", text.strip()).strip("_")
    return name if _IDENTIFIER.fullmatch(name) else f"_{name}"


def _word(value: Any, aliases: dict[str, str]) -> Any:
    if not isinstance(value, str):
        return value
    word = value.strip().upper()
    return aliases.get(word, word)


def _name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise HilDevicesError(f"{where}: field 'name': {value!r} is not a name")
    return identifier(value)


def _signal(data: Any, where: str, ignored: list[str]) -> Any:
    if not isinstance(data, dict):
        return data  # device_from_mapping names it
    ignored += [f"{where}.{key}" for key in data if key not in _SIGNAL_FIELDS]
    out = {key: data[key] for key in _SIGNAL_FIELDS if key in data}
    if "name" in out:
        out["name"] = _name(out["name"], where)
    for key, aliases in (("direction", {}), ("type", _TYPE_ALIASES), ("mode", _MODE_ALIASES)):
        if key in out:
            out[key] = _word(out[key], aliases)
    return out


def _pin(data: Any, where: str) -> ThesisPin:
    if not isinstance(data, dict) or not {"name", "mode", "direction"} <= set(data):
        raise HilDevicesError(f"{where}: expected {{name, mode, direction}}")
    name = _name(data["name"], where)
    mode = _word(data["mode"], {})
    try:
        capability = Capability(mode)
    except ValueError:
        known = "|".join(c.value for c in Capability)
        raise HilDevicesError(
            f"{where} ({name}): field 'mode': {data['mode']!r} is not one of {known}"
        ) from None
    direction = _word(data["direction"], {})
    if direction not in ("INPUT", "OUTPUT"):
        raise HilDevicesError(
            f"{where} ({name}): field 'direction': {data['direction']!r} is not one of INPUT|OUTPUT"
        )
    return ThesisPin(name, capability, direction == "INPUT")


def _handler_file(handler: dict[str, Any], name: str, path: Path) -> Path | None:
    """The .hlr file of a handler: ``file``, else ``<name>.hlr`` beside the JSON, else None."""
    if "file" in handler:
        given = handler["file"]
        if not isinstance(given, str) or not given.strip():
            raise HilDevicesError(f"{path}: handler: field 'file': {given!r} is not a path")
        return path.parent / given
    beside = path.parent / f"{handler.get('name', name)}{HLR_SUFFIX}"
    return beside if beside.is_file() else None


def thesis_device(data: Any, *, path: Path) -> ThesisDevice:
    """Import a thesis device config (parsed JSON read from ``path``) and its handler file.

    Raises:
        HilDevicesError: naming the file (JSON or .hlr), the element and what is wrong.
    """
    if not isinstance(data, dict):
        raise HilDevicesError(f"{path}: expected a JSON object")
    ignored = [key for key in data if key not in _DEVICE_FIELDS]
    mapping = {key: data[key] for key in _DEVICE_FIELDS if key in data}
    mapping["name"] = _name(data.get("name"), str(path))
    signals = data.get("signals")
    if isinstance(signals, list):
        mapping["signals"] = [_signal(s, f"signals[{i}]", ignored) for i, s in enumerate(signals)]
    raw_handler = mapping.pop("handler", None)
    config = device_from_mapping(mapping, source=str(path))
    if raw_handler is None:
        return ThesisDevice(config, tuple(ignored))
    where = f"{path}: device {config.name}: handler"
    if not isinstance(raw_handler, dict):
        raise HilDevicesError(f"{where}: expected {{name, file, pins}}")
    ignored += [f"handler.{key}" for key in raw_handler if key not in ("name", "file", "pins")]
    template = _name(raw_handler.get("name", config.name), where).lower()
    raw_pins = raw_handler.get("pins", [])
    if not isinstance(raw_pins, list):
        raise HilDevicesError(f"{where}: field 'pins': expected a list of {{name, mode, direction}}")
    pins = tuple(_pin(p, f"{where}.pins[{i}]") for i, p in enumerate(raw_pins))
    names = [p.name for p in pins]
    if len(set(names)) != len(names):
        raise HilDevicesError(f"{where}: field 'pins': a pin name is used twice in {names}")
    hlr = _handler_file(raw_handler, template, path)
    text = ""
    if hlr is not None:
        try:
            source = hlr.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise HilDevicesError(f"{where}: field 'file': cannot read {hlr}: {exc}") from exc
        text = translate_hlr(source, pins, name=template, source=str(hlr))
    handler = Handler(template, tuple(names), text, str(hlr) if hlr is not None else "")
    return ThesisDevice(dataclasses.replace(config, handler=handler), tuple(ignored), pins)


def load_thesis_device(path: str | Path) -> ThesisDevice:
    """Read and import one thesis device config JSON file (see :func:`thesis_device`).

    Raises:
        HilDevicesError: naming the file, the element and what is wrong.
    """
    return thesis_device(read_json(path, what="device config"), path=Path(path))


# --- .hlr handler files ------------------------------------------------------------------------


def _interrupt_pin(pins: Sequence[ThesisPin], where: str) -> str:
    for capability in (Capability.PCINT, Capability.INTERRUPT):
        found = [p.name for p in pins if p.capability is capability]
        if len(found) == 1:
            return found[0]
        if found:
            raise HilDevicesError(
                f"{where}: the handler has {capability.value} pins {found}: "
                f"name one, as in ##PCINT {found[0]}##"
            )
    raise HilDevicesError(f"{where}: the handler has no pin of mode PCINT or INTERRUPT for this section")


def _placeholders(code: str, pins: Sequence[ThesisPin], context: str | None, where: str) -> str:
    names = {p.name for p in pins}
    only = next(iter(names)) if len(names) == 1 else None
    contextual = context or only

    def pin_of(name: str) -> str | None:
        if name in names:
            return name
        if name == "pin":
            if contextual is None:
                raise HilDevicesError(
                    f"{where}: %pin% outside an interrupt section of a handler with pins {sorted(names)}"
                )
            return contextual
        return None

    def replace(match: re.Match[str]) -> str:
        name, dotted = match.groups()
        if dotted:
            return match.group(0)  # our syntax already
        pin = pin_of(name)
        if pin is not None:
            return f"%{pin}.NUMBER%"
        for directive in (*PIN_DIRECTIVES, *_DIRECTIVE_ALIASES):
            if name.endswith(directive) and len(name) > len(directive):
                pin = pin_of(name[: -len(directive)])
                if pin is not None:
                    return f"%{pin}.{_DIRECTIVE_ALIASES.get(directive, directive)}%"
        return match.group(0)

    return _PLACEHOLDER.sub(replace, code)


def _section_header(match: re.Match[str], pins: Sequence[ThesisPin], where: str) -> tuple[str, str | None]:
    """Our header for a ``.hlr`` section line, and the pin ``%pin%`` stands for in it."""
    section, argument, line = match.group(1).upper(), match.group(2), match.group(0).strip()
    if section not in _SECTIONS:
        known = ", ".join(f"##{s}##" for s in _SECTIONS)
        raise HilDevicesError(f"{where}: unknown section {line} (known: {known})")
    ours = _SECTIONS[section]
    if ours is not None:
        if argument is not None:
            raise HilDevicesError(f"{where}: section {line} takes no pin")
        return f"##{ours}##", None
    if argument is not None and argument not in {p.name for p in pins}:
        raise HilDevicesError(f"{where}: {line} names no pin of the handler {sorted(p.name for p in pins)}")
    pin = argument or _interrupt_pin(pins, where)
    return f"##PCINT {pin}##", pin


def _hlr_sections(text: str, pins: Sequence[ThesisPin], source: str) -> list[tuple[str, list[str]]]:
    """``(our section header, translated lines)`` in file order; text before the first header is dropped."""
    sections: list[tuple[str, list[str]]] = []
    context: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"{source}, line {number}"
        match = _SECTION.match(line)
        if match is not None:
            header, context = _section_header(match, pins, where)
            sections.append((header, []))
        elif sections:
            sections[-1][1].append(_placeholders(line, pins, context, where))
    return sections


def translate_hlr(text: str, pins: Sequence[ThesisPin], *, name: str, source: str) -> str:
    """The text of a ``.hlr`` handler in our template syntax, its ``##PINS##`` from the JSON.

    Raises:
        HilDevicesError: unknown section, a placeholder or section naming no pin;
            names ``source`` and the line.
    """
    out = [f"# {name}: imported from {Path(source).name} (HIL thesis handler)", "##PINS##"]
    out += [pin.pins_line for pin in pins]
    for header, lines in _hlr_sections(text, pins, source):
        out += [header, *lines]
    translated = "\n".join(out) + "\n"
    HandlerTemplate.parse(translated, name=source)  # a last check; errors name the file
    return translated
