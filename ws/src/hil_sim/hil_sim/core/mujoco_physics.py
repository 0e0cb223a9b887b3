"""Physics backend ``mujoco``: the robots and the world in MuJoCo.

The model is put together with MuJoCo's own parsers and ``MjSpec``:

* each robot from its URDF (its model's ``urdf``, or the one generated from its model
  by :mod:`hil_sim.core.robot_urdf`: collision shapes, masses and inertias, wheel
  joints; one source for the robot's geometry and mass; servos are fixed there, the
  simulation turns what rides on them), once per robot on a free joint, robots of
  different models side by side; the wheels' joints carry the motors' rotor inertia,
  viscous and Coulomb friction reflected through the gearbox (``armature``,
  ``damping``, ``frictionloss``), and a motor actuator each;
* the world from the world YAML (:mod:`hil_sim.core.world`): a floor with the world's
  friction, the arena walls and boxes as static boxes, every board a free body with
  its mass and the inertia of its box, standing on its short edge; or the user's MJCF
  world (``mjcf`` in the world YAML), whose free bodies named ``board*`` are the boards.
  Boards are thin: the robot's body hits them, its wheels and caster pass a fallen one
  (:data:`BOARD_CONAFFINITY`).

Per physics step the motors' electrical equation (:meth:`MotorBank.step_current`, at
the wheel speed MuJoCo gives) yields the current, ``gear * kt * current`` is the
torque on the wheel joint, and ``mj_step`` does the rest: wheel-floor friction, the
caster, the robot's mass, contacts with walls, boxes and boards, boards toppling.
Bumpers: the body disc finds contacts ``bumper_travel`` before it touches (a contact
``gap``: found, not yet acting), and every step those contacts are reported with their
bearing. A board counts as down once tilted past :data:`BOARD_DOWN_TILT`.
Range sensors: ``mj_multiRay`` from each ranger's mount (where a servo has turned it),
in the body frame, seeing everything but the robots. MuJoCo has no randomness of its own: a run is a function
of its inputs, and the sensors' noise comes seeded from the simulation as with
``native``.
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mujoco  # type: ignore[import-untyped]
import numpy as np

from hil_sim.core.physics_types import Array, BoolArray, IndexArray, Rays, Touch
from hil_sim.core.robot_arrays import RobotArrays
from hil_sim.core.robot_urdf import robot_urdf
from hil_sim.core.world import (
    BOX_HEIGHT,
    CASTER_FRICTION,
    WALL_HEIGHT,
    WALL_THICKNESS,
    Board,
    Pose,
    WorldConfig,
)
from hil_sim.errors import HilSimError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from hil_sim.core.robot_model import RobotModel

#: A board tilted further than this (rad) from upright is down.
BOARD_DOWN_TILT = math.radians(60.0)
#: Robot geoms are in this geom group, which the range sensors' rays skip.
ROBOT_GROUP = 3
#: Collision bits (MuJoCo: two geoms collide if either's contype meets the other's
#: conaffinity). The static world is 1. Robots collide with the world, not with each
#: other (ghosts, as in native). Boards are thin: the robot's body hits them, its wheels
#: and caster roll over a fallen one (native lets a robot pass a fallen board as well).
WORLD_BIT, WHEEL_BIT, BOARD_BIT, BODY_BIT = 1, 2, 4, 8
BOARD_CONTYPE, BOARD_CONAFFINITY = BOARD_BIT, WORLD_BIT | BOARD_BIT | BODY_BIT
#: Contacts of a robot's bumper that MuJoCo's contact sensor reports each step (nearest first).
BUMPER_CONTACTS = 4
#: Contact sensor data per contact: found, dist, pos (x, y, z).
_FOUND_DIST_POS = (
    (1 << int(mujoco.mjtConDataField.mjCONDATA_FOUND))
    | (1 << int(mujoco.mjtConDataField.mjCONDATA_DIST))
    | (1 << int(mujoco.mjtConDataField.mjCONDATA_POS))
)
_SLOT = 5
#: Contacts this low (m) are with the floor (a tipped robot's disc), which no bumper feels.
FLOOR_CONTACT_Z = 0.01
#: MuJoCo's warnings, each of which leaves its state unusable: a bad qpos, qvel or qacc
#: (MuJoCo then resets the data and runs on: the robots back at their starts, looking
#: pinned), a bad control, a singular inertia, contacts or constraints dropped for want
#: of memory. Any of them stops the run (:meth:`MujocoPhysics.advance`).
WARNINGS = tuple(mujoco.mjtWarning(k) for k in range(int(mujoco.mjtWarning.mjNWARNING)))
#: Warnings whose info is a degree of freedom (named in the message by its body).
_DOF_WARNINGS = frozenset(
    {mujoco.mjtWarning.mjWARN_BADQACC, mujoco.mjtWarning.mjWARN_BADQVEL, mujoco.mjtWarning.mjWARN_INERTIA}
)
#: The links of the robot's URDF the backend needs.
BASE, WHEELS, CASTER = "base_link", ("left_wheel", "right_wheel"), "caster"


def _print_warning(message: str) -> None:
    """MuJoCo's warnings to stderr, and nowhere else.

    Its own handler would also append each one to ``MUJOCO_LOG.TXT`` in the working
    folder (a user's folder, or the repository's in a test). The ones that matter to a
    run are read from MuJoCo's counters and stop it (:meth:`MujocoPhysics.advance`).
    """
    print(f"MuJoCo warning: {message}", file=sys.stderr)


mujoco.set_mju_user_warning(_print_warning)


def _load(path: str | Path, what: str) -> Any:
    """An MjSpec from a URDF or MJCF file; MuJoCo's message names the element and line."""
    if not Path(path).is_file():
        raise HilSimError(f"{path}: no such {what} file")
    try:
        return mujoco.MjSpec.from_file(str(path))
    except ValueError as exc:
        raise HilSimError(f"{path}: bad {what}: {' '.join(str(exc).split())}") from exc


