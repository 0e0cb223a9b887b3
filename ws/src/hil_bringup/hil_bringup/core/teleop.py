"""Keyboard teleop: keys to a body twist and station commands (no terminal, no ROS).

    w / s    faster forward / backward      a / d   turn left / right
    space    stop the wheels                x       STOP   g   GO
    b        AUTO boards    l  AUTO light   m       MANUAL
    q        quit

Speeds step by ``linear_step``/``angular_step`` up to ``max_linear``/``max_angular``.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Keys that send a station command on robotCommand.
COMMAND_KEYS = {"x": "STOP", "g": "GO", "b": "AUTO boards", "l": "AUTO light", "m": "MANUAL"}
HELP = __doc__.split("\n\n", 1)[1].split("\n\nSpeeds")[0]


@dataclass
class Teleop:
    """The twist a keyboard has set, and what a key does to it."""

    linear_step: float = 0.05
    angular_step: float = 0.25
    max_linear: float = 0.6
    max_angular: float = 3.0
    linear: float = 0.0
    angular: float = 0.0

    def key(self, key: str) -> str | None:
        """Apply one key; returns a station command to send, "quit", or None."""
        if key in COMMAND_KEYS:
            return COMMAND_KEYS[key]
        if key == "q":
            return "quit"
        if key == " ":
            self.linear = self.angular = 0.0
        elif key == "w":
            self.linear = min(self.linear + self.linear_step, self.max_linear)
        elif key == "s":
            self.linear = max(self.linear - self.linear_step, -self.max_linear)
        elif key == "a":
            self.angular = min(self.angular + self.angular_step, self.max_angular)
        elif key == "d":
            self.angular = max(self.angular - self.angular_step, -self.max_angular)
        return None
