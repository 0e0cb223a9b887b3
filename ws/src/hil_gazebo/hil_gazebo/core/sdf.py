"""Gazebo (gz sim, Harmonic) export: the world and robot as SDF, the ros_gz_bridge config, the graph.

``hil_gazebo export`` (and ``gazebo.launch.py``, at every launch) writes three files:

* ``world.sdf``: the arena of a world YAML for gz sim: floor (the world's friction),
  four walls (:data:`~hil_sim.core.world.WALL_HEIGHT`), the boxes as static bodies
  (:data:`~hil_sim.core.world.BOX_HEIGHT`), every board a dynamic body with its mass
  and the inertia of its box, standing on its short edge (it topples when pushed), the
  world's light as a point light, the physics step (``physics_rate``) and real-time
  factor (``rtf``, 0: as fast as possible), and the world systems the robot needs
  (physics, user commands to spawn it, scene broadcaster, sensors rendered with
  ogre2, magnetometer). The magnetometer system takes the earth's field from the
  world's geographic position, so the world sits at 10 N 10 E, where its table has no
  declination, with ENU axes: magnetic north is world +y, as in the native simulator.
* ``robot.sdf``: the robot of its URDF (the robot model's, or the one generated from the
  model by :mod:`hil_sim.core.robot_urdf`: the demo robot's is hil_bringup's
  ``urdf/hil_robot.urdf``; the one source of its geometry and mass). Links joined by
  fixed joints are merged into their parent, as SDFormat's own URDF import does (their
  shapes and masses move onto
  it; a massless sensor frame would otherwise weigh Gazebo's default 1 kg); each
  continuous joint becomes a revolute joint without limits (DART, Gazebo's default
  engine, builds a CONTINUOUS joint as a fixed one). The wheel joints carry the
  gearbox's viscous and Coulomb friction (``viscous gear^2``, ``coulomb gear``) and
  the wheel links the rotors' reflected inertia (``rotor_inertia gear^2`` about the
  axle; SDF has no joint armature, so it is added as a thin disc, half of it about the
  other two axes). The ball caster slides at friction 0.002 (it rolls). Sensors: a
  lidar per ranger over its cone and one for the bumpers
  (:func:`hil_gazebo.core.gz_adapter.scan_specs`), a magnetometer per compass, each in its
  device's frame.
  Systems: joint state and odometry publishers, and ApplyJointForce on both wheels
  (``drive`` ``torque``) or DiffDrive (``velocity``).
* ``bridge.yaml``: the ros_gz_bridge entries of
  :func:`hil_gazebo.core.gz_adapter.bridged_topics`, the names the adapter subscribes to.

Each file says near its top that the export wrote it (:data:`EXPORT_MARK`); an
existing file that does not, the user's own, is not overwritten unless ``force``.

:func:`gazebo_graph` is what ``gazebo.launch.py`` starts: the HIL chain of
:func:`~hil_bringup.core.graph.describe` without the ``sim`` node, plus gz sim, the
bridge, the robot's spawn and the ``gz_adapter`` node. SDF is written as version 1.9
(SDFormat 12, the parser the tests validate with; Harmonic's SDFormat 14 reads it).
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
import yaml
from transforms3d.euler import euler2mat, mat2euler  # type: ignore[import-untyped]
from transforms3d.quaternions import quat2mat  # type: ignore[import-untyped]

from hil_common.core.paths import share_dir
from hil_gazebo.core.gz_adapter import (
    DRIVES,
    MODEL_NAME,
    WHEEL_JOINTS,
    bridged_topics,
    magnetometers,
    scan_specs,
)
from hil_gazebo.errors import HilGazeboError
from hil_sim.core.robot_model import RobotModel, demo_robot
from hil_sim.core.robot_urdf import robot_urdf
from hil_sim.core.urdf import Inertial, Joint, Link, Shape, joints, links, load_urdf
from hil_sim.core.world import (
    BOX_HEIGHT,
    CASTER_FRICTION,
    WALL_HEIGHT,
    WALL_THICKNESS,
    Board,
    Pose,
    WorldConfig,
    load_world,
)

Matrix = npt.NDArray[np.float64]

SDF_VERSION = "1.9"
#: Wall thickness (m), as the MuJoCo backend's; the walls' inner faces are the arena's edges.
#: The ball caster's sliding friction (it rolls), as the MuJoCo backend's.
CASTER_LINK = "caster"
#: A continuous joint's limits: SDFormat's URDF import uses the same.
UNLIMITED = 1e16
#: Where the magnetometer system's table has no declination (module docstring).
LATITUDE_DEG, LONGITUDE_DEG = 10.0, 10.0
#: Height (m) of the light above the floor, as the simulator's marker shows it.
LIGHT_HEIGHT = 0.3
#: SDF inertia elements and their places in the tensor.
INERTIA_ENTRIES = (
    ("ixx", (0, 0)),
    ("ixy", (0, 1)),
    ("ixz", (0, 2)),
    ("iyy", (1, 1)),
    ("iyz", (1, 2)),
    ("izz", (2, 2)),
)


@dataclass(frozen=True)
class GazeboFiles:
    """What an export wrote, and what the launch needs to start it."""

    world_sdf: Path
    robot_sdf: Path
    bridge_yaml: Path
    world_name: str
    start: Pose


#: What every exported file says near its top, and how far into a file it is looked for.
EXPORT_MARK = "written by hil_gazebo export"
MARK_WITHIN = 512


def world_path(world: str | Path) -> Path:
    """A world YAML file: a path, or the name of one of hil_sim's worlds (``demo``, ``empty``).

    Raises:
        HilGazeboError: neither a file nor a shipped world's name (the names are listed).
    """
    path = Path(world)
    if path.suffix in (".yaml", ".yml") or len(path.parts) > 1:
        if not path.is_file():
            raise HilGazeboError(f"world {str(world)!r}: no such file")
        return path
    folder = share_dir("hil_sim") / "worlds"
    shipped = folder / f"{world}.yaml"
    if not shipped.is_file():
        names = ", ".join(sorted(p.stem for p in folder.glob("*.yaml")))
        raise HilGazeboError(f"world {str(world)!r}: not a file and not one of hil_sim's worlds ({names})")
    return shipped


# --- XML helpers -----------------------------------------------------------------------------


def _number(value: float) -> str:
    return f"{value:.9g}"


def _text(parent: ET.Element, tag: str, value: str | float | bool) -> ET.Element:
    element = ET.SubElement(parent, tag)
    if isinstance(value, bool):
        element.text = "true" if value else "false"
    elif isinstance(value, (int, float)):
        element.text = _number(value)
    else:
        element.text = value
    return element


def _vector(values: tuple[float, ...] | list[float] | Matrix) -> str:
    return " ".join(_number(float(v)) for v in values)


def _pose(parent: ET.Element, transform: Matrix, *, relative_to: str = "") -> None:
    roll, pitch, yaw = mat2euler(transform[:3, :3], "sxyz")
    pose = _text(parent, "pose", _vector([*transform[:3, 3], roll, pitch, yaw]))
    if relative_to:
        pose.set("relative_to", relative_to)


def _plugin(parent: ET.Element, library: str, name: str, **settings: str | float | bool | list[str]) -> None:
    plugin = ET.SubElement(
        parent, "plugin", filename=f"gz-sim-{library}-system", name=f"gz::sim::systems::{name}"
    )
    for key, value in settings.items():
        for item in value if isinstance(value, list) else [value]:
            _text(plugin, key, item)


def _document(root: ET.Element) -> str:
    sdf = ET.Element("sdf", version=SDF_VERSION)
    sdf.append(root)
    ET.indent(sdf)
    mark = f"<!-- {EXPORT_MARK} from hil_sim's world and hil_sim's URDF -->\n"
    return '<?xml version="1.0"?>\n' + mark + ET.tostring(sdf, encoding="unicode") + "\n"


def transform(xyz: tuple[float, float, float], rpy: tuple[float, float, float]) -> Matrix:
    """A 4x4 transform from a URDF/SDF origin (rpy: fixed-axis roll, pitch, yaw)."""
    matrix = np.eye(4)
    matrix[:3, :3] = euler2mat(*rpy, "sxyz")
    matrix[:3, 3] = xyz
    return matrix


def _geometry(parent: ET.Element, shape: Shape) -> None:
    geometry = ET.SubElement(ET.SubElement(parent, "geometry"), shape.kind)
    if shape.kind == "box":
        _text(geometry, "size", _vector(shape.size))
    else:
        _text(geometry, "radius", shape.size[0])
        if shape.kind == "cylinder":
            _text(geometry, "length", shape.size[1])


def _box(
    parent: ET.Element, tag: str, name: str, size: tuple[float, float, float], place: Matrix
) -> ET.Element:
    element = ET.SubElement(parent, tag, name=name)
    _pose(element, place)
    _geometry(element, Shape("box", size))
    return element


def _colour(parent: ET.Element, rgba: tuple[float, float, float, float]) -> None:
    material = ET.SubElement(parent, "material")
    for tag in ("ambient", "diffuse"):
        _text(material, tag, _vector(rgba))


def _box_inertia(link: ET.Element, mass: float, size: tuple[float, float, float]) -> None:
    x, y, z = size
    inertial = ET.SubElement(link, "inertial")
    _text(inertial, "mass", mass)
    inertia = ET.SubElement(inertial, "inertia")
    for tag, value in (
        ("ixx", mass * (y * y + z * z) / 12),
        ("iyy", mass * (x * x + z * z) / 12),
        ("izz", mass * (x * x + y * y) / 12),
        ("ixy", 0.0),
        ("ixz", 0.0),
        ("iyz", 0.0),
    ):
        _text(inertia, tag, value)


# --- world ---------------------------------------------------------------------------------


def world_name(source: Path) -> str:
    """The SDF world's name for a world YAML file (``hil_demo``)."""
    return "hil_" + re.sub(r"[^A-Za-z0-9_]", "_", source.stem)


