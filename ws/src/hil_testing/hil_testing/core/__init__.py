"""Pure core of hil_testing: scenarios and checks, step and go-to tests, JUnit reports, tool options.

Nothing in this subpackage imports rclpy, so it runs and is tested without ROS 2.
"""
