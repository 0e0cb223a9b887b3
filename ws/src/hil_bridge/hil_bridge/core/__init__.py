"""Pure core of hil_bridge: wire codecs, transports and loop timing.

Nothing in this subpackage imports rclpy, so it runs and is tested without ROS 2.
"""
