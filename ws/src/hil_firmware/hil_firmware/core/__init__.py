"""Pure core of hil_firmware: sketch generation, AVR builds, thesis import.

Nothing in this subpackage imports rclpy, so it runs and is tested without ROS 2.
"""
