"""Pure core of hil_common: config files, parameter specs, paths, shutdown, loop timing, kinematics.

Nothing in this subpackage imports rclpy, so it runs and is tested without ROS 2.
"""
