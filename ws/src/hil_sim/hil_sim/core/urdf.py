"""The joints of a URDF, for publishing its transforms without robot_state_publisher.

Fixed joints become static transforms; continuous and revolute joints rotate about
their axis by the joint's position from ``joint_states``. Only what the HIL robot
uses is read (``origin xyz/rpy``, ``axis``); a malformed file raises
:class:`~hil_sim.errors.HilSimError` naming it.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from transforms3d.euler import euler2quat  # type: ignore[import-untyped]
from transforms3d.quaternions import axangle2quat, qmult  # type: ignore[import-untyped]

from hil_sim.errors import HilSimError

Quaternion = tuple[float, float, float, float]  # x, y, z, w (ROS order)


@dataclass(frozen=True)
class Joint:
    """One URDF joint: its frames, origin and (for moving joints) axis."""

    name: str
    kind: str
    parent: str
    child: str
    xyz: tuple[float, float, float]
    rotation: Quaternion
    axis: tuple[float, float, float] = (1.0, 0.0, 0.0)

    @property
    def fixed(self) -> bool:
        """True for a joint that never moves."""
        return self.kind == "fixed"

    def rotation_at(self, position: float) -> Quaternion:
        """The child's orientation in the parent for a joint position (rad)."""
        if self.fixed:
            return self.rotation
        x, y, z, w = self.rotation
        turned = qmult((w, x, y, z), axangle2quat(self.axis, position))
        return (float(turned[1]), float(turned[2]), float(turned[3]), float(turned[0]))


def _floats(text: str | None, count: int, where: str) -> tuple[float, ...]:
    try:
        values = tuple(float(v) for v in (text or " ".join(["0"] * count)).split())
    except ValueError:
        values = ()
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise HilSimError(f"{where}: expected {count} finite numbers, got {text!r}")
    return values


def joints(urdf: str, *, source: str = "URDF") -> list[Joint]:
    """Every joint of a URDF document.

    Raises:
        HilSimError: not XML, or a joint lacks parent/child or has bad numbers.
    """
    try:
        root = ET.fromstring(urdf)
    except ET.ParseError as exc:
        raise HilSimError(f"{source}: not XML: {exc}") from exc
    found = []
    for element in root.iter("joint"):
        name = element.get("name", "?")
        where = f"{source}: joint {name}"
        parent, child = element.find("parent"), element.find("child")
        if parent is None or child is None or not parent.get("link") or not child.get("link"):
            raise HilSimError(f"{where}: needs <parent link=...> and <child link=...>")
        origin = element.find("origin")
        xyz = _floats(origin.get("xyz") if origin is not None else None, 3, f"{where}: origin xyz")
        rpy = _floats(origin.get("rpy") if origin is not None else None, 3, f"{where}: origin rpy")
        w, x, y, z = euler2quat(*rpy, "sxyz")
        axis_element = element.find("axis")
        axis = _floats(axis_element.get("xyz") if axis_element is not None else "1 0 0", 3, f"{where}: axis")
        found.append(
            Joint(
                name=name,
                kind=element.get("type", "fixed"),
                parent=str(parent.get("link")),
                child=str(child.get("link")),
                xyz=(xyz[0], xyz[1], xyz[2]),
                rotation=(float(x), float(y), float(z), float(w)),
                axis=(axis[0], axis[1], axis[2]),
            )
        )
    return found


def load_urdf(path: str | Path) -> str:
    """Read a URDF file.

    Raises:
        HilSimError: the file cannot be read.
    """
    try:
        return Path(path).read_text()
    except OSError as exc:
        raise HilSimError(f"{path}: cannot read URDF: {exc.strerror}") from exc


# --- links (geometry and mass) -----------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """One ``<visual>`` or ``<collision>``: a box, cylinder or sphere at an origin in its link.

    ``size`` is (x, y, z) for a box, (radius, length) for a cylinder (along its z axis),
    (radius,) for a sphere.
    """

    kind: str
    size: tuple[float, ...]
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    #: A visual's colour (r, g, b, a), from its material or the robot's named material.
    rgba: tuple[float, float, float, float] | None = None


@dataclass(frozen=True)
class Inertial:
    """A link's mass (kg), centre of mass (m, in the link) and inertia about it (kg m^2)."""

    mass: float
    xyz: tuple[float, float, float]
    rpy: tuple[float, float, float]
    #: ixx, ixy, ixz, iyy, iyz, izz
    inertia: tuple[float, float, float, float, float, float]


@dataclass(frozen=True)
class Link:
    """One URDF link: its shapes and its mass (None: massless, e.g. a sensor frame)."""

    name: str
    visuals: tuple[Shape, ...] = ()
    collisions: tuple[Shape, ...] = ()
    inertial: Inertial | None = None


