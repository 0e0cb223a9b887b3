"""The URDF of a robot model: body, wheels, caster, a frame per mounted device, a joint per servo.

:func:`robot_urdf` writes what MuJoCo builds the robot from (physics ``mujoco``) and
what ``robot_description`` publishes for rviz and TF, from the
:class:`~hil_sim.core.robot_model.RobotModel` alone:

* ``base_link``: the body disc (radius ``body_radius``, from ``clearance`` to ``height``
  above the floor) as visual and collision shape, with the body's mass (the robot's
  less the wheels and caster) and the inertia of a uniform disc about its centre of
  mass ``com_x`` ahead of the axle;
* ``left_wheel``, ``right_wheel``: cylinders of ``wheel_radius`` and ``wheel_width`` on
  continuous joints (``<side>_wheel_joint``, axis +y) ``wheel_base`` apart, with their
  mass and a uniform cylinder's inertia;
* ``caster``: a sphere of ``caster_radius`` at ``caster_x`` on a fixed joint;
* a link per device that sits somewhere (every kind but the wheels' drivers and
  encoders), named by its ``frame_id``, on a fixed joint at its mount pose (a small box
  as its visual for rangers and bumpers); a servo's on a revolute joint
  ``<name>_joint`` about z over its range (``servo_joints`` False: a fixed one, for a
  physics engine: the simulation turns what rides on a servo itself), and a device
  riding on a servo on its frame.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from hil_sim.core.devices import kind
from hil_sim.core.robot_model import DeviceSpec, RobotModel

#: Visual boxes (m) of the devices that have one, by kind.
BOXES = {"ranger": (0.015, 0.045, 0.02), "bumper": (0.01, 0.07, 0.02), "line": (0.01, 0.01, 0.005)}


def _number(value: float) -> str:
    text = f"{0.0 if abs(value) < 1e-12 else value:.6g}"
    return "0" if text == "-0" else text


def _vector(*values: float) -> str:
    return " ".join(_number(v) for v in values)


def _inertial(
    link: ET.Element, mass: float, diagonal: tuple[float, float, float], xyz: tuple[float, ...] = ()
) -> None:
    inertial = ET.SubElement(link, "inertial")
    if xyz:
        ET.SubElement(inertial, "origin", xyz=_vector(*xyz))
    ET.SubElement(inertial, "mass", value=_number(mass))
    ixx, iyy, izz = diagonal
    ET.SubElement(
        inertial, "inertia", ixx=_number(ixx), ixy="0", ixz="0", iyy=_number(iyy), iyz="0", izz=_number(izz)
    )


def _shape(
    link: ET.Element,
    tag: str,
    geometry: tuple[str, dict[str, str]],
    *,
    origin: dict[str, str] | None = None,
    material: str = "",
) -> None:
    element = ET.SubElement(link, tag)
    if origin:
        ET.SubElement(element, "origin", origin)
    ET.SubElement(ET.SubElement(element, "geometry"), geometry[0], geometry[1])
    if material:
        ET.SubElement(element, "material", name=material)


def _joint(
    root: ET.Element,
    name: str,
    kind: str,
    *,
    parent: str,
    child: str,
    xyz: tuple[float, float, float],
    yaw: float = 0.0,
) -> ET.Element:
    joint = ET.SubElement(root, "joint", name=name, type=kind)
    ET.SubElement(joint, "parent", link=parent)
    ET.SubElement(joint, "child", link=child)
    origin = {"xyz": _vector(*xyz)}
    if yaw:
        origin["rpy"] = _vector(0.0, 0.0, yaw)
    ET.SubElement(joint, "origin", origin)
    return joint


def joint_name(spec: DeviceSpec) -> str:
    """The URDF joint of a device's frame (a servo's: ``<name>_joint``, its joint state's name)."""
    if spec.kind == "servo":
        return f"{spec.name}_joint"
    frame = spec.frame_id
    return f"{frame[: -len('_link')]}_joint" if frame.endswith("_link") else f"{frame}_joint"


def placed(model: RobotModel) -> tuple[DeviceSpec, ...]:
    """The devices that have a frame (all but the wheels' drivers and encoders)."""
    return tuple(spec for spec in model.devices if not kind(spec.kind).WHEEL)


