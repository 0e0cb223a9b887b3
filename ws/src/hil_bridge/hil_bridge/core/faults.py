"""Link fault model: what a noisy, slow serial line does to a byte stream.

Each byte passing a :class:`FaultChannel` is, independently and with the model's
probabilities, dropped, corrupted (one random bit flipped), duplicated, or delayed
by ``delay_s``; with a baud rate set, every byte also takes the 10 bit times of
8N1 framing on the wire. Order is kept: a delayed byte holds back the bytes after
it, as a stalled line would. Every byte consumes the same random draws whatever
happens to it, so a seeded model gives the same faults however the stream is
chunked.

The channel is pure (time is passed in), so tests drive it with a fake clock; the
fault proxy runs two of them between two ports. An observer (e.g. a message tally of
:mod:`hil_bridge.core.link_accounting`) is told which bytes were damaged, so the
messages they belonged to can be counted against what the receiver noticed.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from hil_bridge.errors import HilBridgeError

#: Bits per byte on an 8N1 serial line: start, 8 data, stop.
BITS_PER_BYTE = 10

#: What happened to a byte, as a :class:`ByteObserver` is told (0: nothing, or only a delay).
DROPPED = 1
CORRUPTED = 2
DUPLICATED = 3


@dataclass(frozen=True)
class FaultModel:
    """Per-byte fault probabilities, extra delay, optional baud rate and seed."""

    drop: float = 0.0
    corrupt: float = 0.0
    duplicate: float = 0.0
    delay: float = 0.0
    delay_s: float = 0.01
    baud: int | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        for name in ("drop", "corrupt", "duplicate", "delay"):
            value = getattr(self, name)
            if not (math.isfinite(value) and 0.0 <= value <= 1.0):
                raise HilBridgeError(f"fault model: {name} = {value!r} is not a probability in [0, 1]")
        if not (math.isfinite(self.delay_s) and self.delay_s >= 0.0):
            raise HilBridgeError(f"fault model: delay_s = {self.delay_s!r} must be >= 0")
        if self.baud is not None and (
            isinstance(self.baud, bool) or not isinstance(self.baud, int) or self.baud <= 0
        ):
            raise HilBridgeError(f"fault model: baud = {self.baud!r} must be a positive integer")

    @property
    def byte_time(self) -> float:
        """Seconds one byte occupies the line (0 without a baud rate)."""
        return BITS_PER_BYTE / self.baud if self.baud else 0.0

    @property
    def injects_faults(self) -> bool:
        """True if any fault probability is non-zero."""
        return any((self.drop, self.corrupt, self.duplicate, self.delay))


@dataclass
class FaultStats:
    """What a channel did to the bytes it was given."""

    bytes_in: int = 0
    bytes_out: int = 0
    dropped: int = 0
    corrupted: int = 0
    duplicated: int = 0
    delayed: int = 0


class ByteObserver(Protocol):
    """Told, for every push, the bytes as sent, which of them the line damaged and how."""

    def observe(self, data: bytes, damaged: bytes, *, on_line: bytes | None = None) -> None:
        """``damaged[i]``: :data:`DROPPED`, :data:`CORRUPTED`, :data:`DUPLICATED` or 0 for ``data[i]``.

        ``on_line[i]``: ``data[i]`` as it went on the line (a corrupted byte's new value;
        a duplicated one went twice, a dropped one not at all); None: not told.
        """


class FaultChannel:
    """One direction of a faulty link."""

    def __init__(
        self,
        model: FaultModel,
        *,
        rng: np.random.Generator | None = None,
        observer: ByteObserver | None = None,
    ) -> None:
        self.model = model
        self.rng = rng if rng is not None else np.random.default_rng(model.seed)
        self.stats = FaultStats()
        #: Told which bytes of each push were damaged (a delay is no damage).
        self.observer = observer
        self._queue: deque[tuple[float, int]] = deque()
        # Due times are epoch + delays + slots * byte_time, not a running sum, so
        # rounding errors do not accumulate over a long burst.
        self._epoch = -math.inf
        self._slots = 0
        self._held = 0.0

    def push(self, data: bytes, now: float) -> None:
        """Put bytes on the line at time ``now``."""
        if not data:
            return
        model = self.model
        count = len(data)
        # Five uniforms per byte, drawn in byte order: the same bytes get the same
        # faults however the stream is split into pushes.
        draws = self.rng.random((count, 5))
        byte_time = model.byte_time
        if now >= self._epoch + self._held + self._slots * byte_time:
            # The line is idle: this burst starts now.
            self._epoch, self._slots, self._held = now, 0, 0.0
        stats = self.stats
        damaged = bytearray(count) if self.observer is not None else None
        on_line = bytearray(data) if self.observer is not None else None
        for index, original in enumerate(data):
            drop, corrupt, duplicate, delay, bit = draws[index]
            if drop < model.drop:
                stats.dropped += 1
                if damaged is not None:
                    damaged[index] = DROPPED
                continue
            byte = original
            if corrupt < model.corrupt:
                byte ^= 1 << int(bit * 8)
                stats.corrupted += 1
                if damaged is not None and on_line is not None:
                    damaged[index] = CORRUPTED
                    on_line[index] = byte
            copies = 2 if duplicate < model.duplicate else 1
            stats.duplicated += copies - 1
            if copies > 1 and damaged is not None:
                damaged[index] = DUPLICATED
            if delay < model.delay:
                stats.delayed += 1
                self._held += model.delay_s
            for _ in range(copies):
                self._slots += 1
                self._queue.append((self._epoch + self._held + self._slots * byte_time, byte))
        stats.bytes_in += count
        if self.observer is not None and damaged is not None and on_line is not None:
            self.observer.observe(data, bytes(damaged), on_line=bytes(on_line))

    def pop_ready(self, now: float) -> bytes:
        """The bytes that have arrived by ``now``."""
        queue = self._queue
        out = bytearray()
        while queue and queue[0][0] <= now:
            out.append(queue.popleft()[1])
        self.stats.bytes_out += len(out)
        return bytes(out)

    def next_due(self) -> float | None:
        """When the next byte arrives, or None if the line is empty."""
        return self._queue[0][0] if self._queue else None
