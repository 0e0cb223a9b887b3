"""The simulation core: kinematics, collisions, boards, sensors, noise, determinism and swarms."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from hil_common.errors import HilError
from hil_devices.core.library import load_device_library
from hil_sim.core.build import build_simulation, grid_starts
from hil_sim.core.motor import MotorParams
from hil_sim.core.noise import NoiseBank
from hil_sim.core.robot_model import RobotModel, demo_robot
from hil_sim.core.sensors import (
    ULTRASONIC_MAX_CM,
    PhotoresistorModel,
    SharpIrModel,
    adc_counts,
    ultrasonic_cm,
)
from hil_sim.core.simulation import Simulation
from hil_sim.core.world import Board, Box, Light, Pose, WorldConfig
from hil_sim.errors import HilSimError

Array = npt.NDArray[np.float64]

SRC = Path(__file__).resolve().parents[2]
DEVICES = SRC / "hil_devices" / "config" / "devices"
LIBRARY = load_device_library([DEVICES])
WORLDS = SRC / "hil_sim" / "worlds"
DEMO = WORLDS / "demo.yaml"
EMPTY = WORLDS / "empty.yaml"
#: A 4 m walled arena with nothing in it (the demo light).
ARENA = WorldConfig(width=4.0, height=4.0)
ROBOT = demo_robot(LIBRARY)
R, L = ROBOT.body.wheel_radius, ROBOT.body.wheel_base
BODY = ROBOT.body.body_radius
ULTRASONIC_SIGMA_CM = 0.3
MAGNETOMETER_SIGMA = 3.5e-7
LIGHT_RADIUS = 0.01
LIGHT_MOUNTS = (0.0, math.pi / 2, math.pi, 3 * math.pi / 2)
#: Readings as the simulation's outputs: device.column, or several stacked on a last axis.
READING = {
    "ultrasonic_cm": "ultrasonic.distance",
    "ir_distance_cm": "ir.true_cm",
    "ir_voltage": "ir.voltage",
    "light": ("light_0.reading", "light_1.reading", "light_2.reading", "light_3.reading"),
    "magnetic_field": ("compass.bx", "compass.by", "compass.bz"),
    "heading_deg": "compass.heading",
}

# The quoted tables (issue text): Sharp GP2Y0A02YK0F and GL5506.
IR_CM = [15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150]
IR_V = [2.7, 2.48, 1.99, 1.54, 1.27, 1.04, 0.87, 0.8, 0.74, 0.69, 0.61, 0.55, 0.5, 0.47, 0.45]
IR_P, IR_BOUND = 0.03827, 0.0923
LIGHT_DEG = [-90, -80, -67.5, -60, -45, -22.5, 0, 22.5, 45, 60, 67.5, 80, 90]
LIGHT_RESPONSE = [0, 23, 45, 66, 85, 115, 117, 115, 85, 66, 45, 23, 0]
INTENSITY = [51, 101, 201, 399, 600, 799]
LIGHT_BOUND = [0.4706, 0.198, 0.0796, 0.0175, 0.0067, 0.0059]
LIGHT_EXACT = [0.7951, 0.7985, 0.8152, 0.8489, 0.8723, 0.9046]

IR = SharpIrModel.from_table(LIBRARY["sharp_ir"].table)
PHOTO = PhotoresistorModel.from_table(LIBRARY["photoresistor"].table)


def make(world: WorldConfig | Path = ARENA, **options: object) -> Simulation:
    return build_simulation(world, library=LIBRARY, **options)  # type: ignore[arg-type]


def set_motors(
    sim: Simulation, enable: Array, a: Array, b: Array, robots: npt.ArrayLike | None = None
) -> None:
    """The demo robot's L298 pins, (rows, 2) [left, right] each."""
    for k, side in enumerate(("left", "right")):
        for name, values in (("enable", enable), ("a", a), ("b", b)):
            sim.set_input(f"motor_{side}.{name}", np.asarray(values)[:, k], robots)


def drive(sim: Simulation, left: float, right: float, robots: npt.ArrayLike | None = None) -> None:
    """Signed enable duty per wheel (-1024..1024): > 0 forward, < 0 back, 0 coast."""
    rows = sim.count if robots is None else len(np.atleast_1d(np.asarray(robots)))
    duty = np.tile([float(left), float(right)], (rows, 1))
    set_motors(sim, np.abs(duty), (duty > 0).astype(float), (duty < 0).astype(float), robots)


def drive_each(sim: Simulation, duty: Array) -> None:
    """Signed duties (N, 2), one row per robot."""
    set_motors(sim, np.abs(duty), (duty > 0).astype(float), (duty < 0).astype(float))


def brake(sim: Simulation) -> None:
    set_motors(sim, np.full((sim.count, 2), 1024.0), np.ones((sim.count, 2)), np.ones((sim.count, 2)))


def reading(sim: Simulation, pick: str) -> Array:
    """One of the demo robot's readings (:data:`READING`) of every robot."""
    names = READING[pick]
    if isinstance(names, str):
        return sim.output(names).copy()
    return np.stack([sim.output(name) for name in names], axis=-1)


def wheel_speeds(sim: Simulation) -> Array:
    """(N, 2) wheel speeds (rad/s) from the motor shafts."""
    speeds: Array = sim.motors.speed / sim.models[0].motor.gear_ratio
    return speeds


def clearance(sim: Simulation) -> Array:
    """Distance from each robot's centre to the nearest solid thing."""
    dist, _, _ = sim.geometry.closest(np.stack([sim.x, sim.y], axis=1))
    return dist


def samples(sim: Simulation, count: int, pick: str) -> Array:
    """``count`` successive sensor samples of one readings field, stacked on a new first axis."""
    out = []
    for _ in range(count):
        sim.step(sim.sensor_every)
        out.append(reading(sim, pick))
    return np.array(out)


def five_sigma(p: float, n: int) -> float:
    return 5.0 * math.sqrt(p * (1.0 - p) / n)