def robot_urdf(model: RobotModel, *, servo_joints: bool = True) -> str:
    """The URDF text of ``model`` (module docstring)."""
    body = model.body
    root = ET.Element("robot", name=f"hil_{model.name}")
    for name, rgba in (
        ("body", "0.2 0.4 0.8 1.0"),
        ("black", "0.1 0.1 0.1 1.0"),
        ("sensor", "0.9 0.9 0.9 1.0"),
    ):
        ET.SubElement(ET.SubElement(root, "material", name=name), "color", rgba=rgba)
    base = ET.SubElement(root, "link", name="base_link")
    thickness = body.height - body.clearance
    centre = (body.clearance + body.height) / 2
    disc = ("cylinder", {"radius": _number(body.body_radius), "length": _number(thickness)})
    _shape(base, "visual", disc, origin={"xyz": _vector(0, 0, centre)}, material="body")
    _shape(base, "collision", disc, origin={"xyz": _vector(0, 0, centre)})
    mass = body.body_mass
    side = mass * (3 * body.body_radius**2 + thickness**2) / 12
    _inertial(base, mass, (side, side, mass * body.body_radius**2 / 2), (body.com_x, 0.0, centre))
    wheel_shape = ("cylinder", {"radius": _number(body.wheel_radius), "length": _number(body.wheel_width)})
    roll = {"rpy": _vector(math.pi / 2, 0, 0)}
    for name, y in (("left", body.wheel_base / 2), ("right", -body.wheel_base / 2)):
        wheel = ET.SubElement(root, "link", name=f"{name}_wheel")
        _shape(wheel, "visual", wheel_shape, origin=roll, material="black")
        _shape(wheel, "collision", wheel_shape, origin=roll)
        m, r = body.wheel_mass, body.wheel_radius
        across = m * (3 * r**2 + body.wheel_width**2) / 12
        _inertial(wheel, m, (across, m * r**2 / 2, across))
        joint = _joint(
            root,
            f"{name}_wheel_joint",
            "continuous",
            parent="base_link",
            child=f"{name}_wheel",
            xyz=(0.0, y, r),
        )
        ET.SubElement(joint, "axis", xyz="0 1 0")
    caster = ET.SubElement(root, "link", name="caster")
    ball = ("sphere", {"radius": _number(body.caster_radius)})
    _shape(caster, "visual", ball, material="black")
    _shape(caster, "collision", ball)
    ball_inertia = 2 / 5 * body.caster_mass * body.caster_radius**2
    _inertial(caster, body.caster_mass, (ball_inertia, ball_inertia, ball_inertia))
    _joint(
        root,
        "caster_joint",
        "fixed",
        parent="base_link",
        child="caster",
        xyz=(body.caster_x, 0.0, body.caster_radius),
    )
    for spec in placed(model):
        _device_frame(root, model, spec, servo_joints=servo_joints)
    ET.indent(root, space="  ")
    text = ET.tostring(root, encoding="unicode").replace(" />", "/>")
    return (
        '<?xml version="1.0"?>\n'
        f"<!-- Robot {model.name}, written by hil_sim.core.robot_urdf from its robot model. -->\n{text}\n"
    )


def _device_frame(root: ET.Element, model: RobotModel, spec: DeviceSpec, *, servo_joints: bool) -> None:
    """A device's link and the joint that places it (on the body, or on its servo)."""
    link = ET.SubElement(root, "link", name=spec.frame_id)
    box = BOXES.get(spec.kind)
    if box is not None:
        _shape(link, "visual", ("box", {"size": _vector(*box)}), material="sensor")
    mount, parent = spec.mount, "base_link"
    xyz, yaw = (mount.x, mount.y, mount.z), mount.yaw
    if mount.servo:
        servo = model.device(mount.servo)
        parent = servo.frame_id
        dx, dy = mount.x - servo.mount.x, mount.y - servo.mount.y
        c, s = math.cos(servo.mount.yaw), math.sin(servo.mount.yaw)
        xyz = (c * dx + s * dy, -s * dx + c * dy, mount.z - servo.mount.z)
        yaw = mount.yaw - servo.mount.yaw
    moving = spec.kind == "servo" and servo_joints
    joint = _joint(
        root,
        joint_name(spec),
        "revolute" if moving else "fixed",
        parent=parent,
        child=spec.frame_id,
        xyz=xyz,
        yaw=yaw,
    )
    if moving:
        ET.SubElement(joint, "axis", xyz="0 0 1")
        half = math.radians(float(spec.params.get("range_deg", 180.0))) / 2
        ET.SubElement(joint, "limit", lower=_number(-half), upper=_number(half), effort="1", velocity="10")
