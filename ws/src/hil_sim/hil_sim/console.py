"""Console scripts of hil_sim (setup.py), with SIGINT/SIGTERM handled from the start.

Each entry installs the stop signals (:mod:`hil_common.core.shutdown`) before it imports
its node's module, whose imports (rclpy, messages, numpy) take a good part of a second:
a signal then is a clean stop with status 0 too, not a KeyboardInterrupt traceback or
death by SIGTERM.
"""

from hil_common.core.shutdown import console_main

sim = console_main("hil_sim.sim_node")
