"""Physics backends: the interface, native against mujoco, MuJoCo's model and its bad input."""

from __future__ import annotations

import dataclasses
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

import mujoco
import numpy as np
import numpy.typing as npt
import pytest

from hil_common.core.paths import share_dir
from hil_sim.core.build import build_simulation
from hil_sim.core.motor import MotorBank, MotorParams
from hil_sim.core.mujoco_physics import BOARD_DOWN_TILT, MujocoPhysics
from hil_sim.core.physics import BACKENDS, NativePhysics
from hil_sim.core.robot_model import RobotModel, demo_robot
from hil_sim.core.robot_urdf import robot_urdf
from hil_sim.core.simulation import Simulation
from hil_sim.core.world import Board, Box, Pose, WorldConfig, load_world, world_from_mapping
from hil_sim.errors import HilSimError

URDF = share_dir("hil_sim") / "urdf" / "hil_robot.urdf"
EMPTY = WorldConfig(width=20.0, height=20.0)

#: The cross-check's tolerances. Straight runs: the two engines solve the same motor
#: and the same rolling wheel, so distance agrees within 2 % (+5 mm for the start) and
#: the heading within 0.01 rad. Turns: MuJoCo's robot has a real mass distribution
#: (its centre of mass 3 cm behind the axle needs a centripetal force from the wheels,
#: which loads them unequally), native a mass reflected to the wheels: the turn rate
#: may differ by 8 %, a spin's position by 3 cm. A wrong wheel radius, wheel base, gear
#: ratio or motor constant in either engine is far outside these.
STRAIGHT_DISTANCE_REL, STRAIGHT_DISTANCE_ABS, STRAIGHT_HEADING = 0.02, 0.005, 0.01
TURN_REL, SPIN_DRIFT = 0.08, 0.03


def drive(sim: Simulation, left: float, right: float) -> None:
    """Both motors at these signed enable duties (-1024..1024)."""
    for side, duty in (("left", left), ("right", right)):
        sim.set_input(f"motor_{side}.enable", abs(duty))
        sim.set_input(f"motor_{side}.a", float(duty >= 0))
        sim.set_input(f"motor_{side}.b", float(duty < 0))


def run(physics: str, left: float, right: float, seconds: float) -> tuple[float, float, float]:
    sim = build_simulation(EMPTY, physics=physics)
    drive(sim, left, right)
    sim.step(round(seconds * 1000))
    return float(sim.x[0]), float(sim.y[0]), float(np.unwrap([0.0, float(sim.yaw[0])])[-1])


def turned(physics: str, left: float, right: float, seconds: float) -> float:
    """Total heading change (rad), unwrapped, over ``seconds``."""
    sim = build_simulation(EMPTY, physics=physics)
    drive(sim, left, right)
    yaws = []
    for _ in range(round(seconds * 100)):
        sim.step(10)
        yaws.append(float(sim.yaw[0]))
    return float(np.unwrap(yaws)[-1])


@pytest.mark.parametrize(("left", "right"), [(1024, 1024), (512, 512), (200, 200), (-1024, -1024)])
def test_straight_runs_agree_between_native_and_mujoco(left: float, right: float) -> None:
    native, mujoco_ = run("native", left, right, 2.0), run("mujoco", left, right, 2.0)
    distance = math.hypot(native[0], native[1])
    assert distance > 0.1
    assert math.hypot(mujoco_[0], mujoco_[1]) == pytest.approx(
        distance, rel=STRAIGHT_DISTANCE_REL, abs=STRAIGHT_DISTANCE_ABS
    )
    assert math.copysign(1, mujoco_[0]) == math.copysign(1, native[0])
    assert abs(mujoco_[2] - native[2]) < STRAIGHT_HEADING
    assert abs(mujoco_[1]) < STRAIGHT_DISTANCE_ABS


