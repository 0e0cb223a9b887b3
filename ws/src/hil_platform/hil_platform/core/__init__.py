"""Pure core of hil_platform: datagrams, motion cueing, the platform session, the UDP link.

Nothing in this subpackage imports rclpy, so it runs and is tested without ROS 2.
"""