def angle_diff_deg(a: Array, b: Array | float) -> Array:
    return np.asarray((np.asarray(a) - b + 180.0) % 360.0 - 180.0)


# --- rate and set-up -----------------------------------------------------------------------


def test_physics_steps_at_1_khz_and_sensors_at_50_hz_by_default() -> None:
    sim = make()
    assert sim.dt == 1e-3
    assert sim.sensor_every == 20
    field = [reading(sim, "magnetic_field")]
    for _ in range(60):
        sim.step()
        field.append(reading(sim, "magnetic_field"))
    changed = [k for k in range(1, 61) if not np.array_equal(field[k], field[k - 1])]
    assert changed == [20, 40, 60]  # the magnetometer is noisy: every sample differs
    sim.step(1234)
    assert sim.steps == 1294
    assert sim.time == pytest.approx(1.294)


def test_physics_rate_is_an_option() -> None:
    sim = make(physics_rate=500.0, sensor_rate=50.0)
    assert sim.dt == 2e-3 and sim.sensor_every == 10
    sim.step(250)
    assert sim.time == pytest.approx(0.5)


def test_many_steps_at_once_equal_single_steps() -> None:
    together, single = make(EMPTY), make(EMPTY)
    for left, right, count in ((1024, 700, 333), (-300, 1024, 157), (0, 0, 410), (1024, 1024, 100)):
        for sim in (together, single):
            drive(sim, left, right)
        together.step(count)
        for _ in range(count):
            single.step()
    for name in ("x", "y", "yaw", "v", "w", "wheel_angle"):
        assert np.allclose(getattr(together, name), getattr(single, name), rtol=1e-9, atol=1e-12), name
    assert np.allclose(together.motors.speed, single.motors.speed, rtol=1e-9, atol=1e-9)
    # the same noise draws: the readings differ only by the rounding of the pose
    assert np.allclose(
        reading(together, "magnetic_field"), reading(single, "magnetic_field"), rtol=1e-9, atol=0
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"robots": 0}, "at least one"),
        ({"physics_rate": 0.0}, "physics_rate"),
        ({"physics_rate": math.nan}, "physics_rate"),
        ({"sensor_rate": 30.0}, "sensor_rate"),
        ({"sensor_rate": -50.0}, "sensor_rate"),
        ({"sensor_rate": 2000.0}, "sensor_rate"),
        pytest.param(
            {"sensor_rate": 0.0},
            "sensor_rate",
            id="sensor-rate-zero",
        ),
        pytest.param(
            {"sensor_rate": math.nan},
            "sensor_rate",
            id="sensor-rate-nan",
        ),
        pytest.param(
            {"sensor_rate": math.inf},
            "sensor_rate",
            id="sensor-rate-inf",
        ),
        ({"robots": 100, "spacing": 1.0}, "do not fit"),
    ],
)
def test_bad_simulation_options_raise(options: dict[str, object], message: str) -> None:
    with pytest.raises(HilSimError, match=message):
        make(**options)


def test_bad_world_path_raises_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "world.yaml"
    path.write_text("arena: {width: -1}\n")
    with pytest.raises(HilSimError, match=r"arena\.width") as info:
        build_simulation(path, library=LIBRARY)
    assert str(path) in str(info.value)


def test_a_library_without_a_type_of_the_demo_robot_is_refused() -> None:
    library = {name: config for name, config in LIBRARY.items() if name != "sharp_ir"}
    with pytest.raises(HilError, match="unknown device type 'sharp_ir'"):
        build_simulation(ARENA, library=library)


def test_grid_starts_centre_the_swarm_on_the_start() -> None:
    starts = grid_starts(Pose(1.0, -1.0, 0.5), 9, 0.3)
    assert len(starts) == 9
    assert np.mean([p.x for p in starts]) == pytest.approx(1.0)
    assert np.mean([p.y for p in starts]) == pytest.approx(-1.0)
    assert {p.yaw for p in starts} == {0.5}
    assert len({(round(p.x, 9), round(p.y, 9)) for p in starts}) == 9
    assert set(grid_starts(Pose(0.2, 0.3), 5, 0.0)) == {Pose(0.2, 0.3)}


@pytest.mark.parametrize("robots", [9, 10, 100])
def test_grid_starts_put_robot_0_nearest_the_start(robots: int) -> None:
    start = Pose(1.0, -1.0)
    starts = grid_starts(start, robots, 0.4)
    distances = [math.hypot(p.x - start.x, p.y - start.y) for p in starts]
    assert all(b >= a - 1e-9 for a, b in itertools.pairwise(distances))
    assert distances[0] <= 0.4 * math.sqrt(0.5) + 1e-9


# --- kinematics ----------------------------------------------------------------------------


def test_straight_line_keeps_heading_and_reaches_top_speed() -> None:
    sim = make(EMPTY)
    drive(sim, 1024, 1024)
    sim.step(1500)  # ~14 mechanical time constants
    assert sim.yaw[0] == 0.0
    assert sim.y[0] == 0.0
    top = R * ROBOT.max_wheel_speed
    assert sim.v[0] == pytest.approx(top, rel=1e-4)
    assert sim.w[0] == 0.0
    assert 0.8 < sim.x[0] < top * 1.5
    # the body moved as far as the wheels rolled
    assert sim.x[0] == pytest.approx(R * sim.wheel_angle[0].mean(), rel=1e-9)


def test_straight_line_backwards_mirrors_forwards() -> None:
    ahead, back = make(EMPTY), make(EMPTY)
    drive(ahead, 1024, 1024)
    drive(back, -1024, -1024)
    ahead.step(700)
    back.step(700)
    assert back.x[0] == pytest.approx(-ahead.x[0], rel=1e-12)
    assert back.y[0] == 0.0 and back.yaw[0] == 0.0


