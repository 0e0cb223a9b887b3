"""Pure core of hil_bringup: the description of the node graph and run reports.

Nothing in this subpackage imports rclpy, so it runs and is tested without ROS 2.
"""
