"""The one exception class of robot_control."""

from hil_common.errors import HilError


class RobotControlError(HilError):
    """Raised for bad configuration or input in robot_control; the message names the bad field."""
