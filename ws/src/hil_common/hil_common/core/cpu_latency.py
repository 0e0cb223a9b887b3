"""Keeping idle CPU cores awake while a run wants short wake-ups (Linux PM QoS).

The parts of a run hand each other bytes over ptys, and the kernel passes pty bytes on
in a worker thread. When the other core is idle, it sits in an idle state, and waking
it for that worker takes time: on a 2-core VM, about 15 µs per hand-over with the core
halted, against 1-3 µs with it polling. A lockstep period has two hand-overs, plus the
firmware harness's answer in simavr runs.

Writing a 32-bit 0 to ``/dev/cpu_dma_latency`` and keeping the file open asks the
kernel's PM QoS to keep every core out of idle states that take longer than 0 µs to
leave, for as long as the file stays open (the kernel's ``pm_qos_interface`` document;
``cyclictest`` and audio servers do the same). Idle cores then poll instead of
halting: faster wake-ups, more power drawn while the run lasts. The device is root's
by default; where it cannot be opened, :class:`CpuLatencyHold` holds nothing and says why.
"""

from __future__ import annotations

import os
import struct
from types import TracebackType

#: The kernel's PM QoS device for the CPUs' wake-up latency.
DEVICE = "/dev/cpu_dma_latency"


class CpuLatencyHold:
    """A request that the CPUs wake within ``max_latency_us``, held until :meth:`release`.

    Never raises for the device: where it cannot be opened or written, :attr:`held` is
    False and :attr:`reason` names the device and what failed.
    """

    def __init__(self, *, max_latency_us: int = 0, device: str | None = None) -> None:
        self.device = DEVICE if device is None else device
        self.max_latency_us = max_latency_us
        #: Why the request failed ("" when it was held).
        self.reason = ""
        self._fd: int | None = None
        fd = None
        try:
            fd = os.open(self.device, os.O_WRONLY | os.O_CLOEXEC)
            os.write(fd, struct.pack("=i", max_latency_us))
        except OSError as exc:
            if fd is not None:
                os.close(fd)
            self.reason = f"{self.device}: {exc.strerror or exc}"
            return
        self._fd = fd

    @property
    def held(self) -> bool:
        """Whether the request stands."""
        return self._fd is not None

    def describe(self) -> str:
        """What the request got, for a run's output and metrics: held, or why not."""
        if not self.reason:
            return f"CPU wake-up latency held at {self.max_latency_us} µs"
        return f"CPU wake-up latency not held ({self.reason})"

    def release(self) -> None:
        """End the request (closing the device ends it); again: nothing."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> CpuLatencyHold:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
