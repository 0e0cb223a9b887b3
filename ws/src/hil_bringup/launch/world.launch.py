"""The world side of a distributed run: the simulator (and with radio:=true the radio).

    ros2 launch hil_bringup world.launch.py robots:=5 hil_robots:=5 radio:=true rtf:=1.0

Each HIL robot's chain runs elsewhere (``robot.launch.py robot_index:=<i>``, on this machine
or another in the same ROS domain) and meets the simulator over DDS: its pins and
sensors on ``robot_<i>/hil/signals/*``, its radio on ``robot_<i>/hil/radio/*``, the
simulated time on ``/clock``, which the robots' nodes follow (``use_sim_time``, default
true). The same
arguments as sim.launch.py; the node comes from hil_bringup's graph description
(``describe_side``), as the one-process runner's does.
"""

from launch import LaunchDescription
from launch.actions import OpaqueFunction

from hil_bringup.core.graph import describe_side
from hil_bringup.launch_common import declare, graph_actions


def generate_launch_description() -> LaunchDescription:
    """Arguments (see ``--show-args``), then the world side of the graph."""
    return LaunchDescription(
        [
            *declare(),
            OpaqueFunction(
                function=graph_actions,
                kwargs={"graph": lambda options, value: describe_side(options, "world")},
            ),
        ]
    )
