"""Behaviours as pure functions over sensor sequences, reading sensors from TL2 only."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hil_bridge.core.line_protocol import LineDecoder, LineEncoder, Telemetry
from hil_devices.core.telemetry import TelemetrySchema
from hil_sim.core.sensors import PhotoresistorModel
from robot_control.core.behaviours import (
    BEHAVIOURS,
    BoardsBehaviour,
    LightBehaviour,
    PhotoresistorResponse,
    Sensors,
    SwarmBehaviour,
)
from robot_control.core.behaviours.boards import heading_error
from robot_control.errors import RobotControlError

SRC = Path(__file__).resolve().parents[2]
SCHEMA = TelemetrySchema.from_yaml(SRC / "hil_devices" / "config" / "telemetry.yaml")
TABLE: dict[str, Any] = json.loads(
    (SRC / "hil_devices" / "config" / "devices" / "photoresistor.json").read_text()
)["table"]
MODEL = PhotoresistorModel.from_table(TABLE)
RESPONSE = PhotoresistorResponse.from_table(TABLE)
MOUNTS = np.radians([0.0, 90.0, 180.0, 270.0])
MAST_RADIUS = 0.01
REFERENCE_DISTANCE = 0.5
FRAME = 1 / 30


def tl2(values: dict[str, float]) -> Telemetry:
    """A TL2 line as the MCU writes it, decoded with the shipped schema."""
    names = SCHEMA.lists["TL2"]
    line = LineEncoder().encode(Telemetry("TL2", names, tuple(values[name] for name in names)))
    [message] = LineDecoder(schema=SCHEMA).feed(line)
    assert isinstance(message, Telemetry)
    return message


def sensors(
    *,
    ultrasonic_cm: float = 200.0,
    light: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0),
    bumper_left: bool = False,
    bumper_right: bool = False,
    heading_deg: float = 90.0,
    odometer_m: float = 0.0,
) -> Sensors:
    """Sensors as the behaviours get them: through a TL2 line and ``Sensors.from_telemetry``."""
    message = tl2(
        {
            "ultrasonic_cm": ultrasonic_cm,
            "ir_adc": 300,
            "light_0": light[0],
            "light_1": light[1],
            "light_2": light[2],
            "light_3": light[3],
            "bumper_left": int(bumper_left),
            "bumper_right": int(bumper_right),
            "heading_deg": heading_deg,
        }
    )
    return Sensors.from_telemetry(
        dict(zip(message.names, message.values, strict=True)), odometer_m=odometer_m
    )


def light_readings(bearing: float, distance: float) -> tuple[float, float, float, float]:
    """Noise-free readings of the four sensors on the mast for a light at (bearing, distance)."""
    sensor_x, sensor_y = MAST_RADIUS * np.cos(MOUNTS), MAST_RADIUS * np.sin(MOUNTS)
    to_x, to_y = distance * math.cos(bearing) - sensor_x, distance * math.sin(bearing) - sensor_y
    readings = MODEL.reading(np.hypot(to_x, to_y), np.arctan2(to_y, to_x) - MOUNTS, REFERENCE_DISTANCE)
    return (float(readings[0]), float(readings[1]), float(readings[2]), float(readings[3]))


def angle_error(a: float, b: float) -> float:
    return abs((a - b + math.pi) % (2 * math.pi) - math.pi)


def times(first: float, seconds: float) -> Iterator[float]:
    return (first + k * FRAME for k in range(round(seconds / FRAME)))


# --- Sensors from TL2 ---------------------------------------------------------------------


def test_sensors_come_from_a_tl2_line_of_the_shipped_schema() -> None:
    message = LineDecoder(schema=SCHEMA).feed(b"TL2123.5,300,10,20,30,40,1,0,270\n")[0]
    assert isinstance(message, Telemetry)
    assert message.raw == "TL2123.5,300,10,20,30,40,1,0,270"
    got = Sensors.from_telemetry(dict(zip(message.names, message.values, strict=True)))
    assert got == Sensors(
        ultrasonic_cm=123.5,
        ir_adc=300.0,
        light=(10.0, 20.0, 30.0, 40.0),
        bumper_left=True,
        bumper_right=False,
        heading_deg=270.0,
    )
    assert got.bumped


def test_tl2_missing_a_needed_field_is_a_clear_error_naming_it() -> None:
    names = tuple(name for name in SCHEMA.lists["TL2"] if name not in ("heading_deg", "light_2"))
    schema = TelemetrySchema({"TL2": names})
    [message] = LineDecoder(schema=schema).feed(b"TL2" + b",".join(b"1" for _ in names) + b"\n")
    assert isinstance(message, Telemetry)
    with pytest.raises(RobotControlError, match="heading_deg") as caught:
        Sensors.from_telemetry(dict(zip(message.names, message.values, strict=True)))
    assert "light_2" in str(caught.value)
    assert "TL2" in str(caught.value)


def test_behaviour_names_are_the_documented_ones() -> None:
    assert BEHAVIOURS == ("boards", "light", "swarm")
    assert BoardsBehaviour().name == "boards"
    assert LightBehaviour(RESPONSE).name == "light"
    assert SwarmBehaviour(RESPONSE).name == "swarm"


# --- boards ---------------------------------------------------------------------------------


@pytest.mark.parametrize("behaviour", [BoardsBehaviour(), LightBehaviour(RESPONSE)], ids=lambda b: b.name)
def test_behaviour_stands_still_before_the_first_report(behaviour: Any) -> None:
    assert behaviour.update(None, 0.0) == (0.0, 0.0)


@dataclass
class Thing:
    """A round obstacle of the test world; a board falls when the robot touches it."""

    x: float
    y: float
    radius: float
    falls: bool = True
    #: Seen by the ranger but out of the bumpers' reach (a shelf, a table's edge).
    overhead: bool = False
    down: bool = False
    hits: int = 0


@dataclass
class World:
    """An ideal robot among round things: twists are obeyed exactly, the ranger sees the
    nearest surface within its cone, a bumper closes on contact. Compass headings are
    clockwise from north (+y), as the robot's compass reports them."""

    things: list[Thing]
    x: float = 0.0
    y: float = 0.0
    heading: float = 90.0
    robot_radius: float = 0.08
    cone_deg: float = 15.0
    max_cm: float = 200.0
    touching: Thing | None = None
    #: Metres driven (forward positive), as the loop's odometer reports them.
    odometer: float = 0.0
    #: The odometer counts ``odometer_scale`` of what the wheels drive (a wrong top speed).
    odometer_scale: float = 1.0

    def sensors(self) -> Sensors:
        nearest = self.max_cm
        for thing in self.things:
            if thing.down:
                continue
            dx, dy = thing.x - self.x, thing.y - self.y
            bearing = math.degrees(math.atan2(dx, dy)) % 360.0
            distance = math.hypot(dx, dy)
            half_width = self.cone_deg + math.degrees(thing.radius / distance)
            if abs(heading_error(bearing, self.heading)) <= half_width:
                nearest = min(nearest, 100 * (distance - thing.radius - self.robot_radius))
        bumped = self.touching is not None
        return sensors(
            ultrasonic_cm=max(nearest, 2.0),
            bumper_left=bumped,
            heading_deg=self.heading,
            odometer_m=self.odometer,
        )

    def move(self, twist: tuple[float, float], dt: float) -> None:
        linear, angular = twist
        self.odometer += linear * dt * self.odometer_scale
        self.heading = (self.heading - math.degrees(angular * dt)) % 360.0
        self.x += linear * dt * math.sin(math.radians(self.heading))
        self.y += linear * dt * math.cos(math.radians(self.heading))
        self.touching = None
        for thing in self.things:
            reach = thing.radius + self.robot_radius
            if not (thing.down or thing.overhead) and math.hypot(thing.x - self.x, thing.y - self.y) < reach:
                thing.hits += 1
                self.touching = thing
                if thing.falls:
                    thing.down = True
                else:  # pushed back out of the fixed thing
                    self.x -= linear * dt * math.sin(math.radians(self.heading))
                    self.y -= linear * dt * math.cos(math.radians(self.heading))

    def run(self, boards: BoardsBehaviour, seconds: float, start: float = 0.0) -> list[tuple[float, float]]:
        twists = []
        for now in times(start, seconds):
            twist = boards.update(self.sensors(), now)
            twists.append(twist)
            self.move(twist, FRAME)
        return twists


