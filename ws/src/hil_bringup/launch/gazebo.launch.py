"""The HIL loop against Gazebo (gz sim, Harmonic): gz sim, ros_gz_bridge and gz_adapter in place of sim.

    ros2 launch hil_bringup gazebo.launch.py                     # demo world, virtual MCU, headless
    ros2 launch hil_bringup gazebo.launch.py gui:=true mcu:=simavr
    ros2 launch hil_bringup gazebo.launch.py mcu:=serial command_port:=/dev/ttyACM0 signal_port:=/dev/ttyUSB0
    ros2 launch hil_bringup gazebo.launch.py --show-args         # every argument, described

Needs Gazebo Harmonic and ros_gz (ros_gz_bridge, ros_gz_sim). At launch the world
YAML and the robot URDF are exported (``hil_gazebo export``: world.sdf, robot.sdf,
bridge.yaml into ``gz_dir``); then gz sim runs the world, ros_gz_sim spawns the
robot at the world's start, the bridge carries Gazebo's clock, odometry, joint
states and sensors, and gz_adapter turns them into the signal side while the MCU
(virtual, simavr, or a real board with ``mcu:=serial``), signal bridge and control
loop run as in sim.launch.py. One robot; ``rtf`` is Gazebo's real-time factor.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction

from hil_bringup.core.gazebo_graph import LAUNCH_ARGUMENTS, launch_graph
from hil_bringup.launch_common import declare, graph_actions


def generate_launch_description() -> LaunchDescription:
    """Arguments (``--show-args``), Gazebo's own, then the graph with Gazebo as the world."""
    gazebo = [
        DeclareLaunchArgument(
            name, default_value=default, description=text, **({"choices": choices} if choices else {})
        )
        for name, (default, text, choices) in LAUNCH_ARGUMENTS.items()
    ]
    return LaunchDescription(
        [*declare(), *gazebo, OpaqueFunction(function=graph_actions, kwargs={"graph": launch_graph})]
    )