def robot_spec(model: RobotModel) -> tuple[Any, str]:
    """The MjSpec of a robot model (its URDF file, or the generated one) and what to call it."""
    if model.urdf:
        return _load(model.urdf, "robot URDF"), model.urdf
    source = f"robot {model.name}'s generated URDF"
    try:
        return mujoco.MjSpec.from_string(robot_urdf(model, servo_joints=False)), source
    except ValueError as exc:
        raise HilSimError(f"{source}: bad robot URDF: {' '.join(str(exc).split())}") from exc


def _compile(spec: Any, sources: str) -> Any:
    try:
        return spec.compile()
    except ValueError as exc:
        raise HilSimError(f"{sources}: MuJoCo cannot build the model: {' '.join(str(exc).split())}") from exc


def _yaw_quat(yaw: float) -> list[float]:
    return [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]


def _round_tyre(geom: Any) -> None:
    """A wheel cylinder as the ellipsoid of its radius and width: a round tyre.

    A flat cylinder meets the floor along a line, and MuJoCo takes its two rim edges,
    which in a turn roll on circles of different radii: one must slip, and the wheel
    chatters off the floor. A tyre touches at its centre line, as a real one does.
    """
    if geom.type == mujoco.mjtGeom.mjGEOM_CYLINDER:
        radius, half_width = float(geom.size[0]), float(geom.size[1])
        geom.type = mujoco.mjtGeom.mjGEOM_ELLIPSOID
        geom.size = [radius, radius, half_width]


def world_spec(world: WorldConfig, dt: float) -> Any:
    """The MJCF world of a world YAML: floor, walls, boxes, boards (free bodies)."""
    spec = mujoco.MjSpec()
    spec.modelname = "hil_world"
    body = spec.worldbody
    half_w, half_h = world.width / 2, world.height / 2
    body.add_geom(
        name="floor",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        size=[half_w + WALL_THICKNESS, half_h + WALL_THICKNESS, 0.1],
        friction=[world.floor_friction, 0.005, 0.0001],
    )
    t = WALL_THICKNESS / 2
    for name, pos, size in (
        ("wall_north", [0.0, half_h + t, WALL_HEIGHT / 2], [half_w + 2 * t, t, WALL_HEIGHT / 2]),
        ("wall_south", [0.0, -half_h - t, WALL_HEIGHT / 2], [half_w + 2 * t, t, WALL_HEIGHT / 2]),
        ("wall_east", [half_w + t, 0.0, WALL_HEIGHT / 2], [t, half_h, WALL_HEIGHT / 2]),
        ("wall_west", [-half_w - t, 0.0, WALL_HEIGHT / 2], [t, half_h, WALL_HEIGHT / 2]),
    ):
        body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX, pos=pos, size=size)
    for index, box in enumerate(world.boxes):
        body.add_geom(
            name=f"box_{index}",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            pos=[box.x, box.y, BOX_HEIGHT / 2],
            quat=_yaw_quat(box.yaw),
            size=[box.width / 2, box.depth / 2, BOX_HEIGHT / 2],
        )
    for index, board in enumerate(world.boards):
        # The broad face points along yaw: the board is thin along it.
        item = body.add_body(
            name=f"board_{index}", pos=[board.x, board.y, board.height / 2], quat=_yaw_quat(board.yaw)
        )
        item.add_freejoint()
        item.add_geom(
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=[board.thickness / 2, board.width / 2, board.height / 2],
            mass=board.mass,
            contype=BOARD_CONTYPE,
            conaffinity=BOARD_CONAFFINITY,
        )
    spec.option.timestep = dt
    return spec


