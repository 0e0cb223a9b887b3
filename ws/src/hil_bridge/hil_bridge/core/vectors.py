"""The shared protocol conformance vectors (``vectors/*.yaml`` of hil_bridge).

One set of vectors checks every implementation of the protocols: the Python codec,
the virtual MCU and the firmware's protocol module built for the host. This module
loads them and converts the vectors' plain mappings to and from codec messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hil_bridge.core.line_protocol import Arm, Command, Drive, ErrorReport, Heartbeat, Message, Telemetry
from hil_bridge.errors import HilBridgeError
from hil_common.core.config_file import load_yaml
from hil_common.core.paths import share_dir
from hil_devices.core.telemetry import TelemetrySchema


def load_vectors(name: str, *, directory: Path | None = None) -> dict[str, Any]:
    """Load ``<name>.yaml`` from the vectors folder (hil_bridge's installed one by default).

    Raises:
        HilBridgeError: the file is missing or not YAML.
    """
    path = (directory or share_dir("hil_bridge") / "vectors") / f"{name}.yaml"
    data = load_yaml(path, what="vectors", error=HilBridgeError)
    if not isinstance(data, dict):
        raise HilBridgeError(f"{path}: vectors must be a mapping")
    return data


def message_from_fields(fields: dict[str, Any], schema: TelemetrySchema) -> Message:
    """Build the codec message a vector describes (``{type: DRV, left: .., right: ..}``).

    Raises:
        HilBridgeError: unknown type or missing field.
    """
    kind = fields.get("type")
    try:
        if kind == "DRV":
            return Drive(int(fields["left"]), int(fields["right"]))
        if kind == "HBB":
            return Heartbeat(str(fields["stamp"]))
        if kind == "TL":
            list_id = str(fields["list_id"])
            values = tuple(float(v) for v in fields["values"])
            return Telemetry(list_id, schema.lists[list_id], values)
        if kind == "ERR":
            return ErrorReport(str(fields["text"]))
        if kind == "COM":
            return Command(str(fields["text"]))
        if kind == "ARM":
            return Arm(tuple(float(v) for v in fields["values"]))
    except KeyError as exc:
        raise HilBridgeError(f"vector {fields}: missing {exc}") from exc
    raise HilBridgeError(f"vector {fields}: unknown message type {kind!r}")


def same_message(decoded: Message, expected: Message) -> bool:
    """Equality that ignores the raw line a decoded telemetry message carries."""
    if isinstance(decoded, Telemetry) and isinstance(expected, Telemetry):
        return (decoded.list_id, decoded.names, decoded.values) == (
            expected.list_id,
            expected.names,
            expected.values,
        )
    return decoded == expected
