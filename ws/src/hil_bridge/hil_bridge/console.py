"""Console scripts of hil_bridge (setup.py), with SIGINT/SIGTERM handled from the start.

Each entry installs the stop signals (:mod:`hil_common.core.shutdown`) before it imports
its module, whose imports (rclpy, messages, numpy) take a good part of a second: a
signal then is a clean stop with status 0 too, not a KeyboardInterrupt traceback or
death by SIGTERM.
"""

from hil_common.core.shutdown import console_main

signal_bridge = console_main("hil_bridge.signal_bridge_node")
radio_module = console_main("hil_bridge.radio_module_node")
hil_link_proxy = console_main("hil_bridge.link_proxy")
