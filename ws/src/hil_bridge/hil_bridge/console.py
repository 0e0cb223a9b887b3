"""Console scripts of hil_bridge (setup.py), with SIGINT/SIGTERM handled from the start.

Each entry installs the stop signals (:mod:`hil_bridge.core.shutdown`) before it imports
its module, whose imports (rclpy, messages, numpy) take a good part of a second: a
signal then is a clean stop with status 0 too, not a KeyboardInterrupt traceback or
death by SIGTERM. ``hil_sketch`` is a one-shot tool and keeps Python's defaults.
"""

from hil_bridge.core.shutdown import console_main

signal_bridge = console_main("hil_bridge.signal_bridge_node")
radio_module = console_main("hil_bridge.radio_module_node")
hil_link_proxy = console_main("hil_bridge.link_proxy")
hil_platform_emulator = console_main("hil_bridge.platform_emulator")
motion_platform = console_main("hil_bridge.motion_platform_node")