@pytest.mark.parametrize("duty", [1024, 512, 300])
def test_spin_in_place_keeps_position_and_turns_at_r_dw_over_l(duty: int) -> None:
    sim = make(EMPTY)
    drive(sim, -duty, duty)
    sim.step(1500)
    yaw0 = sim.yaw[0]
    sim.step(500)
    wheels = wheel_speeds(sim)[0]
    assert wheels[0] == pytest.approx(-wheels[1], rel=1e-12)
    expected = R * (wheels[1] - wheels[0]) / L
    assert sim.w[0] == pytest.approx(expected, rel=1e-12)
    assert (sim.yaw[0] - yaw0) / 0.5 == pytest.approx(expected, rel=1e-6)
    assert abs(sim.x[0]) < 1e-12 and abs(sim.y[0]) < 1e-12
    steady = MotorParams().steady_speed(6.0 * duty / 1024) / 48.0
    assert expected == pytest.approx(2 * R * steady / L, rel=1e-6)


def fit_circle(x: Array, y: Array) -> tuple[float, float, float]:
    """Least-squares (Kasa) circle through the points: centre and radius."""
    design = np.stack([2 * x, 2 * y, np.ones_like(x)], axis=1)
    (cx, cy, c), *_ = np.linalg.lstsq(design, x**2 + y**2, rcond=None)
    return float(cx), float(cy), float(math.sqrt(c + cx**2 + cy**2))


@pytest.mark.parametrize(("left", "right"), [(512, 1024), (1024, 700), (-300, 1024)])
def test_arc_radius_matches_the_wheel_speeds(left: int, right: int) -> None:
    sim = make(EMPTY)
    drive(sim, left, right)
    sim.step(1500)
    xs, ys, wheels = [], [], []
    for _ in range(300):
        sim.step(10)
        xs.append(sim.x[0])
        ys.append(sim.y[0])
        wheels.append(wheel_speeds(sim)[0])
    wl, wr = np.mean(wheels, axis=0)
    expected = L / 2 * abs((wr + wl) / (wr - wl))
    _, _, radius = fit_circle(np.array(xs), np.array(ys))
    assert radius == pytest.approx(expected, rel=0.01)
    assert sim.geometry.boards_down == 0 and not sim.bumpers.any()


# --- collisions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("supply", "rate"),
    [(6.0, 1000.0), (12.0, 1000.0), (12.0, 200.0)],
    ids=["6V-1kHz", "12V-1kHz", "12V-200Hz"],
)
def test_full_speed_into_a_wall_stops_at_the_wall(supply: float, rate: float) -> None:
    robot = RobotModel("demo", ROBOT.body, MotorParams(supply_voltage=supply), ROBOT.devices)
    sim = make(ARENA, models=robot, physics_rate=rate)
    drive(sim, 1024, 1024)
    contact = 2.0 - BODY
    steps = int(3.5 * rate)
    xs, gaps, top = np.empty(steps), np.empty(steps), 0.0
    for k in range(steps):
        sim.step()
        xs[k], gaps[k], top = sim.x[0], clearance(sim)[0], max(top, sim.v[0])
    assert top > 0.6 * R * robot.max_wheel_speed  # it was fast when it hit
    assert xs.max() <= contact + 1e-9  # never into the wall, let alone through
    assert gaps.min() >= BODY - 1e-9
    assert sim.x[0] == pytest.approx(contact, abs=1e-6)
    assert abs(sim.v[0]) < 1e-6  # stalled against it
    assert sim.bumpers[0].tolist() == [True, True]  # head-on: both switches


@pytest.mark.parametrize(
    ("y0", "yaw_deg", "pressed"),
    [(1.5, 45.0, [True, False]), (-1.5, -45.0, [False, True])],
    ids=["wall-on-the-left-front", "wall-on-the-right-front"],
)
def test_oblique_hit_presses_only_the_bumper_on_that_side(
    y0: float, yaw_deg: float, pressed: list[bool]
) -> None:
    sim = make(ARENA)
    sim.teleport(0, Pose(0.0, y0, math.radians(yaw_deg)))
    drive(sim, 1024, 1024)
    history = []
    for _ in range(2000):
        sim.step()
        history.append(sim.bumpers[0].copy())
        if sim.bumpers[0].any():
            break
    sim.step(30)  # sliding along the wall
    history.append(sim.bumpers[0].copy())
    assert sim.bumpers[0].tolist() == pressed
    assert np.array(history).any(axis=0).tolist() == pressed
    assert abs(sim.y[0]) == pytest.approx(2.0 - BODY, abs=1e-6)
    assert clearance(sim)[0] >= BODY - 1e-9


def test_backing_into_a_wall_stops_without_front_bumpers() -> None:
    sim = make(ARENA)
    sim.teleport(0, Pose(1.5, 0.0, math.pi))
    drive(sim, -1024, -1024)
    pressed = False
    for _ in range(1500):
        sim.step()
        pressed |= bool(sim.bumpers[0].any())
    assert sim.x[0] == pytest.approx(2.0 - BODY, abs=1e-6)
    assert not pressed


def test_bumpers_release_after_the_hold_time() -> None:
    sim = make(ARENA)
    sim.teleport(0, Pose(1.7, 0.0, 0.0))
    drive(sim, 1024, 1024)
    sim.step(800)
    assert sim.bumpers[0].all()
    drive(sim, -1024, -1024)
    sim.step(10)
    assert sim.bumpers[0].all()  # still held
    sim.step(500)
    assert sim.x[0] < 2.0 - BODY - 0.1
    assert not sim.bumpers[0].any()


def test_robot_stops_at_a_box() -> None:
    world = WorldConfig(width=4.0, height=4.0, boxes=(Box(1.0, 0.0, 0.3, 0.6, 0.0),))
    sim = make(world)
    drive(sim, 1024, 1024)
    gaps = []
    for _ in range(1500):
        sim.step()
        gaps.append(clearance(sim)[0])
    assert min(gaps) >= BODY - 1e-9
    assert sim.x[0] == pytest.approx(1.0 - 0.15 - BODY, abs=1e-6)
    assert sim.bumpers[0].all()


