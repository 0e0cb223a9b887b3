"""Pure core of hil_mcu: the virtual MCU and the simavr harness's wrapper.

Nothing in this subpackage imports rclpy, so it runs and is tested without ROS 2.
"""
