"""Launch actions from the graph description (imported by the launch files only).

Both launch files declare their arguments and hand the evaluated values to
:func:`graph_actions`, which builds the nodes from :mod:`hil_bringup.core.graph`
exactly as the one-process runner does.
"""

from __future__ import annotations

import os
from typing import Any

from launch import LaunchContext
from launch.actions import DeclareLaunchArgument, ExecuteProcess, LogInfo
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.substitutions import ExecutableInPackage

from hil_bridge.core.paths import share_dir
from hil_bringup.core.graph import (
    MCU_NODES,
    PHYSICS,
    GraphOptions,
    describe,
    prepare_link_folder,
    run_link_dir,
)
from hil_bringup.errors import HilBringupError

#: name -> (default, description, choices or None)
ARGUMENTS: dict[str, tuple[str, str, list[str] | None]] = {
    "robots": ("1", "Number of simulated robots (those past hil_robots follow robot_<i>/cmd_vel).", None),
    "robot_spacing": ("0.4", "Grid spacing (m) of several robots around the world's start.", None),
    "radio": (
        "false",
        "A radio between the robots: the simulator's radio model and a radio module on each HIL robot.",
        ["true", "false"],
    ),
    "hil_robots": (
        "1",
        "Robots 0..hil_robots-1 each get an MCU, signal bridge and control loop in robot_<i>/.",
        None,
    ),
    "rtf": (
        "1.0",
        "Real-time factor of the simulation; 0 runs the simulator as fast as it can (set "
        "use_sim_time) while the other processes keep the wall clock: for repeatable "
        "as-fast-as-possible runs use hil_sim_runner --rtf 0, which steps all in lockstep.",
        None,
    ),
    "use_sim_time": (
        "false",
        "Nodes take their time from /clock published by the simulator.",
        ["true", "false"],
    ),
    "world": ("", "World YAML file; empty: hil_sim's worlds/demo.yaml.", None),
    "physics": (
        "native",
        "Physics backend of the simulator: native (2-D numpy engine) or mujoco (MuJoCo: the robot"
        " from its URDF, boards that topple).",
        list(PHYSICS),
    ),
    "behaviour": (
        "boards",
        "Behaviour the control loop starts in; empty for MANUAL (cmd_vel).",
        ["", "boards", "light"],
    ),
    "record": (
        "",
        "Record every topic and the raw wire traffic to this rosbag2 (MCAP) path; empty: off.",
        None,
    ),
    "checked": ("false", "Checked mode (sequence number + CRC-16) on both links.", ["true", "false"]),
    "faults": (
        "false",
        "Put a link fault proxy (drops, corruption, baud timing) on both links, command and signal.",
        ["true", "false"],
    ),
    "fault_drop": (
        "0.001",
        "faults:=true: probability that a byte is lost, on each link and direction.",
        None,
    ),
    "fault_corrupt": (
        "0.001",
        "faults:=true: probability that a byte gets one bit flipped, on each link and direction.",
        None,
    ),
    "mcu": (
        "virtual",
        "The MCU under test: virtual (Python), simavr (the compiled robot_mcu firmware in the"
        " AVR emulator), or serial (a real board on command_port).",
        ["virtual", "simavr", "serial"],
    ),
    "firmware": (
        "",
        "mcu:=simavr: the firmware ELF to run; empty: robot_mcu built (cached) for this run.",
        None,
    ),
    "command_port": (
        "",
        "Serial device of the MCU's command link (mcu:=serial); empty: the simulated MCU's pty.",
        None,
    ),
    "signal_port": (
        "",
        "Serial device of the bridge board's signal link; empty: the simulated MCU's pty.",
        None,
    ),
    "link_dir": (
        "",
        "Folder of the run's pty links (simulated MCU, fault proxy); empty: "
        "<runtime folder>/domain<ROS_DOMAIN_ID>/<namespace pushed on this launch>, so launches in"
        " different domains or namespaces never share a port (runtime folder: $XDG_RUNTIME_DIR/hil,"
        " else /tmp/hil-<uid>). Refused if another user could change it or a folder on its way.",
        None,
    ),
    "seed": ("0", "Seed of the sensor noise (identical runs for identical seeds).", None),
    "rviz": ("false", "Start rviz2 with hil_bringup's configuration.", ["true", "false"]),
}