# --- boards --------------------------------------------------------------------------------


def test_full_speed_knocks_a_board_and_the_robot_passes() -> None:
    sim = make(DEMO)
    assert sim.geometry.standing.all()
    drive(sim, 1024, 1024)
    fell_at = None
    for k in range(1500):
        sim.step()
        if fell_at is None and not sim.geometry.standing[0]:
            fell_at = k
            assert sim.v[0] > sim.world.push_threshold
            assert sim.x[0] == pytest.approx(0.59 - BODY, abs=2e-3)  # at the board's face
    assert fell_at is not None
    assert sim.geometry.standing.tolist() == [False, True, True, True, True, True]
    assert sim.geometry.boards_down == 1
    assert sim.x[0] > 0.61 + BODY  # through where the board stood
    assert sim.v[0] == pytest.approx(R * ROBOT.max_wheel_speed, rel=1e-3)  # not slowed


def test_creeping_into_a_board_below_the_threshold_does_not_knock_it() -> None:
    sim = make(DEMO)
    duty = 80
    creep = R * ROBOT.motor.steady_speed(6.0 * duty / 1024) / ROBOT.motor.gear_ratio
    assert 0.0 < creep < sim.world.push_threshold
    sim.teleport(0, Pose(0.45, 0.0, 0.0))
    drive(sim, duty, duty)
    for _ in range(4000):
        sim.step()
        assert sim.x[0] <= 0.59 - BODY + 1e-9
    assert sim.geometry.standing.all()
    assert sim.x[0] == pytest.approx(0.59 - BODY, abs=1e-6)
    assert abs(sim.v[0]) < 1e-6
    assert sim.bumpers[0].all()


def test_grazing_a_board_at_full_speed_does_not_knock_it() -> None:
    # Heading 2 degrees off the board's broad face: fast, but only ~0.02 m/s toward it.
    sim = make(DEMO)
    sim.teleport(0, Pose(0.497, -0.12, math.radians(88.0)))
    drive(sim, 1024, 1024)
    touching = []
    for _ in range(600):
        sim.step()
        if abs(sim.y[0]) < 0.05:
            touching.append(sim.x[0])
        assert clearance(sim)[0] >= BODY - 1e-9
    assert sim.geometry.standing.all()
    assert max(touching) == pytest.approx(0.59 - BODY, abs=1e-9)  # it slid along the face
    assert sim.y[0] > 0.05 + 0.05  # and went on past it


def test_a_fallen_board_is_no_longer_seen_by_the_rangers() -> None:
    sim = make(DEMO)
    sim.step(20)
    before = reading(sim, "ultrasonic_cm")[0]
    assert before == pytest.approx(100 * (0.59 - 0.09), abs=5 * ULTRASONIC_SIGMA_CM)
    assert reading(sim, "ir_distance_cm")[0] == pytest.approx(100 * (0.59 - 0.09))
    drive(sim, 1024, 1024)
    sim.step(1200)
    assert not sim.geometry.standing[0]
    drive(sim, 0, 0)
    sim.teleport(0, Pose(0.0, 0.0, 0.0))
    sim.step(20)
    after = reading(sim, "ultrasonic_cm")[0]
    # Nothing left ahead within range: the demo arena's wall is 4 m away.
    assert after == 200.0  # saturated
    assert reading(sim, "ir_distance_cm")[0] == pytest.approx(250.0)  # the rangers' ray length


def test_a_board_knocked_by_one_robot_is_down_for_all() -> None:
    sim = make(DEMO, robots=2)
    drive(sim, 1024, 1024, robots=[0])
    drive(sim, 0, 0, robots=[1])
    sim.step(1200)
    assert sim.geometry.boards_down == 1
    assert sim.x[1] == 0.0
    assert reading(sim, "ultrasonic_cm")[1] > 150.0


# --- sensors -------------------------------------------------------------------------------


def test_shipped_sensor_tables_are_the_quoted_ones() -> None:
    ir = json.loads((DEVICES / "sharp_ir.json").read_text())["table"]
    assert ir["distance_cm"] == IR_CM and ir["voltage_v"] == IR_V
    assert (ir["error_probability"], ir["error_bound"]) == (IR_P, IR_BOUND)
    light = json.loads((DEVICES / "photoresistor.json").read_text())["table"]
    assert light["angle_deg"] == LIGHT_DEG and light["response"] == LIGHT_RESPONSE
    assert light["intensity"] == INTENSITY
    assert light["error_bound"] == LIGHT_BOUND and light["exact_probability"] == LIGHT_EXACT


@pytest.mark.parametrize("distance", [15.0, 20.0, 25.0, 30.0, 45.0, 60.0, 77.0, 100.0, 123.0, 140.0, 150.0])
def test_sharp_ir_voltage_matches_the_table(distance: float) -> None:
    expected = float(np.interp(distance, IR_CM, IR_V))
    assert float(IR.voltage(np.array([distance]))[0]) == pytest.approx(expected, rel=0.02)
    assert float(IR.voltage(np.array([distance]))[0]) == pytest.approx(expected, rel=1e-12)


def test_sharp_ir_holds_its_end_values_outside_the_table() -> None:
    assert IR.voltage(np.array([5.0, 200.0])).tolist() == [2.7, 0.45]


def test_sharp_ir_inverse_round_trips() -> None:
    distance = np.linspace(15.0, 150.0, 271)
    assert np.allclose(IR.distance(IR.voltage(distance)), distance, rtol=1e-9)
    assert np.allclose(IR.distance(np.array(IR_V)), IR_CM, rtol=1e-12)


