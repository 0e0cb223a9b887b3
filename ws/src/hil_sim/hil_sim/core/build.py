"""Build a :class:`~hil_sim.core.simulation.Simulation` from the shipped data files.

The sensor tables and the motor driver's truth table come from the device library
of hil_bridge (the same files the bridge and the robot side read), the world from a
YAML file (``worlds/*.yaml``), so no model constant is written twice.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from hil_bridge.core.defaults import device_library
from hil_bridge.core.devices import DeviceConfig
from hil_bridge.core.paths import share_dir
from hil_sim.core.motor import DriverTable
from hil_sim.core.sensors import PhotoresistorModel, SharpIrModel
from hil_sim.core.simulation import Simulation
from hil_sim.core.world import Pose, WorldConfig, in_arena, load_world
from hil_sim.errors import HilSimError


def default_world_path() -> Path:
    """The demo world shipped with hil_sim."""
    return share_dir("hil_sim") / "worlds" / "demo.yaml"


def world_names() -> list[str]:
    """The names of hil_sim's worlds (``demo``, ``empty``, ``swarm``...)."""
    return sorted(p.stem for p in (share_dir("hil_sim") / "worlds").glob("*.yaml"))


def world_path(value: str | Path = "") -> Path:
    """The world file ``value`` names.

    Empty is the demo world, a bare name one of hil_sim's worlds (``empty``), anything
    else (a ``.yaml`` or a path with a folder) a file.

    Raises:
        HilSimError: a name that is none of hil_sim's worlds (listing them).
    """
    text = str(value)
    if not text:
        return default_world_path()
    if text.endswith((".yaml", ".yml")) or "/" in text:
        return Path(text)
    path = share_dir("hil_sim") / "worlds" / f"{text}.yaml"
    if not path.is_file():
        known = ", ".join(world_names())
        raise HilSimError(f"{text!r} is not a world of hil_sim ({known}) nor a .yaml path")
    return path


def grid_starts(start: Pose, robots: int, spacing: float) -> list[Pose]:
    """Robots on a square grid centred on ``start`` (all on it when spacing is 0).

    Cells are handed out nearest the start first, so robot 0 (the one an MCU drives in
    a swarm run) starts where a single robot would, and the swarm grows around it.
    """
    side = math.ceil(math.sqrt(robots))
    offset = (side - 1) / 2
    cells = sorted(
        ((col - offset, row - offset) for row in range(side) for col in range(side)),
        key=lambda c: (round(math.hypot(*c), 9), c[1], c[0]),
    )
    return [Pose(start.x + dx * spacing, start.y + dy * spacing, start.yaw) for dx, dy in cells[:robots]]


def build_simulation(
    world: WorldConfig | str | Path | None = None,
    *,
    library: dict[str, DeviceConfig] | None = None,
    robots: int = 1,
    spacing: float = 0.0,
    **options: Any,
) -> Simulation:
    """A simulation of the demo robot in ``world`` (a config, a YAML path, or the demo).

    Raises:
        HilSimError: a world or device file is invalid (the message names it).
    """
    if not isinstance(world, WorldConfig):
        world = load_world(world_path(world or ""))
    library = library if library is not None else device_library()
    for name in ("sharp_ir", "photoresistor", "dc_motor"):
        if name not in library:
            raise HilSimError(f"device library has no {name!r} config (needed by the robot model)")
    starts = grid_starts(world.start, robots, spacing)
    if not all(in_arena(world, p.x, p.y) for p in starts):
        raise HilSimError(f"{robots} robots at spacing {spacing:g} m do not fit the {world.width:g} m arena")
    return Simulation(
        world,
        ir=SharpIrModel.from_table(library["sharp_ir"].table),
        photoresistor=PhotoresistorModel.from_table(library["photoresistor"].table),
        driver=DriverTable.from_device_table(library["dc_motor"].table),
        robots=robots,
        starts=starts,
        **options,
    )
