"""Publish the raw traffic of a serial link, for recording (``hil/wire/<link>/<tx|rx>``).

The node that owns a link hands every write and every read to a :class:`WireTap`;
with nobody subscribed nothing is built. On a line link each line is one message
(a read that ends mid-line keeps the rest for the next read); on a frame link each
chunk is one message (a frame, normally).
"""

from __future__ import annotations

from builtin_interfaces.msg import Time
from rclpy.node import Node

from hil_common import qos
from hil_msgs.msg import WireChunk


class WireTap:
    """Both directions of one link, as WireChunk messages."""

    def __init__(self, node: Node, link: str, *, lines: bool) -> None:
        self.link = link
        self.lines = lines
        self._publishers = {
            direction: node.create_publisher(WireChunk, f"hil/wire/{link}/{direction}", qos.PUBLISHER)
            for direction in ("tx", "rx")
        }
        self._partial = {"tx": b"", "rx": b""}

    @property
    def listened(self) -> bool:
        """Whether anyone subscribes to either direction (else the caller need not stamp)."""
        return any(publisher.get_subscription_count() for publisher in self._publishers.values())

    def tx(self, data: bytes, stamp: Time) -> None:
        """Bytes written to the link at ``stamp``."""
        self._publish("tx", data, stamp)

    def rx(self, data: bytes, stamp: Time) -> None:
        """Bytes read from the link, arrived at ``stamp``."""
        self._publish("rx", data, stamp)

    def _publish(self, direction: str, data: bytes, stamp: Time) -> None:
        publisher = self._publishers[direction]
        if not data or not publisher.get_subscription_count():
            return
        pieces = [data]
        if self.lines:
            *pieces, self._partial[direction] = (self._partial[direction] + data).split(b"\n")
            pieces = [piece + b"\n" for piece in pieces]
        for piece in pieces:
            message = WireChunk(link=self.link, direction=direction, data=piece)
            message.header.stamp = stamp
            publisher.publish(message)