@pytest.mark.parametrize(("left", "right"), [(1024, -1024), (-300, 300), (700, 1024), (1024, 400)])
def test_turns_agree_between_native_and_mujoco(left: float, right: float) -> None:
    native, mujoco_ = turned("native", left, right, 1.5), turned("mujoco", left, right, 1.5)
    assert abs(native) > 1.0
    assert mujoco_ == pytest.approx(native, rel=TURN_REL)
    if left == -right:  # a spin stays where it is
        x, y, _ = run("mujoco", left, right, 1.5)
        assert math.hypot(x, y) < SPIN_DRIFT


def test_range_rays_agree_between_native_and_mujoco() -> None:
    sims = [build_simulation(physics=physics) for physics in BACKENDS]
    for pose in (Pose(0.0, 0.0, 0.0), Pose(-0.24, -0.2, math.radians(-85)), Pose(1.0, -0.6, -0.9)):
        casts = []
        for sim in sims:
            sim.teleport(0, pose)
            devices = sim.groups[0].devices
            rays = devices.kinds["ranger"].rays(devices.mounts)  # type: ignore[attr-defined]
            casts.append(sim.physics.cast(rays, 2.5))
        np.testing.assert_allclose(casts[1], casts[0], atol=2e-3)


def test_unknown_backend_names_the_choices() -> None:
    with pytest.raises(HilSimError, match=r"physics = 'bullet'.*native, mujoco"):
        build_simulation(EMPTY, physics="bullet")


def test_the_shipped_urdf_is_the_one_generated_from_the_demo_robot() -> None:
    """rviz's robot (hil_sim's URDF) and MuJoCo's are one: the demo robot model's."""
    assert URDF.read_text() == robot_urdf(demo_robot()), (
        "hil_sim/urdf/hil_robot.urdf is not the demo robot's: write it again with "
        "hil_sim.core.robot_urdf.robot_urdf(demo_robot())"
    )


def test_the_urdf_is_the_robot_both_engines_drive() -> None:
    """One source: the URDF's wheels, body, mass and sensor mounts are the robot model's."""
    robot, root = demo_robot(), ET.parse(URDF).getroot()

    def origin(joint: str) -> list[float]:
        element = root.find(f"joint[@name='{joint}']/origin")
        assert element is not None
        return [float(v) for v in element.get("xyz", "0 0 0").split()]

    wheel = root.find("link[@name='left_wheel']/collision/geometry/cylinder")
    body = root.find("link[@name='base_link']/collision/geometry/cylinder")
    assert wheel is not None and body is not None
    body_model = robot.body
    assert float(wheel.get("radius", "0")) == body_model.wheel_radius
    assert float(body.get("radius", "0")) == body_model.body_radius
    assert origin("left_wheel_joint")[1] - origin("right_wheel_joint")[1] == pytest.approx(
        body_model.wheel_base
    )
    masses = [float(m.get("value", "0")) for m in root.iter("mass")]
    assert sum(masses) == pytest.approx(body_model.mass)
    for name in ("ultrasonic", "ir"):
        mount = robot.device(name).mount
        assert origin(f"{name}_joint") == pytest.approx([mount.x, mount.y, mount.z])
    sim = build_simulation(EMPTY, physics="mujoco")
    assert isinstance(sim.physics, MujocoPhysics)
    assert sim.physics.model.body_subtreemass[sim.physics._base[0]] == pytest.approx(body_model.mass)


def test_mujoco_runs_are_identical_for_a_seed() -> None:
    traces = []
    for _ in range(2):
        sim = build_simulation(physics="mujoco", seed=3)
        drive(sim, 700, 1024)
        trace = []
        for _ in range(40):
            sim.step(50)
            trace.append(
                (*sim.x, *sim.y, *sim.yaw, *sim.output("ultrasonic.distance"), sim.geometry.boards_down)
            )
        traces.append(trace)
    assert traces[0] == traces[1]