def world_sdf(world: WorldConfig, *, name: str, physics_rate: float = 1000.0, rtf: float = 1.0) -> str:
    """The SDF world of a world description (module docstring).

    Raises:
        HilGazeboError: a physics rate or rtf out of range.
    """
    if not (math.isfinite(physics_rate) and physics_rate > 0):
        raise HilGazeboError(f"physics_rate = {physics_rate!r} must be positive")
    if not (math.isfinite(rtf) and rtf >= 0):
        raise HilGazeboError(f"rtf = {rtf!r} must be >= 0 (0: as fast as possible)")
    root = ET.Element("world", name=name)
    physics = ET.SubElement(root, "physics", name=f"{_number(1000.0 / physics_rate)}ms", type="ignored")
    _text(physics, "max_step_size", 1.0 / physics_rate)
    _text(physics, "real_time_factor", rtf)
    _plugin(root, "physics", "Physics")
    _plugin(root, "user-commands", "UserCommands")
    _plugin(root, "scene-broadcaster", "SceneBroadcaster")
    _plugin(root, "sensors", "Sensors", render_engine="ogre2")
    _plugin(root, "magnetometer", "Magnetometer", use_earth_frame_ned=False)
    _text(root, "gravity", "0 0 -9.81")
    spherical = ET.SubElement(root, "spherical_coordinates")
    _text(spherical, "surface_model", "EARTH_WGS84")
    _text(spherical, "world_frame_orientation", "ENU")
    _text(spherical, "latitude_deg", LATITUDE_DEG)
    _text(spherical, "longitude_deg", LONGITUDE_DEG)
    _text(spherical, "elevation", 0.0)
    _text(spherical, "heading_deg", 0.0)
    sun = ET.SubElement(root, "light", type="directional", name="sun")
    _text(sun, "cast_shadows", False)
    _pose(sun, transform((0.0, 0.0, 10.0), (0.0, 0.0, 0.0)))
    _text(sun, "diffuse", "0.6 0.6 0.6 1")
    _text(sun, "direction", "-0.3 0.2 -0.9")
    light = ET.SubElement(root, "light", type="point", name="hil_light")
    _pose(light, transform((world.light.x, world.light.y, LIGHT_HEIGHT), (0.0, 0.0, 0.0)))
    _text(light, "diffuse", "1 1 0.8 1")
    attenuation = ET.SubElement(light, "attenuation")
    _text(attenuation, "range", max(world.width, world.height) * 2)
    _text(attenuation, "constant", 0.2)
    _text(attenuation, "linear", 0.1)
    _text(attenuation, "quadratic", 0.02)
    _text(light, "cast_shadows", False)
    _ground(root, world)
    _walls(root, world)
    for index, box in enumerate(world.boxes):
        model = ET.SubElement(root, "model", name=f"box_{index}")
        _text(model, "static", True)
        _pose(model, transform((box.x, box.y, BOX_HEIGHT / 2), (0.0, 0.0, box.yaw)))
        link = ET.SubElement(model, "link", name="link")
        size = (box.width, box.depth, BOX_HEIGHT)
        _box(link, "collision", "collision", size, np.eye(4))
        _colour(_box(link, "visual", "visual", size, np.eye(4)), (0.5, 0.4, 0.3, 1.0))
    for index, board in enumerate(world.boards):
        _board(root, index, board)
    return _document(root)


