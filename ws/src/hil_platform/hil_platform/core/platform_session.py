"""The host's side of a motion platform session, without I/O.

A :class:`PlatformSession` decides, frame by frame, which datagram the host sends
(protocol in :mod:`hil_platform.core.motion_platform`) and reads every reply. The
caller owns the socket and the clock: it hands over each reply with
:meth:`PlatformSession.on_reply` and sends what :meth:`PlatformSession.next_datagram`
returns, so the same session runs over UDP in a node and against a
:class:`~hil_platform.core.motion_platform.PlatformStateMachine` in a test.

What it sends follows the platform's state as the last reply reported it (every
reply carries it), towards the session's goal:

=========  ==========  ===========  ===========  ==========  ========
goal       unknown     INIT         ENGAGED      STARTED     PARKED
=========  ==========  ===========  ===========  ==========  ========
run        STATUS      ENGAGE       START        DOF         RESET
park       PARK        (done)       PARK         PARK        (done)
=========  ==========  ===========  ===========  ==========  ========

So a platform found in any state, or one that another host parked, is brought
back to STARTED, and a session parks whatever the platform was doing.

* One sequence command (all but DOF) is in flight at a time. If its reply does
  not come within ``reply_timeout`` the state is unknown again (the command may or
  may not have been carried out) and the session asks with STATUS (or PARK, when
  parking): a retry every ``reply_timeout`` while the platform is silent.
* DOF setpoints stream one per frame. A reply is matched to its setpoint by the
  actuator lengths it reports (the platform's inverse kinematics of the float32
  pose sent), which gives the round trip even with several in flight; a setpoint
  unanswered after ``reply_timeout`` is counted lost. Nothing heard for
  ``reply_timeout`` while streaming: the platform counts as silent, the state is
  unknown, and the session asks with STATUS as above.
* ERROR replies are counted by error code; their state is taken like any other,
  so a BAD_STATE leads to the command the platform's real state needs.
* Replies that are not 32 bytes, not STATE/ERROR or carry no valid state are
  counted in ``bad_replies`` and otherwise ignored.
"""

from __future__ import annotations

import enum
import math
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hil_platform.core.motion_platform import (
    DATAGRAM_SIZE,
    Command,
    ErrorCode,
    PlatformGeometry,
    PlatformState,
    Reply,
    actuator_lengths,
    pack,
    split_status,
    unpack,
)
from hil_platform.errors import HilPlatformError

_STATES = frozenset(int(s) for s in PlatformState)
_REPLIES = frozenset(int(r) for r in Reply)


class Goal(enum.Enum):
    """What the session drives the platform to."""

    RUN = "run"
    PARK = "park"


_RUN_NEXT = {
    PlatformState.INIT: Command.ENGAGE,
    PlatformState.ENGAGED: Command.START,
    PlatformState.STARTED: Command.DOF,
    PlatformState.PARKED: Command.RESET,
}


@dataclass
class RoundTrips:
    """Round-trip times of answered datagrams (s): last, mean, max, how many."""

    last: float = 0.0
    mean: float = 0.0
    max: float = 0.0
    count: int = 0

    def add(self, rtt: float) -> None:
        """Record one round trip."""
        self.count += 1
        self.last = rtt
        self.mean += (rtt - self.mean) / self.count
        self.max = max(self.max, rtt)


