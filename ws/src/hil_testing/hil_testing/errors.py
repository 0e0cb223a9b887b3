"""The one exception class of hil_testing."""

from hil_common.errors import HilError


class HilTestingError(HilError):
    """Raised for bad configuration or input in hil_testing; the message names the bad field."""