def _ground(root: ET.Element, world: WorldConfig) -> None:
    model = ET.SubElement(root, "model", name="ground_plane")
    _text(model, "static", True)
    link = ET.SubElement(model, "link", name="link")
    size = (world.width + 2 * WALL_THICKNESS, world.height + 2 * WALL_THICKNESS)
    for tag in ("collision", "visual"):
        element = ET.SubElement(link, tag, name=tag)
        plane = ET.SubElement(ET.SubElement(element, "geometry"), "plane")
        _text(plane, "normal", "0 0 1")
        _text(plane, "size", _vector(size))
        if tag == "collision":
            friction = ET.SubElement(ET.SubElement(ET.SubElement(element, "surface"), "friction"), "ode")
            _text(friction, "mu", world.floor_friction)
            _text(friction, "mu2", world.floor_friction)
        else:
            _colour(element, (0.8, 0.8, 0.8, 1.0))


def _walls(root: ET.Element, world: WorldConfig) -> None:
    model = ET.SubElement(root, "model", name="walls")
    _text(model, "static", True)
    link = ET.SubElement(model, "link", name="link")
    half_w, half_h, t = world.width / 2, world.height / 2, WALL_THICKNESS
    for name, centre, size in (
        ("north", (0.0, half_h + t / 2), (world.width + 2 * t, t, WALL_HEIGHT)),
        ("south", (0.0, -half_h - t / 2), (world.width + 2 * t, t, WALL_HEIGHT)),
        ("east", (half_w + t / 2, 0.0), (t, world.height, WALL_HEIGHT)),
        ("west", (-half_w - t / 2, 0.0), (t, world.height, WALL_HEIGHT)),
    ):
        place = transform((centre[0], centre[1], WALL_HEIGHT / 2), (0.0, 0.0, 0.0))
        _box(link, "collision", f"{name}_collision", size, place)
        _colour(_box(link, "visual", f"{name}_visual", size, place), (0.6, 0.6, 0.6, 1.0))


