"""The one exception class of hil_bridge."""


class HilBridgeError(Exception):
    """Raised for bad configuration or input in hil_bridge; the message names the bad field."""
