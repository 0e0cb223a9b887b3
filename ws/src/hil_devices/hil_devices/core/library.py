"""The device library: device config files and folders, ours or in the HIL thesis' format.

A config whose ``handler`` has ``name`` or ``file`` or pins given as objects is a thesis
config (:mod:`hil_devices.core.thesis_format`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from hil_devices.core.devices import DeviceConfig, device_from_mapping, read_json
from hil_devices.core.thesis_format import is_thesis_config, thesis_device
from hil_devices.errors import HilDevicesError


def load_device_config(path: str | Path) -> DeviceConfig:
    """Load and validate one device config JSON file, ours or in the HIL thesis' shape.

    A config whose ``handler`` has ``name`` or ``file`` or pins given as objects is a
    thesis config and goes through :func:`hil_devices.core.thesis_format.thesis_device`.

    Raises:
        HilDevicesError: unreadable file, bad JSON or invalid config; names the file.
    """
    data = read_json(path, what="device config")

    if is_thesis_config(data):
        return thesis_device(data, path=Path(path)).config
    return device_from_mapping(data, source=str(path), base=Path(path).parent)


def load_device_library(paths: Iterable[str | Path]) -> dict[str, DeviceConfig]:
    """Load device configs from files and folders (every ``*.json`` in a folder).

    Raises:
        HilDevicesError: a config is invalid, or two configs share a name.
    """
    library: dict[str, DeviceConfig] = {}
    for entry in paths:
        path = Path(entry)
        files = sorted(path.glob("*.json")) if path.is_dir() else [path]
        for file in files:
            config = load_device_config(file)
            if config.name in library:
                raise HilDevicesError(
                    f"{file}: device {config.name} is already defined in {library[config.name].source}"
                )
            library[config.name] = config
    return library
