"""What the live view (``live_view``) decides without ROS or the Foxglove SDK: its address, its pace.

The live view serves the graph's topics over the Foxglove WebSocket protocol
(:mod:`hil_bringup.live_view_node`); here are the pieces of it that are plain
Python: the URL an app connects to (:func:`live_url`) and the per-topic pace
(:class:`RateGate`) that keeps a fast lockstep run from flooding a viewer.
"""

from __future__ import annotations

from hil_common.core.loop_timing import RateLimit

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
    """At most ``rate`` messages a second on each key (a topic), on average; 0: every message.

    One :class:`~hil_common.core.loop_timing.RateLimit` per key; the rest are dropped
    and counted.
    """

    def __init__(self, rate: float) -> None:
        RateLimit(rate)  # checks it
        self.rate = rate
        self._limits: dict[str, RateLimit] = {}
        #: Messages dropped per key.
        self.dropped: dict[str, int] = {}

    def allow(self, key: str, now: float) -> bool:
        """Whether a message on ``key`` at time ``now`` (s, any monotonic clock) passes."""
        limit = self._limits.get(key)
        if limit is None:
            limit = self._limits[key] = RateLimit(self.rate)
        if limit.allow(now):
            return True
        self.dropped[key] = self.dropped.get(key, 0) + 1
        return False
