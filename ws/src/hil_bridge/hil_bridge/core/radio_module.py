"""A robot's radio module without ROS: the far end of its MCU's radio link.

The module (an ESP8266-like part, the robot's second MCU, at its own time step) reads
the ``RTX`` lines its MCU writes and hands their bodies to the air (the world-side
radio model, ``hil_sim.core.radio``); the ``RRX`` and ``RST`` lines the air has for
it are written to the MCU at the module's next step, at most ``rx_queue`` waiting
(more are dropped and counted, as a full buffer would). Lines of other ids, and
``RTX`` lines whose fields do not parse, are dropped and counted by reason; nothing
raises on input. DESIGN.md "Radio link".
"""

from __future__ import annotations

from collections import Counter, deque

from hil_bridge.core.line_protocol import LineDecoder, LineEncoder, Relayed
from hil_bridge.core.radio_protocol import RADIO_IDS, decode_radio
from hil_bridge.core.serial_link import SerialLink
from hil_common.errors import HilError

#: Lines for the MCU that may wait for the module's next step.
RX_QUEUE = 64


class RadioModule:
    """The module's side of one radio link."""

    def __init__(self, link: SerialLink, *, checked: bool = False, rx_queue: int = RX_QUEUE) -> None:
        self.link = link
        self.decoder = LineDecoder(checked=checked, relay_ids=RADIO_IDS)
        self.encoder = LineEncoder(checked=checked)
        self._generation = link.generation
        self._to_mcu: deque[bytes] = deque()
        self.rx_queue = rx_queue
        #: RTX lines passed to the air, lines written to the MCU.
        self.sent = 0
        self.written = 0
        #: Lines dropped, by reason (``not_rtx``, ``bad_rtx``, ``rx_overflow``, ``unwritable``).
        self.dropped: Counter[str] = Counter()
        self.last_error = ""

    def step(self) -> list[str]:
        """Write what waits for the MCU, then read its RTX lines; returns their bodies."""
        while self._to_mcu and self.link.is_open:
            if not self.link.write(self._to_mcu.popleft()):
                self.dropped["unwritable"] += 1
            else:
                self.written += 1
        data = self.link.poll()
        if self.link.generation != self._generation:
            self._generation = self.link.generation
            self.decoder.reset()
        bodies = []
        for message in self.decoder.feed(data) if data else []:
            if not isinstance(message, Relayed) or not message.body.startswith("RTX"):
                self._drop("not_rtx", f"{message!r:.60} is not an RTX line")
                continue
            try:
                decode_radio(message.body)  # an RTX body: checked here, where its sender is
            except HilError as exc:
                self._drop("bad_rtx", str(exc))
                continue
            bodies.append(message.body)
            self.sent += 1
        return bodies

    def deliver(self, body: str) -> None:
        """Queue an ``RRX`` or ``RST`` line (its body) for the MCU."""
        if len(self._to_mcu) >= self.rx_queue:
            self._drop("rx_overflow", f"{self.rx_queue} lines already wait for the MCU")
            return
        try:
            self._to_mcu.append(self.encoder.encode(Relayed(body)))
        except HilError as exc:
            self._drop("bad_rx", str(exc))

    def _drop(self, reason: str, why: str) -> None:
        self.dropped[reason] += 1
        self.last_error = f"{reason}: {why}"
