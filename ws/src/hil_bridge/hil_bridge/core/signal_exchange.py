"""One exchange period of the signal link, without ROS.

Each :meth:`SignalExchange.step` decodes everything the bridge board (or whatever
speaks for the MCU's pins) sent since the last step, and writes one frame with the
latest values the simulator gave for the MCU's inputs. The signal bridge node calls
it on its deadline schedule and turns its results into topics; tests and benchmarks
call it directly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hil_bridge.core.serial_link import SerialLink
from hil_bridge.core.signal_protocol import Frame, FrameDecoder, FrameEncoder, SignalLayout

#: Signals by name, as the bridge and the simulator exchange them: ``(device, signal, value)``.
NamedValues = Sequence[tuple[str, str, float]]


@dataclass(frozen=True)
class StepResult:
    """What one step did: bytes read, frames decoded, the frame written and whether it went out."""

    frames: list[Frame]
    sent: bool
    received: bytes = b""
    written: bytes = b""


class SignalExchange:
    """Decodes INPUT frames from a link and answers with OUTPUT frames."""

    def __init__(self, layout: SignalLayout, link: SerialLink, *, checked: bool = False) -> None:
        self.layout = layout
        self.link = link
        self.decoder = FrameDecoder(layout.inputs, checked=checked)
        self.encoder = FrameEncoder(layout.outputs, checked=checked)
        self._output_index = {slot.key: i for i, slot in enumerate(layout.outputs)}
        # Copy-on-write list: the simulator's callback swaps in a new one, the loop
        # thread reads whichever is current, with no lock on the hot path.
        self._outputs: list[float] = [slot.spec.default for slot in layout.outputs]
        self._generation = link.generation
        self.frames_sent = 0
        self.frames_received = 0
        self.last_frame_at: float | None = None
        self.latest: Frame | None = None
        #: Names the simulator sent that are not OUTPUT signals of this link.
        self.unknown_signals: Counter[str] = Counter()

    @property
    def outputs(self) -> list[float]:
        """The values the next frame will carry, in OUTPUT slot order."""
        return list(self._outputs)

    def set_outputs(self, values: Iterable[tuple[str, str, float]]) -> list[str]:
        """Update OUTPUT signals from ``(device, signal, value)``; returns names it did not know."""
        updated = list(self._outputs)
        unknown: list[str] = []
        for device, name, value in values:
            index = self._output_index.get((device, name))
            if index is None:
                unknown.append(f"{device}.{name}")
                self.unknown_signals[f"{device}.{name}"] += 1
                continue
            updated[index] = value
        self._outputs = updated
        return unknown

    def step(self, now: float) -> StepResult:
        """Send one frame of the current OUTPUT values, then poll and decode.

        The frame goes out first because its values do not depend on what is read:
        the peer's bytes of this period then cross the pty while the write runs,
        instead of the read waiting for the kernel to pass them on (in lockstep that
        wait was the largest single cost of a period).
        """
        sent, frame = self._send()
        was_open = self.link.is_open
        data = self.link.poll()
        if self.link.generation != self._generation:
            # Reopened port: whatever was half-decoded belongs to the old connection.
            self._generation = self.link.generation
            self.decoder.reset()
        if not was_open and self.link.is_open:
            sent, frame = self._send()  # opened by this poll: this period's frame still goes
        frames = self.decoder.feed(data) if data else []
        if frames:
            self.frames_received += len(frames)
            self.last_frame_at = now
            self.latest = frames[-1]
        return StepResult(frames, sent, data, frame if sent else b"")

    def _send(self) -> tuple[bool, bytes]:
        """Write one frame of the current OUTPUT values if the port is open."""
        if not self.link.is_open:
            return False, b""
        frame = self.encoder.encode(self._outputs)
        sent = self.link.write(frame)
        self.frames_sent += 1 if sent else 0
        return sent, frame

    def alive(self, now: float, timeout: float) -> bool:
        """True if a frame arrived within ``timeout`` seconds of ``now``."""
        return self.last_frame_at is not None and now - self.last_frame_at <= timeout
