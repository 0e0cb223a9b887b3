"""The simulator's device model kinds and their parameters: ``config/models.json``.

Each kind (``ranger``, ``l298n``, ``servo``...; its code is ``hil_sim/core/devices/<kind>.py``)
declares its parameters here once (:mod:`hil_devices.core.params`), and everything
reads them from here: the simulator's kinds (their ``PARAMS``), the device library
(a type's ``model`` section gives fixed values of its kind's parameters, checked
against these; its ``params`` section lists those a robot profile may set, with a
default of its own or the kind's), and so the robot profiles.

.. code-block:: json

    {"common": {"driver_direction": {"default": 1, "min": -1, "max": 1, "description": "..."}},
     "kinds": {"l298n": {"description": "...",
                         "params": {"in_full_scale": {...}, "direction": "driver_direction"}}}}

A parameter given as a text names a declaration of ``common`` (one several kinds share).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hil_common.core.config_file import load_json
from hil_common.core.paths import share_dir
from hil_devices.core.params import DeviceParam, param_from_mapping
from hil_devices.errors import HilDevicesError

#: The file's name in hil_devices' config folder.
MODELS_FILE = "models.json"


@dataclass(frozen=True)
class ModelKind:
    """One model kind of the simulator: what it is and the parameters it takes."""

    name: str
    description: str
    params: Mapping[str, DeviceParam]


def models_path() -> Path:
    """The shipped declarations (``share/hil_devices/config/models.json``)."""
    return share_dir("hil_devices") / "config" / MODELS_FILE


def load_model_kinds(path: str | Path) -> dict[str, ModelKind]:
    """Read a models file (module docstring).

    Raises:
        HilDevicesError: unreadable, not JSON, or a declaration that is wrong; names the
            file, the kind and the parameter.
    """
    data = load_json(path, what="model kinds", error=HilDevicesError)
    source = str(path)
    if not isinstance(data, dict) or not isinstance(data.get("kinds"), dict):
        raise HilDevicesError(
            f"{source}: expected {{common: {{...}}, kinds: {{<kind>: {{description, params}}}}}}"
        )
    common_raw = data.get("common", {})
    if not isinstance(common_raw, dict):
        raise HilDevicesError(f"{source}: common: expected {{name: <parameter>}}")
    common = {
        name: param_from_mapping(name, raw, f"{source}: common.{name}") for name, raw in common_raw.items()
    }
    kinds = {}
    for name, raw in data["kinds"].items():
        at = f"{source}: kinds.{name}"
        if not isinstance(raw, dict) or not isinstance(raw.get("params", {}), dict):
            raise HilDevicesError(f"{at}: expected {{description, params: {{...}}}}")
        unknown = sorted(set(raw) - {"description", "params"})
        if unknown:
            raise HilDevicesError(f"{at}: unknown field(s) {unknown}")
        description = raw.get("description", "")
        if not isinstance(description, str):
            raise HilDevicesError(f"{at}.description: expected text")
        params = {
            key: _param(key, value, f"{at}.params.{key}", common)
            for key, value in raw.get("params", {}).items()
        }
        kinds[name] = ModelKind(name, description, params)
    return kinds


def _param(name: str, raw: Any, at: str, common: Mapping[str, DeviceParam]) -> DeviceParam:
    if isinstance(raw, str):
        shared = common.get(raw)
        if shared is None:
            raise HilDevicesError(
                f"{at}: {raw!r} is not a declaration of common ({', '.join(common) or 'none'})"
            )
        return replace(shared, name=name)
    return param_from_mapping(name, raw, at)


@functools.cache
def model_kinds() -> dict[str, ModelKind]:
    """The shipped model kinds (:func:`models_path`), read once."""
    return load_model_kinds(models_path())


def kind_params(kind: str) -> dict[str, DeviceParam]:
    """The parameters of the shipped model kind ``kind``.

    Raises:
        HilDevicesError: no such kind; lists them.
    """
    kinds = model_kinds()
    if kind not in kinds:
        raise HilDevicesError(f"{models_path()}: no model kind {kind!r} (kinds: {', '.join(sorted(kinds))})")
    return dict(kinds[kind].params)
