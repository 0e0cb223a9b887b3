"""The one exception class of hil_sim."""

from hil_common.errors import HilError


class HilSimError(HilError):
    """Raised for bad configuration or input in hil_sim; the message names the bad field."""