def _board(root: ET.Element, index: int, board: Board) -> None:
    model = ET.SubElement(root, "model", name=f"board_{index}")
    _pose(model, transform((board.x, board.y, board.height / 2), (0.0, 0.0, board.yaw)))
    link = ET.SubElement(model, "link", name="link")
    # The broad face points along yaw: the board is thin along it.
    size = (board.thickness, board.width, board.height)
    _box_inertia(link, board.mass, size)
    _box(link, "collision", "collision", size, np.eye(4))
    _colour(_box(link, "visual", "visual", size, np.eye(4)), (0.9, 0.7, 0.2, 1.0))


# --- robot ---------------------------------------------------------------------------------


@dataclass
class _Body:
    """A link of the SDF: a URDF link with everything fixed to it, in its frame."""

    name: str
    #: ("visual" | "collision", shape, its place in the body, the URDF link it came from)
    shapes: list[tuple[str, Shape, Matrix, str]]
    masses: list[tuple[Inertial, Matrix]]
    frames: dict[str, Matrix]  # every merged URDF link's frame in the body


def _merge(urdf_links: list[Link], urdf_joints: list[Joint], source: str) -> tuple[list[_Body], list[Joint]]:
    """Merge fixed-joint children into their parents: the bodies (the root first), the moving joints."""
    by_name = {link.name: link for link in urdf_links}
    children: dict[str, list[Joint]] = {}
    for joint in urdf_joints:
        for end in (joint.parent, joint.child):
            if end not in by_name:
                raise HilGazeboError(f"{source}: joint {joint.name}: no link {end!r}")
        if joint.kind not in ("fixed", "continuous", "revolute"):
            raise HilGazeboError(
                f"{source}: joint {joint.name}: type {joint.kind!r} (fixed, continuous, revolute)"
            )
        children.setdefault(joint.parent, []).append(joint)
    roots = sorted(set(by_name) - {j.child for j in urdf_joints})
    if len(roots) != 1:
        raise HilGazeboError(f"{source}: expected one root link, found {roots or 'none (a loop)'}")
    bodies: list[_Body] = []
    moving: list[Joint] = []

    def visit(link: Link, body: _Body, place: Matrix) -> None:
        body.frames[link.name] = place
        body.shapes += [("visual", s, place @ transform(s.xyz, s.rpy), link.name) for s in link.visuals]
        body.shapes += [("collision", s, place @ transform(s.xyz, s.rpy), link.name) for s in link.collisions]
        if link.inertial is not None:
            body.masses.append((link.inertial, place))
        for joint in children.get(link.name, []):
            child = by_name[joint.child]
            origin = place @ joint_transform(joint)
            if joint.fixed:
                visit(child, body, origin)
            else:
                moving.append(replace(joint, parent=body.name))
                new = _Body(child.name, [], [], {})
                new.frames["__joint__"] = origin  # the child's frame in its parent body
                bodies.append(new)
                visit(child, new, np.eye(4))

    root = _Body(roots[0], [], [], {})
    bodies.append(root)
    visit(by_name[roots[0]], root, np.eye(4))
    return bodies, moving


