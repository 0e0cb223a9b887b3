"""Physics backends: the interface, native against mujoco, MuJoCo's model and its bad input."""

from __future__ import annotations

import dataclasses
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
import pytest

from hil_common.core.paths import share_dir
from hil_sim.core.build import build_simulation
from hil_sim.core.motor import MotorBank, MotorParams
from hil_sim.core.mujoco_physics import BOARD_DOWN_TILT, MujocoPhysics
from hil_sim.core.physics import BACKENDS
from hil_sim.core.robot_model import demo_robot
from hil_sim.core.robot_urdf import robot_urdf
from hil_sim.core.simulation import Simulation
from hil_sim.core.world import Board, Pose, WorldConfig, load_world, world_from_mapping
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
