"""The one exception class of hil_platform."""

from hil_common.errors import HilError


class HilPlatformError(HilError):
    """Raised for bad configuration or input in hil_platform; the message names the bad field."""
