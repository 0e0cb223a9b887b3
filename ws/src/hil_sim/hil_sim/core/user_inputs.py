"""What users set on the robots' devices, taken at a fixed point of the simulator's period.

A user (a scenario's ``set:`` step, a test's ``hil.set()``, a tool on a robot's
``hil/set/<device>`` topic) presses a button, turns a knob, sends an IR remote's key or
overrides a sensor (:meth:`hil_sim.core.simulation.Simulation.setting`). Requests come
from any thread and wait in :class:`UserInputs` until the simulator's owner calls
:meth:`UserInputs.apply` at the start of its next period, so in a lockstep run a
request lands in a period that does not depend on threads. A request with ``seconds``
is let go that long after it was applied (at the first period start at or after it),
unless a later request for the same device (and signal) took over.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

from hil_sim.core.device_set import Setting
from hil_sim.core.simulation import Simulation

#: Requests waiting at most (a flood of topic messages cannot grow memory).
MAX_PENDING = 1000


@dataclass(frozen=True)
class Request:
    """Robot ``robot``'s user sets ``setting``, for ``seconds`` (None: until set again)."""

    robot: int
    setting: Setting
    seconds: float | None = None


class UserInputs:
    """Requests waiting for the next period, and the holds that end (module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: deque[Request] = deque()
        #: (robot, device, signal) -> (when to let go, the request that owns it).
        self._ends: dict[tuple[int, str, str], tuple[float, Request]] = {}
        #: Requests dropped because too many were waiting.
        self.dropped = 0
        #: Requests applied so far.
        self.applied = 0

    def request(self, request: Request) -> None:
        """Queue ``request`` (any thread) for the next :meth:`apply`."""
        with self._lock:
            if len(self._pending) >= MAX_PENDING:
                self.dropped += 1
                return
            self._pending.append(request)

    def apply(self, sim: Simulation) -> None:
        """At a period's start: let go of the holds that ended, then apply the queued requests."""
        now = sim.time
        for key, (end, request) in list(self._ends.items()):
            if end <= now + 1e-9:
                del self._ends[key]
                sim.let_go(request.robot, request.setting)
        with self._lock:
            waiting = list(self._pending)
            self._pending.clear()
        for request in waiting:
            key = (request.robot, request.setting.device, request.setting.signal)
            sim.set_device(request.robot, request.setting)
            self.applied += 1
            if request.seconds is None:
                self._ends.pop(key, None)
            else:
                self._ends[key] = (now + request.seconds, request)

    def reset(self) -> None:
        """Forget every request and hold (the world was reset)."""
        with self._lock:
            self._pending.clear()
        self._ends.clear()
