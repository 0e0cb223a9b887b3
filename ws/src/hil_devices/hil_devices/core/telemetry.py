"""Telemetry schemas: the field names of each telemetry list (``TL1: [right, left]``).

A schema file (``config/telemetry.yaml``) names the values of the MCU's ``TL<id>``
lines; the line protocol (:mod:`hil_bridge.core.line_protocol`) decodes by it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hil_common.core.config_file import load_yaml
from hil_devices.errors import HilDevicesError

_LIST_ID = re.compile(r"TL[0-9A-Za-z]")
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class TelemetrySchema:
    """Field names of each telemetry list, e.g. ``{"TL1": ("right", "left")}``."""

    def __init__(self, lists: dict[str, tuple[str, ...]]) -> None:
        self.lists = dict(lists)

    @classmethod
    def from_mapping(cls, data: Any, *, source: str = "telemetry schema") -> TelemetrySchema:
        """Validate a mapping of list id -> field names.

        Raises:
            HilDevicesError: naming the source, the list id and the bad field.
        """
        if not isinstance(data, dict):
            raise HilDevicesError(f"{source}: expected a mapping of list id -> field names")
        lists: dict[str, tuple[str, ...]] = {}
        for key, names in data.items():
            if not isinstance(key, str) or not _LIST_ID.fullmatch(key):
                raise HilDevicesError(f"{source}: {key!r}: list id must be TL and one digit or letter")
            if not isinstance(names, list) or not names:
                raise HilDevicesError(f"{source}: {key}: expected a non-empty list of field names")
            for index, name in enumerate(names):
                if not isinstance(name, str) or not _FIELD_NAME.fullmatch(name):
                    raise HilDevicesError(f"{source}: {key}: field {index} ({name!r}) is not an identifier")
            if len(set(names)) != len(names):
                raise HilDevicesError(f"{source}: {key}: duplicate field names {names}")
            lists[key] = tuple(names)
        return cls(lists)

    @classmethod
    def from_yaml(cls, path: str | Path) -> TelemetrySchema:
        """Load a schema file (YAML mapping ``TLn: [field, ...]``).

        Raises:
            HilDevicesError: the file is missing, not YAML, or invalid; the message names it.
        """
        return cls.from_mapping(
            load_yaml(path, what="telemetry schema", error=HilDevicesError), source=str(path)
        )
