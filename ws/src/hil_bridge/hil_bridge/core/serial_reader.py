"""Read a serial link in a thread of its own and stamp every chunk with its arrival time.

A loop that polls its port once a frame only sees an echo at its next frame, so a
heartbeat's round trip would read as a whole frame period. The reader waits on the
port with ``select`` and stamps each chunk the moment it arrives; the loop takes the
chunks, with their times, at its next frame, and still never blocks. While the port
is down the reader keeps asking the link to reopen it (the link's backoff applies).
"""

from __future__ import annotations

import contextlib
import select
import threading
import time
from collections import deque
from collections.abc import Callable

from hil_bridge.core.serial_link import SerialLink

#: Longest wait in select, which bounds how fast the reader notices stop() or a new fd.
WAIT_S = 0.05
#: Pause between reopen attempts while the port is down (the link's backoff still rules).
REOPEN_POLL_S = 0.01


class SerialReader:
    """Background reader of a :class:`SerialLink`: ``take()`` returns (time, bytes) chunks."""

    def __init__(self, link: SerialLink, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.link = link
        self._clock = clock
        self._chunks: deque[tuple[float, bytes]] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"reader:{link.port}", daemon=True)

    def start(self) -> SerialReader:
        """Start reading."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop reading (the link stays as it is)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)

    def take(self) -> list[tuple[float, bytes]]:
        """Every chunk received since the last call, oldest first, with its arrival time."""
        with self._lock:
            chunks = list(self._chunks)
            self._chunks.clear()
        return chunks

    def _run(self) -> None:
        while not self._stop.is_set():
            fd = self.link.fileno()
            if fd is None:
                self.link.poll()  # reopen attempt, subject to the link's backoff
                self._stop.wait(REOPEN_POLL_S)
                continue
            readable: list[int] = []
            with contextlib.suppress(OSError, ValueError):
                readable, _, _ = select.select([fd], [], [], WAIT_S)
            if not readable:
                continue
            arrived = self._clock()
            data = self.link.poll()
            if data:
                with self._lock:
                    self._chunks.append((arrived, data))