def test_a_board_is_down_once_tilted_past_60_degrees() -> None:
    sim = build_simulation(physics="mujoco")
    physics = sim.physics
    assert isinstance(physics, MujocoPhysics)
    board = physics._board_ids[0]
    address = physics.model.jnt_qposadr[physics.model.body_jntadr[board]]
    start = physics.data.qpos[address + 3 : address + 7].copy()
    for tilt, standing in ((BOARD_DOWN_TILT - 0.05, True), (BOARD_DOWN_TILT + 0.05, False)):
        # Tilted about the world y axis, held there for one step.
        turn = np.array([math.cos(tilt / 2), 0.0, math.sin(tilt / 2), 0.0])
        quaternion = np.zeros(4)
        mujoco.mju_mulQuat(quaternion, turn, start)
        physics.data.qpos[address + 3 : address + 7] = quaternion
        physics.data.qvel[:] = 0.0
        sim.step(1)
        assert bool(sim.geometry.standing[0]) is standing
    sim.reset()
    assert sim.geometry.standing.all()


def test_driving_into_a_board_topples_it_and_closes_both_bumpers() -> None:
    sim = build_simulation(physics="mujoco")
    drive(sim, 1024, 1024)
    pressed = np.zeros(2, dtype=bool)
    for _ in range(300):
        sim.step(5)
        pressed |= sim.bumpers[0]
    assert pressed.all()  # head on: both switches
    assert not sim.geometry.standing[0] and sim.geometry.standing[1:].all()
    assert sim.x[0] > 0.6  # through where the board stood


def test_a_wall_stops_the_robot_with_its_bumpers_closed() -> None:
    sim = build_simulation(WorldConfig(width=4.0, height=4.0), physics="mujoco")
    sim.teleport(0, Pose(1.5, 0.0, 0.0))
    drive(sim, 1024, 1024)
    sim.step(1000)
    for _ in range(10):  # held there, its wheels slipping on the floor
        sim.step(50)
        assert sim.x[0] == pytest.approx(2.0 - demo_robot().body.body_radius, abs=0.003)
        assert sim.bumpers[0].all()


def test_teleport_and_reset_place_a_mujoco_robot() -> None:
    sim = build_simulation(EMPTY, physics="mujoco", robots=2, spacing=0.5)
    drive(sim, 1024, 1024)
    sim.step(200)
    sim.teleport(1, Pose(2.0, 1.0, 1.0))
    assert (sim.x[1], sim.y[1], sim.yaw[1]) == pytest.approx((2.0, 1.0, 1.0))
    assert sim.motors.speed[1] == pytest.approx([0.0, 0.0])
    sim.reset()
    assert sim.time == 0.0
    for robot, start in enumerate(sim.starts):
        assert (sim.x[robot], sim.y[robot], sim.yaw[robot]) == pytest.approx((start.x, start.y, start.yaw))


# --- files: a user's MJCF world, and bad input ---------------------------------------

ARENA = """<mujoco>
  <worldbody>
    <geom name="ground" type="plane" size="3 3 0.1"/>
    <geom name="ramp" type="box" pos="2 0 0.05" size="0.3 0.3 0.05"/>
    <body name="board_a" pos="0.6 0 0.15">
      <freejoint/><geom type="box" size="0.01 0.05 0.15" mass="0.2"/>
    </body>
  </worldbody>
</mujoco>
"""


def world_file(tmp_path: Path, mjcf: str) -> Path:
    (tmp_path / "arena.xml").write_text(mjcf)
    path = tmp_path / "world.yaml"
    path.write_text("arena: {width: 6.0, height: 6.0}\nmjcf: arena.xml\n")
    return path


def test_a_users_mjcf_world_brings_its_boards(tmp_path: Path) -> None:
    sim = build_simulation(world_file(tmp_path, ARENA), physics="mujoco")
    assert sim.world.boards == (Board(0.6, 0.0, 0.0, width=0.1, thickness=0.02, height=0.3, mass=0.2),)
    drive(sim, 1024, 1024)
    sim.step(1500)
    assert sim.geometry.boards_down == 1


