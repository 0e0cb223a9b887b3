"""The one exception class of hil_sim."""


class HilSimError(Exception):
    """Raised for bad configuration or input in hil_sim; the message names the bad field."""