def ring(count: int = 6, radius: float = 0.6) -> list[Thing]:
    return [
        Thing(radius * math.cos(2 * math.pi * k / count), radius * math.sin(2 * math.pi * k / count), 0.05)
        for k in range(count)
    ]


def test_boards_knocks_down_a_ring_of_boards_and_ends_at_home() -> None:
    box = Thing(1.2, -1.1, 0.2, falls=False)
    world = World([*ring(), box])
    world.run(BoardsBehaviour(), 60.0)
    assert all(thing.down for thing in world.things[:6])
    assert math.hypot(world.x, world.y) < 0.05  # every trip comes back to where it began
    # The box, hit and still there after the trip, is not charged again within block_s.
    assert box.hits <= 1


@pytest.mark.parametrize("start_heading", [0.0, 90.0, 200.0, 359.0])
def test_boards_scans_all_round_before_it_charges_anything(start_heading: float) -> None:
    world = World(ring(), heading=start_heading)
    boards = BoardsBehaviour()
    twists = world.run(boards, 380 / math.degrees(1.5) - 2 * FRAME)
    assert set(twists) == {(0.0, 1.5)}  # a spin to the left, even with boards in range
    assert not any(thing.down for thing in world.things)


def test_boards_aims_at_the_middle_of_the_headings_an_echo_was_seen_at() -> None:
    world = World([Thing(0.6 * math.sin(math.radians(300.0)), 0.6 * math.cos(math.radians(300.0)), 0.05)])
    boards = BoardsBehaviour()
    for now in times(0.0, 8.0):
        twist = boards.update(world.sensors(), now)
        if twist[0] > 0:
            break
        world.move(twist, FRAME)
    assert boards.mode == "charge"
    assert abs(heading_error(world.heading, 300.0)) <= boards.aim_deg