def test_native_refuses_an_mjcf_world(tmp_path: Path) -> None:
    with pytest.raises(HilSimError, match=r"arena\.xml: only physics 'mujoco'"):
        build_simulation(world_file(tmp_path, ARENA), physics="native")


@pytest.mark.parametrize(
    ("mjcf", "message"),
    [
        (
            "<mujoco><worldbody><geom type='plane' size='1 1 1'/><body name='x'>",
            r"arena\.xml: bad MJCF world",
        ),
        ("<mujoco><worldbody><geom type='bx' size='1 1 1'/></worldbody></mujoco>", r"arena\.xml.*geom"),
        ("<mujoco><worldbody><geom type='box' size='1 1 1'/></worldbody></mujoco>", r"arena\.xml.*no floor"),
        (
            "<mujoco><worldbody><geom type='plane' size='1 1 1'/>"
            "<body name='board_1' pos='0 1 0.2'><geom type='box' size='0.01 0.05 0.15'/></body>"
            "</worldbody></mujoco>",
            r"arena\.xml: body 'board_1': a board needs one free joint",
        ),
    ],
)
def test_a_bad_mjcf_world_is_named_with_its_element(tmp_path: Path, mjcf: str, message: str) -> None:
    with pytest.raises(HilSimError, match=message):
        build_simulation(world_file(tmp_path, mjcf), physics="mujoco")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda text: text.replace("</robot>", ""), r"hil_robot\.urdf: bad robot URDF"),
        (
            lambda text: re.sub(
                r'<collision>\s*<geometry>\s*<sphere radius="0.013"/>\s*</geometry>\s*</collision>', "", text
            ),
            r"link 'caster': missing, or without a <collision>",
        ),
        (lambda text: text.replace('<child link="caster"/>', '<child link="wheel"/>'), r"Element 'joint'"),
        (lambda text: text.replace('<mass value="0.07"/>', '<mass value="-1"/>', 1), r"hil_robot\.urdf"),
        (
            lambda text: text.replace(
                'name="left_wheel_joint" type="continuous"', 'name="left_wheel_joint" type="fixed"'
            ),
            r"link 'left_wheel': needs one continuous joint",
        ),
    ],
)
def test_a_bad_urdf_is_named_with_its_element(tmp_path: Path, edit: object, message: str) -> None:
    path = tmp_path / "hil_robot.urdf"
    path.write_text(edit(URDF.read_text()))  # type: ignore[operator]
    with pytest.raises(HilSimError, match=message):
        build_simulation(EMPTY, physics="mujoco", models=dataclasses.replace(demo_robot(), urdf=str(path)))


#: MJCF worlds MuJoCo cannot simulate: (name, world, words in the error).
UNSTABLE_WORLDS = [
    (
        "stiff spring on a tiny mass",
        "<mujoco><worldbody><geom type='plane' size='3 3 0.1'/>"
        "<body name='spring' pos='1 1 0.5'><joint type='slide' stiffness='1e15' springref='0.1'/>"
        "<geom size='0.05' mass='1e-6' contype='0' conaffinity='0'/></body></worldbody></mujoco>",
        ["QACC", "body 'spring'"],
    ),
    (
        "absurd gravity",
        "<mujoco><option gravity='0 0 -1e12'/><worldbody><geom type='plane' size='3 3 0.1'/>"
        "</worldbody></mujoco>",
        ["QACC", "body 'robot_0/base_link'"],
    ),
]


@pytest.mark.parametrize(
    ("mjcf", "words"), [c[1:] for c in UNSTABLE_WORLDS], ids=[c[0] for c in UNSTABLE_WORLDS]
)
def test_a_world_that_goes_unstable_stops_naming_the_world_and_mujocos_warning(
    tmp_path: Path, mjcf: str, words: list[str]
) -> None:
    path = world_file(tmp_path, mjcf)
    sim = build_simulation(path, physics="mujoco")
    with pytest.raises(HilSimError) as caught:
        sim.step(1000)  # MuJoCo resets its data and runs on: the robot would look pinned
    message = str(caught.value)
    # Stopped in the first block of steps, not a second later.
    for word in [f"world {path}", f"MJCF {tmp_path / 'arena.xml'}", "unstable by t = 0.0", *words]:
        assert word in message, message


