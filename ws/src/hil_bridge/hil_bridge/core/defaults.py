"""The shipped data files every node falls back to when a parameter is left empty.

An empty ``device_configs`` means hil_bridge's device library (``config/devices``), an
empty ``device_set`` the demo robot's (``config/demo_robot_devices.yaml``), an empty
``telemetry_schema`` ``config/telemetry.yaml``: resolved here, once, for every node.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hil_bridge.core.devices import DeviceConfig, load_device_library, load_device_set
from hil_bridge.core.line_protocol import TelemetrySchema
from hil_bridge.core.paths import share_dir
from hil_bridge.core.signal_protocol import SignalLayout


def config_dir() -> Path:
    """hil_bridge's config folder (installed share, or the source tree)."""
    return share_dir("hil_bridge") / "config"


def device_library(paths: Sequence[str] = ()) -> dict[str, DeviceConfig]:
    """Device configs from ``paths`` (files or folders), or hil_bridge's library if empty."""
    return load_device_library([Path(p) for p in paths] or [config_dir() / "devices"])


def signal_layout(device_set: str = "", device_configs: Sequence[str] = ()) -> SignalLayout:
    """The signal ids of a device set (the demo robot's if empty) over a device library."""
    path = Path(device_set) if device_set else config_dir() / "demo_robot_devices.yaml"
    return SignalLayout(load_device_set(path, device_library(device_configs)))


def telemetry_schema(path: str = "") -> TelemetrySchema:
    """A telemetry schema file, or hil_bridge's ``config/telemetry.yaml`` if empty."""
    return TelemetrySchema.from_yaml(path or config_dir() / "telemetry.yaml")
