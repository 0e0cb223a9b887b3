"""The full HIL loop with no hardware: virtual MCU, signal bridge, simulator, control loop.

    ros2 launch hil_bringup sim.launch.py
    ros2 launch hil_bringup sim.launch.py rtf:=0.0 record:=/tmp/run1 rviz:=true
    ros2 launch hil_bringup sim.launch.py live:=true     # Foxglove app or Lichtblick: ws://localhost:8765
    ros2 launch hil_bringup sim.launch.py checked:=true faults:=true fault_drop:=0.01 fault_corrupt:=0.01
    ros2 launch hil_bringup sim.launch.py robots:=2 namespace:=team_a rviz:=true

The node list and parameters come from hil_bringup's graph description, the same one
the one-process runner (``make sim``) uses. Every node, rviz2 and the recorder follow
the simulator's ``/clock`` (``use_sim_time``, default true), so every stamp of the run
is simulated time. The ptys' links are in
``<runtime folder>/domain<ROS_DOMAIN_ID>/<namespace>/``, the runtime folder being the
user's own (``$XDG_RUNTIME_DIR/hil``, else ``/tmp/hil-<uid>``), or in ``link_dir:=...``,
which must be a folder only you can change: a second launch in the same domain and
namespace stops with an error naming the process that holds them.
With ``faults:=true`` a ``hil_link_proxy`` sits in front of each link (its own pty,
``mcu_command_faulty`` and ``signal_link_faulty``) and the loop and the bridge open those.
With several robots every robot's frames are prefixed ``robot_<i>/`` on the one ``/tf``
and ``/tf_static``, and every node's statuses are on the one ``/diagnostics``;
``namespace:=team_a`` puts the nodes, their topics and those three under ``/team_a``.
"""

from launch import LaunchDescription
from launch.actions import OpaqueFunction

from hil_bringup.launch_common import declare, graph_actions


def generate_launch_description() -> LaunchDescription:
    """Arguments (see ``ros2 launch hil_bringup sim.launch.py --show-args``), then the graph."""
    return LaunchDescription([*declare(), OpaqueFunction(function=graph_actions)])
