"""The robot side of a distributed run: one HIL robot's MCU, bridge, loop and radio module.

    ros2 launch hil_bringup robot.launch.py robot_index:=2 robots:=5 hil_robots:=5 radio:=true
    ros2 launch hil_bringup robot.launch.py robot:=rab_style mcu:=simavr

Runs HIL robot ``robot_index``'s chain (in ``robot_<index>/`` with several robots) with
its ptys on this machine; the world (``world.launch.py``) may run on another machine in
the same ROS domain. Give both sides the same run arguments (robot, robots, hil_robots,
radio, checked, ...). With
``mcu:=serial`` and ``command_port``/``signal_port`` the MCU is a real one on this
machine's ports. Like every launch of a simulated graph its nodes follow ``/clock``
(``use_sim_time``, default true), here the world's.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction

from hil_bringup.core.graph import describe_side
from hil_bringup.launch_common import declare, graph_actions


def generate_launch_description() -> LaunchDescription:
    """Arguments (see ``--show-args``), then robot ``robot_index``'s side of the graph."""
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "robot_index", default_value="0", description="The HIL robot this machine runs (0, 1, ...)."
            ),
            *declare(),
            OpaqueFunction(
                function=graph_actions,
                kwargs={
                    "graph": lambda options, value: describe_side(
                        options, "robot", robot=int(value("robot_index"))
                    )
                },
            ),
        ]
    )
