"""Heartbeat bookkeeping of a link: stamps sent, echoes matched, round-trip times.

The sender puts its clock in ``HBB,<t>``; the receiver echoes the text unchanged; the
round trip is the sender's clock at the echo minus ``t``. A heartbeat not echoed
within ``lost_after`` seconds counts as lost. Alive means something valid arrived
within ``timeout``; the link has never been alive before its first message.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass

import numpy as np


@dataclass
class LinkHealth:
    """What hil_msgs/LinkStatus reports for one link."""

    alive: bool
    rtt_last: float
    rtt_mean: float
    rtt_max: float
    sent: int
    received: int
    lost: int
    since_last_heard: float


class HeartbeatTracker:
    """Heartbeats sent and echoed on one link, and when it was last heard from."""

    def __init__(self, *, timeout: float, lost_after: float | None = None, memory: int = 64) -> None:
        self.timeout = timeout
        self.lost_after = lost_after if lost_after is not None else timeout
        self.memory = memory
        self._pending: OrderedDict[str, float] = OrderedDict()
        self.sent = 0
        self.received = 0
        self.echoes = 0
        self.lost = 0
        self.last_heard: float | None = None
        self.rtt_last = 0.0
        self.rtt_max = 0.0
        self._rtt_sum = 0.0
        #: The latest round trips, for percentiles.
        self.recent: deque[float] = deque(maxlen=1000)

    def sent_heartbeat(self, stamp: str, now: float) -> None:
        """Record a heartbeat sent at ``now`` carrying ``stamp``."""
        self.sent += 1
        self._pending[stamp] = now
        while len(self._pending) > self.memory:
            self._pending.popitem(last=False)
            self.lost += 1

    def heard(self, now: float) -> None:
        """Something valid arrived on the link."""
        self.received += 1
        self.last_heard = now

    def echoed(self, stamp: str, now: float) -> float | None:
        """An echo of ``stamp`` arrived; returns its round trip, None if it was not ours."""
        self.heard(now)
        sent_at = self._pending.pop(stamp, None)
        if sent_at is None:
            return None
        rtt = now - sent_at
        self.echoes += 1
        self.rtt_last = rtt
        self.rtt_max = max(self.rtt_max, rtt)
        self._rtt_sum += rtt
        self.recent.append(rtt)
        return rtt

    def rtt_percentile(self, q: float) -> float:
        """The ``q``-th percentile (0..100) of the latest round trips, 0 before the first."""
        return float(np.percentile(np.fromiter(self.recent, float), q)) if self.recent else 0.0

    def expire(self, now: float) -> None:
        """Count heartbeats unanswered for ``lost_after`` as lost."""
        while self._pending:
            stamp, sent_at = next(iter(self._pending.items()))
            if now - sent_at < self.lost_after:
                break
            del self._pending[stamp]
            self.lost += 1

    def alive(self, now: float) -> bool:
        """True if the link was heard from within the timeout."""
        return self.last_heard is not None and now - self.last_heard <= self.timeout

    def health(self, now: float) -> LinkHealth:
        """The link's figures now."""
        return LinkHealth(
            alive=self.alive(now),
            rtt_last=self.rtt_last,
            rtt_mean=self._rtt_sum / self.echoes if self.echoes else 0.0,
            rtt_max=self.rtt_max,
            sent=self.sent,
            received=self.received,
            lost=self.lost,
            since_last_heard=-1.0 if self.last_heard is None else now - self.last_heard,
        )
