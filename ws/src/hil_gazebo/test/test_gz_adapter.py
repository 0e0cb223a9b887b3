"""The Gazebo adapter's core: pins to wheel torques or twists, Gazebo's sensors to the simulator's signals."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hil_common.errors import HilError
from hil_devices.core.library import load_device_library
from hil_gazebo.core.gz_adapter import (
    DRIVES,
    SCAN_RANGE,
    GzAdapter,
    bridged_topics,
    scan_ranges,
    scan_specs,
    scanners,
)
from hil_sim.core.build import build_simulation
from hil_sim.core.motor import MotorBank
from hil_sim.core.robot_model import demo_robot
from hil_sim.core.sensors import EarthField, SharpIrModel
from hil_sim.core.world import Pose, WorldGeometry, load_world

SRC = Path(__file__).resolve().parents[2]
LIBRARY = load_device_library([SRC / "hil_devices" / "config" / "devices"])
IR = SharpIrModel.from_table(LIBRARY["sharp_ir"].table)
DEMO = load_world(SRC / "hil_sim" / "worlds" / "demo.yaml")
ROBOT = demo_robot(LIBRARY)
MOTOR = ROBOT.motor
GEAR = MOTOR.gear_ratio
WHEEL_RADIUS, WHEEL_BASE = ROBOT.body.wheel_radius, ROBOT.body.wheel_base
BODY_RADIUS, BUMPER_TRAVEL = ROBOT.body.body_radius, ROBOT.body.bumper_travel
BUMPER_HOLD, ULTRASONIC_SIGMA_CM = 0.05, 0.3


def pins(left: tuple[float, float, float], right: tuple[float, float, float]) -> list[tuple[str, str, float]]:
    """Enable, a, b of both motor channels as the bridge names them."""
    return [
        (f"motor_{side}", name, value)
        for side, values in (("left", left), ("right", right))
        for name, value in zip(("enable", "a", "b"), values, strict=True)
    ]


FORWARD = (1024.0, 1.0, 0.0)
BACK = (1024.0, 0.0, 1.0)
BRAKE = (1024.0, 1.0, 1.0)
COAST = (0.0, 1.0, 0.0)


def adapter(drive: str = "torque", **options: object) -> GzAdapter:
    return GzAdapter(DEMO, robot=ROBOT, drive=drive, **options)  # type: ignore[arg-type]


def test_stall_torque_is_the_motor_models_and_brake_and_coast_follow_the_l298_table() -> None:
    gz = adapter()
    gz.take_pins(pins(FORWARD, BACK), mcu_time=0.0)
    stall = MOTOR.kt * MOTOR.supply_voltage / MOTOR.resistance * GEAR
    left, right = gz.wheel_torques((0.0, 0.0))
    assert left == pytest.approx(stall, rel=1e-6)
    assert right == pytest.approx(-stall, rel=1e-6)
    gz.take_pins(pins(BRAKE, COAST), mcu_time=0.01)
    left, right = gz.wheel_torques((5.0, 5.0))
    # Shorted terminals: back-EMF current brakes the turning wheel; open ones pass nothing.
    assert left == pytest.approx(-MOTOR.kt * MOTOR.ke * 5.0 * GEAR / MOTOR.resistance * GEAR, rel=1e-5)
    assert right == 0.0


def test_torque_at_the_native_steady_speed_balances_the_gearbox_friction_gazebo_applies() -> None:
    # One motor model: at the speed the native engine settles at, the adapter's torque
    # equals the viscous and Coulomb friction the exported wheel joints carry.
    gz = adapter()
    gz.take_pins(pins(FORWARD, FORWARD), mcu_time=0.0)
    wheel = MOTOR.steady_speed(MOTOR.supply_voltage) / GEAR
    left, right = gz.wheel_torques((wheel, wheel))
    friction = MOTOR.coulomb * GEAR + MOTOR.viscous * GEAR**2 * wheel
    assert left == pytest.approx(friction, rel=1e-6)
    assert right == pytest.approx(friction, rel=1e-6)


def test_velocity_drive_runs_the_motors_on_gazebos_clock_to_the_native_steady_speed() -> None:
    gz = adapter("velocity")
    gz.take_pins(pins(FORWARD, FORWARD), mcu_time=0.0)
    reference = MotorBank(MOTOR, (1, 2), load_inertia=ROBOT.load_inertia, dt=0.001)
    voltage = np.full((1, 2), MOTOR.supply_voltage)
    for tick in range(201):  # 1 s of Gazebo time at 200 Hz
        v, w = gz.twist(tick * 0.005)
    for _ in range(1000):
        reference.step(voltage, np.ones((1, 2), dtype=bool))
    assert v == pytest.approx(WHEEL_RADIUS * reference.speed[0, 0] / GEAR, rel=1e-9)
    assert w == pytest.approx(0.0, abs=1e-12)
    assert v == pytest.approx(ROBOT.max_wheel_speed * WHEEL_RADIUS, rel=0.01)
    gz.take_pins(pins(BACK, FORWARD), mcu_time=1.0)
    for tick in range(201, 401):
        v, w = gz.twist(tick * 0.005)
    # The left wheel first had to stop and reverse: after 1 s it is within 0.1 % of the right.
    assert v == pytest.approx(0.0, abs=1e-3 * WHEEL_RADIUS * ROBOT.max_wheel_speed)
    assert w == pytest.approx(2 * WHEEL_RADIUS * ROBOT.max_wheel_speed / WHEEL_BASE, rel=0.01)


def test_velocity_drive_starts_over_when_gazebos_clock_goes_back() -> None:
    gz = adapter("velocity")
    gz.take_pins(pins(FORWARD, FORWARD), mcu_time=0.0)
    gz.twist(10.0)
    v, _ = gz.twist(10.5)
    assert v > 0
    again, _ = gz.twist(0.0)  # a reset world: no integration across the jump
    assert again == pytest.approx(v)
    moved, _ = gz.twist(100.0)  # a long pause: at most MAX_CATCH_UP_S integrated
    assert moved == pytest.approx(ROBOT.max_wheel_speed * WHEEL_RADIUS, rel=0.2)


def test_silent_mcu_lets_the_motors_coast_once_and_pins_bring_them_back() -> None:
    gz = adapter(pin_timeout=0.1)
    gz.take_pins(pins(FORWARD, FORWARD), mcu_time=0.0)
    assert not gz.check_silence(mcu_time=0.05)
    assert gz.check_silence(mcu_time=0.2)
    assert not gz.check_silence(mcu_time=0.3)  # reported once
    assert gz.wheel_torques((0.0, 0.0)) == (0.0, 0.0)
    gz.take_pins(pins(FORWARD, FORWARD), mcu_time=0.4)
    assert gz.wheel_torques((0.0, 0.0))[0] > 0


def test_joint_states_without_both_wheels_or_with_bad_numbers_are_counted_and_ignored() -> None:
    gz = adapter()
    assert gz.wheel_speeds(["right_wheel_joint", "left_wheel_joint"], [2.0, 1.0]) == (1.0, 2.0)
    assert gz.wheel_speeds(["left_wheel_joint"], [1.0]) is None
    assert gz.wheel_speeds(["left_wheel_joint", "right_wheel_joint"], [math.nan, 1.0]) is None
    assert (gz.counters.joint_states, gz.counters.bad_joint_states) == (1, 2)


def native_scan(world_geometry: WorldGeometry, pose: Pose, name: str) -> tuple[list[float], float, float]:
    """What a Gazebo lidar on the robot would report in the native world: ranges, angle_min, increment."""
    spec = scan_specs(ROBOT, sensor_rate=50.0)[name]
    mount = ROBOT.device(name).mount
    angles = pose.yaw + mount.yaw + np.linspace(spec.min_angle, spec.max_angle, spec.samples)
    c, s = math.cos(pose.yaw), math.sin(pose.yaw)
    ox, oy = pose.x + c * mount.x - s * mount.y, pose.y + s * mount.x + c * mount.y
    hits = world_geometry.cast(
        np.full(len(angles), ox), np.full(len(angles), oy), np.cos(angles), np.sin(angles), SCAN_RANGE
    )
    ranges = [math.inf if h >= SCAN_RANGE else float(np.float32(h)) for h in hits]
    return ranges, spec.min_angle, (spec.max_angle - spec.min_angle) / (spec.samples - 1)


@pytest.mark.parametrize(
    "start",
    [Pose(0.0, 0.0, 0.0), Pose(0.1, -0.2, 0.7), Pose(1.0, 1.2, 2.5), Pose(-2.0, 0.5, -1.2)],
)
@pytest.mark.parametrize("seed", [0, 7])
def test_signals_equal_the_native_simulators_for_the_same_pose_ranges_field_and_seed(
    start: Pose, seed: int
) -> None:
    world = replace(DEMO, start=start)
    native = build_simulation(world, library=LIBRARY, seed=seed)
    expected = native.signals(0)
    gz = GzAdapter(world, robot=ROBOT, seed=seed)
    gz.take_odometry(start.x, start.y, start.yaw, stamp=0.0)
    geometry = WorldGeometry(world)
    for name in ("ultrasonic", "ir"):
        ranges, angle_min, step = native_scan(geometry, start, name)
        assert gz.take_scan(
            name,
            ranges,
            angle_min=angle_min,
            angle_increment=step,
            range_min=0.02,
            range_max=SCAN_RANGE,
            stamp=0.0,
        )
    # Gazebo's magnetometer: the earth's field in the body frame, noise-free.
    field = EarthField().body(np.array([start.yaw]))[0]
    gz.take_field((float(field[0]), float(field[1]), float(field[2])), stamp=0.0)
    got = gz.signals()
    assert [(d, n) for d, n, _ in got] == [(d, n) for d, n, _ in expected]
    for (device, name, value), (_, _, want) in zip(got, expected, strict=True):
        assert value == pytest.approx(want, abs=1e-4), f"{device}.{name}"


def test_sensors_are_sampled_once_per_sensor_period_of_gazebo_time() -> None:
    gz = adapter(sensor_rate=50.0)
    gz.take_scan(
        "ultrasonic", [1.0] * 5, angle_min=-0.2, angle_increment=0.1, range_min=0.02, range_max=2.5, stamp=0.0
    )
    first = gz.signals()
    gz.take_odometry(0.0, 0.0, 0.0, stamp=0.019)
    assert gz.signals() == first  # same period: the same sample
    assert gz.counters.samples == 1
    gz.take_odometry(0.0, 0.0, 0.0, stamp=0.02)
    second = {(d, n): v for d, n, v in gz.signals()}
    assert gz.counters.samples == 2
    assert second[("ultrasonic", "distance")] == pytest.approx(100.0, abs=5 * ULTRASONIC_SIGMA_CM)
    assert second[("ultrasonic", "distance")] != {(d, n): v for d, n, v in first}[("ultrasonic", "distance")]


def test_no_return_reads_as_out_of_range_and_too_close_as_the_minimum() -> None:
    ranges = scan_ranges([math.inf, -math.inf, math.nan, 0.5, 7.0, 0.001], 0.02, 2.5)
    assert ranges.tolist() == [2.5, 0.02, 2.5, 0.5, 2.5, 0.02]
    gz = adapter()
    gz.take_scan(
        "ultrasonic",
        [math.inf] * 5,
        angle_min=-0.2,
        angle_increment=0.1,
        range_min=0.02,
        range_max=2.5,
        stamp=0.0,
    )
    gz.take_scan(
        "ir", [math.inf] * 5, angle_min=-0.05, angle_increment=0.025, range_min=0.02, range_max=2.5, stamp=0.0
    )
    values = {(d, n): v for d, n, v in gz.signals()}
    assert values[("ultrasonic", "distance")] == 200.0
    assert values[("ir", "voltage")] == pytest.approx(float(IR.voltage(np.array(250.0))), rel=0.1)


def bumper_scan(gz: GzAdapter, hits: dict[float, float], *, stamp: float) -> None:
    """A bumper fan scan with returns at these bearings (deg) and ranges (m), nothing elsewhere."""
    spec = scan_specs(ROBOT, sensor_rate=50.0)["bumper"]
    bearings = np.linspace(spec.min_angle, spec.max_angle, spec.samples)
    ranges = [math.inf] * spec.samples
    for degrees, distance in hits.items():
        ranges[int(np.argmin(np.abs(bearings - math.radians(degrees))))] = distance
    step = (spec.max_angle - spec.min_angle) / (spec.samples - 1)
    assert gz.take_scan(
        "bumper",
        ranges,
        angle_min=spec.min_angle,
        angle_increment=step,
        range_min=spec.range_min,
        range_max=spec.range_max,
        stamp=stamp,
    )


def pressed(gz: GzAdapter) -> tuple[float, float]:
    values = {(d, n): v for d, n, v in gz.signals()}
    return values[("bumper_left", "pressed")], values[("bumper_right", "pressed")]


@pytest.mark.parametrize(
    ("bearing", "expected"),
    [(0.0, (1.0, 1.0)), (10.0, (1.0, 1.0)), (60.0, (1.0, 0.0)), (-60.0, (0.0, 1.0)), (-20.0, (0.0, 1.0))],
)
def test_bumper_fan_returns_within_reach_close_the_switches_of_their_sector(
    bearing: float, expected: tuple[float, float]
) -> None:
    gz = adapter()
    bumper_scan(gz, {bearing: BODY_RADIUS + 0.002}, stamp=1.0)
    assert pressed(gz) == expected


def test_bumper_opens_after_the_hold_and_ignores_returns_beyond_its_travel() -> None:
    gz = adapter()
    bumper_scan(gz, {0.0: BODY_RADIUS + 2 * BUMPER_TRAVEL}, stamp=1.0)
    assert pressed(gz) == (0.0, 0.0)
    bumper_scan(gz, {0.0: BODY_RADIUS}, stamp=1.01)
    gz.take_odometry(0.0, 0.0, 0.0, stamp=1.01 + BUMPER_HOLD - 0.001)
    assert pressed(gz) == (1.0, 1.0)
    gz.take_odometry(0.0, 0.0, 0.0, stamp=1.01 + BUMPER_HOLD + 0.001)
    assert pressed(gz) == (0.0, 0.0)


@pytest.mark.parametrize(
    ("bearing", "expected"),
    [(-80.0, (0.0, 0.0)), (-30.0, (0.0, 1.0)), (0.0, (1.0, 1.0)), (30.0, (1.0, 0.0)), (80.0, (0.0, 0.0))],
)
def test_bumper_sectors_overlap_in_front(bearing: float, expected: tuple[float, float]) -> None:
    gz = adapter()
    gz.devices.touch(np.zeros(1, dtype=np.intp), np.radians([bearing]), 1.0)
    gz.take_odometry(0.0, 0.0, 0.0, stamp=1.0)
    assert pressed(gz) == expected


@pytest.mark.parametrize(
    ("name", "ranges", "numbers"),
    [
        ("sonar", [1.0], {}),
        ("ultrasonic", [], {}),
        ("ultrasonic", [1.0], {"angle_min": math.nan}),
        ("ultrasonic", [1.0], {"range_min": 3.0}),
        ("ultrasonic", [1.0], {"stamp": math.inf}),
    ],
)
def test_malformed_scans_are_counted_and_change_nothing(
    name: str, ranges: list[float], numbers: dict[str, float]
) -> None:
    gz = adapter()
    before = gz.signals()
    arguments = {
        "angle_min": 0.0,
        "angle_increment": 0.1,
        "range_min": 0.02,
        "range_max": 2.5,
        "stamp": 0.0,
        **numbers,
    }
    assert not gz.take_scan(name, ranges, **arguments)
    assert gz.counters.bad_scans == 1
    assert gz.signals() == before


def test_a_field_with_bad_numbers_is_counted_and_the_heading_kept() -> None:
    gz = adapter()
    gz.take_field((0.0, 2e-5, -4e-5), stamp=0.0)
    heading = {(d, n): v for d, n, v in gz.signals()}[("compass", "heading")]
    assert heading == pytest.approx(90.0, abs=5.0)  # facing +x, north along +y: east
    gz.take_field((math.nan, 0.0, 0.0), stamp=0.5)
    assert gz.counters.bad_fields == 1
    assert {(d, n): v for d, n, v in gz.signals()}[("compass", "heading")] == pytest.approx(90.0, abs=5.0)


@pytest.mark.parametrize("drive", DRIVES)
def test_bridged_topics_carry_every_sensor_and_the_drives_command(drive: str) -> None:
    topics = bridged_topics(drive)
    assert set(scanners(ROBOT)) == {"ultrasonic", "ir", "bumper"} and set(scanners(ROBOT)) <= set(topics)
    assert topics["mag:compass"].ros == "mag" and topics["mag:compass"].gz == "/model/hil_robot/mag"
    commands = {t.ros for t in topics.values() if t.direction == "ROS_TO_GZ"}
    if drive == "torque":
        assert commands == {"gz/left_wheel/cmd_force", "gz/right_wheel/cmd_force"}
        assert topics["left_force"].gz == "/model/hil_robot/joint/left_wheel_joint/cmd_force"
    else:
        assert commands == {"gz/cmd_vel"}
    assert len({t.gz for t in topics.values()}) == len(topics)


def test_unknown_drive_or_bad_rate_names_the_choices_and_the_parameter() -> None:
    with pytest.raises(HilError, match="drive = 'wheels' is not one of torque, velocity"):
        bridged_topics("wheels")
    with pytest.raises(HilError, match="drive = 'wheels'"):
        adapter("wheels")
    with pytest.raises(HilError, match="sensor_rate = 0"):
        adapter(sensor_rate=0)
