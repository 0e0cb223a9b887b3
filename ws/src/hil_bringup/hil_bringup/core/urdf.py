"""The joints of a URDF, for publishing its transforms without robot_state_publisher.

Fixed joints become static transforms; continuous and revolute joints rotate about
their axis by the joint's position from ``joint_states``. Only what the HIL robot
uses is read (``origin xyz/rpy``, ``axis``); a malformed file raises
:class:`~hil_bringup.errors.HilBringupError` naming it.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from transforms3d.euler import euler2quat  # type: ignore[import-untyped]
from transforms3d.quaternions import axangle2quat, qmult  # type: ignore[import-untyped]

from hil_bringup.errors import HilBringupError

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
    values = tuple(float(v) for v in (text or " ".join(["0"] * count)).split())
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise HilBringupError(f"{where}: expected {count} finite numbers, got {text!r}")
    return values


def joints(urdf: str, *, source: str = "URDF") -> list[Joint]:
    """Every joint of a URDF document.

    Raises:
        HilBringupError: not XML, or a joint lacks parent/child or has bad numbers.
    """
    try:
        root = ET.fromstring(urdf)
    except ET.ParseError as exc:
        raise HilBringupError(f"{source}: not XML: {exc}") from exc
    found = []
    for element in root.iter("joint"):
        name = element.get("name", "?")
        where = f"{source}: joint {name}"
        parent, child = element.find("parent"), element.find("child")
        if parent is None or child is None or not parent.get("link") or not child.get("link"):
            raise HilBringupError(f"{where}: needs <parent link=...> and <child link=...>")
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
        HilBringupError: the file cannot be read.
    """
    try:
        return Path(path).read_text()
    except OSError as exc:
        raise HilBringupError(f"{path}: cannot read URDF: {exc.strerror}") from exc