@pytest.mark.parametrize(
    "table",
    [
        {"distance_cm": [15, 20], "voltage_v": [2.7], "error_probability": 0.1, "error_bound": 0.1},
        {"distance_cm": [15, 20], "voltage_v": [2.7, 2.8], "error_probability": 0.1, "error_bound": 0.1},
        {"distance_cm": [20, 15], "voltage_v": [2.7, 2.5], "error_probability": 0.1, "error_bound": 0.1},
        {"distance_cm": "15", "voltage_v": [2.7, 2.5], "error_probability": 0.1, "error_bound": 0.1},
    ],
    ids=["lengths", "voltage-rises", "distance-falls", "not-a-list"],
)
def test_bad_sharp_ir_table_raises(table: dict[str, object]) -> None:
    with pytest.raises(HilSimError, match="sharp_ir"):
        SharpIrModel.from_table(table)


def test_sharp_ir_in_the_simulation_matches_the_table_at_known_distances() -> None:
    distances = np.array([20.0, 30.0, 45.0, 60.0, 85.0, 100.0, 140.0])
    sim = make(ARENA, robots=len(distances))
    for k, d in enumerate(distances):
        # the IR sensor sits 9 cm ahead of the centre; the wall is at x = 2
        sim.teleport(k, Pose(2.0 - 0.09 - d / 100.0, -1.0 + 0.3 * k, 0.0))
    volts = samples(sim, 45, "ir_voltage")
    assert np.allclose(reading(sim, "ir_distance_cm"), distances, rtol=1e-9)
    expected = np.interp(distances, IR_CM, IR_V)
    # the error model leaves > 92 % of the readings exact: the median is the table value
    assert np.allclose(np.median(volts, axis=0), expected, rtol=0.02)
    assert np.allclose(np.median(volts, axis=0), expected, rtol=1e-9)
    assert np.all(np.abs(volts / expected - 1.0) <= IR_BOUND + 1e-12)
    assert np.all(adc_counts(reading(sim, "ir_voltage")) == np.rint(reading(sim, "ir_voltage") / 5.0 * 1023))


@pytest.mark.parametrize(
    "angle", [-90.0, -80.0, -67.5, -60.0, -45.0, -22.5, 0.0, 22.5, 45.0, 60.0, 67.5, 80.0, 90.0]
)
def test_photoresistor_follows_the_angular_table_at_the_reference_distance(angle: float) -> None:
    expected = float(np.interp(angle, LIGHT_DEG, LIGHT_RESPONSE)) * 1000.0 / 117.0
    reading = float(PHOTO.reading(np.array([0.5]), np.radians(np.array([angle])), 0.5)[0])
    assert reading == pytest.approx(expected, rel=0.02, abs=1e-9)


@pytest.mark.parametrize("angle", [-85.0, -50.0, -10.0, 10.0, 33.0, 70.0])
def test_photoresistor_interpolates_between_table_angles(angle: float) -> None:
    expected = float(np.interp(angle, LIGHT_DEG, LIGHT_RESPONSE)) * 1000.0 / 117.0
    reading = float(PHOTO.reading(np.array([0.5]), np.radians(np.array([angle])), 0.5)[0])
    assert reading == pytest.approx(expected, rel=0.02)


@pytest.mark.parametrize("angle", [100.0, 180.0, -135.0, 270.0])
def test_photoresistor_reads_nothing_from_behind(angle: float) -> None:
    assert PHOTO.reading(np.array([0.5]), np.radians(np.array([angle])), 0.5)[0] == 0.0


@pytest.mark.parametrize("factor", [1.0, math.sqrt(2.0), 2.0, 3.0, 10.0])
def test_photoresistor_falls_off_with_the_square_of_the_distance(factor: float) -> None:
    reading = PHOTO.reading(np.array([0.5 * factor]), np.array([0.0]), 0.5)[0]
    assert reading == pytest.approx(1000.0 / factor**2, rel=1e-9)


def test_photoresistor_saturates_at_the_adc_full_scale() -> None:
    assert PHOTO.reading(np.array([0.3, 0.0]), np.zeros(2), 0.5).tolist() == [1023.0, 1023.0]


@pytest.mark.parametrize("offset_deg", [0.0, 22.5, -45.0, 60.0, 80.0])
def test_photoresistors_in_the_simulation_see_the_light(offset_deg: float) -> None:
    world = WorldConfig(width=4.0, height=4.0, light=Light(1.5, 1.5, 0.5))
    sim = make(world)
    diagonal = math.radians(45.0)
    # front sensor (6 cm ahead) 0.5 m from the light on the diagonal
    centre = 1.5 - (0.5 + LIGHT_RADIUS) * math.cos(diagonal)
    yaw = diagonal + math.radians(offset_deg)
    sim.teleport(0, Pose(centre, centre, yaw))
    light = np.median(samples(sim, 45, "light")[:, 0, :], axis=0)
    for mount, value in zip(LIGHT_MOUNTS, light, strict=True):
        sx = centre + LIGHT_RADIUS * math.cos(yaw + mount)
        sy = centre + LIGHT_RADIUS * math.sin(yaw + mount)
        bearing = math.degrees(math.atan2(1.5 - sy, 1.5 - sx) - yaw - mount)
        bearing = (bearing + 180.0) % 360.0 - 180.0
        expected = float(np.interp(bearing, LIGHT_DEG, LIGHT_RESPONSE, left=0, right=0)) * 1000.0 / 117.0
        expected *= 0.25 / ((1.5 - sx) ** 2 + (1.5 - sy) ** 2)
        assert value == pytest.approx(round(min(expected, 1023.0)), rel=0.02, abs=1.0)
    if offset_deg == 0.0:
        assert light[0] == pytest.approx(1000.0, abs=1.0)
        assert light[2] == 0.0


def test_ultrasonic_saturates_at_200_cm_facing_nothing_within_2_m() -> None:
    sim = make(EMPTY)
    reading = samples(sim, 20, "ultrasonic_cm")
    assert np.all(reading == ULTRASONIC_MAX_CM)
    # between 2 m and the cast's reach, too
    far = make(ARENA)
    far.teleport(0, Pose(-0.49, 0.0, 0.0))  # the wall 2.4 m ahead of the sensor
    assert np.all(samples(far, 20, "ultrasonic_cm") == ULTRASONIC_MAX_CM)