def test_boards_comes_back_along_its_heading_for_as_long_as_it_charged() -> None:
    world = World([Thing(0.0, 1.0, 0.05)], heading=0.0)  # one board due north
    boards = BoardsBehaviour()
    twists = world.run(boards, 12.0)
    charge = [k for k, (linear, _) in enumerate(twists) if linear > 0]
    back = [k for k, (linear, _) in enumerate(twists) if linear < 0]
    assert world.things[0].down
    assert abs(len(back) - len(charge)) <= 1  # the same speed both ways
    assert back[0] == charge[-1] + 1


def test_boards_leaves_alone_what_it_hit_and_is_still_there_for_block_s() -> None:
    wall = Thing(0.0, 1.0, 0.1, falls=False)
    world = World([wall], heading=0.0)
    boards = BoardsBehaviour()
    world.run(boards, boards.block_s)
    assert wall.hits == 1
    world.run(boards, 20.0, start=boards.block_s)
    assert wall.hits == 2  # tried again once the block ran out


def test_boards_blocks_an_echo_it_missed_three_times() -> None:
    world = World([Thing(0.0, 1.0, 0.05, overhead=True)], heading=0.0)
    boards = BoardsBehaviour()
    twists = world.run(boards, 50.0)
    trips = sum(1 for k in range(1, len(twists)) if twists[k][0] > 0 >= twists[k - 1][0])
    assert trips == boards.misses
    assert math.hypot(world.x, world.y) < 0.05


def test_boards_bumped_while_scanning_backs_off_then_scans_again() -> None:
    boards = BoardsBehaviour()
    boards.update(sensors(), 0.0)
    assert boards.update(sensors(bumper_right=True), 0.5) == (-0.2, 0.0)
    assert boards.update(sensors(), 2.4) == (-0.2, 0.0)
    assert boards.update(sensors(), 2.6) == (0.0, 1.5)
    assert boards.mode == "scan"


