"""The one exception class of hil_gazebo."""

from hil_common.errors import HilError


class HilGazeboError(HilError):
    """Raised for bad configuration or input in hil_gazebo; the message names the bad field."""
