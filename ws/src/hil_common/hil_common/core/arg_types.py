"""argparse ``type=`` converters for bounded numbers, shared by the command-line tools.

``float()`` alone takes ``nan``, ``inf`` and any sign, which a duration or a period
never means; with these argparse itself refuses such a value, naming the option, and
the tool exits 2 before it starts anything::

    parser.add_argument("--report", type=finite(above=0.0), default=5.0)
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _bounds(minimum: float | None, above: float | None) -> str:
    if above is not None:
        return f"greater than {above:g}"
    return f"at least {minimum:g}" if minimum is not None else ""


def finite(*, minimum: float | None = None, above: float | None = None) -> Callable[[str], float]:
    """A finite float, at least ``minimum`` or strictly greater than ``above`` (if given)."""

    def convert(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r:.40} is not a number") from None
        bound = _bounds(minimum, above)
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a finite number" + (f" {bound}" if bound else "")
            )
        if (minimum is not None and value < minimum) or (above is not None and value <= above):
            raise argparse.ArgumentTypeError(f"{text!r} must be {bound}")
        return value

    convert.__name__ = "number"  # what argparse calls it in "invalid number value"
    return convert


def integer(*, minimum: int) -> Callable[[str], int]:
    """A decimal integer of at least ``minimum``."""

    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r:.40} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} must be at least {minimum}")
        return value

    convert.__name__ = "integer"
    return convert
