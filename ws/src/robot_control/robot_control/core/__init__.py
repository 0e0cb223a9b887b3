"""Pure core of robot_control: kinematics, failsafes and behaviours.

Nothing in this subpackage imports rclpy, so it runs and is tested without ROS 2.
"""