#: URDF geometry element -> the attributes that give its size, in :attr:`Shape.size` order.
GEOMETRY_SIZES = {"box": ("size",), "cylinder": ("radius", "length"), "sphere": ("radius",)}


def _positive(text: str | None, count: int, where: str) -> tuple[float, ...]:
    values = _floats(text or "", count, where) if text else ()
    if len(values) != count or not all(v > 0 for v in values):
        raise HilSimError(f"{where}: expected {count} positive number(s), got {text!r}")
    return values


def _origin(element: ET.Element, where: str) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    origin = element.find("origin")
    xyz = _floats(origin.get("xyz") if origin is not None else None, 3, f"{where}: origin xyz")
    rpy = _floats(origin.get("rpy") if origin is not None else None, 3, f"{where}: origin rpy")
    return (xyz[0], xyz[1], xyz[2]), (rpy[0], rpy[1], rpy[2])


def _shape(element: ET.Element, where: str, colours: dict[str, tuple[float, float, float, float]]) -> Shape:
    geometry = element.find("geometry")
    kinds = [child for child in (geometry if geometry is not None else []) if child.tag in GEOMETRY_SIZES]
    if geometry is None or len(kinds) != 1:
        raise HilSimError(f"{where}: geometry: expected one of {', '.join(GEOMETRY_SIZES)}")
    kind = kinds[0]
    size: tuple[float, ...] = ()
    for attribute in GEOMETRY_SIZES[kind.tag]:
        count = 3 if attribute == "size" else 1
        size += _positive(kind.get(attribute), count, f"{where}: {kind.tag} {attribute}")
    xyz, rpy = _origin(element, where)
    rgba = None
    material = element.find("material")
    if material is not None:
        color = material.find("color")
        if color is not None:
            values = _floats(color.get("rgba"), 4, f"{where}: material color rgba")
            rgba = (values[0], values[1], values[2], values[3])
        else:
            rgba = colours.get(material.get("name", ""))
    return Shape(kind.tag, size, xyz, rpy, rgba)


def _inertial(element: ET.Element, where: str) -> Inertial:
    mass_element, inertia_element = element.find("mass"), element.find("inertia")
    if mass_element is None or inertia_element is None:
        raise HilSimError(f"{where}: needs <mass value=...> and <inertia .../>")
    (mass,) = _positive(mass_element.get("value"), 1, f"{where}: mass value")
    inertia = tuple(
        _floats(inertia_element.get(name), 1, f"{where}: inertia {name}")[0]
        for name in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    )
    ixx, _, _, iyy, _, izz = inertia
    if min(ixx, iyy, izz) <= 0:
        raise HilSimError(f"{where}: inertia: ixx, iyy and izz must be positive")
    xyz, rpy = _origin(element, where)
    return Inertial(mass, xyz, rpy, (inertia[0], inertia[1], inertia[2], inertia[3], inertia[4], inertia[5]))


def links(urdf: str, *, source: str = "URDF") -> list[Link]:
    """Every link of a URDF document, with its box/cylinder/sphere shapes and mass.

    Raises:
        HilSimError: not XML, not a ``<robot>``, a link without a name or twice, a
            geometry other than box/cylinder/sphere, or bad numbers; names ``source``,
            the link and the element (``hil_robot.urdf: link caster: collision[0]: ...``).
    """
    try:
        root = ET.fromstring(urdf)
    except ET.ParseError as exc:
        raise HilSimError(f"{source}: not XML: {exc}") from exc
    if root.tag != "robot":
        raise HilSimError(f"{source}: the root element is <{root.tag}>, not <robot>")
    colours = {}
    for material in root.findall("material"):
        color = material.find("color")
        if color is not None and material.get("name"):
            values = _floats(color.get("rgba"), 4, f"{source}: material {material.get('name')}: color rgba")
            colours[str(material.get("name"))] = (values[0], values[1], values[2], values[3])
    found: list[Link] = []
    for element in root.findall("link"):
        name = element.get("name")
        if not name:
            raise HilSimError(f"{source}: link #{len(found)}: has no name")
        if any(link.name == name for link in found):
            raise HilSimError(f"{source}: link {name}: defined twice")
        where = f"{source}: link {name}"
        inertial = element.find("inertial")
        found.append(
            Link(
                name=name,
                visuals=tuple(
                    _shape(v, f"{where}: visual[{i}]", colours)
                    for i, v in enumerate(element.findall("visual"))
                ),
                collisions=tuple(
                    _shape(c, f"{where}: collision[{i}]", colours)
                    for i, c in enumerate(element.findall("collision"))
                ),
                inertial=_inertial(inertial, f"{where}: inertial") if inertial is not None else None,
            )
        )
    return found
