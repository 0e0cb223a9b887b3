"""Behaviours as pure functions over sensor sequences, reading sensors from TL2 only."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hil_bridge.core.line_protocol import LineDecoder, LineEncoder, Telemetry, TelemetrySchema
from hil_sim.core.sensors import PhotoresistorModel
from robot_control.core.behaviours import (
    BEHAVIOURS,
    BoardsBehaviour,
    LightBehaviour,
    PhotoresistorResponse,
    Sensors,
)
from robot_control.core.kinematics import DriveGeometry, twist_to_commands
from robot_control.errors import RobotControlError

SRC = Path(__file__).resolve().parents[2]
SCHEMA = TelemetrySchema.from_yaml(SRC / "hil_bridge" / "config" / "telemetry.yaml")
TABLE: dict[str, Any] = json.loads(
    (SRC / "hil_bridge" / "config" / "devices" / "photoresistor.json").read_text()
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
    ultrasonic_cm: float = 200.0,
    light: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0),
    bumper_left: bool = False,
    bumper_right: bool = False,
    heading_deg: float = 90.0,
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
    return Sensors.from_telemetry(dict(zip(message.names, message.values, strict=True)))


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
    assert BEHAVIOURS == ("boards", "light")
    assert BoardsBehaviour().name == "boards"
    assert LightBehaviour(RESPONSE).name == "light"


# --- boards ---------------------------------------------------------------------------------


@pytest.mark.parametrize("behaviour", [BoardsBehaviour(), LightBehaviour(RESPONSE)], ids=lambda b: b.name)
def test_behaviour_stands_still_before_the_first_report(behaviour: Any) -> None:
    assert behaviour.update(None, 0.0) == (0.0, 0.0)


@pytest.mark.parametrize("distance", [2.0, 80.0, 149.9])
def test_boards_drives_forward_at_an_obstacle_within_150_cm(distance: float) -> None:
    assert BoardsBehaviour().update(sensors(ultrasonic_cm=distance), 0.0) == (0.4, 0.0)


@pytest.mark.parametrize("distance", [150.0, 180.0, 200.0])
def test_boards_spins_left_in_place_when_nothing_is_in_range(distance: float) -> None:
    linear, angular = BoardsBehaviour().update(sensors(ultrasonic_cm=distance), 0.0)
    assert linear == 0.0
    assert angular > 0  # counter-clockwise: left
    left, right = twist_to_commands(linear, angular, DriveGeometry())
    assert left == -right < 0


@pytest.mark.parametrize(("left", "right"), [(True, False), (False, True), (True, True)])
def test_boards_backs_off_for_two_seconds_then_turns_away_for_one(left: bool, right: bool) -> None:
    boards = BoardsBehaviour()
    ahead = sensors(ultrasonic_cm=20.0)
    hit = sensors(ultrasonic_cm=5.0, bumper_left=left, bumper_right=right)
    assert boards.update(ahead, 9.0) == (0.4, 0.0)
    assert boards.update(hit, 10.0) == (-0.2, 0.0)
    # The bumper opens again, the obstacle is still ahead: backs off for 2 s, turns
    # left for 1 s, then charges what it sees in another direction.
    elsewhere = sensors(ultrasonic_cm=20.0, heading_deg=180.0)
    outputs = [
        (now, boards.update(ahead if now < 13.0 else elsewhere, now)) for now in times(10.0 + FRAME, 4.0)
    ]
    for now, twist in outputs:
        expected = (-0.2, 0.0) if now < 12.0 else (0.0, 1.5) if now < 13.0 else (0.4, 0.0)
        assert twist == expected, now


@pytest.mark.parametrize(
    ("heading", "charges"),
    [(90.0, False), (105.0, False), (75.0, False), (134.0, False), (46.0, False), (136.0, True), (270, True)],
)
def test_boards_does_not_charge_within_45_degrees_of_a_bump_for_20_s(heading: float, charges: bool) -> None:
    boards = BoardsBehaviour()
    boards.update(sensors(ultrasonic_cm=5.0, bumper_left=True, heading_deg=90.0), 10.0)
    there = sensors(ultrasonic_cm=50.0, heading_deg=heading)
    assert boards.update(there, 14.0) == ((0.4, 0.0) if charges else (0.0, 1.5))
    # What stood there is charged again once the bump is 20 s old.
    assert boards.update(there, 30.0) == (0.4, 0.0)


def test_boards_forgets_a_bump_whose_obstacle_fell() -> None:
    boards = BoardsBehaviour()
    boards.update(sensors(ultrasonic_cm=5.0, bumper_left=True, heading_deg=90.0), 10.0)
    boards.update(sensors(ultrasonic_cm=200.0, heading_deg=90.0), 11.9)  # backed off: nothing there now
    # A neighbour 30 degrees away is charged at once.
    assert boards.update(sensors(ultrasonic_cm=60.0, heading_deg=120.0), 13.1) == (0.4, 0.0)


def test_boards_keeps_a_bump_whose_obstacle_is_still_there() -> None:
    boards = BoardsBehaviour()
    boards.update(sensors(ultrasonic_cm=5.0, bumper_left=True, heading_deg=90.0), 10.0)
    boards.update(sensors(ultrasonic_cm=40.0, heading_deg=90.0), 11.9)  # still 40 cm away
    assert boards.update(sensors(ultrasonic_cm=60.0, heading_deg=120.0), 13.1) == (0.0, 1.5)


def test_boards_ignore_window_wraps_around_north() -> None:
    boards = BoardsBehaviour()
    boards.update(sensors(ultrasonic_cm=5.0, bumper_right=True, heading_deg=355.0), 0.0)
    assert boards.update(sensors(ultrasonic_cm=50.0, heading_deg=5.0), 4.0) == (0.0, 1.5)


def test_boards_sequence_spin_charge_hit_back_off_turn_spin() -> None:
    boards = BoardsBehaviour()
    far, near = sensors(ultrasonic_cm=200.0), sensors(ultrasonic_cm=120.0)
    hit = sensors(ultrasonic_cm=3.0, bumper_left=True, bumper_right=True)
    seen = [far] * 30 + [near] * 30 + [hit] * 2 + [far] * 70
    got = [boards.update(report, k * FRAME) for k, report in enumerate(seen)]
    # Frames at 30 Hz: the hit at frame 60 (t = 2 s) backs off until t = 4 s (frame 120),
    # then turns (the same spin as the search) with nothing in range.
    assert got[:30] == [(0.0, 1.5)] * 30
    assert got[30:60] == [(0.4, 0.0)] * 30
    assert got[60:120] == [(-0.2, 0.0)] * 60
    assert got[121:] == [(0.0, 1.5)] * 11


def test_boards_bumper_held_keeps_backing_off() -> None:
    boards = BoardsBehaviour()
    held = sensors(ultrasonic_cm=3.0, bumper_right=True)
    assert all(boards.update(held, now) == (-0.2, 0.0) for now in times(0.0, 6.0))


def spinning(boards: BoardsBehaviour, start: float, seconds: float, *, deg_per_frame: float = 3.0) -> list:
    """Feed a spin with nothing in range: the compass turns ``deg_per_frame`` each frame."""
    out = []
    for k, now in enumerate(times(start, seconds)):
        heading = (90.0 + k * deg_per_frame) % 360.0
        out.append((now, boards.update(sensors(ultrasonic_cm=200.0, heading_deg=heading), now)))
    return out


def test_boards_drives_out_after_looking_all_round_with_nothing_in_range() -> None:
    boards = BoardsBehaviour()
    got = spinning(boards, 0.0, 8.0)
    # 400 degrees at 3 degrees a frame: 134 frames of search, then 2 s (60 frames) out, then search again.
    assert [twist for _, twist in got[:134]] == [(0.0, 1.5)] * 134
    assert [twist for _, twist in got[134:194]] == [(0.4, 0.0)] * 60
    assert got[195][1] == (0.0, 1.5)


@pytest.mark.parametrize("deg_per_frame", [3.0, -3.0, 0.0])
def test_boards_search_counts_the_turn_by_the_compass_either_way(deg_per_frame: float) -> None:
    boards = BoardsBehaviour()
    got = [twist for _, twist in spinning(boards, 0.0, 6.0, deg_per_frame=deg_per_frame)]
    # A robot that does not turn (wheels blocked) has not looked round: it keeps spinning.
    assert ((0.4, 0.0) in got) is (deg_per_frame != 0.0)


def test_boards_compass_noise_does_not_end_a_search_early() -> None:
    boards = BoardsBehaviour()
    rng = np.random.default_rng(0)
    for k, now in enumerate(times(0.0, 20.0)):
        noisy = 90.0 + float(rng.normal(0.0, 5.0))
        assert boards.update(sensors(ultrasonic_cm=200.0, heading_deg=noisy), now) == (0.0, 1.5), k


def test_boards_search_drive_stops_for_something_in_range_and_a_bump() -> None:
    boards = BoardsBehaviour()
    spinning(boards, 0.0, 4.6)  # 138 frames: driving out
    assert boards.update(sensors(ultrasonic_cm=200.0, heading_deg=0.0), 5.5) == (0.4, 0.0)
    assert boards.update(sensors(ultrasonic_cm=90.0, heading_deg=0.0), 5.6) == (0.4, 0.0)  # charges it
    assert boards.update(sensors(ultrasonic_cm=3.0, bumper_left=True, heading_deg=0.0), 5.7) == (-0.2, 0.0)
    # After the back-off and the turn away, a search starts afresh.
    assert boards.update(sensors(ultrasonic_cm=200.0, heading_deg=0.0), 8.8) == (0.0, 1.5)


def turning_robot(
    boards: BoardsBehaviour, start: float, seconds: float, echo: tuple[float, float] | None
) -> list[tuple[float, tuple[float, float]]]:
    """A robot whose compass turns 3 degrees a frame while the behaviour spins it, else holds.

    ``echo`` is (heading, cm) of the one thing the ranger sees; 200 cm elsewhere.
    """
    heading, got = 90.0, []
    for now in times(start, seconds):
        distance = echo[1] if echo and abs((heading - echo[0] + 180) % 360 - 180) < 4.0 else 200.0
        twist = boards.update(sensors(ultrasonic_cm=distance, heading_deg=heading), now)
        got.append((heading, twist))
        if twist[1] > 0:
            heading = (heading + 3.0) % 360.0
    return got


def test_boards_heads_for_the_nearest_echo_beyond_range_after_looking_all_round() -> None:
    # Something at 180 cm (beyond the 150 cm it charges at) around heading 300.
    got = turning_robot(BoardsBehaviour(), 0.0, 12.0, echo=(300.0, 180.0))
    # 400 degrees of search end at heading 130: it turns on to face the echo (seen over
    # 297-303, aimed at within 10 degrees) and drives that way for 2 s.
    driving = [heading for heading, twist in got if twist == (0.4, 0.0)]
    assert len(driving) == 60
    assert len(set(driving)) == 1  # straight
    assert abs(driving[0] - 300.0) <= 4.0 + 10.0


def test_boards_ignores_far_echoes_where_it_bumped() -> None:
    boards = BoardsBehaviour()
    boards.update(sensors(ultrasonic_cm=5.0, bumper_left=True, heading_deg=300.0), 0.0)
    got = turning_robot(boards, 3.1, 10.0, echo=(300.0, 180.0))
    # The only echo is where it bumped: no aim, it drives straight out where the look ended.
    driving = [heading for heading, twist in got if twist == (0.4, 0.0)]
    assert driving
    assert abs(driving[0] - 130.0) <= 3.0


def test_boards_reset_forgets_a_back_off() -> None:
    boards = BoardsBehaviour()
    boards.update(sensors(bumper_left=True), 0.0)
    boards.reset()
    assert boards.update(sensors(ultrasonic_cm=50.0), 0.5) == (0.4, 0.0)


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
