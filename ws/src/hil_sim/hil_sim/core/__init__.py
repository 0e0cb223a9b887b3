"""Pure numpy core of hil_sim: world, robot and sensor models, vectorised over robots.

Nothing in this subpackage imports rclpy, so it runs and is tested without ROS 2.
"""
