"""The one exception class of robot_control."""


class RobotControlError(Exception):
    """Raised for bad configuration or input in robot_control; the message names the bad field."""
