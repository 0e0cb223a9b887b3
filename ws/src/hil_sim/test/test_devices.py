"""Device model kinds in a simulation: drivers, rangers on mounts and servos, encoders, IMU, line sensors."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hil_devices.core.devices import DeviceConfig
from hil_devices.core.library import load_device_library
from hil_devices.core.models import model_kinds
from hil_devices.core.profile import model_params
from hil_sim.core.build import build_simulation
from hil_sim.core.devices import KINDS
from hil_sim.core.devices.imu import GRAVITY
from hil_sim.core.motor import MotorParams
from hil_sim.core.robot_model import Body, DeviceSpec, Mount, RobotModel, demo_robot
from hil_sim.core.simulation import Simulation
from hil_sim.core.world import LineMarking, Pose, WorldConfig
from hil_sim.errors import HilSimError

SRC = Path(__file__).resolve().parents[2]
DEVICES = SRC / "hil_devices" / "config" / "devices"
LIBRARY = load_device_library([DEVICES])
DEMO = demo_robot(LIBRARY)
#: A walled 4 m arena with nothing in it.
ARENA = WorldConfig(width=4.0, height=4.0)


def robot(*devices: DeviceSpec, drivers: str = "l298n", name: str = "test", **driver: Any) -> RobotModel:
    """A robot with these devices and two motor drivers of one kind."""
    wheels = tuple(DeviceSpec(f"motor_{side}", drivers, wheel=side, **driver) for side in ("left", "right"))
    return RobotModel(name, devices=(*wheels, *devices))


def sonar(name: str, mount: Mount, **params: Any) -> DeviceSpec:
    return DeviceSpec(
        name, "ranger", mount, {"beam": "ultrasonic", "max_range_cm": 200.0, "sigma_cm": 0.0, **params}
    )


def sample(sim: Simulation) -> None:
    """Step to the next sensor sample."""
    sim.step(sim.sensor_every - sim.steps % sim.sensor_every)


# --- the kinds' parameters: declared once, in hil_devices' models.json -------------------------


def test_every_kind_is_declared_in_models_json_and_every_declared_kind_exists() -> None:
    assert set(KINDS) == set(model_kinds())
    for name, cls in KINDS.items():
        declared = model_kinds()[name]
        assert set(cls.PARAMS) == set(declared.params) and declared.description == cls.DESCRIPTION


@pytest.mark.parametrize(
    "config", [c for c in LIBRARY.values() if c.model is not None], ids=lambda config: config.name
)
def test_every_library_type_gives_its_kind_every_parameter_it_needs(config: DeviceConfig) -> None:
    assert config.model is not None
    cls = KINDS[config.model.kind]
    params = model_params(config, {})
    wheel = "left" if cls.WHEEL else ""
    spec = DeviceSpec(config.name, config.model.kind, params=params, wheel=wheel)
    resolved = cls([spec], robots=1, model=DEMO, where=f"type {config.name}").params[0]  # checks them all
    needed = [name for name, param in cls.PARAMS.items() if param.default is None]
    assert all(name in params for name in needed)
    if resolved.get("beam") == "ir":  # an IR ranger reads through its distance table
        assert len(resolved["distance_cm"]) >= 2 and len(resolved["voltage_v"]) == len(
            resolved["distance_cm"]
        )


# --- motor drivers -------------------------------------------------------------------------

#: Driver kind, its inputs (the same on both wheels), ties, the wheel speed's expected
#: sign (+1 forward, -1 back, 0 stopped) and the fraction of full speed.
DRIVER_CASES = [
    ("l298n", {"enable": 1024, "a": 1024, "b": 0}, {}, 1, 1.0),
    ("l298n", {"enable": 512, "a": 1024, "b": 0}, {}, 1, 0.5),
    ("l298n", {"enable": 1024, "a": 0, "b": 1024}, {}, -1, 1.0),
    ("l298n", {"a": 512, "b": 0}, {"enable": 1024}, 1, 0.5),  # ENA jumpered, PWM on IN1
    ("l298n", {"a": 1024, "b": 768}, {"enable": 1024}, 1, 0.25),  # IN1 high, PWM on IN2
    ("l298n", {"a": 0, "b": 512}, {"enable": 1024}, -1, 0.5),
    ("l298n", {"enable": 1024, "a": 1024, "b": 1024}, {}, 0, 0.0),  # brake
    ("tb6612fng", {"pwm": 1024, "in1": 1, "in2": 0, "stby": 1}, {}, 1, 1.0),
    ("tb6612fng", {"pwm": 256, "in1": 0, "in2": 1}, {"stby": 1}, -1, 0.25),
    ("tb6612fng", {"pwm": 1024, "in1": 1, "in2": 0, "stby": 0}, {}, 0, 0.0),  # standby
    ("drv8833", {"in1": 1024, "in2": 0}, {}, 1, 1.0),
    ("drv8833", {"in1": 512, "in2": 0}, {}, 1, 0.5),  # fast decay
    ("drv8833", {"in1": 1024, "in2": 512}, {}, 1, 0.5),  # slow decay
    ("drv8833", {"in1": 0, "in2": 768}, {}, -1, 0.75),
    ("l9110s", {"ia": 0, "ib": 1024}, {}, -1, 1.0),
    ("l9110s", {"ia": 1024, "ib": 256}, {}, 1, 0.75),
    ("pwm_dir", {"pwm": 1024, "dir": 0}, {}, 1, 1.0),
    ("pwm_dir", {"pwm": 512, "dir": 1}, {}, -1, 0.5),
    ("cr_servo", {"pulse_us": 2000}, {}, 1, 1.0),
    ("cr_servo", {"pulse_us": 1250}, {}, -1, 0.5),
    ("cr_servo", {"pulse_us": 1505}, {}, 0, 0.0),  # in the deadband
]


@pytest.mark.parametrize(("kind", "inputs", "ties", "sign", "fraction"), DRIVER_CASES)
def test_each_motor_driver_turns_the_wheels_its_way_at_its_duty(
    kind: str, inputs: dict[str, float], ties: dict[str, float], sign: int, fraction: float
) -> None:
    sim = build_simulation(ARENA, models=robot(drivers=kind, ties=ties))
    for side in ("left", "right"):
        for name, value in inputs.items():
            sim.set_input(f"motor_{side}.{name}", value)
    sim.step(2000)
    motor = sim.models[0].motor
    wheel = sim.motors.speed[0] / motor.gear_ratio
    # The steady speed of that fraction of the supply (the averaged bridge voltage).
    expected = sign * motor.steady_speed(fraction * motor.supply_voltage) / motor.gear_ratio
    assert wheel == pytest.approx([expected, expected], rel=1e-3, abs=1e-6)
    assert math.copysign(1.0, sim.v[0]) == (sign or 1) or sign == 0


@pytest.mark.parametrize(
    ("kind", "inputs", "closed"),
    [
        ("l298n", {"enable": 0, "a": 1024, "b": 0}, False),  # ENA low: coast
        ("l298n", {"enable": 1024, "a": 0, "b": 0}, True),  # both low: brake
        ("tb6612fng", {"pwm": 1024, "in1": 0, "in2": 0, "stby": 1}, False),  # stop: coast
        ("tb6612fng", {"pwm": 0, "in1": 1, "in2": 0, "stby": 1}, True),  # PWM low: short brake
        ("drv8833", {"in1": 0, "in2": 0}, False),  # coast
        ("drv8833", {"in1": 1024, "in2": 1024}, True),  # brake
        ("l9110s", {"ia": 0, "ib": 0}, True),  # both outputs low: brake
        ("pwm_dir", {"pwm": 0, "dir": 0}, True),  # PWM low: brake
        ("cr_servo", {"pulse_us": 0}, False),  # no pulses: coast
        ("cr_servo", {"pulse_us": 1500}, True),  # stopped by its controller
    ],
)
def test_each_driver_brakes_or_lets_the_motor_coast_as_its_truth_table_says(
    kind: str, inputs: dict[str, float], closed: bool
) -> None:
    sim = build_simulation(ARENA, models=robot(drivers=kind))
    for name, value in inputs.items():
        sim.set_input(f"motor_left.{name}", value)
    assert sim._closed[0, 0] == closed
    assert sim._voltage[0, 0] == 0.0


def test_the_l298n_follows_the_shipped_dc_motor_truth_table() -> None:
    table = json.loads((DEVICES / "dc_motor.json").read_text())["table"]["by_a_b"]
    sign = {"forward": 1.0, "back": -1.0, "brake": 0.0}
    sim = build_simulation(ARENA, models=DEMO)
    for levels, state in table.items():
        a, b = (float(v) for v in levels.split(","))
        for name, value in (("enable", 1024.0), ("a", a), ("b", b)):
            sim.set_input(f"motor_left.{name}", value)
        assert sim._voltage[0, 0] == sign[state] * DEMO.motor.supply_voltage
        assert sim._closed[0, 0]


def test_a_driver_wired_the_other_way_turns_its_wheel_back() -> None:
    sim = build_simulation(ARENA, models=robot(drivers="drv8833", params={"direction": -1}))
    sim.set_input("motor_left.in1", 1024)
    sim.set_input("motor_right.in1", 1024)
    sim.step(500)
    assert sim.v[0] < -0.1


def test_a_tied_input_is_no_signal_of_the_link() -> None:
    sim = build_simulation(ARENA, models=robot(ties={"enable": 1024}))
    devices, _ = sim.devices_of(0)
    assert ("motor_left", "enable") not in devices.inputs
    assert {("motor_left", "a"), ("motor_left", "b")} <= set(devices.inputs)
    model, index = devices.where["motor_left"]
    assert model.inputs[0, index, model.INPUTS.index("enable")] == 1024  # held there
    assert np.isnan(sim.input("motor_left.enable")[0])  # not an input of the link


# --- rangers, mounts, servos -----------------------------------------------------------------

THREE_SONARS = (
    sonar("sonar_left", Mount(0.05, 0.05, 0.07, math.radians(45))),
    sonar("sonar_front", Mount(0.09, 0.0, 0.07, 0.0)),
    sonar("sonar_right", Mount(0.05, -0.05, 0.07, math.radians(-45))),
)


def test_three_sonars_each_see_the_wall_their_own_way() -> None:
    sim = build_simulation(ARENA, models=robot(*THREE_SONARS))
    sim.teleport(0, Pose(1.0, 0.0, 0.0))  # the east wall 1 m ahead
    sample(sim)
    front = sim.output("sonar_front.distance")[0]
    left, right = sim.output("sonar_left.distance")[0], sim.output("sonar_right.distance")[0]
    assert front == pytest.approx(100 * (1.0 - 0.09), abs=0.5)
    # 45 degrees off the wall's normal: the cone's nearest ray, not the axis.
    assert left == pytest.approx(right, abs=0.5)
    assert 100 * (1.0 - 0.05) < left < 100 * (1.0 - 0.05) * math.sqrt(2)
    assert [name for name, _, _ in sim.signals(0)] == ["sonar_left", "sonar_front", "sonar_right"]


SWEEPER = robot(
    *THREE_SONARS,
    DeviceSpec("pan", "servo", Mount(0.0, 0.0, 0.09, 0.0)),
    sonar("sonar_pan", Mount(0.03, 0.0, 0.1, 0.0, servo="pan"), cone_deg=10.0),
)
#: Wide enough that looking east the sonars see nothing within their 2 m.
WIDE = WorldConfig(width=6.0, height=4.0)


def test_a_sonar_on_a_sweeping_servo_sees_the_wall_only_when_pointed_at_it() -> None:
    sim = build_simulation(WIDE, models=SWEEPER)
    sim.teleport(0, Pose(0.0, 1.2, 0.0))  # facing east, the north wall 0.8 m to its left
    seen = {}
    for pulse, angle in ((544.0, -90.0), (1472.0, 0.0), (2400.0, 90.0)):
        sim.set_input("pan.pulse_us", pulse)
        sim.step(400)  # 180 degrees at 600 deg/s is 0.3 s
        assert sim.joint_states(0) == [("pan_joint", pytest.approx(math.radians(angle), abs=1e-9))]
        sample(sim)
        seen[angle] = sim.output("sonar_pan.distance")[0]
    # Pointing left (servo at its 180 end) it sees the north wall 0.8 m away, less its arm.
    assert seen[90.0] == pytest.approx(100 * (0.8 - 0.03), abs=1.0)
    assert seen[0.0] == 200.0 and seen[-90.0] == 200.0  # east wall 3 m, south wall 3.2 m: out of range
    # The fixed sonars did not move.
    assert sim.output("sonar_front.distance")[0] == 200.0


def test_a_servo_turns_at_its_speed_and_holds_without_pulses() -> None:
    sim = build_simulation(ARENA, models=SWEEPER)
    sim.set_input("pan.pulse_us", 2400.0)
    sim.step(100)  # 0.1 s at 600 deg/s: 60 degrees
    assert sim.joint_states(0)[0][1] == pytest.approx(math.radians(60.0), abs=1e-9)
    sim.set_input("pan.pulse_us", 0.0)
    sim.step(500)
    assert sim.joint_states(0)[0][1] == pytest.approx(math.radians(60.0), abs=1e-9)


@pytest.mark.parametrize("physics", ["native", "mujoco"])
def test_the_servo_mounted_sonar_reads_alike_in_both_backends(physics: str) -> None:
    sim = build_simulation(WIDE, models=SWEEPER, physics=physics)
    sim.teleport(0, Pose(0.0, 1.2, 0.0))
    sim.set_input("pan.pulse_us", 2400.0)
    sim.step(400)
    sample(sim)
    assert sim.output("sonar_pan.distance")[0] == pytest.approx(100 * (0.8 - 0.03), abs=1.0)


# --- encoders --------------------------------------------------------------------------------

ENCODERS = robot(
    DeviceSpec("encoder_left", "encoder", wheel="left", params={"counts_per_rev": 12, "gear_ratio": 48}),
    DeviceSpec(
        "encoder_right",
        "encoder",
        wheel="right",
        params={"counts_per_rev": 20, "gear_ratio": 1, "quadrature": 0, "direction": -1},
    ),
)


@pytest.mark.parametrize(("left", "right"), [(1024, 1024), (-1024, -1024), (-700, 900)])
def test_encoders_count_the_wheel_angle(left: float, right: float) -> None:
    sim = build_simulation(ARENA, models=ENCODERS)
    for side, duty in (("left", left), ("right", right)):
        sim.set_input(f"motor_{side}.enable", abs(duty))
        sim.set_input(f"motor_{side}.a", 1024.0 if duty > 0 else 0.0)
        sim.set_input(f"motor_{side}.b", 1024.0 if duty < 0 else 0.0)
    for _ in range(7):
        sim.step(113)  # counts follow the wheels at every read, not only at sensor samples
        angle = sim.wheel_angle[0]
        quadrature = math.floor(angle[0] / (2 * math.pi) * 12 * 48 * 4)
        single = math.floor(-angle[1] / (2 * math.pi) * 20)
        assert sim.output("encoder_left.count")[0] == quadrature
        assert sim.output("encoder_right.count")[0] == single
    assert np.sign(sim.output("encoder_left.count")[0]) == np.sign(left)
    assert np.sign(sim.output("encoder_right.count")[0]) == -np.sign(right)


def test_the_encoder_position_signal_wraps_at_16_bits() -> None:
    sim = build_simulation(WorldConfig(width=40.0, height=40.0), models=ENCODERS)
    for side in ("left", "right"):
        sim.set_input(f"motor_{side}.enable", 1024.0)
        sim.set_input(f"motor_{side}.a", 1024.0)
    sim.step(12000)
    count = sim.output("encoder_left.count")[0]
    assert count > 32767
    position = {(d, n): v for d, n, v in sim.signals(0)}[("encoder_left", "position")]
    assert -32768 <= position <= 32767
    assert (position - count) % 65536 == 0


# --- IMU -------------------------------------------------------------------------------------

IMU_ROBOT = robot(
    DeviceSpec("imu", "imu", Mount(0.0, 0.0, 0.05, 0.0)),
    DeviceSpec(
        "imu_quiet",
        "imu",
        Mount(0.05, 0.0, 0.05, math.pi / 2),
        {"accel_noise_ug": 0.0, "gyro_noise_mdps": 0.0},
    ),
)


def imu(sim: Simulation, name: str) -> np.ndarray:
    return np.array([sim.output(f"{name}.{axis}")[0] for axis in ("ax", "ay", "az", "gx", "gy", "gz")])


def test_an_imu_at_rest_reads_one_g_up_and_no_rotation() -> None:
    sim = build_simulation(ARENA, models=IMU_ROBOT)
    readings = []
    for _ in range(200):
        sample(sim)
        readings.append(imu(sim, "imu"))
    mean, spread = np.mean(readings, axis=0), np.std(readings, axis=0)
    assert mean[:3] == pytest.approx([0.0, 0.0, GRAVITY], abs=0.02)
    assert mean[3:] == pytest.approx([0.0, 0.0, 0.0], abs=1e-3)
    # The datasheet's noise density over the default 260 Hz bandwidth.
    assert spread[:3] == pytest.approx([400e-6 * GRAVITY * math.sqrt(260)] * 3, rel=0.25)
    assert spread[3:] == pytest.approx([math.radians(0.005) * math.sqrt(260)] * 3, rel=0.25)
    assert sim.output("imu.temp")[0] == 25.0


def test_an_imu_on_a_turning_robot_reads_its_turn_rate_and_the_centripetal_force() -> None:
    sim = build_simulation(ARENA, models=IMU_ROBOT)
    for side, duty in (("left", 1024.0), ("right", 512.0)):
        sim.set_input(f"motor_{side}.enable", duty)
        sim.set_input(f"motor_{side}.a", 1024.0)
    sim.step(1500)  # settled on its arc
    sample(sim)
    v, w = float(sim.v[0]), float(sim.w[0])
    assert w < -0.5  # turning right
    # The chip 5 cm ahead of the centre, turned 90 degrees: its x is the body's y.
    quiet = imu(sim, "imu_quiet")
    assert quiet[0] == pytest.approx(v * w, rel=0.01)  # centripetal, toward the turn's centre
    assert quiet[1] == pytest.approx(w * w * 0.05, rel=0.05)  # the lever arm's, pointing in
    assert quiet[2] == pytest.approx(GRAVITY)
    assert quiet[5] == pytest.approx(w, rel=1e-9)


def test_an_accelerating_robot_reads_its_acceleration_forward() -> None:
    sim = build_simulation(ARENA, models=IMU_ROBOT)
    sample(sim)
    before = float(sim.v[0])
    for side in ("left", "right"):
        sim.set_input(f"motor_{side}.enable", 1024.0)
        sim.set_input(f"motor_{side}.a", 1024.0)
    sample(sim)
    expected = (float(sim.v[0]) - before) / (sim.sensor_every * sim.dt)
    assert expected > 0.5
    assert imu(sim, "imu_quiet")[1] == pytest.approx(-expected, rel=1e-6)  # its y points back


# --- line sensors ------------------------------------------------------------------------------

LINE_WORLD = WorldConfig(
    width=4.0, height=4.0, markings=(LineMarking((0.5, -1.0), (0.5, 1.0), width=0.02, reflectance=0.05),)
)
LINE_ROBOT = robot(
    DeviceSpec("line_left", "line", Mount(0.06, 0.01, 0.01), {"sigma_counts": 0.0}),
    DeviceSpec("line_right", "line", Mount(0.06, -0.01, 0.01), {"output": "digital"}),
)


@pytest.mark.parametrize("physics", ["native", "mujoco"])
def test_line_sensors_see_a_line_as_the_robot_drives_across_it(physics: str) -> None:
    sim = build_simulation(LINE_WORLD, models=LINE_ROBOT, physics=physics)
    for side in ("left", "right"):
        sim.set_input(f"motor_{side}.enable", 400.0)
        sim.set_input(f"motor_{side}.a", 1024.0)
    trace = []
    while sim.x[0] < 0.7:
        sample(sim)
        trace.append(
            (float(sim.x[0]) + 0.06, sim.output("line_left.reading")[0], sim.output("line_right.detected")[0])
        )
    over = [(reading, detected) for x, reading, detected in trace if abs(x - 0.5) < 0.004]
    off = [(reading, detected) for x, reading, detected in trace if abs(x - 0.5) > 0.02]
    assert over and off
    assert all(reading > 800 and detected == 1.0 for reading, detected in over)
    assert all(reading < 300 and detected == 0.0 for reading, detected in off)
    names = [(d, n) for d, n, _ in sim.signals(0)]
    assert names == [("line_left", "reading"), ("line_right", "detected")]


# --- robots of several models ---------------------------------------------------------------


def test_two_robots_of_different_models_share_one_world() -> None:
    fast = RobotModel(
        "fast",
        body=Body(wheel_radius=0.04, wheel_base=0.2, body_radius=0.12, mass=1.2),
        motor=MotorParams(supply_voltage=12.0),
        devices=(
            DeviceSpec("motor_left", "drv8833", wheel="left"),
            DeviceSpec("motor_right", "drv8833", wheel="right"),
            *THREE_SONARS,
        ),
    )
    models = [DEMO, fast, DEMO]
    sim = build_simulation(ARENA, models=models, spacing=0.5)
    assert len(sim.groups) == 2 and sim.groups[0].rows.tolist() == [0, 2]
    for robot_index in (0, 2):
        sim.set_input("motor_left.enable", 1024.0, [robot_index])
        sim.set_input("motor_left.a", 1.0, [robot_index])
    sim.set_input("motor_left.in1", 1024.0, [1])
    sim.set_input("motor_right.in1", 1024.0, [1])
    sim.step(1000)
    assert sim.w[0] < -0.5 and sim.w[2] < -0.5  # the demo robots turn right on their left wheel
    assert sim.w[1] == pytest.approx(0.0, abs=1e-9) and sim.v[1] > 0.8  # 12 V, bigger wheels
    assert np.isnan(sim.output("sonar_front.distance")[[0, 2]]).all()
    assert np.isnan(sim.output("ultrasonic.distance")[1])
    assert [d for d, _, _ in sim.signals(1)] == ["sonar_left", "sonar_front", "sonar_right"]
    assert sim.bumpers.shape == (3, 2) and not sim.bumpers[1].any()
    with pytest.raises(HilSimError, match=r"no input motor_left\.in1"):
        sim.set_input("motor_left.in1", 1.0, [0])


def test_a_robot_gets_the_same_noise_alone_and_beside_robots_of_another_model() -> None:
    other = robot(*THREE_SONARS, name="other")
    alone = build_simulation(ARENA, models=[DEMO], seed=4)
    mixed = build_simulation(ARENA, models=[DEMO, other], seed=4)
    mixed.teleport(1, Pose(1.0, 1.0, 0.0))
    for _ in range(10):
        alone.step(20)
        mixed.step(20)
        assert alone.signals(0) == mixed.signals(0)


@pytest.mark.parametrize("physics", ["native", "mujoco"])
def test_robots_of_different_bodies_drive_at_their_own_speeds_in_both_backends(physics: str) -> None:
    small = robot(name="small")
    big = RobotModel("big", body=Body(wheel_radius=0.05), devices=small.devices)
    sim = build_simulation(
        WorldConfig(width=10.0, height=10.0), models=[small, big], spacing=1.0, physics=physics
    )
    for side in ("left", "right"):
        sim.set_input(f"motor_{side}.enable", 1024.0)
        sim.set_input(f"motor_{side}.a", 1024.0)
    sim.step(1500)
    ratio = sim.v[1] / sim.v[0]
    # The same motors turn the wheels alike (the bigger robot is heavier only by its wheels' reach).
    assert ratio == pytest.approx(0.05 / 0.033, rel=0.05)


def test_every_kind_declares_its_parameters_with_a_description() -> None:
    for name, cls in KINDS.items():
        assert name == cls.KIND and cls.DESCRIPTION
        for param, spec in cls.PARAMS.items():
            assert spec.description, f"{name}.{param}"


# --- the device library's signal names ---------------------------------------------------------

#: Library config -> the model kind that simulates it, with the params that make it that device
#: (configs another branch adds are checked once they are in the library).
LIBRARY_KINDS: dict[str, tuple[str, dict[str, Any]]] = {
    "dc_motor": ("l298n", {"in_full_scale": 1}),
    "l298n": ("l298n", {}),
    "tb6612fng": ("tb6612fng", {}),
    "drv8833": ("drv8833", {}),
    "l9110s": ("l9110s", {}),
    "pwm_dir_driver": ("pwm_dir", {}),
    "cr_servo_wheel": ("cr_servo", {}),
    "led": ("led", {}),
    "limit_switch": ("bumper", {}),
    "hc_sr04": ("ranger", {"beam": "ultrasonic"}),
    "sharp_ir": ("ranger", {"beam": "ir"}),
    "photoresistor": ("light", {}),
    "magnetometer": ("compass", {}),
    "line_sensor_analog": ("line", {"output": "analog"}),
    "line_sensor_digital": ("line", {"output": "digital"}),
    "quadrature_encoder": ("encoder", {"quadrature": 1}),
    "single_channel_encoder": ("encoder", {"quadrature": 0}),
    "servo": ("servo", {}),
    "mpu6050": ("imu", {}),
}


@pytest.mark.parametrize("config", sorted(set(LIBRARY_KINDS) & set(LIBRARY)))
def test_each_kind_takes_and_gives_the_signals_its_library_config_names(config: str) -> None:
    kind_name, params = LIBRARY_KINDS[config]
    cls = KINDS[kind_name]
    spec = DeviceSpec("d", kind_name, params=params)
    takes, gives = cls.signals(spec, {**{k: p.default for k, p in cls.PARAMS.items()}, **params})
    signals = LIBRARY[config].signals
    assert takes == tuple(s.name for s in signals if s.direction.value == "INPUT")
    assert gives == tuple(s.name for s in signals if s.direction.value == "OUTPUT")