def declare(defaults: dict[str, str] | None = None) -> list[DeclareLaunchArgument]:
    """Every launch argument, with its description (and the file's own defaults)."""
    actions = []
    for name, (default, description, choices) in ARGUMENTS.items():
        value = (defaults or {}).get(name, default)
        if choices is None:
            actions.append(DeclareLaunchArgument(name, default_value=value, description=description))
        else:
            actions.append(
                DeclareLaunchArgument(name, default_value=value, description=description, choices=choices)
            )
    return actions


def ros_parameters(parameters: dict[str, Any]) -> dict[str, Any]:
    """``parameters`` without empty lists: launch_ros cannot pass one (no element type).

    The nodes declare their list parameters with an empty default, so leaving those
    out gives the node the same value.
    """
    return {name: value for name, value in parameters.items() if value != []}


def graph_actions(context: LaunchContext, *args: Any, graph: Any = None, **kwargs: Any) -> list[Any]:
    """The nodes of the run, for an OpaqueFunction.

    ``graph(options, value)`` (OpaqueFunction ``kwargs``) replaces :func:`describe`, with
    ``value(name)`` the evaluated launch argument: gazebo.launch.py's Gazebo graph.
    """

    def value(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    def number(name: str, kind: type[int] | type[float]) -> Any:
        text = value(name)
        try:
            return kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise HilBringupError(f"launch argument {name}:={text!r} is not {what}") from None

    options = GraphOptions(
        robots=number("robots", int),
        hil_robots=number("hil_robots", int),
        radio=value("radio") == "true",
        robot_spacing=number("robot_spacing", float),
        rtf=number("rtf", float),
        use_sim_time=value("use_sim_time") == "true",
        world=value("world"),
        physics=value("physics"),
        behaviour=value("behaviour"),
        checked=value("checked") == "true",
        faults=value("faults") == "true",
        fault_drop=number("fault_drop", float),
        fault_corrupt=number("fault_corrupt", float),
        mcu=value("mcu"),
        seed=number("seed", int),
        # An including launch's PushRosNamespace leaves its namespace here.
        link_dir=value("link_dir")
        or run_link_dir(
            namespace=context.launch_configurations.get("ros_namespace", ""),
            domain_id=os.environ.get("ROS_DOMAIN_ID"),
        ),
        command_port=value("command_port"),
        signal_port=value("signal_port"),
        record=value("record"),
        firmware=value("firmware"),
    )
    if options.mcu in MCU_NODES or options.faults:
        prepare_link_folder(options)  # before any node starts: the launch fails as a whole
    nodes, processes = graph(options, value) if graph is not None else describe(options)
    actions: list[Any] = []
    if options.mcu in MCU_NODES or options.faults:
        actions.append(LogInfo(msg=f"hil_bringup: pty links in {options.link_folder}"))
    actions += [
        Node(
            package=node.package,
            executable=node.executable,
            name=node.name,
            namespace=node.namespace,
            parameters=[ros_parameters(node.parameters)],
            output="screen",
        )
        for node in nodes
    ]
    # Helper processes are installed (like every node) in lib/<package>/, which is not
    # on PATH: found as ``ros2 run`` finds them; one of no package (gz) is on PATH.
    actions += [
        ExecuteProcess(
            cmd=[ExecutableInPackage(p.executable, p.package) if p.package else p.executable, *p.arguments],
            name=p.name,
            output="screen",
        )
        for p in processes
    ]
    if options.record:
        actions.append(
            Node(
                package="hil_bringup",
                executable="recorder",
                name="recorder",
                parameters=[{"path": options.record, "use_sim_time": options.use_sim_time}],
                output="screen",
            )
        )
    if value("rviz") == "true":
        config = str(share_dir("hil_bringup") / "rviz" / "hil.rviz")
        actions.append(Node(package="rviz2", executable="rviz2", arguments=["-d", config], output="screen"))
    return actions
