"""What ``gazebo.launch.py`` starts.

The HIL chain of :func:`~hil_bringup.core.graph.describe` without the ``sim`` node, plus
gz sim, the bridge, the robot's spawn and the ``gz_adapter`` node (the SDF files from
:mod:`hil_gazebo.core.sdf`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hil_bringup.core.graph import GraphOptions, NodeSpec, ProcessSpec, describe, package_defaults
from hil_bringup.errors import HilBringupError
from hil_gazebo.core.gz_adapter import (
    DRIVES,
    MODEL_NAME,
)
from hil_gazebo.core.sdf import export, gz_sim_arguments, world_path
from hil_sim.core.robot_model import robot_model_from_profile

#: gazebo.launch.py's own arguments (beside sim.launch.py's): name -> (default, description, choices).
LAUNCH_ARGUMENTS: dict[str, tuple[str, str, list[str] | None]] = {
    "gui": (
        "false",
        "Start Gazebo's GUI; false runs gz sim as a server with headless rendering (the lidars need it).",
        ["true", "false"],
    ),
    "drive": (
        "torque",
        "How the wheels are driven: torque (the DC motor model's torque on the wheel joints) or velocity"
        " (the motors run in gz_adapter, Gazebo's DiffDrive takes their twist).",
        list(DRIVES),
    ),
    "gz_dir": (
        "",
        "Folder for the exported world.sdf, robot.sdf and bridge.yaml; empty: gazebo/ in the run's"
        " link folder.",
        None,
    ),
}


def launch_graph(
    options: GraphOptions, value: Callable[[str], str]
) -> tuple[list[NodeSpec], list[ProcessSpec]]:
    """:func:`gazebo_graph` with gazebo.launch.py's arguments (``value(name)``: an evaluated argument)."""
    return gazebo_graph(options, export_dir=value("gz_dir"), gui=value("gui") == "true", drive=value("drive"))


def gazebo_graph(
    options: GraphOptions, *, export_dir: str = "", gui: bool = False, drive: str = "torque"
) -> tuple[list[NodeSpec], list[ProcessSpec]]:
    """The nodes and processes of ``gazebo.launch.py``; exports the world first (module docstring).

    The HIL chain (MCU, fault proxies, signal bridge, control loop, description) is
    :func:`describe`'s without the ``sim`` node; the ``gz_adapter`` takes its place,
    with gz sim, ros_gz_bridge and the robot's spawn (ros_gz_sim ``create``). The
    export goes to ``export_dir``, by default ``gazebo/`` in the run's link folder.

    Raises:
        HilBringupError: more than one robot, a physics backend asked for (Gazebo is
            the physics), or what :func:`export` raises.
    """
    if options.robots != 1:
        raise HilBringupError(f"robots = {options.robots}: the Gazebo export has one robot")
    if options.physics != "native":
        raise HilBringupError(
            f"physics = {options.physics!r}: with Gazebo, gz sim is the physics; leave it out"
        )
    if options.hil_robots > 1:
        raise HilBringupError(f"hil_robots = {options.hil_robots}: the Gazebo graph has one HIL robot")
    world = options.world or "demo"
    folder = Path(export_dir) if export_dir else Path(options.link_folder) / "gazebo"
    robot = robot_model_from_profile(options.profile(0))
    files = export(world, folder, drive=drive, rtf=options.rtf, robot=robot)
    nodes, processes = describe(options)
    sim = next(node for node in nodes if node.name == "sim")
    adapter = package_defaults("hil_gazebo", "gz_adapter")
    adapter.update(
        world=str(world_path(world)),
        drive=drive,
        seed=options.seed,
        use_sim_time=options.use_sim_time,
        robot=str(options.profile(0).source),
    )
    ns = options.chain_namespace
    nodes = [node for node in nodes if node is not sim]
    nodes += [
        NodeSpec(
            "hil_gazebo", "gz_adapter", "gz_adapter", "hil_gazebo.gz_adapter_node:GzAdapterNode", ns, adapter
        ),
        NodeSpec(
            "ros_gz_bridge",
            "parameter_bridge",
            "gz_bridge",
            "",
            ns,
            {"config_file": str(files.bridge_yaml), "use_sim_time": options.use_sim_time},
        ),
        NodeSpec(
            "ros_gz_sim",
            "create",
            "spawn_robot",
            "",
            "",
            {
                "world": files.world_name,
                "file": str(files.robot_sdf),
                "name": MODEL_NAME,
                "x": files.start.x,
                "y": files.start.y,
                "z": 0.0,
                "Y": files.start.yaw,
            },
        ),
    ]
    gz = ProcessSpec("gz_sim", "", "gz", gz_sim_arguments(files.world_sdf, gui=gui))
    return nodes, [gz, *processes]