def joint_transform(joint: Joint) -> Matrix:
    """A URDF joint's origin as a 4x4 transform (the child's frame in the parent's)."""
    x, y, z, w = joint.rotation
    matrix = np.eye(4)
    matrix[:3, :3] = quat2mat((w, x, y, z))
    matrix[:3, 3] = joint.xyz
    return matrix


def _combined_inertial(masses: list[tuple[Inertial, Matrix]]) -> tuple[float, Matrix, Matrix]:
    """Total mass, centre of mass (3,) and inertia about it (3, 3) in the body frame."""
    total = float(sum(inertial.mass for inertial, _ in masses))
    centre: Matrix = np.zeros(3)
    placed = []
    for inertial, place in masses:
        frame = place @ transform(inertial.xyz, inertial.rpy)
        ixx, ixy, ixz, iyy, iyz, izz = inertial.inertia
        local = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        placed.append((inertial.mass, frame[:3, 3], frame[:3, :3] @ local @ frame[:3, :3].T))
        centre += inertial.mass * frame[:3, 3] / total
    inertia: Matrix = np.zeros((3, 3))
    for mass, at, tensor in placed:
        d = at - centre
        inertia += tensor + mass * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
    return total, centre, inertia


def robot_sdf(
    urdf: str,
    *,
    source: str = "URDF",
    robot: RobotModel | None = None,
    drive: str = "torque",
    model: str = MODEL_NAME,
    sensor_rate: float = 50.0,
    signal_rate: float = 200.0,
) -> str:
    """The robot of a URDF as an SDF model, with its sensors and systems (module docstring).

    Raises:
        HilGazeboError: the URDF is malformed, lacks a wheel joint, a moving link has
            no mass, or a sensor's frame is missing; names ``source`` and the element.
    """
    robot = robot or demo_robot()
    if drive not in DRIVES:
        raise HilGazeboError(f"drive = {drive!r} is not one of {', '.join(DRIVES)}")
    bodies, moving = _merge(links(urdf, source=source), joints(urdf, source=source), source)
    by_child = {j.child: j for j in moving}
    for name in WHEEL_JOINTS:
        if not any(j.name == name for j in moving):
            raise HilGazeboError(f"{source}: joint {name}: missing (a continuous joint to each wheel)")
    root = ET.Element("model", name=model)
    for body in bodies:
        joint = by_child.get(body.name)
        link = _link(root, body, joint, robot, source=source)
        if joint is None:
            _sensors(link, body, robot, model=model, drive=drive, sensor_rate=sensor_rate, source=source)
    for joint in moving:
        _joint(root, joint, robot)
    _systems(root, robot, model=model, drive=drive, signal_rate=signal_rate)
    return _document(root)