def _boards_of_mjcf(model: Any, data: Any, source: str) -> tuple[list[int], tuple[Board, ...]]:
    """Body ids and :class:`Board` descriptions of an MJCF world's free bodies named ``board*``."""
    ids, boards = [], []
    for body in range(1, model.nbody):
        name = model.body(body).name
        if not name.startswith("board"):
            continue
        geoms = [g for g in range(model.ngeom) if model.geom_bodyid[g] == body]
        if len(geoms) != 1 or model.geom_type[geoms[0]] != mujoco.mjtGeom.mjGEOM_BOX:
            raise HilSimError(f"{source}: body {name!r}: a board needs exactly one box geom")
        half = model.geom_size[geoms[0]]
        matrix = data.xmat[body].reshape(3, 3)
        ids.append(body)
        boards.append(
            Board(
                float(data.xpos[body, 0]),
                float(data.xpos[body, 1]),
                math.atan2(matrix[1, 0], matrix[0, 0]),
                width=2 * float(half[1]),
                thickness=2 * float(half[0]),
                height=2 * float(half[2]),
                mass=float(model.body_mass[body]),
            )
        )
    return ids, tuple(boards)


class MujocoBoards:
    """Which boards stand, from their tilt; a board once down stays down until a reset."""

    def __init__(self, count: int) -> None:
        self._standing = np.ones(count, dtype=bool)

    @property
    def standing(self) -> BoolArray:
        """(B,) True while a board stands."""
        return self._standing

    @property
    def boards_down(self) -> int:
        """How many boards are down."""
        return int((~self._standing).sum())

    def reset(self) -> None:
        """Every board up again (the model's reset stands them up)."""
        self._standing[:] = True


