"""Fault proxy: a faulty serial line between a port and a new pty.

:class:`FaultProxy` opens an existing port (``upstream``, e.g. the virtual MCU's
command link) like any serial client, makes a new pty at ``link``, and copies bytes
both ways through a :class:`~hil_bridge.core.faults.FaultChannel` each. Whoever
opened ``upstream`` directly now opens ``link`` instead and sees a line that drops,
corrupts, duplicates and delays bytes, and runs at the configured baud rate.

It is a :class:`~hil_common.core.stepping.Stepped` part: it runs in a thread of its
own (:meth:`start`), or is stepped on simulated time (:meth:`follow`,
:meth:`advance_to`: the runner's lockstep), reconnects to ``upstream`` when that goes
away (the MCU restarts), and is off unless a test or a launch argument starts it. An
observer per direction (a message tally) learns which bytes were damaged.
"""

from __future__ import annotations

import contextlib
import select
import threading
import time
from dataclasses import replace
from pathlib import Path
from types import TracebackType

import numpy as np

from hil_bridge.core.faults import ByteObserver, FaultChannel, FaultModel
from hil_bridge.core.pty_link import PtyPair
from hil_bridge.core.serial_link import SerialLink
from hil_common.core.stepping import RunningTime, SimulatedClock

#: Longest sleep of the copy loop when nothing is due; bounds the stop latency.
IDLE_WAIT_S = 0.02


class FaultProxy:
    """Copies bytes between ``upstream`` and a pty at ``link`` through fault channels."""

    def __init__(
        self,
        upstream: str,
        link: str | Path,
        model: FaultModel,
        *,
        upstream_baud: int = 115200,
        name: str = "",
        observers: tuple[ByteObserver | None, ByteObserver | None] = (None, None),
    ) -> None:
        seeds = np.random.SeedSequence(model.seed).spawn(2)
        #: What this proxy is in a run (e.g. ``command_link_proxy``), for reports.
        self.name = name
        #: Bytes from the upstream port towards the user of ``link``.
        self.down = FaultChannel(replace(model), rng=np.random.default_rng(seeds[0]), observer=observers[0])
        #: Bytes from the user of ``link`` towards the upstream port.
        self.up = FaultChannel(replace(model), rng=np.random.default_rng(seeds[1]), observer=observers[1])
        self.upstream = SerialLink(upstream, baud=upstream_baud, backoff_min=0.02, backoff_max=0.5)
        self.pty = PtyPair(link)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._running_time = RunningTime()

    @property
    def path(self) -> str:
        """The faulty port's path, for the user to open."""
        return self.pty.path

    def start(self) -> None:
        """Real time: run the copy loop in a daemon thread."""
        self._thread = threading.Thread(target=self.run, name="fault-proxy", daemon=True)
        self._thread.start()

    def follow(self, clock: SimulatedClock) -> None:
        """Lockstep: copy by :meth:`advance_to`; reopen ``upstream`` on the proxy's own time.

        The proxy's time runs on across a world reset (:class:`RunningTime`): the bytes
        in flight stay due when they were, a wire time after they came in.
        """
        running = self._running_time = RunningTime()
        self.upstream.use_clock(lambda: running.at(clock()))

    def advance_to(self, t: float) -> None:
        """Lockstep: move what is readable and due at simulated time ``t``."""
        self._move(self._running_time.at(t))

    def _move(self, now: float) -> float | None:
        """Move whatever is readable and due; returns when the next byte is due."""
        with self._lock:
            self.down.push(self.upstream.poll(), now)
            self.up.push(self.pty.read(), now)
            if data := self.down.pop_ready(now):
                self.pty.write(data)
            if data := self.up.pop_ready(now):
                self.upstream.write(data)
            dues = [t for t in (self.down.next_due(), self.up.next_due()) if t is not None]
            return min(dues) if dues else None

    def run(self) -> None:
        """Copy until :meth:`stop`."""
        while not self._stop.is_set():
            now = time.monotonic()
            due = self._move(now)
            wait = IDLE_WAIT_S if due is None else min(max(due - now, 0.0), IDLE_WAIT_S)
            fds = [self.pty.master_fd]
            upstream_fd = self.upstream.fileno()
            if upstream_fd is not None:
                fds.append(upstream_fd)
            with contextlib.suppress(OSError, ValueError):
                select.select(fds, [], [], wait)

    def stop(self) -> None:
        """Stop the loop, close both ends and remove the link."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        with self._lock:
            self.upstream.close()
            self.pty.close()

    def __enter__(self) -> FaultProxy:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
