"""The one exception class of hil_mcu."""

from hil_common.errors import HilError


class HilMcuError(HilError):
    """Raised for bad configuration or input in hil_mcu; the message names the bad field."""