class MujocoPhysics:
    """N robots from their URDF in a MuJoCo world (see the module docstring)."""

    name = "mujoco"

    def __init__(
        self,
        world: WorldConfig,
        models: Sequence[RobotModel],
        *,
        starts: list[Pose],
        dt: float,
    ) -> None:
        self.robots = RobotArrays(models)
        self.starts = starts
        self.dt = dt
        self.count = n = len(starts)
        specs = {id(model): robot_spec(model) for _, model in self.robots.groups}
        urdf = ", ".join(source for _, source in specs.values())
        if world.mjcf:
            spec = _load(world.mjcf, "MJCF world")
            spec.option.timestep = dt
            for body in spec.bodies:
                if body.name.startswith("board"):
                    joints = list(body.joints)
                    if len(joints) != 1 or joints[0].type != mujoco.mjtJoint.mjJNT_FREE:
                        raise HilSimError(
                            f"{world.mjcf}: body {body.name!r}: a board needs one free joint (<freejoint/>)"
                        )
                    for geom in body.geoms:
                        geom.contype, geom.conaffinity = BOARD_CONTYPE, BOARD_CONAFFINITY
            if not any(g.type == mujoco.mjtGeom.mjGEOM_PLANE for g in spec.geoms):
                raise HilSimError(
                    f"{world.mjcf}: worldbody: no floor (a plane geom) for the robots to stand on"
                )
            sources = f"{world.mjcf} with {urdf}"
        else:
            spec = world_spec(world, dt)
            sources = str(urdf)
        spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
        # Bodies at rest (standing boards, fallen ones) sleep until something touches
        # them: six standing boards otherwise cost three times the robot's step.
        spec.option.enableflags |= mujoco.mjtEnableBit.mjENBL_SLEEP
        spec.compiler.fusestatic = True
        for geom in spec.geoms:
            if geom.type == mujoco.mjtGeom.mjGEOM_PLANE:
                geom.priority = 1  # the floor's friction, whatever the wheels say
        self._attach_robots(spec, specs)
        self.model = _compile(spec, sources)
        self.data = mujoco.MjData(self.model)
        mujoco.mj_forward(self.model, self.data)
        self._index(n)
        if world.mjcf:
            self._board_ids, boards = _boards_of_mjcf(self.model, self.data, world.mjcf)
            world = replace(world, boards=boards)
        else:
            self._board_ids = [self.model.body(f"board_{k}").id for k in range(len(world.boards))]
        self.world = world
        self.boards = MujocoBoards(len(self._board_ids))
        # Each board's local axis that points up as it stands.
        rotations = self.data.xmat[self._board_ids].reshape(-1, 3, 3)
        self._board_up = rotations[:, 2, :]  # R^T e_z
        self._gear = self.robots.gear[:, None]
        self._torque_gain = self._gear * self.robots.kt[:, None]
        self._ray_groups: dict[int, tuple[Rays, list[tuple[Array, Array, IndexArray]]]] = {}
        self.reset()

    # --- building -------------------------------------------------------------------

    def _attach_robots(self, spec: Any, specs: dict[int, tuple[Any, str]]) -> None:
        """One copy of its URDF's robot per start pose, on a free joint, with its motors."""
        for robot_spec, urdf in specs.values():
            for link in (BASE, *WHEELS, CASTER):
                found = robot_spec.body(link)
                if found is None or not list(found.geoms):
                    raise HilSimError(f"{urdf}: link {link!r}: missing, or without a <collision> shape")
        for index, start in enumerate(self.starts):
            model = self.robots.models[index]
            robot_spec, urdf = specs[id(model)]
            motor, gear = model.motor, model.motor.gear_ratio
            prefix = f"robot_{index}/"
            frame = spec.worldbody.add_frame(pos=[start.x, start.y, 0.0], quat=_yaw_quat(start.yaw))
            # Attaching moves the body out of its spec: each robot gets a copy.
            base = frame.attach_body(robot_spec.copy().body(BASE), prefix, "")
            base.add_freejoint(name=f"{prefix}free")
            base.sleep = mujoco.mjtSleepPolicy.mjSLEEP_NEVER  # its motors may start at any step
            for body in [base, *base.find_all(mujoco.mjtObj.mjOBJ_BODY)]:
                for geom in body.geoms:
                    geom.group = ROBOT_GROUP
                    geom.contype, geom.conaffinity = WHEEL_BIT, WORLD_BIT
            # The bumper is the base link's (first) collision shape: its contacts are
            # found bumper_travel before the body touches, but only act on contact, and
            # a contact sensor hands the nearest ones over without a look at the rest.
            bumper = next(iter(base.geoms))
            bumper.name = f"{prefix}bumper"
            bumper.margin, bumper.gap = 0.0, model.body.bumper_travel  # found within margin + gap
            bumper.contype = BODY_BIT
            sensor = spec.add_sensor(
                name=f"{prefix}bumper",
                type=mujoco.mjtSensor.mjSENS_CONTACT,
                objtype=mujoco.mjtObj.mjOBJ_GEOM,
                objname=bumper.name,
            )
            sensor.intprm = [_FOUND_DIST_POS, 1, BUMPER_CONTACTS]  # nearest first
            caster = spec.body(f"{prefix}{CASTER}")
            for geom in caster.geoms:
                geom.priority = 2
                geom.friction = [CASTER_FRICTION, 0.0, 0.0]
            for side in WHEELS:
                for geom in spec.body(f"{prefix}{side}").geoms:
                    _round_tyre(geom)
                joints = list(spec.body(f"{prefix}{side}").joints)
                if len(joints) != 1 or joints[0].type != mujoco.mjtJoint.mjJNT_HINGE:
                    raise HilSimError(f"{urdf}: link {side!r}: needs one continuous joint to {BASE}")
                joint = joints[0]
                joint.armature = motor.rotor_inertia * gear**2
                joint.damping = [motor.viscous * gear**2, 0.0, 0.0]  # linear viscous term only
                joint.frictionloss = motor.coulomb * gear
                spec.add_actuator(
                    name=f"{prefix}{side}_motor",
                    target=joint.name,
                    trntype=mujoco.mjtTrn.mjTRN_JOINT,
                    ctrllimited=0,
                )

    def _index(self, n: int) -> None:
        """Addresses of the robots' state in qpos/qvel/ctrl, and which geoms are bumpers."""
        m = self.model
        self._base = np.array([m.body(f"robot_{i}/{BASE}").id for i in range(n)])
        free = [m.joint(f"robot_{i}/free") for i in range(n)]
        self._qpos = np.array([m.jnt_qposadr[j.id] for j in free])
        self._qvel = np.array([m.jnt_dofadr[j.id] for j in free])
        wheel_joints = [[m.body(f"robot_{i}/{side}").jntadr[0] for side in WHEELS] for i in range(n)]
        self._wheel_qpos = m.jnt_qposadr[np.array(wheel_joints)]
        self._wheel_qvel = m.jnt_dofadr[np.array(wheel_joints)]
        self._ctrl = np.array(
            [[m.actuator(f"robot_{i}/{side}_motor").id for side in WHEELS] for i in range(n)]
        )
        self._bumper = np.array([m.sensor_adr[m.sensor(f"robot_{i}/bumper").id] for i in range(n)])
        self._geomgroup = np.ones(6, dtype=np.uint8)
        self._geomgroup[ROBOT_GROUP] = 0

    # --- state ----------------------------------------------------------------------

    def reset(self) -> None:
        """Robots at their starts at rest, motors off, boards standing."""
        mujoco.mj_resetData(self.model, self.data)
        mujoco.mj_forward(self.model, self.data)
        self.motors = self.robots.motors(self.dt, loaded=False)
        self.boards.reset()
        self._read_state()

    def teleport(self, index: int, pose: Pose) -> None:
        """Robot ``index`` at ``pose`` on the floor, at rest."""
        d = self.data
        q, v = self._qpos[index], self._qvel[index]
        d.qpos[q : q + 7] = [pose.x, pose.y, 0.0, *_yaw_quat(pose.yaw)]
        d.qvel[v : v + 6] = 0.0
        d.qvel[self._wheel_qvel[index]] = 0.0
        self.motors.speed[index] = 0.0
        self.motors.current[index] = 0.0
        mujoco.mj_forward(self.model, d)
        self._read_state()

    def _read_state(self) -> None:
        d = self.data
        pos = d.qpos[self._qpos[:, None] + np.arange(7)]
        w, qx, qy, qz = pos[:, 3], pos[:, 4], pos[:, 5], pos[:, 6]
        self.x, self.y = pos[:, 0].copy(), pos[:, 1].copy()
        self.yaw = np.arctan2(2 * (w * qz + qx * qy), 1 - 2 * (qy * qy + qz * qz))
        vel = d.qvel[self._qvel[:, None] + np.arange(6)]
        self.v = vel[:, 0] * np.cos(self.yaw) + vel[:, 1] * np.sin(self.yaw)
        self.w = vel[:, 5].copy()  # about the body's z, which stays (nearly) upright
        self.wheel_angle = d.qpos[self._wheel_qpos]
        self.motors.speed = d.qvel[self._wheel_qvel] * self._gear
        if self._board_ids:
            rotations = d.xmat[self._board_ids].reshape(-1, 3, 3)
            up = np.einsum("bij,bj->bi", rotations, self._board_up)[:, 2]
            self.boards.standing[up < math.cos(BOARD_DOWN_TILT)] = False

    # --- stepping ---------------------------------------------------------------------

    def advance(self, steps: int, voltage: Array, closed: BoolArray, start: float, touch: Touch) -> None:
        """``steps`` MuJoCo steps, the motors' torques from their electrical model each step."""
        m, d, motors = self.model, self.data, self.motors
        gear, gain = self._gear, self._torque_gain
        ctrl, wheel_qvel, found = self._ctrl, self._wheel_qvel, self._bumper
        # The electrical step at the wheel speed MuJoCo has now; its coefficients hold for
        # the block (the voltages do), and the speed goes in at the wheel.
        a, b, c = motors.current_map(voltage, closed)
        c = c * gear
        current = motors.current
        for step in range(steps):
            current = a * current + b - c * d.qvel[wheel_qvel]
            d.ctrl[ctrl] = current * gain
            mujoco.mj_step(m, d)
            if d.sensordata[found].any():
                self._touched(start + (step + 1) * self.dt, touch)
        motors.current = current
        self._check_warnings(start + steps * self.dt)
        self._read_state()

    def _check_warnings(self, now: float) -> None:
        """Stop on any of MuJoCo's :data:`WARNINGS` in the steps just taken.

        Raises:
            HilSimError: naming the world, the time and MuJoCo's warning.
        """
        for kind in WARNINGS:
            stat = self.data.warning[kind]
            if not stat.number:
                continue
            text = mujoco.mju_warningText(kind, stat.lastinfo).rstrip(".")
            if kind in _DOF_WARNINGS and 0 <= stat.lastinfo < self.model.nv:
                body = self.model.body(self.model.dof_bodyid[stat.lastinfo]).name
                text += f"; DOF {stat.lastinfo} moves body {body!r}"
            world = f"world {self.world.source}" if self.world.source else "the world"
            if self.world.mjcf:
                world += f" (MJCF {self.world.mjcf})"
            raise HilSimError(
                f"{world}: the physics went numerically unstable by t = {now:.3f} s: MuJoCo: {text}. "
                "MuJoCo would reset the world and run on, so the run stops here; look for an extreme "
                "mass, inertia, stiffness, force or friction in the world"
            )

    def _touched(self, now: float, touch: Touch) -> None:
        """Report the bumpers' contacts within ``bumper_travel`` (the floor's aside)."""
        d = self.data
        robots, bearings = [], []
        for robot, adr in enumerate(self._bumper):
            base, travel = self._base[robot], self.robots.bumper_travel[robot]
            heading = math.atan2(d.xmat[base, 3], d.xmat[base, 0])
            for slot in range(min(int(d.sensordata[adr]), BUMPER_CONTACTS)):
                _, dist, x, y, z = d.sensordata[adr + slot * _SLOT : adr + (slot + 1) * _SLOT]
                if dist <= travel and z >= FLOOR_CONTACT_Z:
                    robots.append(robot)
                    bearings.append(math.atan2(y - d.xpos[base, 1], x - d.xpos[base, 0]) - heading)
        if robots:
            touch(np.array(robots, dtype=np.intp), np.array(bearings), now)

    # --- sensors --------------------------------------------------------------------------

    def cast(self, rays: Rays, max_range: float, rows: IndexArray | slice = slice(None)) -> Array:
        """(n, R) distances along the body-frame rays of robots ``rows``: ``mj_multiRay`` from each mount."""
        robots = np.arange(self.count)[rows]
        if rays.x.ndim == 1:
            # Rays fixed on the body: grouped by origin once (the same Rays object each sample).
            cached = self._ray_groups.get(id(rays))
            if cached is None or cached[0] is not rays:
                cached = (rays, _ray_groups(rays.x, rays.y, rays.z, rays.angle))
                self._ray_groups[id(rays)] = cached
            fixed = cached[1]
        m, d = self.model, self.data
        hits = np.full((len(robots), rays.x.shape[-1]), max_range)
        for row, robot in enumerate(robots):
            body = self._base[robot]
            rotation = d.xmat[body].reshape(3, 3)
            groups = (
                fixed
                if rays.x.ndim == 1
                else _ray_groups(rays.x[row], rays.y[row], rays.z[row], rays.angle[row])
            )
            for origin, directions, members in groups:
                count = len(members)
                geomid = np.zeros(count, dtype=np.int32)
                dist = np.zeros(count)
                mujoco.mj_multiRay(
                    m,
                    d,
                    d.xpos[body] + rotation @ origin,
                    (directions @ rotation.T).ravel(),
                    self._geomgroup,
                    1,
                    body,
                    geomid,
                    dist,
                    None,
                    count,
                    max_range,
                )
                hits[row, members] = np.where(dist < 0, max_range, np.minimum(dist, max_range))
        return hits


def _ray_groups(x: Array, y: Array, z: Array, angle: Array) -> list[tuple[Array, Array, IndexArray]]:
    """Rays of one robot grouped by origin: (origin, unit directions, which rays)."""
    groups = []
    origins = np.stack([x, y, z], axis=1)
    for origin in np.unique(origins, axis=0):
        members = np.flatnonzero((origins == origin).all(axis=1))
        turn = angle[members]
        directions = np.stack([np.cos(turn), np.sin(turn), np.zeros_like(turn)], axis=1)
        groups.append((origin, directions, members))
    return groups
