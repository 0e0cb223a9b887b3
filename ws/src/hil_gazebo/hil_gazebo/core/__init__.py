"""Pure core of hil_gazebo: SDF export and the Gazebo adapter.

Nothing in this subpackage imports rclpy, so it runs and is tested without ROS 2.
"""