def _link(
    root: ET.Element, body: _Body, joint: Joint | None, robot: RobotModel, *, source: str
) -> ET.Element:
    """One SDF link: pose (for a moving link), merged mass, shapes."""
    link = ET.SubElement(root, "link", name=body.name)
    if joint is not None:
        _pose(link, body.frames["__joint__"], relative_to=joint.parent)
    if not body.masses:
        raise HilGazeboError(f"{source}: link {body.name}: no <inertial> (every moving link needs a mass)")
    mass, centre, inertia = _combined_inertial(body.masses)
    if joint is not None and joint.name in WHEEL_JOINTS:
        # The rotors turn with the wheel, gear times faster: their inertia about the
        # axle (the joint's axis) is reflected by gear^2; as a thin disc (module docstring).
        axle = np.asarray(joint.axis, dtype=float) / np.linalg.norm(joint.axis)
        rotor = robot.motor.rotor_inertia * robot.motor.gear_ratio**2
        inertia = inertia + rotor * np.outer(axle, axle) + rotor / 2 * (np.eye(3) - np.outer(axle, axle))
    inertial = ET.SubElement(link, "inertial")
    _text(inertial, "pose", _vector([*centre, 0.0, 0.0, 0.0]))
    _text(inertial, "mass", mass)
    tensor = ET.SubElement(inertial, "inertia")
    for tag, (row, col) in INERTIA_ENTRIES:
        _text(tensor, tag, float(inertia[row, col]))
    counts = {"visual": 0, "collision": 0}
    for tag, shape, place, origin in body.shapes:
        element = ET.SubElement(link, tag, name=f"{tag}_{counts[tag]}")
        counts[tag] += 1
        _pose(element, place)
        _geometry(element, shape)
        if tag == "visual" and shape.rgba is not None:
            _colour(element, shape.rgba)
        if tag == "collision" and origin == CASTER_LINK:
            friction = ET.SubElement(ET.SubElement(ET.SubElement(element, "surface"), "friction"), "ode")
            _text(friction, "mu", CASTER_FRICTION)
            _text(friction, "mu2", CASTER_FRICTION)
    return link


def _joint(root: ET.Element, joint: Joint, robot: RobotModel) -> None:
    """A moving joint; the wheels' with the gearbox's friction."""
    element = ET.SubElement(root, "joint", name=joint.name, type="revolute")
    _text(element, "parent", joint.parent)
    _text(element, "child", joint.child)
    axis = ET.SubElement(element, "axis")
    _text(axis, "xyz", _vector(joint.axis))
    if joint.kind == "continuous":
        limit = ET.SubElement(axis, "limit")
        _text(limit, "lower", -UNLIMITED)
        _text(limit, "upper", UNLIMITED)
    if joint.name in WHEEL_JOINTS:
        motor, gear = robot.motor, robot.motor.gear_ratio
        dynamics = ET.SubElement(axis, "dynamics")
        _text(dynamics, "damping", motor.viscous * gear**2)
        _text(dynamics, "friction", motor.coulomb * gear)


def _sensors(
    link: ET.Element,
    body: _Body,
    robot: RobotModel,
    *,
    model: str,
    drive: str,
    sensor_rate: float,
    source: str,
) -> None:
    topics = bridged_topics(drive, model=model, robot=robot)
    for name, spec in scan_specs(robot, sensor_rate=sensor_rate).items():
        if spec.frame not in body.frames:
            raise HilGazeboError(f"{source}: link {spec.frame}: missing (the {name} sensor's frame)")
        place = body.frames[spec.frame].copy()
        if spec.height is not None:
            place[2, 3] = spec.height
        sensor = ET.SubElement(link, "sensor", name=name, type="gpu_lidar")
        _pose(sensor, place)
        _text(sensor, "topic", topics[name].gz)
        _text(sensor, "update_rate", spec.update_rate)
        _text(sensor, "always_on", True)
        _text(sensor, "visualize", False)
        lidar = ET.SubElement(sensor, "lidar")
        horizontal = ET.SubElement(ET.SubElement(lidar, "scan"), "horizontal")
        _text(horizontal, "samples", spec.samples)
        _text(horizontal, "resolution", 1.0)
        _text(horizontal, "min_angle", spec.min_angle)
        _text(horizontal, "max_angle", spec.max_angle)
        scan_range = ET.SubElement(lidar, "range")
        _text(scan_range, "min", spec.range_min)
        _text(scan_range, "max", spec.range_max)
        _text(scan_range, "resolution", 0.001)
    for role, ros in magnetometers(robot).items():
        frame = robot.device(role.split(":", 1)[1]).frame_id
        if frame not in body.frames:
            raise HilGazeboError(f"{source}: link {frame}: missing (the magnetometer's frame)")
        sensor = ET.SubElement(link, "sensor", name=ros.replace("/", "_"), type="magnetometer")
        _pose(sensor, body.frames[frame])
        _text(sensor, "topic", topics[role].gz)
        _text(sensor, "update_rate", sensor_rate)
        _text(sensor, "always_on", True)
        ET.SubElement(sensor, "magnetometer")  # noise-free: the adapter adds the HMC5883L's


