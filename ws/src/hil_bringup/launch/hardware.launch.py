"""The HIL loop with real hardware: the MCU (and/or bridge board) on serial ports.

    ros2 launch hil_bringup hardware.launch.py command_port:=/dev/ttyACM0 signal_port:=/dev/ttyUSB0

The robot MCU runs the real firmware and its command link is ``command_port``; a
bridge board (generated sketch) serves its pins on ``signal_port``; the simulator
still provides the world. Same graph description as sim.launch.py, with mcu:=serial.

The world is simulated, so the graph's clock is the simulator's ``/clock``
(``use_sim_time``, default true, as in sim.launch.py): a stamp is the simulated time at
which a node took its data (a telemetry line, a link status), and the real MCU's own
time (``millis()``) is only in what it sends. At ``rtf:=1`` simulated time keeps pace
with the wall clock, as the real board does.
"""

from launch import LaunchDescription
from launch.actions import OpaqueFunction

from hil_bringup.launch_common import declare, graph_actions


def generate_launch_description() -> LaunchDescription:
    """Arguments (``--show-args``), then the graph with the MCU on a serial port."""
    return LaunchDescription(
        [*declare({"mcu": "serial", "behaviour": "manual"}), OpaqueFunction(function=graph_actions)]
    )
