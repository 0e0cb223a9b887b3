"""What the live view (``live_view``) decides without ROS or the Foxglove SDK: its address, its pace.

The live view serves the graph's topics over the Foxglove WebSocket protocol
(:mod:`hil_bringup.live_view_node`); here are the pieces of it that are plain
Python: the URL an app connects to (:func:`live_url`) and the per-topic pace
(:class:`RateGate`) that keeps a fast lockstep run from flooding a viewer.
"""

from __future__ import annotations

#: The WebSocket subprotocol the live view speaks: the Foxglove WebSocket protocol under the
#: name foxglove-sdk gives it (the same protocol as ``foxglove.websocket.v1``, which the SDK
#: no longer accepts; the Foxglove app and current Lichtblick offer both).
SUBPROTOCOL = "foxglove.sdk.v1"


def live_url(host: str, port: int) -> str:
    """The address an app connects to (``ws://127.0.0.1:8765``; an IPv6 host in brackets).

    ``0.0.0.0`` and ``::`` (every interface) are reached from this machine as localhost.
    """
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"ws://[{host}]:{port}" if ":" in host else f"ws://{host}:{port}"


class RateGate:
    """At most ``rate`` messages per second on each key (a topic); 0: every message passes.

    A message passes when at least ``1/rate`` s have gone by since the last one that
    passed on its key; the others are dropped (the newest that passes is never stale
    by more than a gap).
    """

    def __init__(self, rate: float) -> None:
        if rate < 0:
            raise ValueError(f"rate = {rate!r}: must be >= 0")
        self.gap = 1.0 / rate if rate > 0 else 0.0
        self._next: dict[str, float] = {}
        #: Messages dropped per key.
        self.dropped: dict[str, int] = {}

    def allow(self, key: str, now: float) -> bool:
        """Whether a message on ``key`` at time ``now`` (s, any monotonic clock) passes."""
        if now < self._next.get(key, now):
            self.dropped[key] = self.dropped.get(key, 0) + 1
            return False
        self._next[key] = now + self.gap
        return True
