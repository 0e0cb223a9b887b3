"""Typed in-process connections between the parts of one process's graph.

Over ROS the parts of a graph meet on topics. In one process (the one-process runner)
some of them meet by call instead: the bridge's pins go straight to the simulator's
robot port and its sensor values straight back, joint states to the robot
description, radio lines both ways, the control loop's inputs and telemetry to the
recorder and the test session. A part names each such connection as a port:

* :class:`OutPort`: what the part hands on (its pins, the inputs it took), to every
  receiver connected; a part with no receiver publishes on its topic as over ROS;
* :class:`InPort`: what the part takes by call; connecting it to an out port ends the
  part's intake of the same from ROS (its subscription goes, so a late DDS copy cannot
  overwrite a newer value given by call).

Both are generic over the call's parameters (``OutPort[[Telemetry]]``), so a
connection of the wrong kind is a type error. This module never imports rclpy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, ParamSpec

P = ParamSpec("P")


class InPort(Generic[P]):
    """A part's intake by call.

    Args:
        receive: what the part does with each call.
        on_connect: called once, when the port is first connected: the part stops its
            ROS intake of the same (destroys the subscription).
    """

    def __init__(
        self, receive: Callable[P, object], *, on_connect: Callable[[], object] | None = None
    ) -> None:
        self._receive = receive
        self._on_connect = on_connect
        #: True once connected to an out port (the part takes this by call only).
        self.connected = False

    def connect(self) -> None:
        """The part takes this by call from now on (its ROS intake of it ends)."""
        if not self.connected:
            self.connected = True
            if self._on_connect is not None:
                self._on_connect()

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> None:
        """Take one call."""
        self._receive(*args, **kwargs)


class OutPort(Generic[P]):
    """What a part hands on by call, to every receiver connected (in the order connected)."""

    def __init__(self) -> None:
        self._receivers: list[Callable[P, object]] = []

    @property
    def connected(self) -> bool:
        """Whether anything receives by call (else the part publishes on ROS as usual)."""
        return bool(self._receivers)

    def connect(self, receiver: InPort[P] | Callable[P, object]) -> None:
        """Hand everything sent from now on to ``receiver`` too (an in port: see :meth:`InPort.connect`)."""
        if isinstance(receiver, InPort):
            receiver.connect()
        self._receivers.append(receiver)

    def disconnect(self, receiver: InPort[P] | Callable[P, object]) -> None:
        """Stop handing values to ``receiver`` (not connected: nothing)."""
        if receiver in self._receivers:
            self._receivers.remove(receiver)

    def send(self, *args: P.args, **kwargs: P.kwargs) -> None:
        """Call every receiver with these arguments."""
        for receiver in self._receivers:
            receiver(*args, **kwargs)
