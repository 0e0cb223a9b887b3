"""Handler templates: the bridge-board code of a device with special timing.

A template (``config/handlers/<name>.tmpl``) has sections ``##INCLUDES##``, ``##PINS##``,
``##DECLARATIONS##``, ``##SETUP##``, ``##LOOP##``, ``##FUNCTIONS##``, ``##UPDATE##`` and
``##PCINT <pin>##``; the sketch generator (:mod:`hil_firmware.core.sketch_gen`) expands
its placeholders.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hil_devices.core.devices import DeviceInstance
from hil_devices.core.wiring import Capability, PinNeed, pin_needs
from hil_devices.errors import HilDevicesError

SECTIONS = ("INCLUDES", "PINS", "DECLARATIONS", "SETUP", "LOOP", "FUNCTIONS", "UPDATE")
_SECTION = re.compile(r"^##([A-Z]+)(?: ([A-Za-z_][A-Za-z0-9_]*))?##\s*$")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PIN_DIRECTIVES = ("PORT", "PIN", "DDR", "BIT", "PCINTE", "PCMSK", "PCINT", "NUMBER")


@dataclass(frozen=True)
class HandlerTemplate:
    """A parsed handler template."""

    name: str
    pins: tuple[PinNeed, ...]  # keys are the template's pin names
    sections: Mapping[str, str]
    #: Pin name -> code run from the pin-change interrupt when it changes.
    pcint: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str, *, name: str) -> HandlerTemplate:
        """Parse template text (``#`` lines before the first section are comments).

        Raises:
            HilDevicesError: unknown section, bad pin line; names the template and line.
        """
        sections: dict[str, list[str]] = {}
        pcint: dict[str, list[str]] = {}
        current: list[str] | None = None
        for number, line in enumerate(text.splitlines(), start=1):
            match = _SECTION.match(line)
            if match:
                section, argument = match.groups()
                if section == "PCINT" and argument:
                    current = pcint.setdefault(argument, [])
                elif section in SECTIONS and not argument:
                    current = sections.setdefault(section, [])
                else:
                    raise HilDevicesError(
                        f"handler template {name}, line {number}: unknown section {line.strip()}"
                    )
                continue
            if current is None:
                if line.strip() and not line.startswith("#"):
                    raise HilDevicesError(
                        f"handler template {name}, line {number}: text before the first section"
                    )
                continue
            current.append(line)
        pins = [_pin_line(line, name) for line in sections.pop("PINS", []) if line.strip()]
        names = {p.key for p in pins}
        for pin in pcint:
            if pin not in names:
                raise HilDevicesError(f"handler template {name}: ##PCINT {pin}## names no pin of ##PINS##")
        return cls(
            name,
            tuple(pins),
            {k: "\n".join(v).strip("\n") for k, v in sections.items()},
            {k: "\n".join(v).strip("\n") for k, v in pcint.items()},
        )


def _pin_line(line: str, template: str) -> PinNeed:
    """A ``##PINS##`` line: ``name CAPABILITY INPUT|OUTPUT``."""
    parts = line.split()
    if len(parts) != 3 or parts[2] not in ("INPUT", "OUTPUT") or not _IDENTIFIER.fullmatch(parts[0]):
        expected = "expected `name CAPABILITY INPUT|OUTPUT`"
        raise HilDevicesError(f"handler template {template}: pin line {line.strip()!r}: {expected}")
    try:
        capability = Capability(parts[1])
    except ValueError:
        known = ", ".join(c.value for c in Capability)
        raise HilDevicesError(
            f"handler template {template}: pin {parts[0]}: capability {parts[1]!r} ({known})"
        ) from None
    return PinNeed(parts[0], capability, parts[2] == "INPUT")


def handler_dirs() -> list[Path]:
    """The installed handler templates (hil_devices' ``config/handlers``)."""
    from hil_common.core.paths import share_dir  # noqa: PLC0415 - only where installed

    return [share_dir("hil_devices") / "config" / "handlers"]


def load_templates(folders: Iterable[Path]) -> dict[str, HandlerTemplate]:
    """Every ``*.tmpl`` in ``folders`` (a later folder's template replaces an earlier one's)."""
    templates: dict[str, HandlerTemplate] = {}
    for folder in folders:
        for path in sorted(Path(folder).glob("*.tmpl")):
            templates[path.stem] = HandlerTemplate.parse(path.read_text(), name=path.stem)
    return templates


@functools.lru_cache(maxsize=64)
def _own_template(text: str, name: str, file: str) -> HandlerTemplate:
    return dataclasses.replace(HandlerTemplate.parse(text, name=file or name), name=name)


def template_for(device: DeviceInstance, templates: Mapping[str, HandlerTemplate]) -> HandlerTemplate:
    """The handler template of ``device``: its own (``Handler.text``), else the library's.

    Raises:
        HilDevicesError: the device has no handler, the library lacks the template, or
            the device's own template text is invalid (naming its file).
    """
    handler = device.config.handler
    if handler is None:
        raise HilDevicesError(f"{device.name}: device {device.config.name} has no handler")
    if handler.text:
        return _own_template(handler.text, handler.template, handler.file)
    if handler.template not in templates:
        raise HilDevicesError(f"{device.name}: no handler template {handler.template!r}")
    return templates[handler.template]


def needs_of(devices: Sequence[DeviceInstance], templates: Mapping[str, HandlerTemplate]) -> list[PinNeed]:
    """The pins a bridge board for ``devices`` needs (see :func:`hil_devices.core.wiring.pin_needs`)."""
    library = {name: t.pins for name, t in templates.items()}
    needs: list[PinNeed] = []
    for device in devices:
        handler = device.config.handler
        own = handler is not None and handler.text
        pins = {handler.template: template_for(device, templates).pins} if handler and own else library
        needs += pin_needs([device], pins)
    return needs