def test_world_yaml_gives_floor_friction_and_board_mass(tmp_path: Path) -> None:
    world = world_from_mapping(
        {"floor": {"friction": 0.4}, "boards": {"items": [{"x": 1.0, "y": 0.0, "mass": 0.3}]}},
        source="w.yaml",
    )
    assert world.floor_friction == 0.4 and world.boards[0].mass == 0.3
    with pytest.raises(HilSimError, match=r"w\.yaml: mjcf: an MJCF world brings its own"):
        world_from_mapping(
            {"mjcf": "a.xml", "boxes": [{"x": 0, "y": 0, "width": 1, "depth": 1}]}, source="w.yaml"
        )
    with pytest.raises(HilSimError, match=r"w\.yaml: floor\.friction"):
        world_from_mapping({"floor": {"friction": -1}}, source="w.yaml")
    assert load_world(world_file(tmp_path, ARENA)).mjcf == str(tmp_path / "arena.xml")


def test_the_current_map_is_the_motors_electrical_step() -> None:
    bank = MotorBank(MotorParams(), (3, 2), dt=0.001)
    rng = np.random.default_rng(1)
    bank.current, bank.speed = rng.normal(0, 1, (3, 2)), rng.normal(0, 300, (3, 2))
    voltage, closed = rng.uniform(-6, 6, (3, 2)), rng.random((3, 2)) > 0.3
    a, b, c = bank.current_map(voltage, closed)
    np.testing.assert_allclose(
        a * bank.current + b - c * bank.speed, bank.step_current(voltage, closed), atol=1e-12
    )


# --- native: robots held against something take their blocks at once -----------------


class Bounds(NamedTuple):
    """How far a run with held blocks at once may stray from one stepped one by one."""

    position: float  # m (and rad of yaw)
    speed: float  # m/s
    motor_speed: float  # rad/s at the shaft
    current: float  # A
    wheel: float  # rad


#: A held robot snaps to the fixed point of its contact step once within 1e-6
#: (relative) of it: the runs then differ by ~1e-11 m, ~1e-7 rad/s, ~1e-10 A at most.
#: A wrong glide, fixed point or hold is millimetres and rad/s off.
HELD = Bounds(1e-9, 1e-9, 1e-6, 1e-9, 1e-8)
#: Leaving a head-on hold: a stalled shaft's speed is rounding noise (~1e-11 rad/s), its
#: sign picks the direction of Coulomb friction on the first step that moves, one way
#: in the held state and either way in the steps one by one: up to 2 Tc dt / J of shaft
#: speed, which decays over the mechanical time constant J / (b + Kt Ke / R) and moves
#: the robot 2 Tc dt r / (gear (b + Kt Ke / R)), 6.3e-5 m for the demo robot (measured
#: 6.3e-5 m, 0.34 rad/s, 6.5e-4 A). An extra held block backing off at full power is
#: millimetres and tens of rad/s.
MOTOR = MotorParams()
FRICTION_KICK = (
    2
    * MOTOR.coulomb
    * 0.001
    * demo_robot().body.wheel_radius
    / (MOTOR.gear_ratio * (MOTOR.viscous + MOTOR.kt * MOTOR.ke / MOTOR.resistance))
)
LEAVING = Bounds(2 * FRICTION_KICK, 1e-3, 1.0, 2e-3, 2 * FRICTION_KICK / demo_robot().body.wheel_radius)
WALLED = WorldConfig(width=4.0, height=4.0)
ONE_BOARD = WorldConfig(width=4.0, height=4.0, boards=(Board(0.6, 0.0, math.pi),))
WIDE_BOARD = WorldConfig(
    width=4.0, height=4.0, boards=(Board(0.0, 0.0, 0.0, width=0.6, mass=2.0),), push_threshold=1.0
)
A_BOX = WorldConfig(width=4.0, height=4.0, boxes=(Box(1.0, 0.0, 0.3, 1.0, 0.0),))
FULL, BACK, CREEP, COAST = (1024, 1024), (-1024, -1024), (80, 80), (0, 0)
GEARED = RobotModel(
    "geared", demo_robot().body, MotorParams(gear_ratio=30.0, resistance=2.0), demo_robot().devices
)


