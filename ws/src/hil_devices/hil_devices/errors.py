"""The one exception class of hil_devices."""

from hil_common.errors import HilError


class HilDevicesError(HilError):
    """Raised for bad configuration or input in hil_devices; the message names the bad field."""