@pytest.mark.parametrize("distance", [0.3, 0.91, 1.5, 1.95])
def test_ultrasonic_reads_the_distance_to_a_wall_ahead(distance: float) -> None:
    sim = make(ARENA)
    sim.teleport(0, Pose(2.0 - 0.09 - distance, 0.0, 0.0))
    values = samples(sim, 30, "ultrasonic_cm")[:, 0]
    sigma = ULTRASONIC_SIGMA_CM
    assert np.all(np.abs(values - 100 * distance) <= 5 * sigma)
    assert abs(values.mean() - 100 * distance) <= 5 * sigma / math.sqrt(30)


@pytest.mark.parametrize(("bearing_deg", "seen"), [(0.0, True), (12.0, True), (-12.0, True), (40.0, False)])
def test_ultrasonic_sees_within_its_cone(bearing_deg: float, seen: bool) -> None:
    bearing = math.radians(bearing_deg)
    box = Box(0.09 + 0.65 * math.cos(bearing), 0.65 * math.sin(bearing), 0.2, 0.2, bearing)
    sim = make(WorldConfig(width=4.0, height=4.0, boxes=(box,)))
    values = samples(sim, 5, "ultrasonic_cm")[:, 0]
    if seen:
        assert np.all(values < 60.0)
    else:
        assert np.all(np.abs(values - 191.0) < 5 * ULTRASONIC_SIGMA_CM)


def test_ultrasonic_model_clips_and_adds_noise() -> None:
    noise = np.array([0.0, 1.0, -2.0, 0.0, 0.0, 10.0])
    values = ultrasonic_cm(np.array([1.0, 1.0, 1.0, 0.0, 3.0, 1.97]), noise, sigma_cm=0.5)
    assert values.tolist() == [100.0, 100.5, 99.0, 2.0, 200.0, 200.0]


@pytest.mark.parametrize("yaw_deg", [0.0, 30.0, 90.0, 135.0, 180.0, -90.0, 300.0, 359.0])
def test_magnetometer_heading_is_90_minus_yaw(yaw_deg: float) -> None:
    sim = make(ARENA)
    sim.teleport(0, Pose(0.0, 0.0, math.radians(yaw_deg)))
    heading = samples(sim, 25, "heading_deg")[:, 0]
    assert np.all((heading >= 0.0) & (heading < 360.0))
    error = angle_diff_deg(heading, (90.0 - yaw_deg) % 360.0)
    assert np.all(np.abs(error) < 6.0)  # ~1 degree sigma
    assert abs(error.mean()) < 1.0


# --- noise statistics ----------------------------------------------------------------------

N_SAMPLES = 10_000


def ir_uniforms(source: str) -> tuple[Array, Array]:
    if source == "generator":
        rng = np.random.default_rng(20240611)
        return rng.random(N_SAMPLES), rng.random(N_SAMPLES)
    bank = NoiseBank(7, [3], uniforms=2, normals=0)
    # copies: a draw is a view into the bank's block buffer, refilled every ``block`` draws
    draws = np.array([bank.draw()[0][0].copy() for _ in range(N_SAMPLES)])
    return draws[:, 0], draws[:, 1]


def check_ir_error_statistics(ratio: Array) -> None:
    """``ratio`` = noisy / clean voltage: the IR error model's fractions and factor range."""
    n = ratio.size
    down, up = ratio < 1.0, ratio > 1.0
    assert abs(down.mean() - IR_P) <= five_sigma(IR_P, n)
    assert abs(up.mean() - IR_P) <= five_sigma(IR_P, n)
    assert np.all(ratio[~down & ~up] == 1.0)
    for mask, sign in ((down, -1.0), (up, 1.0)):
        factor = sign * (ratio[mask] - 1.0) / IR_BOUND  # uniform in [0, 1]
        assert factor.min() >= 0.0 and factor.max() <= 1.0 + 1e-9
        assert factor.max() > 0.95 and factor.min() < 0.05
        assert abs(factor.mean() - 0.5) <= 5 * math.sqrt(1 / 12 / factor.size)


@pytest.mark.parametrize("source", ["generator", "noise_bank"])
def test_sharp_ir_error_model_statistics(source: str) -> None:
    pick, factor = ir_uniforms(source)
    clean = np.full(N_SAMPLES, 1.27)
    check_ir_error_statistics(IR.with_error(clean, pick, factor) / clean)


def test_sharp_ir_noise_in_a_swarm_follows_the_error_model() -> None:
    sim = make(ARENA, robots=100)
    volts = samples(sim, 100, "ir_voltage")  # 100 robots x 100 samples, all 1.91 m from the wall
    clean = IR.voltage(reading(sim, "ir_distance_cm"))
    check_ir_error_statistics((volts / clean).ravel())


@pytest.mark.parametrize(
    "intensity", [51.0, 75.0, 101.0, 150.0, 201.0, 300.0, 399.0, 500.0, 600.0, 700.0, 799.0]
)
def test_photoresistor_error_model_statistics(intensity: float) -> None:
    rng = np.random.default_rng(int(intensity) * 7919)
    pick, direction, factor = rng.random((3, N_SAMPLES))
    clean = np.full(N_SAMPLES, intensity)
    scale = PHOTO.with_error(clean, pick, direction, factor) / intensity
    p_exact = float(np.interp(intensity, INTENSITY, LIGHT_EXACT))
    bound = float(np.interp(intensity, INTENSITY, LIGHT_BOUND))
    exact, down, up = scale == 1.0, scale < 1.0, scale > 1.0
    assert abs(exact.mean() - p_exact) <= five_sigma(p_exact, N_SAMPLES)
    changed = down.sum() + up.sum()
    assert abs(down.sum() / changed - 0.5) <= five_sigma(0.5, changed)
    size = np.abs(scale[~exact] - 1.0) / bound
    assert size.max() <= 1.0 + 1e-9
    assert size.max() > 0.95
    assert abs(size.mean() - 0.5) <= 5 * math.sqrt(1 / 12 / size.size)