def test_boards_bumper_held_keeps_backing_off() -> None:
    boards = BoardsBehaviour()
    held = sensors(ultrasonic_cm=3.0, bumper_right=True)
    assert all(boards.update(held, now) == (-0.2, 0.0) for now in times(0.0, 6.0))


def spinning(boards: BoardsBehaviour, start: float, seconds: float, *, deg_per_frame: float = 3.0) -> list:
    """Feed a spin with nothing in range: the compass turns ``deg_per_frame`` each frame."""
    return [
        boards.update(sensors(ultrasonic_cm=200.0, heading_deg=(90.0 + k * deg_per_frame) % 360.0), now)
        for k, now in enumerate(times(start, seconds))
    ]


@pytest.mark.parametrize("deg_per_frame", [3.0, -3.0, 0.0])
def test_boards_counts_the_scan_by_the_compass_either_way(deg_per_frame: float) -> None:
    boards = BoardsBehaviour()
    spinning(boards, 0.0, (380 / 3 + 2) * FRAME, deg_per_frame=deg_per_frame)
    # A robot that does not turn (wheels blocked) has not looked round: it is still on its first scan.
    assert (len(boards._samples) < 3) is (deg_per_frame != 0.0)


def test_boards_compass_noise_does_not_end_a_scan_early() -> None:
    boards = BoardsBehaviour()
    rng = np.random.default_rng(0)
    for now in times(0.0, 20.0):
        noisy = 90.0 + float(rng.normal(0.0, 5.0))
        assert boards.update(sensors(ultrasonic_cm=50.0, heading_deg=noisy), now) == (0.0, 1.5)
        assert boards.mode == "scan"


def test_boards_reset_forgets_a_trip_and_the_blocks() -> None:
    wall = Thing(0.0, 1.0, 0.1, falls=False)
    world = World([wall], heading=0.0)
    boards = BoardsBehaviour()
    world.run(boards, 20.0)
    assert wall.hits == 1
    boards.update(sensors(bumper_left=True), 20.0)
    boards.reset()
    assert boards.mode == "scan"
    hits = wall.hits
    world.run(boards, 15.0, start=20.1)
    assert wall.hits == hits + 1  # the block went with the reset


# --- light: bearing -------------------------------------------------------------------------


