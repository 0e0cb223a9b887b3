"""Build a :class:`~hil_sim.core.simulation.Simulation` from the shipped data files.

The robots are :class:`~hil_sim.core.robot_model.RobotModel` s (the demo robot's
sensor tables come from the device library of hil_bridge, the same files the bridge
and the robot side read), the world from a YAML file (``worlds/*.yaml``), so no model
constant is written twice.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hil_common.core.paths import share_dir
from hil_devices.core.defaults import device_library
from hil_devices.core.devices import DeviceConfig
from hil_sim.core.robot_model import RobotModel, demo_robot
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
    models: RobotModel | Sequence[RobotModel] | None = None,
    robots: int | None = None,
    spacing: float = 0.0,
    **options: Any,
) -> Simulation:
    """A simulation of ``models`` (default: the demo robot) in ``world`` (a config, a YAML path, or the demo).

    Robots stand on a grid around the world's start (:func:`grid_starts`).

    Raises:
        HilSimError: a world or device file is invalid (the message names it), or the
            robots do not fit the arena.
    """
    if not isinstance(world, WorldConfig):
        world = load_world(world_path(world or ""))
    if models is None:
        models = demo_robot(library if library is not None else device_library())
    count = robots if robots is not None else 1 if isinstance(models, RobotModel) else len(models)
    starts = grid_starts(world.start, count, spacing)
    if not all(in_arena(world, p.x, p.y) for p in starts):
        raise HilSimError(f"{count} robots at spacing {spacing:g} m do not fit the {world.width:g} m arena")
    return Simulation(world, models=models, robots=count, starts=starts, **options)
