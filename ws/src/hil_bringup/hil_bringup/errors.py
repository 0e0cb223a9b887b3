"""The one exception class of hil_bringup."""


class HilBringupError(Exception):
    """Raised for bad configuration or input in hil_bringup; the message names the bad field."""
