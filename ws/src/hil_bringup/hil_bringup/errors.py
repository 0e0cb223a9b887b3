"""The one exception class of hil_bringup."""

from hil_common.errors import HilError


class HilBringupError(HilError):
    """Raised for bad configuration or input in hil_bringup; the message names the bad field."""
