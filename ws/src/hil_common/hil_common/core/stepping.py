"""One way to drive a part of a graph: on its own threads, or stepped in simulated time.

Every part the one-process runner (``hil_bringup.graph_runner``) drives, each node of
a graph and each link fault proxy, offers :class:`Stepped`, and the runner uses
nothing else to run them:

* real time (a launch, ``hil_sim_runner`` with ``rtf`` > 0): :meth:`Stepped.start`
  starts the part's own threads, which keep their periods on the wall clock as in a
  process of the part's own; :meth:`Stepped.stop` ends them.
* lockstep (``rtf`` 0): :meth:`Stepped.follow` puts the part on the simulated clock
  with no thread of its own (its timers, reconnect backoffs and silence rules read that
  clock from then on), and :meth:`Stepped.advance_to` does what is due up to a
  simulated time: the part's whole share of a period, in the order the runner calls
  the parts (DESIGN.md "Run modes"). Bytes and values between parts go through their
  ports (:mod:`hil_common.core.ports`) and the links' ptys, never by reaching into
  another part.

The pattern is :meth:`robot_control.core.loop.ControlLoop.frame`: time and input in,
intentions out; a part's node decides only when to call it. This module never imports
rclpy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

#: A simulated clock: the simulated time now, s (in lockstep the world's, which moves
#: only as the runner steps it).
SimulatedClock = Callable[[], float]


@runtime_checkable
class Stepped(Protocol):
    """A part of a graph the runner can start (real time) or step (lockstep)."""

    def start(self) -> None:
        """Real time: start the part's own threads (they pace themselves on the wall clock)."""

    def stop(self) -> None:
        """Stop the part's threads and release its ports (again: nothing; never started: fine)."""

    def follow(self, clock: SimulatedClock) -> None:
        """Lockstep: run on ``clock`` from now on, with no thread; :meth:`advance_to` moves the part."""

    def advance_to(self, t: float) -> None:
        """Lockstep: do what is due up to simulated time ``t`` (after :meth:`follow`)."""


class RunningTime:
    """A stepped part's own time: the simulated time, never running back.

    A world reset takes simulated time back to 0. A part's own timers (frame deadlines,
    heartbeats, a behaviour's phases) run on from where they were, as they do on the
    wall clock in real time: from a reset on, the part's time is the simulated time
    plus the reset's moment on the part's time. The runner calls a part at the start of
    each period, so the reset's moment is the part's last time plus the period the world
    ran after that call (as long as the one before it); the periods after a reset count
    in full.
    """

    def __init__(self) -> None:
        self._offset = 0.0
        self._last = float("-inf")
        self._step = 0.0

    def at(self, t: float) -> float:
        """The part's time at simulated time ``t``."""
        offset = self._offset_at(t)
        now = t + offset
        if offset != self._offset:  # the world's time ran back: it started again from 0
            self._offset = offset
        elif now > self._last > float("-inf"):  # a read at the same time is no period
            self._step = now - self._last
        self._last = now
        return now

    def peek(self, t: float) -> float:
        """What :meth:`at` would return for ``t``, changing nothing."""
        return t + self._offset_at(t)

    def _offset_at(self, t: float) -> float:
        """The offset :meth:`at` adds to ``t``: a new one once the world's time ran back."""
        return self._last + self._step if t + self._offset < self._last else self._offset
