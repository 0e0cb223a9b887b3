"""The control loop's radio: RTX lines out through the MCU, RRX and RST lines in.

The MCU relays ``RTX`` lines from the command link to its radio module and the
module's ``RRX``/``RST`` lines back (DESIGN.md "Radio link"); the loop turns them into
this small port a behaviour uses: :meth:`send` queues a packet (written with the next
frame), :attr:`inbox` holds what was heard, :attr:`state` is the module's last
reported state (``LOST`` when the MCU says its radio went silent).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from hil_bridge.core.line_protocol import Relayed
from hil_bridge.core.radio_protocol import RadioReceive, RadioSend, RadioStatus, encode_radio
from hil_common.errors import HilError

#: Packets heard and not yet taken by a behaviour; older ones are dropped (counted).
INBOX = 64
#: Packets waiting for the next frame; more are refused (counted).
OUTBOX = 8


@dataclass(frozen=True)
class Heard:
    """A packet heard: sender, RSSI (dBm), payload, and when the loop took it."""

    src: int
    rssi: int
    payload: bytes
    at: float


@dataclass
class RadioPort:
    """What a behaviour sees of the robot's radio."""

    inbox: deque[Heard] = field(default_factory=lambda: deque(maxlen=INBOX))
    state: str = ""
    state_at: float = -1.0
    sent: int = 0
    heard: int = 0
    refused: int = 0
    _outbox: list[Relayed] = field(default_factory=list)

    def send(self, payload: bytes, dst: int | None = None) -> bool:
        """Queue a packet for the next frame; False (counted) if too many wait or it cannot be written."""
        if len(self._outbox) >= OUTBOX:
            self.refused += 1
            return False
        try:
            self._outbox.append(Relayed(encode_radio(RadioSend(dst, payload))))
        except HilError:  # a bad payload (empty, too long): counted, the loop goes on
            self.refused += 1
            return False
        return True

    def take_outbox(self) -> list[Relayed]:
        """The RTX lines to write with this frame."""
        out, self._outbox = self._outbox, []
        self.sent += len(out)
        return out

    def received(self, message: RadioReceive | RadioStatus | RadioSend, now: float) -> None:
        """A decoded radio line from the MCU."""
        if isinstance(message, RadioReceive):
            self.inbox.append(Heard(message.src, message.rssi, message.payload, now))
            self.heard += 1
        elif isinstance(message, RadioStatus):
            self.state, self.state_at = message.state, now

    @property
    def lost(self) -> bool:
        """The MCU reported its radio lost (or never reported one)."""
        return self.state in ("", "LOST")