class PlatformSession:
    """Drives one platform through INIT, ENGAGED, STARTED and back to PARKED.

    Args:
        geometry: The platform's geometry (to know the lengths a setpoint gives).
        reply_timeout: Seconds without a reply before a command is retried or the
            platform counts as silent.
        max_in_flight: Most unanswered setpoints remembered for matching.

    Raises:
        HilPlatformError: If an option is out of range.
    """

    def __init__(
        self, geometry: PlatformGeometry, *, reply_timeout: float = 0.25, max_in_flight: int = 256
    ) -> None:
        if not (math.isfinite(reply_timeout) and reply_timeout > 0):
            raise HilPlatformError(f"PlatformSession: reply_timeout must be > 0 s, got {reply_timeout!r}")
        if max_in_flight < 1:
            raise HilPlatformError(f"PlatformSession: max_in_flight must be >= 1, got {max_in_flight}")
        self.geometry = geometry
        self.reply_timeout = reply_timeout
        self.goal = Goal.RUN
        #: The platform's state as the last reply reported it; None when unknown.
        self.state: PlatformState | None = None
        self.last_heard: float | None = None
        self.rtt = RoundTrips()
        #: Datagrams handed out, by command.
        self.sent: Counter[Command] = Counter()
        self.replies = 0
        #: ERROR replies by error code (an unknown code is kept as its number).
        self.errors: Counter[ErrorCode | int] = Counter()
        self.last_error = ""
        self.timeouts = 0
        self.lost_setpoints = 0
        self.bad_replies = 0
        self.unmatched = 0
        self._pending: tuple[Command, float] | None = None
        self._in_flight: deque[tuple[tuple[float, ...], float]] = deque(maxlen=max_in_flight)
        self._silent_since: float | None = None

    @property
    def streaming(self) -> bool:
        """Whether setpoints are being sent (goal RUN and the platform STARTED)."""
        return self.goal is Goal.RUN and self.state is PlatformState.STARTED

    @property
    def parked(self) -> bool:
        """Whether parking is done: goal PARK and the platform at rest (PARKED or INIT)."""
        return self.goal is Goal.PARK and self.state in (PlatformState.PARKED, PlatformState.INIT)

    def alive(self, now: float) -> bool:
        """Whether a reply arrived within the last ``reply_timeout`` seconds."""
        return self.last_heard is not None and now - self.last_heard <= self.reply_timeout

    def park(self) -> None:
        """Drive the platform to PARKED from now on (shutdown)."""
        self.goal = Goal.PARK
        self._in_flight.clear()
        self._silent_since = None
        # A command in flight for the run goal need not be waited for.
        self._pending = None

    def next_datagram(self, now: float, pose: Sequence[float] = (0.0,) * 6) -> bytes | None:
        """The datagram to send at ``now``, or None (waiting for a reply, or done).

        Args:
            now: The caller's clock (s), the same as for :meth:`on_reply`.
            pose: The DOF setpoint to send when streaming (roll, pitch, heave,
                surge, yaw, lateral); it should be within the platform's limits.

        Raises:
            HilPlatformError: If ``pose`` cannot be packed (not six float32 values).
        """
        self._expire(now)
        if self._pending is not None:
            return None
        if self.goal is Goal.PARK:
            if self.parked:
                return None
            command = Command.PARK
        elif self.state is None:
            command = Command.STATUS
        else:
            command = _RUN_NEXT[self.state]
        if command is Command.DOF:
            data = pack(Command.DOF, pose)
            wire = unpack(data).values
            expected = tuple(float(v) for v in actuator_lengths(wire, self.geometry).astype(np.float32))
            if len(self._in_flight) == self._in_flight.maxlen:
                self.lost_setpoints += 1
            self._in_flight.append((expected, now))
        else:
            data = pack(command)
            self._pending = (command, now)
        if self._silent_since is None:
            self._silent_since = now
        self.sent[command] += 1
        return data

    def on_reply(self, now: float, data: bytes) -> None:
        """Take one datagram received from the platform."""
        if len(data) != DATAGRAM_SIZE:
            self.bad_replies += 1
            return
        reply = unpack(data)
        status = split_status(reply.spare)
        if reply.type not in _REPLIES or status.state not in _STATES:
            self.bad_replies += 1
            return
        self.replies += 1
        self.last_heard = now
        self._silent_since = None
        self.state = PlatformState(status.state)
        if reply.type == Reply.ERROR:
            code: ErrorCode | int
            try:
                code = ErrorCode(status.error)
            except ValueError:
                code = status.error
            self.errors[code] += 1
            name = code.name if isinstance(code, ErrorCode) else str(code)
            self.last_error = f"{name} for type {status.offending_type:#06x} in {self.state.name}"
        if status.offending_type == Command.DOF:
            self._match_setpoint(now, reply.values, accepted=reply.type == Reply.STATE)
        elif self._pending is not None and status.offending_type == self._pending[0]:
            self.rtt.add(now - self._pending[1])
            self._pending = None
        else:
            # A late answer to a command already retried, or to another host.
            self.unmatched += 1

    def _match_setpoint(self, now: float, lengths: tuple[float, ...], *, accepted: bool) -> None:
        """Pair a DOF reply with its setpoint; setpoints sent before it were lost."""
        flight = self._in_flight
        for index, (expected, sent_at) in enumerate(flight):
            # A refused setpoint leaves the lengths as they were: take the oldest.
            if not accepted or expected == lengths:
                self.lost_setpoints += index
                for _ in range(index + 1):
                    flight.popleft()
                self.rtt.add(now - sent_at)
                return
        self.unmatched += 1

    def _expire(self, now: float) -> None:
        """Forget what has waited longer than ``reply_timeout``."""
        deadline = now - self.reply_timeout
        while self._in_flight and self._in_flight[0][1] < deadline:
            self._in_flight.popleft()
            self.lost_setpoints += 1
        if self._pending is not None and self._pending[1] < deadline:
            self._pending = None
            self._lost()
        elif self._silent_since is not None and self._silent_since < deadline:
            self._lost()

    def _lost(self) -> None:
        self.timeouts += 1
        self._silent_since = None
        if self.goal is Goal.RUN:
            self.state = None
