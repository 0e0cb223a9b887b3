"""Radio between robots: an ESP8266-like half-duplex module on every robot.

Time runs in radio steps ``k`` at ``t = k * step`` (default 20 ms). Every module is in
one direction, listening (the rest state) or sending, and a change of direction takes
``switch_steps`` whole radio steps (default 2) in which the module neither sends nor
receives. Each step has three phases, in this order:

1. Switch: a listening module with packets queued and no copies waiting for it (see
   3) starts switching to send; it sends from step ``k + switch_steps``. So a packet
   queued while a module listens (right after it received, or after a quiet spell)
   leaves ``switch_steps`` steps late; one with copies waiting hears them first and
   starts switching a step later.
2. Send: every sending module puts one packet on the air, taking its destinations
   (each robot, and broadcast as one more) round robin. If its queue is then empty,
   or packets are waiting for it, it starts switching back: it listens again from
   step ``k + 1 + switch_steps``. A module that keeps having packets and hears nothing
   sends one per step.
3. Air and receive: a copy goes to every robot within ``max_range`` (broadcast; never
   to the sender) or to the addressed robot; an addressed one out of range is
   ``lost_range`` (for broadcast, robots out of range are not addressees and are not
   counted). A copy in range is lost (``lost_random``) with probability ``loss``,
   rising linearly to 1 over the outer ``edge_fraction`` of the range. Its RSSI is a
   log-distance path loss, ``tx_power_dbm - path_loss_db - 10 n log10(d / 1 m)``
   (``d`` at least :data:`MIN_DISTANCE`) plus Gaussian shadowing. A listening module
   gets its copies in the step they were sent (``delivered_at`` is that step's time);
   a module that is sending or switching keeps them in its receive buffer and gets
   them at its first listening step, counted ``late``. A full buffer drops the copy
   (``rx_overflow``).

A module that always has packets queued and hears others thus cycles: switch, send
(until a copy waits for it), switch, hear. Two such modules in range send two
packets each per ``2 * switch_steps + 3`` steps (each sends again in the step after
its first, as the other's copy of that first step only then waits for it).

``sent_at`` is the time of the first radio step after :meth:`Radio.send` (when the
packet could first have left). Counters per robot: ``queued``, ``queue_overflow`` (the
send queue was full: :meth:`Radio.send` returned False) and ``sent`` at the sender;
``delivered``, ``late``, ``lost_range``, ``lost_random`` and ``rx_overflow`` at the
receiver. Randomness (loss, shadowing) comes from one generator seeded with
``SeedSequence(seed, spawn_key=(RADIO_STREAM,))``, apart from the sensors' streams, so
a run repeats from its seed and its sends.

The radio module's line messages to and from its MCU (DESIGN.md "Radio link") are
written and read by :mod:`hil_bridge.core.radio_protocol` (re-exported here).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

# The radio link's lines are written and read by one codec, shared with the MCUs and
# the robot side; these names stay importable from here.
from hil_bridge.core.radio_protocol import (
    MAX_PAYLOAD,
    STATES,
    RadioMessage,
    RadioReceive,
    RadioSend,
    RadioStatus,
    decode_radio,
    encode_radio,
)

__all__ = [
    "MAX_PAYLOAD",
    "STATES",
    "Delivery",
    "Radio",
    "RadioConfig",
    "RadioMessage",
    "RadioReceive",
    "RadioSend",
    "RadioStatus",
    "decode_radio",
    "encode_radio",
]
from hil_sim.errors import HilSimError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Spawn key of the radio's random stream (sensor noise uses ``(seed, robot)``).
RADIO_STREAM = 0x52_41_44_49
#: Distances below this (m) count as this in the path loss (no infinite RSSI).
MIN_DISTANCE = 0.1
#: Send-queue key of broadcast packets.
_BROADCAST = -1
#: Tick rounding: times such as 0.06 / 0.02 land a hair below the integer.
_TICK_SLACK = 1e-6
_COUNTERS = (
    "queued",
    "queue_overflow",
    "sent",
    "delivered",
    "late",
    "lost_range",
    "lost_random",
    "rx_overflow",
)


def _check_number(
    name: str,
    value: float,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    above: bool = False,
) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok and minimum is not None:
        ok = value > minimum if above else value >= minimum
    if ok and maximum is not None:
        ok = value <= maximum
    if not ok:
        low = "" if minimum is None else f" {'>' if above else '>='} {minimum:g}"
        high = "" if maximum is None else f" <= {maximum:g}"
        raise HilSimError(f"RadioConfig.{name}: expected a finite number{low}{high}, got {value!r}")


def _check_integer(name: str, value: int, *, minimum: int, maximum: int | None = None) -> None:
    if (
        not isinstance(value, int)
        or isinstance(value, bool)
        or value < minimum
        or (maximum is not None and value > maximum)
    ):
        high = "" if maximum is None else f" and <= {maximum}"
        raise HilSimError(f"RadioConfig.{name}: expected an integer >= {minimum}{high}, got {value!r}")


@dataclass(frozen=True)
class RadioConfig:
    """Radio model parameters (see the module docstring); checked on creation.

    Raises:
        HilSimError: naming the bad field.
    """

    step: float = 0.02
    switch_steps: int = 2
    loss: float = 0.04
    max_range: float = 3.0
    edge_fraction: float = 0.2
    tx_power_dbm: float = 20.0
    path_loss_db: float = 40.0
    path_loss_exponent: float = 3.0
    shadowing_db: float = 2.0
    tx_queue: int = 16
    rx_queue: int = 64
    max_payload: int = MAX_PAYLOAD

    def __post_init__(self) -> None:
        _check_number("step", self.step, minimum=0.0, above=True)
        _check_integer("switch_steps", self.switch_steps, minimum=0)
        _check_number("loss", self.loss, minimum=0.0, maximum=1.0)
        _check_number("max_range", self.max_range, minimum=0.0, above=True)
        _check_number("edge_fraction", self.edge_fraction, minimum=0.0, maximum=1.0)
        _check_number("tx_power_dbm", self.tx_power_dbm)
        _check_number("path_loss_db", self.path_loss_db, minimum=0.0)
        _check_number("path_loss_exponent", self.path_loss_exponent, minimum=0.0, above=True)
        _check_number("shadowing_db", self.shadowing_db, minimum=0.0)
        _check_integer("tx_queue", self.tx_queue, minimum=1)
        _check_integer("rx_queue", self.rx_queue, minimum=1)
        _check_integer("max_payload", self.max_payload, minimum=1, maximum=MAX_PAYLOAD)


class Delivery(NamedTuple):
    """A packet handed to robot ``dst``'s MCU (times in seconds, RSSI in dBm)."""

    dst: int
    src: int
    payload: bytes
    sent_at: float
    delivered_at: float
    rssi: float


