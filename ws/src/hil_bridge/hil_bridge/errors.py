"""The one exception class of hil_bridge."""

from hil_common.errors import HilError


class HilBridgeError(HilError):
    """Raised for bad configuration or input in hil_bridge; the message names the bad field."""
