"""Pure core of hil_devices: device configs and sets, wiring, handler templates, the thesis format.

Nothing in this subpackage imports rclpy, so it runs and is tested without ROS 2.
"""