def _systems(root: ET.Element, robot: RobotModel, *, model: str, drive: str, signal_rate: float) -> None:
    topics = bridged_topics(drive, model=model, robot=robot)
    _plugin(
        root,
        "joint-state-publisher",
        "JointStatePublisher",
        topic=topics["joint_states"].gz,
        joint_name=list(WHEEL_JOINTS),
        update_rate=signal_rate,
    )
    _plugin(
        root,
        "odometry-publisher",
        "OdometryPublisher",
        odom_frame="odom",
        robot_base_frame="base_link",
        odom_publish_frequency=signal_rate,
        odom_topic=topics["odom"].gz,
        dimensions=2,
    )
    if drive == "torque":
        for joint in WHEEL_JOINTS:
            _plugin(root, "apply-joint-force", "ApplyJointForce", joint_name=joint)
    else:
        _plugin(
            root,
            "diff-drive",
            "DiffDrive",
            left_joint=WHEEL_JOINTS[0],
            right_joint=WHEEL_JOINTS[1],
            wheel_separation=robot.body.wheel_base,
            wheel_radius=robot.body.wheel_radius,
            topic=topics["cmd_vel"].gz,
            # Its own odometry elsewhere: the pose comes from the OdometryPublisher.
            odom_topic=f"/model/{model}/diff_drive/odometry",
            tf_topic=f"/model/{model}/diff_drive/tf",
        )


# --- bridge and export -----------------------------------------------------------------------


def bridge_yaml(drive: str, *, model: str = MODEL_NAME, robot: RobotModel | None = None) -> str:
    """The ros_gz_bridge configuration (``config_file``) of the adapter's topics (``robot``: the demo's)."""
    entries = [
        {
            "ros_topic_name": topic.ros,
            "gz_topic_name": topic.gz,
            "ros_type_name": topic.ros_type,
            "gz_type_name": topic.gz_type,
            "direction": topic.direction,
        }
        for topic in bridged_topics(drive, model=model, robot=robot).values()
    ]
    header = (
        f"# ros_gz_bridge configuration {EXPORT_MARK}: Gazebo's clock, odometry,\n"
        f"# joint states and sensors to ROS, the wheel commands (drive {drive}) to Gazebo.\n"
        "# ros2 run ros_gz_bridge parameter_bridge --ros-args -p config_file:=<this file>\n"
    )
    return header + yaml.safe_dump(entries, sort_keys=False)


def _not_ours(path: Path) -> bool:
    """``path`` exists and is not a file this export wrote (no :data:`EXPORT_MARK` near its top)."""
    if not path.exists() and not path.is_symlink():
        return False
    try:
        with path.open("rb") as file:
            return EXPORT_MARK.encode() not in file.read(MARK_WITHIN)
    except OSError:
        return True


