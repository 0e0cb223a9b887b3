"""``swarm``: gather at the light, sharing each robot's bearing to it over the radio.

A robot's photoresistors see the light only within a few metres (below
``detect_level`` it is not there). Every ``share_period`` (staggered by robot id, so
half-duplex radios do not all talk in one step) a robot broadcasts the compass bearing
of the light and its confidence: its own, from its sensors (0 at ``detect_level``, 1 at
``sure_level``), or, when it sees nothing, the best a neighbour told it in the last
``fresh_s`` seconds, decayed by ``relay_decay`` (a gradient that fades with hops). It
steers by its own bearing when it is confident enough, else by the best neighbour's
compass bearing, else it waits: without the radio, robots that cannot see the light
never leave. It stops in the light's glow (``arrive_level``) and turns away from an
obstacle close ahead. Payload: ``<hB`` little-endian, bearing in tenths of a compass
degree (0..3599), confidence 0..255.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field

from robot_control.core.behaviours.base import Sensors
from robot_control.core.behaviours.light import PhotoresistorResponse
from robot_control.core.radio_port import RadioPort

PAYLOAD = struct.Struct("<hB")


def wrap(angle: float) -> float:
    """``angle`` (rad) in -pi..pi."""
    return (angle + math.pi) % (2 * math.pi) - math.pi


@dataclass
class Estimate:
    """A compass bearing of the light (degrees, clockwise) and how sure of it (0..1)."""

    bearing_deg: float
    confidence: float
    at: float


@dataclass
class SwarmBehaviour:
    """Steer by the best bearing to the light the robot has: its own or a neighbour's."""

    response: PhotoresistorResponse
    robot_id: int = 0
    detect_level: float = 80.0
    sure_level: float = 250.0
    arrive_level: float = 400.0
    use_own_above: float = 0.1
    share_period: float = 0.5
    stagger: float = 0.1
    fresh_s: float = 3.0
    relay_decay: float = 0.7
    forward_speed: float = 0.25
    turn_gain: float = 2.0
    max_turn: float = 2.0
    drive_within: float = math.radians(20.0)
    avoid_cm: float = 20.0
    name: str = "swarm"
    radio: RadioPort | None = None
    own: Estimate | None = field(default=None, init=False)
    neighbours: dict[int, Estimate] = field(default_factory=dict, init=False)
    _next_share: float | None = field(default=None, init=False)
    #: Packets from the radio that did not parse.
    bad_packets: int = field(default=0, init=False)

    def reset(self) -> None:
        """Forget what was seen and heard."""
        self.own = None
        self.neighbours = {}
        self._next_share = None

    def update(self, sensors: Sensors | None, now: float) -> tuple[float, float]:
        """Twist for the latest sensors and what the radio brought."""
        self._listen(now)
        if sensors is None:
            return 0.0, 0.0
        level = max(sensors.light)
        bearing = self.response.bearing(sensors.light) if level > self.detect_level else None
        confidence = min(1.0, (level - self.detect_level) / (self.sure_level - self.detect_level))
        self.own = None
        if bearing is not None:
            self.own = Estimate((sensors.heading_deg - math.degrees(bearing)) % 360.0, confidence, now)
        self._share(now)
        if level >= self.arrive_level:
            return 0.0, 0.0  # in the glow: here
        if sensors.bumped or sensors.ultrasonic_cm < self.avoid_cm:
            return 0.0, self.max_turn / 2  # something close ahead (a robot, a wall): turn away
        target = self._target(now)
        if target is None:
            return 0.0, 0.0  # nothing seen, nothing heard: wait
        heading = wrap(math.radians(sensors.heading_deg - target.bearing_deg))
        turn = max(-self.max_turn, min(self.max_turn, self.turn_gain * heading))
        return (self.forward_speed if abs(heading) < self.drive_within else 0.0), turn

    def best_heard(self, now: float) -> Estimate | None:
        """The most confident fresh estimate a neighbour sent."""
        fresh = [e for e in self.neighbours.values() if now - e.at <= self.fresh_s]
        return max(fresh, key=lambda e: e.confidence, default=None)

    def _best(self, now: float) -> Estimate | None:
        """The robot's own estimate, or a neighbour's (its confidence decayed) if that beats it."""
        heard = self.best_heard(now)
        if heard is None or (
            self.own is not None and heard.confidence * self.relay_decay <= self.own.confidence
        ):
            return self.own
        return Estimate(heard.bearing_deg, heard.confidence * self.relay_decay, now)

    def _target(self, now: float) -> Estimate | None:
        if self.own is not None and self.own.confidence >= self.use_own_above:
            return self.own
        return self._best(now)

    def _listen(self, now: float) -> None:
        if self.radio is None:
            return
        while self.radio.inbox:
            packet = self.radio.inbox.popleft()
            if len(packet.payload) != PAYLOAD.size:
                self.bad_packets += 1
                continue
            tenths, confidence = PAYLOAD.unpack(packet.payload)
            if not 0 <= tenths < 3600:
                self.bad_packets += 1
                continue
            self.neighbours[packet.src] = Estimate(tenths / 10.0, confidence / 255.0, now)

    def _share(self, now: float) -> None:
        if self.radio is None:
            return
        if self._next_share is None:
            self._next_share = now + (self.robot_id * self.stagger) % self.share_period
        if now < self._next_share:
            return
        self._next_share += self.share_period * max(
            1, math.ceil((now - self._next_share) / self.share_period)
        )
        estimate = self._best(now)
        if estimate is None or estimate.confidence <= 0.0:
            return
        tenths = round(estimate.bearing_deg * 10) % 3600
        self.radio.send(PAYLOAD.pack(tenths, round(estimate.confidence * 255)))
