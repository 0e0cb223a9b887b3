"""Thesis device configs as configs in our own JSON format (``hil_sketch import``).

The thesis format itself is read by :mod:`hil_devices.core.thesis_format`.
"""

from __future__ import annotations

from typing import Any

from hil_devices.core.thesis_format import ThesisDevice

# --- .hlr handler files ------------------------------------------------------------------------


def _json_number(value: float) -> float | int:
    return int(value) if value.is_integer() else value


def native_device(device: ThesisDevice, *, template_file: str = "") -> dict[str, Any]:
    """The imported device as a config in our JSON format.

    Args:
        device: an imported device.
        template_file: where its handler's template text is written (relative to the
            JSON); needed when the handler came with a file.
    """
    config = device.config
    signals = []
    for spec in config.signals:
        entry: dict[str, Any] = {
            "name": spec.name,
            "direction": spec.direction.value,
            "type": spec.type.value,
            "min": _json_number(spec.min),
            "max": _json_number(spec.max),
            "mode": spec.mode.value,
            "default": _json_number(spec.default),
        }
        entry.update({k: v for k, v in (("unit", spec.unit), ("description", spec.description)) if v})
        if spec.id is not None:
            entry["id"] = spec.id
        signals.append(entry)
    out: dict[str, Any] = {"name": config.name}
    if config.description:
        out["description"] = config.description
    out["signals"] = signals
    if config.handler is not None:
        handler: dict[str, Any] = {"template": config.handler.template, "pins": list(config.handler.pins)}
        if config.handler.text:
            handler["file"] = template_file or f"{config.handler.template}.tmpl"
        out["handler"] = handler
    if config.table:
        out["table"] = config.table
    return out
