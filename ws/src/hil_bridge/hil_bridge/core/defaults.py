"""The shipped data files every node falls back to when a parameter is left empty.

An empty ``device_configs`` means hil_devices' device library (``config/devices``), an
empty ``device_set`` the demo robot's (``config/demo_robot_devices.yaml``), an empty
``telemetry_schema`` ``config/telemetry.yaml``: resolved here, once, for every node.
A node given a robot profile (its ``robot`` parameter) takes the device set and the
telemetry lists from the profile instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hil_bridge.core.signal_protocol import SignalLayout, profile_layout
from hil_devices.core.defaults import config_dir, device_library
from hil_devices.core.devices import load_device_set
from hil_devices.core.profile import load_profile
from hil_devices.core.profile import telemetry_schema as profile_telemetry
from hil_devices.core.telemetry import TelemetrySchema


def signal_layout(
    device_set: str = "", device_configs: Sequence[str] = (), *, robot: str = ""
) -> SignalLayout:
    """The signal ids of a device set (the demo robot's if empty) over a device library.

    With ``robot`` (a profile: a shipped robot's name, a robot folder or robot.yaml) the
    device set is the profile's devices (:func:`~hil_bridge.core.signal_protocol.profile_layout`).
    """
    library = device_library(device_configs)
    if robot:
        return profile_layout(load_profile(robot, library=library))
    path = Path(device_set) if device_set else config_dir() / "demo_robot_devices.yaml"
    return SignalLayout(load_device_set(path, library))


def telemetry_schema(path: str = "", *, robot: str = "") -> TelemetrySchema:
    """A telemetry schema file, or hil_devices' ``config/telemetry.yaml`` if empty.

    With ``robot`` and no ``path``: the profile's telemetry lists
    (:func:`hil_devices.core.profile.telemetry_schema`).
    """
    if robot and not path:
        return profile_telemetry(load_profile(robot))
    return TelemetrySchema.from_yaml(path or config_dir() / "telemetry.yaml")
