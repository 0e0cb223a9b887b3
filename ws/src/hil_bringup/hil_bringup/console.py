"""Console scripts of hil_bringup's nodes (setup.py), with SIGINT/SIGTERM handled from the start.

Each entry installs the stop signals (:mod:`hil_common.core.shutdown`) before it imports
its node's module, whose imports (rclpy, messages) take a good part of a second: a
signal then is a clean stop with status 0 too, not a KeyboardInterrupt traceback or
death by SIGTERM. ``hil_sim_runner`` installs them itself (``make sim`` runs it with
``python -m``) and keeps its heavy imports until after.
"""

from hil_common.core.shutdown import console_main

robot_description = console_main("hil_bringup.description_node")
recorder = console_main("hil_bringup.recorder_node")
live_view = console_main("hil_bringup.live_view_node")
