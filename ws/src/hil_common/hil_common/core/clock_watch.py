"""Is the simulated clock moving? Judged on the wall clock, for the nodes on ``use_sim_time``.

A robot side on another machine follows the world's ``/clock``. When the world is
gone (killed, its machine off the network) the clock stops, and nothing else on the
robot side notices: its MCU, bridge and loop run on the wall clock and go on
exchanging, while every stamp stays where the clock stopped. A node on simulated
time therefore reads the clock as it works and hands each reading to a
:class:`ClockWatch`, which says the clock has stalled once its reading has not
changed for ``timeout`` wall seconds. The control loop makes that a failsafe
(motors at zero, ``clock``); the loop, the bridge and the MCUs make it an ERROR in
their diagnostics. It clears as soon as the reading changes again, also backwards
(a world that restarts begins again at 0).

A reading of 0 is no clock at all (rclpy's simulated time before the first
``/clock``): it never counts as a move, so a robot side whose world has not come yet
is stalled from ``timeout`` after it started. Time is always passed in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from hil_common.errors import HilError


@dataclass
class ClockWatch:
    """Readings of a simulated clock against the wall clock.

    Args:
        timeout: wall seconds without a change before the clock counts as stalled.
        start: wall time the watch begins (a clock never heard is stalled ``timeout`` after it).

    Raises:
        HilError: a timeout that is not a positive finite number.
    """

    timeout: float
    start: float
    #: The last reading (simulated seconds), None before the first that is not 0.
    reading: float | None = field(default=None, init=False)
    #: Wall time of the last change of the reading.
    moved_at: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            raise HilError(f"clock_timeout = {self.timeout!r} must be a positive number of seconds")

    def observe(self, reading: float, now: float) -> bool:
        """The clock reads ``reading`` at wall time ``now``; True if that is a change (a move)."""
        if reading in (0.0, self.reading):
            return False
        self.reading, self.moved_at = reading, now
        return True

    def stalled(self, now: float) -> bool:
        """True once the reading has not changed for longer than ``timeout`` (wall s)."""
        return now - (self.start if self.moved_at is None else self.moved_at) > self.timeout

    def describe(self, now: float) -> str:
        """What the clock is doing, for diagnostics: moving, or since when it has not."""
        if self.moved_at is None:
            return f"no simulated clock (/clock) for {now - self.start:.1f} s"
        if not self.stalled(now):
            return f"simulated clock at {self.reading:.3f} s"
        return f"simulated clock (/clock) stopped at {self.reading:.3f} s, {now - self.moved_at:.1f} s ago"
