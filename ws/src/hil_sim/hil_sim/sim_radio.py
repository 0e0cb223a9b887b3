"""The simulator's radio between robots: RTX lines in, RRX and RST lines out.

Each HIL robot's radio module sends its RTX line bodies on ``robot_<i>/hil/radio/tx``
and hears RRX (deliveries) and RST (its radio's state, on a change and at least every
:data:`RADIO_STATUS_PERIOD_S`) on ``robot_<i>/hil/radio/rx``; a module in the same
process (the one-process runner) takes them by call instead, through the simulator's
robot ports (:attr:`SimRadio.to_module`, :meth:`SimRadio.by_call`). The radio itself is
:mod:`hil_sim.core.radio`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from rclpy.node import Node

from hil_bridge.core.radio_protocol import RadioReceive, RadioSend, RadioStatus, decode_radio, encode_radio
from hil_bridge.errors import HilBridgeError
from hil_common import qos
from hil_common.core.param_spec import ParamValues
from hil_common.core.ports import OutPort
from hil_common.errors import HilError
from hil_msgs.msg import WireChunk
from hil_sim.core.radio import Radio, RadioConfig
from hil_sim.core.simulation import Simulation
from hil_sim.sim_topics import stamp_of

#: Simulated seconds between RST lines of an unchanged radio (DESIGN.md "Radio link": at least 1 s).
RADIO_STATUS_PERIOD_S = 0.5


class SimRadio:
    """The radio of a simulator node: its topics, its step, what the modules sent."""

    def __init__(
        self,
        node: Node,
        sim: Simulation,
        params: ParamValues,
        prefixes: list[str],
        *,
        hil_robots: int,
        lock: Any,
    ) -> None:
        config = RadioConfig(
            step=params.as_float("radio_step"),
            switch_steps=params.as_int("radio_switch_steps"),
            loss=params.as_float("radio_loss"),
            max_range=params.as_float("radio_range"),
        )
        self.node, self.sim, self.lock, self.hil_robots = node, sim, lock, hil_robots
        self.radio = Radio(config, sim.count, seed=params.as_int("seed"))
        #: RTX bodies from the radio modules that did not parse or could not be queued.
        self.errors = 0
        self._warned = False
        #: Per HIL robot: its radio module's lines by call (connected: not published).
        self.to_module: dict[int, OutPort[[str]]] = {}
        self._rx = [
            node.create_publisher(WireChunk, f"{prefix}hil/radio/rx", qos.PUBLISHER) for prefix in prefixes
        ]
        self._tx = {
            robot: node.create_subscription(
                WireChunk,
                f"{prefixes[robot]}hil/radio/tx",
                lambda m, i=robot: self.send(i, bytes(m.data).decode("ascii", "replace")),
                qos.COMMAND,
            )
            for robot in range(hil_robots)
        }
        self._status: list[RadioStatus | None] = [None] * hil_robots
        self._status_at = [-math.inf] * hil_robots

    def send(self, robot: int, body: str) -> None:
        """An RTX line body from robot ``robot``'s radio module: onto its radio's queue."""
        try:
            message = decode_radio(body)
            if not isinstance(message, RadioSend):
                raise HilBridgeError(f"id: {body[:3]!r} is not RTX")
            with self.lock:
                self.radio.send(robot, message.payload, message.dst)
        except HilError as exc:
            self.errors += 1
            if not self._warned:
                self._warned = True
                self.node.get_logger().warning(f"robot {robot}'s radio module: {exc} (counted; warned once)")

    def step(self) -> None:
        """Radio steps up to now: deliveries as RRX, each HIL robot's state as RST."""
        radio, sim = self.radio, self.sim
        if sim.time + 1e-9 < radio.now:
            return
        positions = np.stack([sim.x, sim.y], axis=1)
        for delivery in radio.step(sim.time, positions):
            if delivery.dst < self.hil_robots:
                line = RadioReceive(delivery.src, round(delivery.rssi), delivery.payload)
                self._to_module(delivery.dst, encode_radio(line))
        for robot in range(self.hil_robots):
            status = radio.status(robot)
            if status != self._status[robot] or sim.time - self._status_at[robot] >= RADIO_STATUS_PERIOD_S:
                self._status[robot], self._status_at[robot] = status, sim.time
                self._to_module(robot, encode_radio(status))

    def _to_module(self, robot: int, body: str) -> None:
        port = self.to_module.get(robot)
        if port is not None and port.connected:
            port.send(body)
            return
        chunk = WireChunk(link="radio", direction="rx", data=body.encode("ascii"))
        chunk.header.stamp = stamp_of(self.sim.time)
        self._rx[robot].publish(chunk)

    def by_call(self, robot: int) -> None:
        """Robot ``robot``'s radio module sends its RTX bodies by call (:meth:`send`): no subscription."""
        subscription = self._tx.pop(robot, None)
        if subscription is not None:
            self.node.destroy_subscription(subscription)