class HeldScene(NamedTuple):
    """Robots driven into things: (seconds, each robot's signed duties) one after another."""

    world: WorldConfig
    poses: list[Pose]
    schedule: list[tuple[float, list[tuple[int, int]]]]
    rate: float = 1000.0
    models: list[RobotModel] | None = None
    bounds: Bounds = HELD


HELD_SCENES = {
    "head-on into a wall": HeldScene(WALLED, [Pose(1.6, 0.0, 0.0)], [(3.0, [FULL])]),
    "sliding along a wall": HeldScene(WALLED, [Pose(1.4, -1.0, math.radians(60))], [(3.0, [FULL])]),
    "into a corner": HeldScene(WALLED, [Pose(1.6, 1.6, math.pi / 4)], [(2.0, [FULL])]),
    "backing into a wall": HeldScene(WALLED, [Pose(1.6, 0.0, math.pi)], [(2.0, [BACK])]),
    "coasting to rest at a wall": HeldScene(WALLED, [Pose(1.6, 0.0, 0.0)], [(1.0, [FULL]), (1.5, [COAST])]),
    "turning away from a wall": HeldScene(
        WALLED, [Pose(1.6, 0.0, 0.0)], [(1.0, [FULL]), (1.0, [(-1024, 1024)])]
    ),
    "off a slide along a wall": HeldScene(
        WALLED, [Pose(1.4, -1.0, math.radians(60))], [(2.0, [FULL]), (1.0, [BACK])]
    ),
    "backing off a wall": HeldScene(
        WALLED, [Pose(1.6, 0.0, 0.0)], [(1.0, [FULL]), (1.0, [BACK])], bounds=LEAVING
    ),
    "creeping into a board": HeldScene(ONE_BOARD, [Pose(0.45, 0.0, 0.0)], [(3.0, [CREEP])]),
    "two robots pressing one board": HeldScene(
        WIDE_BOARD, [Pose(-0.4, 0.0, 0.0), Pose(0.4, 0.0, math.pi)], [(2.0, [FULL, FULL])]
    ),
    "along a box's side and round its corner": HeldScene(
        A_BOX, [Pose(0.55, 0.0, math.radians(60))], [(4.0, [FULL])], rate=200.0
    ),
    "along a wall into the corner at 200 Hz": HeldScene(
        WALLED, [Pose(1.7, 1.2, math.radians(60))], [(5.0, [FULL])], rate=200.0
    ),
    "two models pressing walls": HeldScene(
        WALLED,
        [Pose(1.6, 0.0, 0.0), Pose(-1.6, 0.0, math.pi)],
        [(2.0, [FULL, (700, 700)])],
        models=[demo_robot(), GEARED],
    ),
}


def drive_robot(sim: Simulation, robot: int, left: float, right: float) -> None:
    """Robot ``robot``'s motors at these signed enable duties (-1024..1024)."""
    for side, duty in (("left", left), ("right", right)):
        sim.set_input(f"motor_{side}.enable", abs(duty), [robot])
        sim.set_input(f"motor_{side}.a", float(duty > 0), [robot])
        sim.set_input(f"motor_{side}.b", float(duty < 0), [robot])


def native(sim: Simulation) -> NativePhysics:
    """The simulation's native engine."""
    assert isinstance(sim.physics, NativePhysics)
    return sim.physics