def export(
    world: str | Path,
    out_dir: str | Path,
    *,
    force: bool = False,
    urdf: str | Path | None = None,
    robot: RobotModel | None = None,
    drive: str = "torque",
    rtf: float = 1.0,
    physics_rate: float = 1000.0,
    sensor_rate: float = 50.0,
    signal_rate: float = 200.0,
) -> GazeboFiles:
    """Write ``world.sdf``, ``robot.sdf`` and ``bridge.yaml`` for a world into ``out_dir``.

    Args:
        world: a world YAML file or the name of one of hil_sim's worlds.
        out_dir: the folder (made if missing).
        force: overwrite files of the same names that the export did not write.
        urdf: the robot's URDF; None: its model's (or the one generated from it).
        robot: the robot's model (its sensors, motors, body); None: the demo robot.
        drive: ``torque`` or ``velocity`` (:mod:`hil_gazebo.core.gz_adapter`).
        rtf: Gazebo's real-time factor (0: as fast as possible).
        physics_rate: Gazebo's physics steps per second.
        sensor_rate: the lidars' and magnetometer's updates per second.
        signal_rate: odometry and joint states per second (the adapter's exchange rate).

    Raises:
        HilGazeboError: a bad world name, world or URDF file (naming it and the element),
            an MJCF world, a bad option, or a file in the way that the export did not
            write (without ``force``; nothing is written then).
        HilSimError: a world YAML that does not validate (naming the file and key).
    """
    source = world_path(world)
    config = load_world(source)
    if config.mjcf:
        raise HilGazeboError(f"{source}: mjcf: an MJCF world cannot be exported to Gazebo; leave mjcf out")
    robot = robot or demo_robot()
    urdf = urdf or robot.urdf
    urdf_text = load_urdf(urdf) if urdf else robot_urdf(robot, servo_joints=False)
    urdf_source = str(urdf) if urdf else f"robot {robot.name}'s generated URDF"
    name = world_name(source)
    folder = Path(out_dir)
    world_text = world_sdf(config, name=name, physics_rate=physics_rate, rtf=rtf)
    robot_text = robot_sdf(
        urdf_text,
        source=urdf_source,
        robot=robot,
        drive=drive,
        sensor_rate=sensor_rate,
        signal_rate=signal_rate,
    )
    files = GazeboFiles(
        folder / "world.sdf", folder / "robot.sdf", folder / "bridge.yaml", name, config.start
    )
    theirs = [p.name for p in (files.world_sdf, files.robot_sdf, files.bridge_yaml) if _not_ours(p)]
    if theirs and not force:
        raise HilGazeboError(
            f"{folder}: {', '.join(theirs)} exist(s) and hil_gazebo export did not write them; "
            "not overwritten (--force overwrites them, or choose another --out)"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        files.world_sdf.write_text(world_text)
        files.robot_sdf.write_text(robot_text)
        files.bridge_yaml.write_text(bridge_yaml(drive, robot=robot))
    except OSError as exc:
        raise HilGazeboError(f"{folder}: cannot write the export: {exc.strerror}") from exc
    return files


def sdf_checker() -> list[str] | None:
    """SDFormat's checker: ``gz sdf -k`` (Gazebo) or ``ign sdf -k`` (ignition-tools); None if neither."""
    for tool in ("gz", "ign"):
        if shutil.which(tool):
            return [tool, "sdf", "-k"]
    return None


def check_sdf(path: Path) -> str:
    """Check ``path`` with the SDFormat parser; returns what it printed (``Valid.``).

    Raises:
        HilGazeboError: no checker installed, or the file is not valid SDF (with the
            parser's messages, which name the element).
    """
    command = sdf_checker()
    if command is None:
        raise HilGazeboError(
            "no SDFormat checker: install Gazebo (gz) or ignition-tools and libsdformat-dev (ign)"
        )
    result = subprocess.run([*command, str(path)], capture_output=True, text=True, timeout=60, check=False)
    # ignition-tools prints a backtrace-library notice on stderr even for a valid file.
    messages = [
        line
        for line in (result.stdout + result.stderr).splitlines()
        if line.strip() and "libignition-tools-backward" not in line
    ]
    if result.returncode != 0 or "Valid." not in messages:
        raise HilGazeboError(f"{path}: not valid SDF ({' '.join(command)}):\n" + "\n".join(messages))
    return "\n".join(messages)


# --- the launch's graph ----------------------------------------------------------------------


def gz_sim_arguments(world_sdf: Path, *, gui: bool) -> tuple[str, ...]:
    """``gz sim`` arguments: run at once; without GUI a server with headless rendering (the lidars)."""
    return ("sim", "-r", *(() if gui else ("-s", "--headless-rendering")), str(world_sdf))
