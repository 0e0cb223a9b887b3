"""Physics backends: what moves the robots, what they touch, what their rays hit.

:class:`~hil_sim.core.simulation.Simulation` keeps everything that is the same
whatever engine moves the bodies: the devices (motor drivers to motor voltages, the
bumper switches' sectors and hold, the sensors' error models and noise), time and
sampling. A backend does the rest for robots of any models (each robot's body and
motor parameters its own), behind :class:`PhysicsBackend`:

* ``advance(steps, voltage, closed, start, touch)``: ``steps`` physics steps with the
  motors' terminal voltages (``closed`` False: the bridge is open, the motor coasts),
  calling ``touch(robots, bearings, time)`` whenever robots touch something (bearing of
  the contact in the body frame; the simulation turns it into bumper switches);
* the robots' state: ``x``, ``y``, ``yaw``, ``v``, ``w`` (N,) and ``wheel_angle`` (N, 2),
  and the motors (:class:`~hil_sim.core.motor.MotorBank`: current and shaft speed);
* ``cast(rays, max_range, rows)``: the range sensors' rays, in the body frame (the same
  for every robot, or per robot: a ranger on a servo), of all robots or of ``rows``;
* ``boards``: which boards stand (:class:`BoardStates`);
* ``reset()`` and ``teleport(index, pose)``.

Backends: ``native`` (:class:`NativePhysics`, this module: the 2-D numpy engine, fast
enough for swarms and CI) and ``mujoco`` (:mod:`hil_sim.core.mujoco_physics`: MuJoCo
with the robot from its URDF, boards as free bodies that topple). :func:`make_backend`
picks one by name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from hil_sim.core.physics_types import Array, BoolArray, IndexArray, PhysicsBackend, Rays, Touch
from hil_sim.core.robot_arrays import RobotArrays
from hil_sim.core.world import Pose, WorldConfig, WorldGeometry
from hil_sim.errors import HilSimError

if TYPE_CHECKING:
    from hil_sim.core.robot_model import RobotModel

LEFT, RIGHT = 0, 1
#: Backend names, the default first.
BACKENDS = ("native", "mujoco")
#: Penetration (m) below which a contact counts as resolved.
CONTACT_TOLERANCE = 1e-9


def make_backend(
    name: str,
    world: WorldConfig,
    models: Sequence[RobotModel],
    *,
    starts: list[Pose],
    dt: float,
) -> PhysicsBackend:
    """The backend called ``name`` for this world and these robots.

    Args:
        name: one of :data:`BACKENDS`.
        world: the world (mujoco: made into MJCF, or its ``mjcf`` file).
        models: each robot's model (body, motors, bumper travel; mujoco: its URDF).
        starts: one start pose per robot.
        dt: the physics step (s).

    Raises:
        HilSimError: an unknown backend (naming the choices), or a bad robot or world file.
    """
    if name == "native":
        if world.mjcf:
            raise HilSimError(f"MJCF world {world.mjcf}: only physics 'mujoco' reads MJCF worlds")
        return NativePhysics(world, models, starts=starts, dt=dt)
    if name == "mujoco":
        from hil_sim.core.mujoco_physics import MujocoPhysics  # noqa: PLC0415 - optional engine

        return MujocoPhysics(world, models, starts=starts, dt=dt)
    raise HilSimError(f"physics = {name!r} is not a backend (choices: {', '.join(BACKENDS)})")


def body_speeds(radius: Array, base: Array, wheel: Array) -> tuple[Array, Array]:
    """Forward and turn speed (m/s, rad/s) from wheel speeds (rad/s, [:, 2, ...] left, right).

    ``radius`` and ``base`` (m) are each robot's wheel radius and wheel base, shaped to
    broadcast against ``wheel[:, LEFT]``.
    """
    v = radius * (wheel[:, LEFT] + wheel[:, RIGHT]) / 2
    w = radius * (wheel[:, RIGHT] - wheel[:, LEFT]) / base
    return v, w


class NativePhysics:
    """The 2-D numpy engine: discs on ideal wheels among segments (DESIGN.md "Simulator").

    Each step the wheel speeds from the motors move a robot (midpoint rule); collisions
    with walls, boxes and standing boards are resolved: a board hit faster than the
    world's push threshold falls, anything else stops the robot at the contact (no
    penetration, and at 1 kHz a robot moves under a millimetre a step, far less than
    its radius, so it cannot tunnel) and the wheels slow to the motion that is left.

    The motors carry the robot's mass reflected to their shafts, so their mechanical
    equation is the robot's too; blocks of steps are taken in closed form per robot
    (:meth:`MotorBank.advance`) unless its motors leave that regime or it nears an
    obstacle, so its results do not depend on the swarm size.
    """

    name = "native"

    def __init__(
        self, world: WorldConfig, models: Sequence[RobotModel], *, starts: list[Pose], dt: float
    ) -> None:
        self.world = world
        self.robots = RobotArrays(models)
        self.starts = starts
        self.dt = dt
        self.boards = self.geometry = WorldGeometry(world)
        self.reset()

    def reset(self) -> None:
        """Robots at their starts at rest, motors off, boards standing."""
        n = len(self.starts)
        self.x = np.array([p.x for p in self.starts])
        self.y = np.array([p.y for p in self.starts])
        self.yaw = np.array([p.yaw for p in self.starts])
        self.v = np.zeros(n)
        self.w = np.zeros(n)
        self.wheel_angle = np.zeros((n, 2))
        self.motors = self.robots.motors(self.dt, loaded=True)
        self._clearance = np.full(n, -1.0)  # unknown: check collisions on the next step
        self.geometry.reset()

    def teleport(self, index: int, pose: Pose) -> None:
        """Robot ``index`` at ``pose``, at rest."""
        self.x[index], self.y[index], self.yaw[index] = pose.x, pose.y, pose.yaw
        self.v[index] = self.w[index] = 0.0
        self.motors.speed[index] = 0.0
        self.motors.current[index] = 0.0
        self._clearance[index] = -1.0

    def cast(self, rays: Rays, max_range: float, rows: IndexArray | slice = slice(None)) -> Array:
        """(n, R) distances along the body-frame rays of robots ``rows`` (the plane ignores their height)."""
        yaw = self.yaw[rows]
        c, s = np.cos(yaw)[:, None], np.sin(yaw)[:, None]
        ox = self.x[rows][:, None] + c * rays.x - s * rays.y
        oy = self.y[rows][:, None] + s * rays.x + c * rays.y
        angle = yaw[:, None] + rays.angle
        return self.geometry.cast(ox, oy, np.cos(angle), np.sin(angle), max_range)

    def advance(self, steps: int, voltage: Array, closed: BoolArray, start: float, touch: Touch) -> None:
        """``steps`` physics steps: in closed form per robot where possible, else one by one.

        A robot is stepped one by one when its motors leave the closed form (friction
        changes direction) or when the block's travel could reach an obstacle. The
        choice depends on that robot alone, so its results do not depend on the others.
        """
        robots, dt = self.robots, self.dt
        saved_current, saved_speed = self.motors.current.copy(), self.motors.speed.copy()
        speeds, exact = self.motors.advance(voltage, closed, steps)
        wheel = speeds / robots.gear[:, None, None]  # (N, 2, steps)
        v, w = body_speeds(robots.wheel_radius[:, None], robots.wheel_base[:, None], wheel)
        turn = w * dt
        yaw_after = self.yaw[:, None] + np.add.accumulate(turn, axis=1)
        heading = yaw_after - turn / 2
        dx, dy = v * np.cos(heading) * dt, v * np.sin(heading) * dt
        travel = np.add.reduce(np.hypot(dx, dy), axis=1)
        one_by_one = exact.any(axis=1) | (travel >= self._clearance)
        stepped = bool(one_by_one.any())
        # Usually every robot goes in closed form: a slice then, not fancy indexing
        # (each such numpy call costs about a microsecond for one robot).
        rows: IndexArray | slice = np.flatnonzero(~one_by_one) if stepped else slice(None)
        self.x[rows] += np.add.reduce(dx[rows], axis=1)
        self.y[rows] += np.add.reduce(dy[rows], axis=1)
        self.yaw[rows] = yaw_after[rows, -1]
        self.v[rows], self.w[rows] = v[rows, -1], w[rows, -1]
        self.wheel_angle[rows] += np.add.reduce(wheel[rows], axis=-1) * dt
        self._clearance[rows] -= travel[rows]
        if stepped:
            rows = np.flatnonzero(one_by_one)
            self.motors.current[rows], self.motors.speed[rows] = saved_current[rows], saved_speed[rows]
            for offset in range(steps):
                self._physics_step(rows, voltage, closed, start + (offset + 1) * dt, touch)

    def _physics_step(
        self, rows: IndexArray, voltage: Array, closed: BoolArray, now: float, touch: Touch
    ) -> None:
        """One exact physics step of the robots in ``rows``, ending at time ``now``."""
        robots, dt = self.robots, self.dt
        self.motors.step(voltage, closed, rows)
        gear = robots.gear[rows]
        wheel = self.motors.speed[rows] / gear[:, None]
        v, w = body_speeds(robots.wheel_radius[rows], robots.wheel_base[rows], wheel)
        heading = self.yaw[rows] + w * dt / 2
        dx, dy = v * np.cos(heading) * dt, v * np.sin(heading) * dt
        self.yaw[rows] += w * dt
        self.w[rows] = w
        self._clearance[rows] -= np.hypot(dx, dy)
        near = self._clearance[rows] <= 0.0
        if near.any():
            dx, dy, v = self._resolve_contacts(rows, near, (dx, dy, v), now, touch)
        self.x[rows] += dx
        self.y[rows] += dy
        self.v[rows] = v
        self.wheel_angle[rows] += self.motors.speed[rows] / gear[:, None] * dt

    def _resolve_contacts(
        self,
        rows: IndexArray,
        near: BoolArray,
        motion: tuple[Array, Array, Array],
        now: float,
        touch: Touch,
    ) -> tuple[Array, Array, Array]:
        """Collisions, board falls and bumpers for the robots whose clearance ran out."""
        robots, geometry = self.robots, self.geometry
        dx, dy, v = motion
        which = np.flatnonzero(near)
        ids = rows[which]
        radius, travel = robots.body_radius[ids], robots.bumper_travel[ids]

        def query() -> tuple[Array, Array, Array, Array, IndexArray]:
            px, py = self.x[ids] + dx[which], self.y[ids] + dy[which]
            dist, nearest, segment = geometry.closest(np.stack([px, py], axis=1))
            return px, py, dist, nearest, segment

        px, py, dist, nearest, segment = query()
        touching = dist <= radius + travel
        if touching.any():
            bearing = np.arctan2(nearest[:, 1] - py, nearest[:, 0] - px) - self.yaw[ids]
            touch(ids[touching], bearing[touching], now)
        for _ in range(3):  # a board gone or a corner can need another look
            # A robot pushed out to exactly its radius is in contact no longer.
            contact = dist < radius - CONTACT_TOLERANCE
            if not contact.any():
                break
            safe = np.maximum(dist, 1e-12)
            nx, ny = (px - nearest[:, 0]) / safe, (py - nearest[:, 1]) / safe
            approach = -(dx[which] * nx + dy[which] * ny) / self.dt
            owner = geometry.owner[segment]
            knocked = contact & (owner >= 0) & (approach > self.world.push_threshold)
            geometry.standing[owner[knocked]] = False
            # Each robot on its own: one that knocked a board looks again without it,
            # one that hit something solid is pushed out, whatever the others did.
            depth = np.where(contact & ~knocked, radius - dist, 0.0)
            dx[which] += depth * nx
            dy[which] += depth * ny
            px, py, dist, nearest, segment = query()
        # Clearance to the nearest solid thing, less the bumper travel: no check needed
        # until the robot has moved that far.
        self._clearance[ids] = dist - radius - travel
        # Wheels slow to the motion that was left (stall against an obstacle).
        heading = self.yaw[ids]
        v_left = (dx[which] * np.cos(heading) + dy[which] * np.sin(heading)) / self.dt
        stalled = np.abs(v_left) < np.abs(v[which]) - 1e-12
        if stalled.any():
            v[which[stalled]] = v_left[stalled]
            stuck = ids[stalled]
            half_turn = self.w[stuck] * robots.wheel_base[stuck] / 2
            gear = robots.gear[stuck] / robots.wheel_radius[stuck]
            self.motors.speed[stuck, LEFT] = (v_left[stalled] - half_turn) * gear
            self.motors.speed[stuck, RIGHT] = (v_left[stalled] + half_turn) * gear
        return dx, dy, v


def wrap_angle(angle: Array) -> Array:
    """Angles into [-pi, pi)."""
    wrapped: Array = (angle + math.pi) % (2 * math.pi) - math.pi
    return wrapped