class Air(NamedTuple):
    """Copies of one step's transmissions, in transmission order."""

    #: Index of the transmission, receiver and RSSI of each copy that reached its receiver.
    tx: IntArray
    dst: IntArray
    rssi: FloatArray
    #: Receivers of copies lost on the way (loss draw), and of addressed packets out of range.
    lost_random: IntArray
    lost_range: IntArray


class Radio:
    """The radio modules of ``robots`` robots (see the module docstring for the rules).

    Args:
        config: the model's parameters.
        robots: number of robots, ids 0..robots-1.
        seed: seed of the loss and shadowing draws.

    Raises:
        HilSimError: ``robots`` is not a positive integer.
    """

    def __init__(self, config: RadioConfig, robots: int, *, seed: int = 0) -> None:
        if not isinstance(robots, int) or isinstance(robots, bool) or robots < 1:
            raise HilSimError(f"robots: expected an integer >= 1, got {robots!r}")
        self.config = config
        self.robots = robots
        self._rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(RADIO_STREAM,)))
        self._next_tick = 0
        #: True: sending (or switching to it); False: listening (or switching to it).
        self._sending = np.zeros(robots, dtype=bool)
        #: First step at which the module works in its direction (a switch ends).
        self._ready = np.zeros(robots, dtype=np.int64)
        self._queued = np.zeros(robots, dtype=np.int64)
        self._queues: list[dict[int, deque[tuple[bytes, float]]]] = [{} for _ in range(robots)]
        #: Destinations with packets queued, in serving order (round robin).
        self._turns: list[deque[int]] = [deque() for _ in range(robots)]
        self._inbox: list[list[tuple[int, bytes, float, float]]] = [[] for _ in range(robots)]
        self._held = np.zeros(robots, dtype=np.int64)
        self.counters: dict[str, IntArray] = {name: np.zeros(robots, dtype=np.int64) for name in _COUNTERS}

    @property
    def now(self) -> float:
        """Time of the next radio step (the ``sent_at`` of a packet sent now)."""
        return self._next_tick * self.config.step

    def send(self, src: int, payload: bytes, dst: int | None = None) -> bool:
        """Queue ``payload`` at robot ``src``'s radio for ``dst`` (None: broadcast).

        Returns:
            False when the send queue was full (counted ``queue_overflow``).

        Raises:
            HilSimError: bad ``src``, ``dst`` (out of range or ``src`` itself) or ``payload``.
        """
        self._check_robot("src", src)
        if dst is not None:
            self._check_robot("dst", dst)
            if dst == src:
                raise HilSimError(f"dst: robot {src} cannot send to itself")
        if not isinstance(payload, (bytes, bytearray)) or not 1 <= len(payload) <= self.config.max_payload:
            raise HilSimError(f"payload: expected 1..{self.config.max_payload} bytes, got {payload!r:.60}")
        if self._queued[src] >= self.config.tx_queue:
            self.counters["queue_overflow"][src] += 1
            return False
        key = _BROADCAST if dst is None else dst
        queue = self._queues[src].setdefault(key, deque())
        if not queue:
            self._turns[src].append(key)
        queue.append((bytes(payload), self.now))
        self._queued[src] += 1
        self.counters["queued"][src] += 1
        return True

    def step(self, now: float, positions: npt.ArrayLike) -> list[Delivery]:
        """Run every radio step up to ``now`` (s) with the robots at ``positions`` (N, 2) in m.

        Returns:
            The packets delivered in those steps, in step order.

        Raises:
            HilSimError: ``now`` is not finite or before the last step run; bad ``positions``.
        """
        if not isinstance(now, (int, float)) or not math.isfinite(now):
            raise HilSimError(f"now: expected a finite time in seconds, got {now!r}")
        last = math.floor(now / self.config.step + _TICK_SLACK)
        if last < self._next_tick - 1:
            raise HilSimError(f"now: {now} s is before the last radio step ({self.now - self.config.step} s)")
        pos = np.asarray(positions, dtype=np.float64)
        if pos.shape != (self.robots, 2) or not np.isfinite(pos).all():
            raise HilSimError(f"positions: expected ({self.robots}, 2) finite metres, got shape {pos.shape}")
        out: list[Delivery] = []
        while self._next_tick <= last:
            self._tick(self._next_tick, pos, out)
            self._next_tick += 1
        return out

    def status(self, robot: int) -> RadioStatus:
        """What robot ``robot``'s radio reports in ``RST`` before the next step."""
        self._check_robot("robot", robot)
        if self._ready[robot] > self._next_tick:
            state = "SWITCH"
        else:
            state = "SEND" if self._sending[robot] else "LISTEN"
        free = self.config.tx_queue - int(self._queued[robot])
        return RadioStatus(state, free, int(self.counters["queue_overflow"][robot]))

    def stats(self) -> dict[str, object]:
        """Counters in total and per robot, and packets still waiting to be sent or heard."""
        return {
            "time": self.now,
            "total": {name: int(values.sum()) for name, values in self.counters.items()},
            "per_robot": {name: values.tolist() for name, values in self.counters.items()},
            "waiting_to_send": int(self._queued.sum()),
            "waiting_to_receive": int(self._held.sum()),
        }

    def _check_robot(self, name: str, robot: int) -> None:
        if (
            not isinstance(robot, (int, np.integer))
            or isinstance(robot, bool)
            or not 0 <= robot < self.robots
        ):
            raise HilSimError(f"{name}: expected a robot id 0..{self.robots - 1}, got {robot!r}")

    def _tick(self, k: int, pos: FloatArray, out: list[Delivery]) -> None:
        switch = self.config.switch_steps
        listening = ~self._sending & (self._ready <= k)
        starting = listening & (self._queued > 0) & (self._held == 0)
        self._sending[starting] = True
        self._ready[starting] = k + switch

        senders = np.flatnonzero(self._sending & (self._ready <= k) & (self._queued > 0))
        tx_src: list[int] = senders.tolist()
        tx_dst: list[int] = []
        tx_packet: list[tuple[bytes, float]] = []
        for src in tx_src:
            turns = self._turns[src]
            key = turns.popleft()
            queue = self._queues[src][key]
            tx_packet.append(queue.popleft())
            tx_dst.append(key)
            if queue:
                turns.append(key)
            self._queued[src] -= 1
            if not self._queued[src] or self._held[src]:
                self._sending[src] = False
                self._ready[src] = k + 1 + switch
        self.counters["sent"][senders] += 1

        listening = ~self._sending & (self._ready <= k)
        t = k * self.config.step
        hearing = np.flatnonzero(listening & (self._held > 0))
        for robot in hearing.tolist():
            inbox = self._inbox[robot]
            out.extend(Delivery(robot, src, data, sent_at, t, rssi) for src, data, sent_at, rssi in inbox)
            inbox.clear()
        # Everything held was sent in an earlier step: late by definition.
        self.counters["delivered"][hearing] += self._held[hearing]
        self.counters["late"][hearing] += self._held[hearing]
        self._held[hearing] = 0
        if not tx_src:
            return
        air = self._air(senders, np.array(tx_dst, dtype=np.int64), pos)
        n = self.robots
        self.counters["lost_range"] += np.bincount(air.lost_range, minlength=n)
        self.counters["lost_random"] += np.bincount(air.lost_random, minlength=n)
        now = listening[air.dst]
        self.counters["delivered"] += np.bincount(air.dst[now], minlength=n)
        for index, dst, rssi, heard in zip(
            air.tx.tolist(), air.dst.tolist(), air.rssi.tolist(), now.tolist(), strict=True
        ):
            data, sent_at = tx_packet[index]
            if heard:
                out.append(Delivery(dst, tx_src[index], data, sent_at, t, rssi))
            elif self._held[dst] < self.config.rx_queue:
                self._inbox[dst].append((tx_src[index], data, sent_at, rssi))
                self._held[dst] += 1
            else:
                self.counters["rx_overflow"][dst] += 1

    def _air(self, src: IntArray, dst: IntArray, pos: FloatArray) -> Air:
        """Range, loss and RSSI of this step's transmissions (``dst`` -1: broadcast)."""
        c = self.config
        rows = np.arange(len(src))
        distance = np.hypot(pos[src, 0, None] - pos[None, :, 0], pos[src, 1, None] - pos[None, :, 1])
        addressed = dst >= 0
        wanted = np.broadcast_to(~addressed[:, None], distance.shape).copy()
        wanted[rows[addressed], dst[addressed]] = True
        wanted[rows, src] = False
        reach = distance <= c.max_range
        out_of_range = dst[addressed & ~reach[rows, np.maximum(dst, 0)]]
        tx, receiver = np.nonzero(wanted & reach)
        d = distance[tx, receiver]
        draws = self._rng.random(len(d))
        lost = draws < self._loss_probability(d)
        rssi = (
            c.tx_power_dbm
            - c.path_loss_db
            - 10.0 * c.path_loss_exponent * np.log10(np.maximum(d, MIN_DISTANCE))
        )
        if c.shadowing_db > 0:
            rssi += c.shadowing_db * self._rng.standard_normal(len(d))
        kept = ~lost
        return Air(tx[kept], receiver[kept], rssi[kept], receiver[lost], out_of_range)

    def _loss_probability(self, distance: FloatArray) -> FloatArray:
        """``loss`` inside, rising linearly to 1 over the outer ``edge_fraction`` of the range."""
        c = self.config
        if c.edge_fraction == 0:
            return np.full(distance.shape, c.loss)
        edge = c.max_range * (1.0 - c.edge_fraction)
        ramp = np.clip((distance - edge) / (c.max_range - edge), 0.0, 1.0)
        return c.loss + (1.0 - c.loss) * ramp