def test_noise_bank_draws_uniforms_and_normals() -> None:
    bank = NoiseBank(11, [0], uniforms=3, normals=2, block=64)
    draws = [tuple(part.copy() for part in bank.draw()) for _ in range(N_SAMPLES // 3)]
    uniform = np.array([u[0] for u, _ in draws]).ravel()
    normal = np.array([g[0] for _, g in draws]).ravel()
    assert uniform.min() >= 0.0 and uniform.max() < 1.0
    assert abs(uniform.mean() - 0.5) <= 5 * math.sqrt(1 / 12 / uniform.size)
    assert abs(normal.mean()) <= 5 / math.sqrt(normal.size)
    assert abs(normal.std() - 1.0) <= 5 / math.sqrt(2 * normal.size)


def test_noise_bank_streams_are_per_robot() -> None:
    swarm = NoiseBank(5, np.arange(10), uniforms=4, normals=2, block=16)
    alone = NoiseBank(5, [7], uniforms=4, normals=2, block=16)
    other_seed = NoiseBank(6, [7], uniforms=4, normals=2, block=16)
    for _ in range(50):  # across several blocks
        (u10, g10), (u1, g1), (u6, _) = swarm.draw(), alone.draw(), other_seed.draw()
        assert np.array_equal(u10[7], u1[0]) and np.array_equal(g10[7], g1[0])
        assert not np.array_equal(u6[0], u1[0])
        assert not np.array_equal(u10[6], u10[7])


def test_ultrasonic_and_magnetometer_noise_have_their_sigma() -> None:
    sim = make(ARENA, robots=100)
    for k in range(100):
        sim.teleport(k, Pose(0.0, 0.0, math.radians(3.6 * k)))
    sim.teleport(0, Pose(1.0, 0.0, 0.0))
    ranges = samples(sim, 100, "ultrasonic_cm")
    fields = []
    headings = []
    for _ in range(100):
        sim.step(20)
        fields.append(reading(sim, "magnetic_field"))
        headings.append(reading(sim, "heading_deg"))
    echo = ranges[:, 0]
    sigma = ULTRASONIC_SIGMA_CM
    assert abs(echo.mean() - 91.0) <= 5 * sigma / 10
    assert echo.std() == pytest.approx(sigma, rel=5 / math.sqrt(2 * echo.size))
    yaw_deg = 3.6 * np.arange(100)
    yaw_deg[0] = 0.0
    error = angle_diff_deg(np.array(headings), (90.0 - yaw_deg) % 360.0).ravel()
    expected_sigma = math.degrees(MAGNETOMETER_SIGMA / 2.0e-5)
    assert abs(error.mean()) <= 5 * expected_sigma / math.sqrt(error.size)
    assert error.std() == pytest.approx(expected_sigma, rel=0.05)
    vertical = np.array(fields)[..., 2].ravel()
    assert vertical.mean() == pytest.approx(-4.5e-5, abs=5 * MAGNETOMETER_SIGMA / 100)


# --- determinism ---------------------------------------------------------------------------

PHYSICS = ("x", "y", "yaw", "v", "w", "wheel_angle")
READINGS = tuple(READING)


def snapshot(sim: Simulation, rows: Sequence[int] | slice = slice(None)) -> dict[str, Array]:
    state = {name: np.array(getattr(sim, name)[rows]) for name in PHYSICS}
    state["motor_speed"] = sim.motors.speed[rows].copy()
    state["motor_current"] = sim.motors.current[rows].copy()
    state["bumpers"] = sim.bumpers[rows].copy()
    state["signals"] = np.array(
        [[value for _, _, value in sim.signals(robot)] for robot in np.arange(sim.count)[rows]]
    )
    for name in READINGS:
        state[name] = reading(sim, name)[rows]
    return state


def assert_identical(one: dict[str, Array], other: dict[str, Array], when: str) -> None:
    for name, value in one.items():
        assert np.array_equal(value, other[name]), f"{name} differs at {when}"


def random_duties(seed: int, robots: int, changes: int) -> Array:
    """Signed duties (changes, robots, 2), a new pair every 100 ms."""
    rng = np.random.default_rng(seed)
    return np.round(rng.uniform(-1024, 1024, (changes, robots, 2)))


def run_schedule(sim: Simulation, duties: Array, steps: int = 100) -> list[dict[str, Array]]:
    out = []
    for duty in duties:
        drive_each(sim, duty)
        sim.step(steps)
        out.append(snapshot(sim))
    return out


def test_same_seed_gives_identical_runs() -> None:
    duties = random_duties(1, 3, 20)  # 2 s
    first = run_schedule(make(DEMO, robots=3, seed=42), duties)
    second = run_schedule(make(DEMO, robots=3, seed=42), duties)
    for k, (a, b) in enumerate(zip(first, second, strict=True)):
        assert_identical(a, b, f"{(k + 1) * 0.1:.1f} s")


def test_different_seed_changes_the_noise_but_not_the_physics() -> None:
    duties = random_duties(2, 3, 20)
    first = run_schedule(make(DEMO, robots=3, seed=1), duties)
    second = run_schedule(make(DEMO, robots=3, seed=2), duties)
    for a, b in zip(first, second, strict=True):
        for name in (*PHYSICS, "motor_speed", "motor_current", "ir_distance_cm"):
            assert np.array_equal(a[name], b[name]), name
    assert not np.array_equal(first[-1]["magnetic_field"], second[-1]["magnetic_field"])
    assert not all(
        np.array_equal(a["heading_deg"], b["heading_deg"]) for a, b in zip(first, second, strict=True)
    )


def test_reset_starts_the_same_run_again() -> None:
    duties = random_duties(3, 2, 15)
    sim = make(DEMO, robots=2, seed=9)
    fresh = snapshot(make(DEMO, robots=2, seed=9))
    first = run_schedule(sim, duties)
    assert sim.geometry.boards_down > 0 or sim.bumpers.any() or sim.time > 0
    sim.reset()
    assert sim.time == 0.0 and sim.geometry.boards_down == 0
    assert_identical(snapshot(sim), fresh, "reset")
    again = run_schedule(sim, duties)
    for k, (a, b) in enumerate(zip(first, again, strict=True)):
        assert_identical(a, b, f"step {k} after reset")


# --- swarms --------------------------------------------------------------------------------

#: (steps, left duty, right duty, brake): into board 0, on into the wall, spin, arc, brake, reverse.
SWARM_SCHEDULE = [
    (3500, 1024, 1024, False),
    (400, -700, 700, False),
    (1500, 1024, 900, False),
    (300, 0, 0, True),
    (800, -1024, -1024, False),
]


def test_one_robot_and_a_swarm_of_100_give_identical_results() -> None:
    single, swarm = make(DEMO, robots=1), make(DEMO, robots=100, spacing=0.0)
    assert np.array_equal(swarm.x, np.zeros(100))
    hits = 0
    for steps, left, right, braking in SWARM_SCHEDULE:
        for sim in (single, swarm):
            brake(sim) if braking else drive(sim, left, right)
        for _ in range(steps // 50):
            single.step(50)
            swarm.step(50)
            assert_identical(snapshot(single, [0]), snapshot(swarm, [0]), f"{single.time:.2f} s")
            hits += bool(single.bumpers[0].any())
    assert single.geometry.boards_down == swarm.geometry.boards_down == 1
    assert hits > 0  # it did meet the wall
    # every robot of the swarm moved alike; their noise did not
    assert np.all(swarm.x == swarm.x[0]) and np.all(swarm.yaw == swarm.yaw[0])
    assert len(np.unique(reading(swarm, "heading_deg"))) == 100


def test_robot_k_is_the_same_in_a_smaller_swarm() -> None:
    duties = np.abs(random_duties(4, 10, 30))  # 3 s forward, each robot its own pins
    small, large = make(ARENA, robots=4, seed=3), make(ARENA, robots=10, seed=3)
    for sim in (small, large):
        for k in range(sim.count):
            sim.teleport(k, Pose(-1.5 + 0.8 * (k % 4), 1.2 - 0.8 * (k // 4), 0.7 * k))
    bumped = np.zeros(4, dtype=bool)
    for duty in duties:
        drive_each(small, duty[:4])
        drive_each(large, duty)
        small.step(100)
        large.step(100)
        assert_identical(snapshot(small), snapshot(large, range(4)), f"{small.time:.1f} s")
        bumped |= small.bumpers.any(axis=1)
    assert bumped.any()  # walls were met on the way


def test_robot_in_a_corner_is_not_affected_by_another_robot_knocking_two_boards() -> None:
    # Robot 0 pushes into the (2, 2) corner (two walls to resolve every step); robot 1
    # runs into two boards side by side and knocks both in one step.
    world = WorldConfig(
        width=4.0, height=4.0, boards=(Board(-0.8, -0.94, math.pi), Board(-0.8, -1.06, math.pi))
    )
    alone, pair = make(world, robots=1), make(world, robots=2)
    for sim in (alone, pair):
        sim.teleport(0, Pose(1.85, 1.85, math.pi / 4))
        drive(sim, 1024, 1024)
    pair.teleport(1, Pose(-1.5, -1.0, 0.0))
    for _ in range(1500):
        alone.step()
        pair.step()
        assert_identical(snapshot(alone, [0]), snapshot(pair, [0]), f"{alone.time:.3f} s")
    assert pair.geometry.boards_down == 2


# --- teleport ------------------------------------------------------------------------------


def test_teleport_places_the_robot_at_rest() -> None:
    sim = make(ARENA, robots=2)
    drive(sim, 1024, 600)
    sim.step(500)
    sim.teleport(1, Pose(-1.0, 0.5, 1.2))
    assert (sim.x[1], sim.y[1], sim.yaw[1]) == (-1.0, 0.5, 1.2)
    assert sim.v[1] == sim.w[1] == 0.0
    assert np.all(sim.motors.speed[1] == 0.0) and np.all(sim.motors.current[1] == 0.0)
    assert sim.v[0] > 0.0  # the other robot keeps going
    drive(sim, 0, 0)
    sim.step(100)
    assert (sim.x[1], sim.y[1], sim.yaw[1]) == (-1.0, 0.5, 1.2)


def test_teleport_into_a_wall_is_pushed_out() -> None:
    sim = make(ARENA)
    sim.teleport(0, Pose(1.95, 0.0, 0.0))
    sim.step()
    assert sim.x[0] == pytest.approx(2.0 - BODY, abs=1e-9)


@pytest.mark.parametrize("index", [-1, 2, 100])
def test_teleport_to_a_missing_robot_raises(index: int) -> None:
    sim = make(ARENA, robots=2)
    with pytest.raises(HilSimError, match=f"no robot {index}"):
        sim.teleport(index, Pose())


@pytest.mark.parametrize(
    "pose",
    [Pose(2.0, 0.0), Pose(0.0, -2.5), Pose(math.nan, 0.0), Pose(0.0, 0.0, math.inf), Pose(-7.0, 9.0)],
    ids=["on-the-wall", "below", "nan-x", "infinite-yaw", "far-away"],
)
def test_teleport_outside_the_arena_raises(pose: Pose) -> None:
    sim = make(ARENA)
    with pytest.raises(HilSimError, match="outside the arena"):
        sim.teleport(0, pose)
    assert (sim.x[0], sim.y[0]) == (0.0, 0.0)