def state(sim: Simulation) -> dict[str, npt.NDArray[np.float64]]:
    """Everything a held block sets, by :class:`Bounds` field (and the switches and boards)."""
    return {
        "position": np.concatenate([sim.x, sim.y, sim.yaw]),
        "speed": sim.v.copy(),
        "motor_speed": sim.motors.speed.ravel().copy(),
        "current": sim.motors.current.ravel().copy(),
        "wheel": sim.wheel_angle.ravel().copy(),
        "switches": np.concatenate([sim.bumpers.ravel(), sim.geometry.standing]).astype(float),
    }


def held_scene(
    scene: HeldScene, *, steady: bool
) -> tuple[Simulation, list[dict[str, npt.NDArray[np.float64]]]]:
    """``scene`` with held blocks at once (``steady``) or all steps in contact one by one.

    Returns the simulation and its state every 0.1 s.
    """
    sim = build_simulation(scene.world, robots=len(scene.poses), physics_rate=scene.rate, models=scene.models)
    native(sim).steady_contacts = steady
    for robot, pose in enumerate(scene.poses):
        sim.teleport(robot, pose)
    trace = []
    for seconds, duties in scene.schedule:
        for robot, (left, right) in enumerate(duties):
            drive_robot(sim, robot, left, right)
        for _ in range(round(seconds * 10)):
            sim.step(round(scene.rate / 10))
            trace.append(state(sim))
    return sim, trace


def assert_close(
    fast: dict[str, npt.NDArray[np.float64]],
    slow: dict[str, npt.NDArray[np.float64]],
    bounds: Bounds,
    when: str,
) -> None:
    """The two runs' states within ``bounds``, switches and boards alike."""
    for name, bound in bounds._asdict().items():
        np.testing.assert_allclose(fast[name], slow[name], rtol=0, atol=bound, err_msg=f"{name} at {when}")
    np.testing.assert_array_equal(fast["switches"], slow["switches"], err_msg=f"bumpers or boards at {when}")


@pytest.mark.parametrize("name", list(HELD_SCENES))
def test_a_held_robot_takes_its_blocks_at_once_and_goes_where_its_steps_would(name: str) -> None:
    scene = HELD_SCENES[name]
    fast, fast_trace = held_scene(scene, steady=True)
    slow, slow_trace = held_scene(scene, steady=False)
    for k, (a, b) in enumerate(zip(fast_trace, slow_trace, strict=True)):
        assert_close(a, b, scene.bounds, f"{(k + 1) / 10:.1f} s")
    assert native(fast).exact_steps < native(slow).exact_steps


def test_a_robot_pushing_a_wall_is_stepped_one_by_one_only_while_it_settles() -> None:
    sim = build_simulation(WALLED)
    sim.teleport(0, Pose(1.6, 0.0, 0.0))
    drive(sim, 1024, 1024)
    sim.step(10_000)
    assert sim.x[0] == pytest.approx(2.0 - demo_robot().body.body_radius, abs=1e-9)
    assert sim.bumpers[0].all()
    assert native(sim).exact_steps < 200  # of 10000: the hit and the motors settling


def knocked_under_a_held_robot(
    *, steady: bool, block: int, steady_at_fall: bool | None = None
) -> tuple[float, dict[str, npt.NDArray[np.float64]]]:
    """Robot 0 presses a board at full power, held there; robot 1 charges the board from behind.

    Robot 0 starts 0.1 mm from the board, so it meets it slower than the push
    threshold. The simulation steps ``block`` steps at a time until the board falls
    (held blocks at once while it does if ``steady``; from then on if ``steady_at_fall``,
    default the same). Returns robot 0's speed 3 ms after the fall (it went on from the
    step after the fall: ~0.007 m/s more each step), and the state 0.5 s later.
    """
    sim = build_simulation(WorldConfig(width=4.0, height=4.0, boards=(Board(0.0, 0.0, 0.0),)), robots=2)
    native(sim).steady_contacts = steady
    face = -0.01 - demo_robot().body.body_radius
    sim.teleport(0, Pose(face - 1e-4, 0.0, 0.0))
    sim.teleport(1, Pose(0.5, 0.0, math.pi))
    drive_robot(sim, 0, *FULL)
    drive_robot(sim, 1, *COAST)
    sim.step(300)
    assert sim.geometry.standing[0] and sim.x[0] == pytest.approx(face, abs=1e-9)
    drive_robot(sim, 1, *FULL)
    while sim.geometry.standing[0]:
        sim.step(block)
    native(sim).steady_contacts = steady if steady_at_fall is None else steady_at_fall
    sim.step(3)
    speed = float(sim.v[0])
    sim.step(500)
    assert sim.x[0] > face + 0.1  # it went on through where the board stood
    return speed, state(sim)


