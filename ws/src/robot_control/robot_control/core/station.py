"""robotCommand: what the operator station sends, parsed.

``STOP`` holds the motors at zero until ``GO``; ``HBB,<t>`` is the station's
heartbeat, echoed back unchanged; ``AUTO <behaviour>`` hands the wheels to a
behaviour; ``MANUAL`` back to ``cmd_vel``. Anything else is not a command: the caller
warns, naming it, and nothing else happens. Matching ignores case and surrounding
spaces of the keywords, never of the heartbeat's stamp.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Kind(str, Enum):
    """The kinds of station command."""

    STOP = "STOP"
    GO = "GO"
    HEARTBEAT = "HBB"
    AUTO = "AUTO"
    MANUAL = "MANUAL"
    UNKNOWN = "UNKNOWN"


@dataclass(frozen=True)
class StationCommand:
    """One parsed robotCommand: its kind and argument (behaviour name, or the text)."""

    kind: Kind
    argument: str = ""


def parse_station_command(text: str) -> StationCommand:
    """Parse one robotCommand string."""
    stripped = text.strip()
    upper = stripped.upper()
    if upper in ("STOP", "GO", "MANUAL"):
        return StationCommand(Kind(upper))
    if upper.startswith("HBB,") and len(stripped) > 4:
        return StationCommand(Kind.HEARTBEAT, text)
    if upper.startswith("AUTO ") and stripped[5:].strip():
        return StationCommand(Kind.AUTO, stripped[5:].strip().lower())
    return StationCommand(Kind.UNKNOWN, text)