def test_share_curve_falls_from_one_to_zero_across_the_sector() -> None:
    angles, share = RESPONSE.share_curve()
    assert angles[0] == 0.0
    assert angles[-1] == pytest.approx(math.pi / 2)
    assert share[0] == pytest.approx(1.0)
    assert share[-1] == pytest.approx(0.0)
    assert share[len(share) // 2] == pytest.approx(0.5)
    assert np.all(np.diff(share) <= 0)


@pytest.mark.parametrize("distance", [0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0])
def test_bearing_within_two_degrees_of_truth_over_the_noise_free_model(distance: float) -> None:
    errors = []
    for bearing in np.radians(np.arange(-180.0, 180.0, 1.25)):
        estimate = RESPONSE.bearing(light_readings(float(bearing), distance))
        assert estimate is not None
        assert -math.pi <= estimate < math.pi
        errors.append(math.degrees(angle_error(estimate, float(bearing))))
    assert max(errors) <= 2.0, f"worst {max(errors):.2f} deg at {np.argmax(errors) * 1.25 - 180} deg"


@pytest.mark.parametrize(
    ("readings", "expected_deg"),
    [
        ((1000.0, 0.0, 0.0, 0.0), 0.0),
        ((0.0, 1000.0, 0.0, 0.0), 90.0),
        ((0.0, 0.0, 0.0, 1000.0), -90.0),
        ((500.0, 500.0, 0.0, 0.0), 45.0),
        ((0.0, 0.0, 500.0, 500.0), -135.0),
    ],
)
def test_bearing_of_simple_readings(readings: tuple[float, float, float, float], expected_deg: float) -> None:
    estimate = RESPONSE.bearing(readings)
    assert estimate is not None
    assert math.degrees(angle_error(estimate, math.radians(expected_deg))) < 0.1


def test_dark_all_round_has_no_bearing() -> None:
    assert RESPONSE.bearing((0.0, 0.0, 0.0, 0.0)) is None


@pytest.mark.parametrize(
    "table",
    [
        {"angle_deg": [0, 90]},
        {"angle_deg": [0, 45, 90], "response": [1, 0]},
        {"angle_deg": [0], "response": [1]},
        {"angle_deg": ["a", "b"], "response": [1, 0]},
    ],
)
def test_bad_photoresistor_table_is_a_clear_error(table: dict[str, Any]) -> None:
    with pytest.raises(RobotControlError, match="photoresistor table"):
        PhotoresistorResponse.from_table(table)


# --- light: driving -------------------------------------------------------------------------


@pytest.mark.parametrize("bearing_deg", [0.0, 5.0, -10.0])
def test_light_drives_forward_when_nearly_ahead(bearing_deg: float) -> None:
    light = LightBehaviour(RESPONSE)
    linear, angular = light.update(sensors(light=light_readings(math.radians(bearing_deg), 2.0)), 0.0)
    assert linear == light.forward_speed
    assert angular == pytest.approx(light.turn_gain * math.radians(bearing_deg), abs=0.05)
    assert light.last_bearing is not None


@pytest.mark.parametrize(
    ("bearing_deg", "sign"), [(30.0, 1), (90.0, 1), (-45.0, -1), (-170.0, -1), (170.0, 1)]
)
def test_light_turns_toward_it_in_place_when_not_ahead(bearing_deg: float, sign: int) -> None:
    light = LightBehaviour(RESPONSE)
    linear, angular = light.update(sensors(light=light_readings(math.radians(bearing_deg), 2.0)), 0.0)
    assert linear == 0.0
    assert angular * sign > 0
    assert abs(angular) <= light.max_turn


@pytest.mark.parametrize("stop_level", [900.0, 500.0])
def test_light_stops_when_the_level_passes_the_threshold(stop_level: float) -> None:
    light = LightBehaviour(RESPONSE, stop_level=stop_level)
    assert light.update(sensors(light=(stop_level, 10.0, 0.0, 5.0)), 0.0) == (0.0, 0.0)
    assert light.update(sensors(light=(stop_level - 1, 10.0, 0.0, 5.0)), 0.0) != (0.0, 0.0)


def test_light_in_the_dark_looks_around() -> None:
    light = LightBehaviour(RESPONSE)
    assert light.update(sensors(), 0.0) == (0.0, light.max_turn / 2)
    assert light.last_bearing is None


def test_light_reset_forgets_the_bearing() -> None:
    light = LightBehaviour(RESPONSE)
    light.update(sensors(light=light_readings(1.0, 2.0)), 0.0)
    light.reset()
    assert light.last_bearing is None


@pytest.mark.parametrize(
    ("light_x", "light_y", "yaw_deg"), [(2.0, 1.0, 180.0), (-1.5, -2.5, 0.0), (3.0, 0.0, 90.0)]
)
def test_light_behaviour_drives_a_robot_to_the_light_and_stops_there(
    light_x: float, light_y: float, yaw_deg: float
) -> None:
    """Closed loop on a unicycle robot, readings from the noise-free model through TL2."""
    light = LightBehaviour(RESPONSE)
    x, y, yaw = 0.0, 0.0, math.radians(yaw_deg)
    twist = (1.0, 1.0)
    for now in times(0.0, 60.0):
        distance = math.hypot(light_x - x, light_y - y)
        bearing = math.atan2(light_y - y, light_x - x) - yaw
        twist = light.update(sensors(light=light_readings(bearing, distance)), now)
        if twist == (0.0, 0.0):
            break
        x += twist[0] * math.cos(yaw) * FRAME
        y += twist[0] * math.sin(yaw) * FRAME
        yaw += twist[1] * FRAME
    assert twist == (0.0, 0.0), "never stopped"
    # Facing the light, 900 is read at 0.5 * sqrt(1000 / 900) = 0.527 m (plus the mast).
    assert math.hypot(light_x - x, light_y - y) == pytest.approx(0.537, abs=0.03)
