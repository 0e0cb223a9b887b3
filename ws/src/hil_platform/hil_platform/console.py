"""Console scripts of hil_platform (setup.py), with SIGINT/SIGTERM handled from the start.

Each entry installs the stop signals (:mod:`hil_common.core.shutdown`) before it imports
its module, whose imports (rclpy, messages, numpy) take a good part of a second: a
signal then is a clean stop with status 0 too, not a KeyboardInterrupt traceback or
death by SIGTERM.
"""

from hil_common.core.shutdown import console_main

hil_platform_emulator = console_main("hil_platform.platform_emulator")
motion_platform = console_main("hil_platform.motion_platform_node")
