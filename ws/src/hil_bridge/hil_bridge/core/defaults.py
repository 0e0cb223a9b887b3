"""The shipped data files every node falls back to when a parameter is left empty.

An empty ``device_configs`` means hil_devices' device library (``config/devices``), an
empty ``device_set`` the demo robot's (``config/demo_robot_devices.yaml``), an empty
``telemetry_schema`` ``config/telemetry.yaml``: resolved here, once, for every node.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hil_bridge.core.signal_protocol import SignalLayout
from hil_devices.core.defaults import config_dir, device_library
from hil_devices.core.devices import load_device_set
from hil_devices.core.telemetry import TelemetrySchema


def signal_layout(device_set: str = "", device_configs: Sequence[str] = ()) -> SignalLayout:
    """The signal ids of a device set (the demo robot's if empty) over a device library."""
    path = Path(device_set) if device_set else config_dir() / "demo_robot_devices.yaml"
    return SignalLayout(load_device_set(path, device_library(device_configs)))


def telemetry_schema(path: str = "") -> TelemetrySchema:
    """A telemetry schema file, or hil_devices' ``config/telemetry.yaml`` if empty."""
    return TelemetrySchema.from_yaml(path or config_dir() / "telemetry.yaml")
