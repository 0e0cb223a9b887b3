"""The one exception class of hil_firmware."""

from hil_common.errors import HilError


class HilFirmwareError(HilError):
    """Raised for bad configuration or input in hil_firmware; the message names the bad field."""