#: How the run with held blocks goes up to the board's fall: (block, steady up to the fall).
KNOCKS = {
    "blocks across the fall": (7, True),
    "the fall ending a block": (1, True),
    "stepped one by one at the fall": (1, False),
}


@pytest.mark.parametrize("how", list(KNOCKS))
def test_a_board_knocked_down_under_a_held_robot_frees_it_at_that_step(how: str) -> None:
    block, steady = KNOCKS[how]
    speed, fast = knocked_under_a_held_robot(steady=steady, block=block, steady_at_fall=True)
    speed_slow, slow = knocked_under_a_held_robot(steady=False, block=block)
    # Each step of full power adds ~0.007 m/s; the friction's direction on the first free
    # step (LEAVING) ~6e-4 m/s.
    assert speed_slow > 0.01
    assert speed == pytest.approx(speed_slow, abs=2e-3)
    assert_close(fast, slow, LEAVING, "0.5 s after")


def corner_board_knocked(*, steady: bool) -> dict[str, npt.NDArray[np.float64]]:
    """Robot 0 presses into the corner of a wall and a board; robot 1 knocks the board down.

    Up to the fall every step is one by one; from the step after it, held blocks are
    taken at once if ``steady``. Returns the state 1 s after the fall.
    """
    board = Board(1.94, 0.0, math.pi / 2)  # from the wall at x = 2 (1 cm gap), faces +-y
    sim = build_simulation(WorldConfig(width=4.0, height=4.0, boards=(board,)), robots=2)
    native(sim).steady_contacts = False
    sim.teleport(0, Pose(1.91, 0.1, -math.pi / 3))  # in the corner, mostly into the board
    sim.teleport(1, Pose(1.91, -0.5, math.pi / 2))
    drive_robot(sim, 0, *FULL)
    drive_robot(sim, 1, *COAST)
    sim.step(300)
    assert sim.geometry.standing[0] and (sim.x[0], sim.y[0]) == pytest.approx((1.91, 0.1), abs=1e-9)
    drive_robot(sim, 1, *FULL)
    while sim.geometry.standing[0]:
        sim.step(1)
    native(sim).steady_contacts = steady
    sim.step(1000)
    assert sim.y[0] < 0.1 - 0.01  # sliding down the wall where the board stood
    return state(sim)


def test_a_board_knocked_down_in_a_robots_corner_lets_it_slide_on() -> None:
    """A robot stepped one by one in the step its board falls is not held by what is gone."""
    assert_close(corner_board_knocked(steady=True), corner_board_knocked(steady=False), LEAVING, "1 s after")


def test_a_held_robot_teleported_away_drives_off() -> None:
    runs = []
    for steady in (True, False):
        sim = build_simulation(WALLED)
        native(sim).steady_contacts = steady
        sim.teleport(0, Pose(1.6, 0.0, 0.0))
        drive(sim, 1024, 1024)
        sim.step(2000)
        sim.teleport(0, Pose(0.0, 0.0, math.pi / 2))
        sim.step(700)
        runs.append(state(sim))
    assert runs[0]["position"][1] > 0.3  # driving up, away from the wall
    assert_close(runs[0], runs[1], HELD, "0.7 s after the teleport")
