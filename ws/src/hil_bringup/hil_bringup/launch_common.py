"""Launch actions from the graph description (imported by the launch files only).

Both launch files declare their arguments and hand the evaluated values to
:func:`graph_actions`, which builds the nodes from :mod:`hil_bringup.core.graph`
exactly as the one-process runner does. It also leaves SIGINT in the launch process
to launch alone (:func:`hil_common.core.shutdown.leave_to_wakeup_fd`): a
KeyboardInterrupt raised inside one of launch's tasks (the SIGTERM escalation timer
of a process) left launch waiting forever after Ctrl-C, every process stopped.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from launch import LaunchContext
from launch.actions import DeclareLaunchArgument, ExecuteProcess, LogInfo
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.substitutions import ExecutableInPackage

from hil_bringup.core.graph import (
    MCU_NODES,
    GraphOptions,
    describe,
    graph_remaps,
    launch_arguments,
    namespace_tokens,
    prepare_link_folder,
    run_link_dir,
    user_ports,
    your_program,
)
from hil_bringup.core.options import on, values
from hil_bringup.core.rviz import write_rviz_config
from hil_bringup.errors import HilBringupError
from hil_common.core.shutdown import leave_to_wakeup_fd


def declare(defaults: dict[str, str] | None = None) -> list[DeclareLaunchArgument]:
    """Every launch argument, with its description (and the file's own defaults)."""
    actions = []
    for name, (default, description, choices) in launch_arguments().items():
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

    A node sets a list parameter given no value to a typed empty list
    (:func:`hil_common.parameters.declare_parameters`), so leaving those out gives the
    node the same value, and ``ros2 param dump`` shows it as ``[]``.
    """
    return {name: value for name, value in parameters.items() if value != []}


def graph_actions(context: LaunchContext, *args: Any, graph: Any = None, **kwargs: Any) -> list[Any]:
    """The nodes of the run, for an OpaqueFunction.

    ``graph(options, value)`` (OpaqueFunction ``kwargs``) replaces :func:`describe`, with
    ``value(name)`` the evaluated launch argument: gazebo.launch.py's Gazebo graph.
    """
    # launch's main thread runs this: from now on SIGINT only reaches launch's own
    # handling (its wakeup fd), never a task of its as a KeyboardInterrupt.
    leave_to_wakeup_fd()

    def value(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    texts = {name: value(name) for name in on(GraphOptions, "launch")}
    # An including launch's PushRosNamespace leaves its namespace here; launch_ros puts
    # each node's (relative) namespace under it, the graph's ``namespace`` first.
    pushed = context.launch_configurations.get("ros_namespace", "")
    try:
        options = GraphOptions(**values(GraphOptions, texts))
        whole = "/".join(namespace_tokens(pushed) + namespace_tokens(options.namespace))
        if not options.link_dir:
            options = replace(
                options, link_dir=run_link_dir(namespace=whole, domain_id=os.environ.get("ROS_DOMAIN_ID"))
            )
    except HilBringupError as exc:
        raise HilBringupError(f"launch argument {exc}") from None
    # The graph-wide topics (/tf, /tf_static, /diagnostics) into the whole namespace.
    remaps = graph_remaps(whole)
    if options.mcu in MCU_NODES or options.faults:
        prepare_link_folder(options)  # before any node starts: the launch fails as a whole
    nodes, processes = graph(options, value) if graph is not None else describe(options)
    # The user's parameter file after the graph's own parameters: launch_ros passes each
    # as a --params-file in order, and rcl lets a later one win (wildcards included).
    user = [options.params_file] if options.params_file else []
    actions: list[Any] = []
    if not options.use_sim_time:
        actions.append(
            LogInfo(
                msg="hil_bringup: use_sim_time:=false: the nodes stamp the wall clock, while the "
                "simulator stamps odom, tf and its sensors in simulated time (two clocks)"
            )
        )
    if options.mcu in MCU_NODES or options.faults:
        actions.append(LogInfo(msg=f"hil_bringup: pty links in {options.link_folder}"))
    chains = {node.robot for node in nodes if node.robot is not None}
    actions += [
        LogInfo(msg=f"hil_bringup: {your_program(path, baud, robot=robot)}")
        for robot, path, baud in user_ports(options)
        if robot in chains
    ]
    actions += [
        Node(
            package=node.package,
            executable=node.executable,
            name=node.name,
            namespace=options.node_namespace(node.namespace),
            parameters=[ros_parameters(node.parameters), *user],
            remappings=remaps,
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
                namespace=options.node_namespace(""),
                parameters=[{"path": options.record, "use_sim_time": options.use_sim_time}, *user],
                output="screen",
            )
        )
    if value("rviz") == "true":
        # The shipped configuration made for this run's robots and namespace, in its
        # private link folder (:mod:`hil_bringup.core.rviz`).
        config = write_rviz_config(options, prepare_link_folder(options))
        actions.append(LogInfo(msg=f"hil_bringup: rviz2 configuration {config}"))
        actions.append(
            Node(
                package="rviz2",
                executable="rviz2",
                arguments=["-d", str(config)],
                # On the graph's clock: rviz2 looks transforms up at its own time.
                parameters=[{"use_sim_time": options.use_sim_time}],
                remappings=remaps,
                output="screen",
            )
        )
    return actions
