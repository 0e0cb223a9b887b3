"""The swarm behaviour: own bearing, neighbours' bearings over the radio, waiting, sharing."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest

from hil_devices.core.library import load_device_library
from robot_control.core.behaviours import PhotoresistorResponse, Sensors, SwarmBehaviour
from robot_control.core.behaviours.swarm import PAYLOAD
from robot_control.core.radio_port import Heard, RadioPort

SRC = Path(__file__).resolve().parents[2]
RESPONSE = PhotoresistorResponse.from_table(
    load_device_library([SRC / "hil_devices" / "config" / "devices"])["photoresistor"].table
)


def sensors(
    light: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0), heading: float = 90.0
) -> Sensors:
    return Sensors(
        ultrasonic_cm=200.0,
        ir_adc=0.0,
        light=light,
        bumper_left=False,
        bumper_right=False,
        heading_deg=heading,
    )


def swarm(robot_id: int = 0) -> tuple[SwarmBehaviour, RadioPort]:
    behaviour = SwarmBehaviour(RESPONSE, robot_id=robot_id)
    behaviour.radio = RadioPort()
    return behaviour, behaviour.radio


def hear(radio: RadioPort, src: int, bearing_deg: float, confidence: float, at: float) -> None:
    payload = PAYLOAD.pack(round(bearing_deg * 10) % 3600, round(confidence * 255))
    radio.inbox.append(Heard(src, -60, payload, at))


def test_a_robot_that_sees_nothing_and_hears_nothing_waits() -> None:
    behaviour, radio = swarm()
    for k in range(60):
        assert behaviour.update(sensors(), k / 30) == (0.0, 0.0)
    assert radio.take_outbox() == []  # nothing to share


def test_a_robot_that_sees_the_light_drives_at_it_and_shares_its_compass_bearing() -> None:
    behaviour, radio = swarm()
    linear, angular = behaviour.update(sensors((300.0, 0.0, 0.0, 0.0), heading=90.0), 0.0)
    assert linear > 0 and abs(angular) < 0.1  # straight ahead
    (line,) = radio.take_outbox()
    tenths, confidence = PAYLOAD.unpack(bytes.fromhex(line.body.split(",")[2]))
    assert tenths == 900 and confidence == 255  # the light is where the robot heads: east, sure


def test_a_blind_robot_steers_by_the_best_bearing_a_neighbour_sent() -> None:
    behaviour, _ = swarm()
    hear(behaviour.radio, 3, bearing_deg=90.0, confidence=0.9, at=0.0)  # type: ignore[arg-type]
    hear(behaviour.radio, 4, bearing_deg=270.0, confidence=0.2, at=0.0)  # type: ignore[arg-type]
    linear, angular = behaviour.update(sensors(heading=0.0), 0.1)  # facing north, light east
    assert linear == 0.0 and angular < 0  # turns clockwise, toward east
    linear, angular = behaviour.update(sensors(heading=90.0), 0.2)
    assert linear > 0 and abs(angular) < 0.1


def test_a_neighbours_bearing_goes_stale_and_the_robot_waits_again() -> None:
    behaviour, _ = swarm()
    hear(behaviour.radio, 3, bearing_deg=90.0, confidence=0.9, at=0.0)  # type: ignore[arg-type]
    assert behaviour.update(sensors(heading=90.0), 0.1)[0] > 0
    # The radio went quiet (lost): after fresh_s the robot no longer moves on old news.
    assert behaviour.update(sensors(heading=90.0), 0.1 + behaviour.fresh_s + 0.1) == (0.0, 0.0)


def test_a_blind_robot_relays_what_it_heard_with_less_confidence() -> None:
    behaviour, radio = swarm()
    hear(radio, 3, bearing_deg=45.0, confidence=1.0, at=0.0)
    behaviour.update(sensors(), 0.0)
    (line,) = radio.take_outbox()
    tenths, confidence = PAYLOAD.unpack(bytes.fromhex(line.body.split(",")[2]))
    assert tenths == 450 and confidence == pytest.approx(255 * behaviour.relay_decay, abs=1)


@pytest.mark.parametrize("robot_id", [0, 1, 4])
def test_robots_share_in_staggered_slots(robot_id: int) -> None:
    behaviour, radio = swarm(robot_id)
    sent_at = []
    for k in range(90):
        now = k / 30
        behaviour.update(sensors((300.0, 0.0, 0.0, 0.0)), now)
        if radio.take_outbox():
            sent_at.append(now)
    assert sent_at[0] == pytest.approx((robot_id * behaviour.stagger) % behaviour.share_period, abs=1 / 30)
    gaps = [b - a for a, b in itertools.pairwise(sent_at)]
    assert all(math.isclose(g, behaviour.share_period, abs_tol=1 / 30 + 1e-9) for g in gaps)


def test_a_packet_that_is_not_a_bearing_is_counted_and_ignored() -> None:
    behaviour, radio = swarm()
    radio.inbox.append(Heard(2, -50, b"\x01", 0.0))
    radio.inbox.append(Heard(2, -50, PAYLOAD.pack(5000, 10), 0.0))
    assert behaviour.update(sensors(), 0.0) == (0.0, 0.0)
    assert behaviour.bad_packets == 2
