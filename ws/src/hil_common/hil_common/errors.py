"""The base exception class of every HIL package."""


class HilError(Exception):
    """Bad configuration or input; the message names the file and the field.

    Each package's one exception class (``HilBridgeError``, ``HilSimError``, ...) subclasses
    it, so a handler that takes several packages' errors catches ``HilError``; hil_common's
    own code raises it.
    """
