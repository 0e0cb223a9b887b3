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
from typing import TYPE_CHECKING, NamedTuple

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
#: A segment this close (m) beyond a robot's radius holds it (rounding of the push-out).
CONTACT_SLACK = 1e-6
#: How near (relative to 1 + the value) a held robot's motor speed (rad/s) and current
#: (A) must be to the fixed point of its contact step for blocks of steps at once:
#: rounding in the push-out leaves ~1e-9 rad/s of noise on a stalled shaft.
SPEED_TOLERANCE = 1e-6
CURRENT_TOLERANCE = 1e-9


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


class _Held(NamedTuple):
    """Robots held against something for a block: the steady state their steps repeat."""

    #: The robots (indices).
    rows: IndexArray
    #: (n,) each motor's current (A) and shaft speed after the stall (rad/s), both wheels alike.
    current: Array
    speed: Array
    #: (n, 2) how far each robot moves per step (m): along what holds it, or not at all.
    glide: Array
    #: (n,) touching a board (which another robot may knock down meanwhile).
    on_board: BoolArray

    def pick(self, which: BoolArray) -> _Held:
        """The robots of ``which``."""
        return _Held(
            self.rows[which], self.current[which], self.speed[which], self.glide[which], self.on_board[which]
        )


def _room_for(travel: Array, room: Array) -> BoolArray:
    """A held robot may glide ``travel`` (m): it does not move, or it has the room."""
    fits: BoolArray = (travel == 0.0) | (travel < room)
    return fits


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

    A robot held against something (:meth:`_held`) reaches a steady state within tens
    of steps: pressed head-on into a wall, a corner or a board it stands still with its
    motors at stall current; meeting a wall at an angle it slides along it at a constant
    speed; at rest touching something it stays. Its steps then repeat, and a block of
    them is taken at once from that fixed point (``steady_contacts``; off, every step of
    a robot in contact is taken one by one, the reference the tests compare with).
    """

    name = "native"
    #: Robots held against something in their steady state take blocks of steps at once.
    steady_contacts = True

    def __init__(
        self, world: WorldConfig, models: Sequence[RobotModel], *, starts: list[Pose], dt: float
    ) -> None:
        self.world = world
        self.robots = RobotArrays(models)
        self.starts = starts
        self.dt = dt
        self.boards = self.geometry = WorldGeometry(world)
        #: Steps taken one by one (robot steps: a step of three robots counts three).
        self.exact_steps = 0
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
        # What the last step of a robot in contact left (NaN: it was not held): the
        # motion left over the motion tried, that motion per metre tried, the bearing.
        self._press = np.full(n, math.nan)
        self._glide = np.zeros((n, 2))
        self._bearing = np.zeros(n)
        # How far a held robot may glide before anything but what holds it comes as
        # near (NaN: not measured), and whether a board is within its bumpers' reach.
        self._room = np.full(n, math.nan)
        self._on_board = np.zeros(n, dtype=bool)
        # Every robot held in the last block, and the inputs then (the next may be the same).
        self._holding: _Held | None = None
        self._held_inputs = (np.zeros((n, 2)), np.zeros((n, 2), dtype=bool))
        self.geometry.reset()

    def teleport(self, index: int, pose: Pose) -> None:
        """Robot ``index`` at ``pose``, at rest."""
        self.x[index], self.y[index], self.yaw[index] = pose.x, pose.y, pose.yaw
        self.v[index] = self.w[index] = 0.0
        self.motors.speed[index] = 0.0
        self.motors.current[index] = 0.0
        self._clearance[index] = -1.0
        self._press[index] = self._room[index] = math.nan
        self._holding = None

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
        changes direction) or when the block's travel could reach an obstacle, unless
        it is held against something in its steady state (:meth:`_held`). The choice
        depends on that robot alone, so its results do not depend on the others (but
        for a board another robot knocks down under a robot leaning on it: that robot
        goes on one by one from the step the board fell).
        """
        if self._holding is not None and self._held_again(self._holding, voltage, closed, steps):
            self._hold(self._holding, steps, start, touch)
            return
        self._holding = None
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
        self._press[rows] = math.nan
        if stepped:
            rows = np.flatnonzero(one_by_one)
            self.motors.current[rows], self.motors.speed[rows] = saved_current[rows], saved_speed[rows]
            held = None
            if self.steady_contacts:
                held, rows = self._held(rows, voltage, closed, steps)
                if held is not None and len(held.rows) == len(self.x):  # all: the next block may be alike
                    self._holding, self._held_inputs = held, (voltage.copy(), closed.copy())
            self._steps(rows, held, steps=steps, voltage=voltage, closed=closed, start=start, touch=touch)

    def _held_again(self, held: _Held, voltage: Array, closed: BoolArray, steps: int) -> bool:
        """Every robot was ``held`` in the last block, and is held again (the same inputs, room left)."""
        if not self.steady_contacts:
            return False
        again_voltage, again_closed = self._held_inputs
        return (
            np.array_equal(voltage, again_voltage)
            and np.array_equal(closed, again_closed)
            and bool(
                _room_for(steps * np.hypot(held.glide[:, 0], held.glide[:, 1]), self._room[held.rows]).all()
            )
        )

    def _steps(
        self,
        rows: IndexArray,
        held: _Held | None,
        *,
        steps: int,
        voltage: Array,
        closed: BoolArray,
        start: float,
        touch: Touch,
    ) -> None:
        """``steps`` exact steps of ``rows``, beside the ``held`` robots' block at once.

        A board knocked down in those steps frees the held robots leaning on boards:
        they are held up to that step and go on one by one from the next.
        """
        standing = None
        if held is not None and rows.size and held.on_board.any():
            standing = self.geometry.standing.copy()
        for offset in range(steps):
            if rows.size:
                self._physics_step(rows, voltage, closed, start + (offset + 1) * self.dt, touch)
            if (
                standing is not None
                and held is not None
                and not np.array_equal(standing, self.geometry.standing)
            ):
                leaning = held.on_board
                freed = held.rows[leaning]
                self._hold(held.pick(leaning), offset + 1, start, touch)
                self._press[freed] = self._room[freed] = math.nan  # to be looked at again
                rows = np.union1d(rows, freed)
                held, standing = held.pick(~leaning), None
        if held is not None:
            self._hold(held, steps, start, touch)

    def _held(
        self, rows: IndexArray, voltage: Array, closed: BoolArray, steps: int
    ) -> tuple[_Held | None, IndexArray]:
        """The robots of ``rows`` held against something in their steady state (or None), and the others.

        Such a robot's last step was a contact that stalled it (or found it at rest
        touching something); both its motors are alike (same state and voltage: it
        does not turn) and at the fixed point of that step: with ``c`` the motion left
        over the motion tried (1 - cos^2 of the angle between its heading and the
        wall's normal, 0 head-on or in a corner), the shaft speed tried each step
        ``w_t = dt (Kt V / R - Tc) / (J + b dt - c J + c dt Kt Ke / R)``, the speed
        left ``c w_t``, the current ``(V - Ke c w_t) / R``; at rest with the drive
        under the friction, nothing moves. The glide over the block must stay clear of
        anything but what holds it (the room measured once, then used up), and a board
        it touches must not fall by its pushing (the tried speed under the threshold).
        """
        candidate = np.flatnonzero(np.isfinite(self._press[rows]))
        if not candidate.size:
            return None, rows
        ids = rows[candidate]
        robots, dt = self.robots, self.dt
        c = self._press[ids]
        current, speed = self.motors.current[ids], self.motors.speed[ids]
        volts, shut = voltage[ids], closed[ids]
        alike = (
            (current[:, LEFT] == current[:, RIGHT])
            & (speed[:, LEFT] == speed[:, RIGHT])
            & (volts[:, LEFT] == volts[:, RIGHT])
            & (shut[:, LEFT] == shut[:, RIGHT])
            & (self.w[ids] == 0.0)
        )
        volts, on = volts[:, LEFT], shut[:, LEFT]
        resistance, kt, ke = robots.resistance[ids], robots.kt[ids], robots.ke[ids]
        coulomb, inertia = robots.coulomb[ids], robots.loaded_inertia[ids]
        denominator = inertia + robots.viscous[ids] * dt
        drive = np.where(on, kt * volts / resistance, 0.0)
        strong = np.abs(drive) > coulomb
        tried = np.where(
            strong,
            dt
            * (drive - coulomb * np.sign(volts))
            / (denominator - c * inertia + c * dt * kt * ke / resistance),
            0.0,
        )
        left = c * tried
        fixed = np.where(on, (volts - ke * left) / resistance, 0.0)
        settled = alike & (np.abs(speed[:, LEFT] - left) <= SPEED_TOLERANCE * (1.0 + np.abs(left)))
        settled &= np.abs(current[:, LEFT] - fixed) <= CURRENT_TOLERANCE * (1.0 + np.abs(fixed))
        metres = robots.wheel_radius[ids] / robots.gear[ids]
        glide = self._glide[ids] * (tried * metres * dt)[:, None]
        travel = steps * np.hypot(glide[:, 0], glide[:, 1])
        unmeasured = settled & np.isnan(self._room[ids])
        if unmeasured.any():
            self._measure_room(ids[unmeasured], glide[unmeasured])
        on_board = self._on_board[ids]
        settled &= _room_for(travel, self._room[ids])
        # The speed toward a board, bounded: friction may turn either way at rest.
        toward = metres * (np.abs(tried) + np.where(strong, 2 * dt * coulomb / denominator, 0.0))
        settled &= ~on_board | (toward <= self.world.push_threshold)
        if not settled.any():
            return None, rows
        others = np.ones(len(rows), dtype=bool)
        others[candidate[settled]] = False
        return _Held(ids[settled], fixed[settled], left[settled], glide[settled], on_board[settled]), rows[
            others
        ]

    def _measure_room(self, ids: IndexArray, glide: Array) -> None:
        """How far robots ``ids`` may ``glide`` along what holds them, and whether a board is within reach.

        Room: up to anything but what they touch coming as near as that (it would be
        the nearest, which the bumpers feel, or hold them too), and along each segment
        they touch, to its end (a box's corner: the contact turns there). A board
        within reach of the bumpers may fall under another robot meanwhile.
        """
        robots, geometry = self.robots, self.geometry
        radius, reach = robots.body_radius[ids, None], robots.bumper_travel[ids, None]
        dist, _, along, segments = geometry.to_segments(np.stack([self.x[ids], self.y[ids]], axis=1))
        touching = dist <= radius + CONTACT_SLACK
        beyond = np.where(touching, math.inf, dist - radius)
        delta = geometry.delta[segments]
        heading = glide @ delta.T  # (n, S): gliding toward each segment's end (> 0) or start
        length = np.sqrt(geometry.length_sq[segments])
        run = np.where(heading > 0, (1.0 - along) * length, np.where(heading < 0, along * length, math.inf))
        self._room[ids] = np.minimum(beyond, np.where(touching, run, math.inf)).min(axis=1, initial=math.inf)
        self._on_board[ids] = ((dist <= radius + reach) & (geometry.owner[segments] >= 0)).any(axis=1)

    def _hold(self, held: _Held, steps: int, start: float, touch: Touch) -> None:
        """``steps`` steps of the ``held`` robots from their steady state, at once."""
        if not held.rows.size:
            return
        ids, robots = held.rows, self.robots
        self.x[ids] += steps * held.glide[:, 0]
        self.y[ids] += steps * held.glide[:, 1]
        self.v[ids] = held.speed * robots.wheel_radius[ids] / robots.gear[ids]
        self.motors.current[ids] = held.current[:, None]
        self.motors.speed[ids] = held.speed[:, None]
        self.wheel_angle[ids] += (steps * self.dt * held.speed / robots.gear[ids])[:, None]
        self._room[ids] -= steps * np.hypot(held.glide[:, 0], held.glide[:, 1])
        touch(ids, self._bearing[ids], start + steps * self.dt)

    def _physics_step(
        self, rows: IndexArray, voltage: Array, closed: BoolArray, now: float, touch: Touch
    ) -> None:
        """One exact physics step of the robots in ``rows``, ending at time ``now``."""
        robots, dt = self.robots, self.dt
        self.exact_steps += len(rows)
        self._press[rows] = self._room[rows] = math.nan
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
        fell = False
        touching = dist <= radius + travel
        if touching.any():
            bearing = np.arctan2(nearest[:, 1] - py, nearest[:, 0] - px) - self.yaw[ids]
            touch(ids[touching], bearing[touching], now)
            self._bearing[ids[touching]] = bearing[touching]
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
            fell |= bool(knocked.any())
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
        tried = v[which]
        stalled = np.abs(v_left) < np.abs(tried) - 1e-12
        if fell:  # what held them may be gone: not held until a step without a fall says so
            self._press[ids] = math.nan
        else:
            self._held_by(
                ids, touching=touching, stalled=stalled, tried=tried, left=v_left, dx=dx[which], dy=dy[which]
            )
        if stalled.any():
            v[which[stalled]] = v_left[stalled]
            stuck = ids[stalled]
            half_turn = self.w[stuck] * robots.wheel_base[stuck] / 2
            gear = robots.gear[stuck] / robots.wheel_radius[stuck]
            self.motors.speed[stuck, LEFT] = (v_left[stalled] - half_turn) * gear
            self.motors.speed[stuck, RIGHT] = (v_left[stalled] + half_turn) * gear
        return dx, dy, v

    def _held_by(
        self,
        ids: IndexArray,
        *,
        touching: BoolArray,
        stalled: BoolArray,
        tried: Array,
        left: Array,
        dx: Array,
        dy: Array,
    ) -> None:
        """What a contact step left for :meth:`_held`: how much of the motion tried was left, and where to."""
        stopped = (tried == 0.0) & (dx == 0.0) & (dy == 0.0)
        pressed = touching & stalled
        self._press[ids] = np.where(
            pressed, left / np.where(pressed, tried, 1.0), np.where(touching & stopped, 0.0, math.nan)
        )
        per_metre = np.where(pressed, 1.0 / np.where(pressed, tried * self.dt, 1.0), 0.0)
        self._glide[ids, 0] = dx * per_metre
        self._glide[ids, 1] = dy * per_metre


def wrap_angle(angle: Array) -> Array:
    """Angles into [-pi, pi)."""
    wrapped: Array = (angle + math.pi) % (2 * math.pi) - math.pi
    return wrapped
