"""The shipped device library and demo robot files every node falls back to.

An empty ``device_configs`` means hil_devices' device library (``config/devices``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hil_common.core.paths import share_dir
from hil_devices.core.devices import DeviceConfig
from hil_devices.core.library import load_device_library


def config_dir() -> Path:
    """hil_devices' config folder (installed share, or the source tree)."""
    return share_dir("hil_devices") / "config"


def device_library(paths: Sequence[str] = ()) -> dict[str, DeviceConfig]:
    """Device configs from ``paths`` (files or folders), or hil_devices' library if empty."""
    return load_device_library([Path(p) for p in paths] or [config_dir() / "devices"])
