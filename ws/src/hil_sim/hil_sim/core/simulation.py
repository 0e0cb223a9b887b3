"""The simulation: N differential-drive robots of any models in one world, stepped at a fixed rate.

Every array has the robots as its first axis, so one robot and a swarm of 100 run the
same code. Each robot has a :class:`~hil_sim.core.robot_model.RobotModel` (body,
motors, devices); robots of one model form a group whose devices
(:class:`~hil_sim.core.device_set.DeviceSet`) are stepped together, so robots of
different models share one world and each group stays vectorised. Robots do not
collide with each other (they are ghosts to one another); they share the world, so a
board one robot knocks down is down for all.

Each physics step (default 1 kHz) the motors of every robot get their terminal voltage
from their motor drivers (the devices' inputs, PWM-averaged), and the physics backend
(:mod:`hil_sim.core.physics`: ``native``, the 2-D numpy engine, or ``mujoco``)
advances the motors, moves the robots and resolves their contacts; the backend says
where a robot touched and the bumper devices whose sectors hold it close. Servos turn
toward their commands.

Sensors are sampled at ``sensor_rate`` (default 50 Hz) from the backend's pose and
ray casts, with per-robot seeded noise (:mod:`hil_sim.core.noise`: each robot draws
the same pattern per sample, device by device), so runs are reproducible and robot
``r`` gets the same noise alone or in a swarm. Switches and encoders follow the state
at every read.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from hil_sim.core.device_set import DeviceSet, Setting
from hil_sim.core.devices.base import IndexArray
from hil_sim.core.motor import MotorBank, MotorGroups
from hil_sim.core.noise import NoiseBank
from hil_sim.core.physics import make_backend, wrap_angle
from hil_sim.core.physics_types import BoardStates, PhysicsBackend, Rays
from hil_sim.core.robot_model import LEFT, RIGHT, RobotModel
from hil_sim.core.sensors import EarthField
from hil_sim.core.world import FloorMap, Pose, WorldConfig, in_arena
from hil_sim.errors import HilSimError

Array = npt.NDArray[np.float64]
__all__ = ["LEFT", "RIGHT", "RobotGroup", "Simulation"]


class RobotGroup:
    """The robots of one model: which they are, their devices, their noise, their view of the world."""

    def __init__(self, simulation: Simulation, model: RobotModel, rows: IndexArray) -> None:
        self.simulation = simulation
        self.model = model
        self.rows = rows
        #: How to pick the group's rows from an (N, ...) array: all of them as a slice
        #: (a view, no copy) when the group is every robot.
        self.index: IndexArray | slice = (
            slice(None) if np.array_equal(rows, np.arange(simulation.count)) else rows
        )
        self.devices = DeviceSet(model, len(rows))
        self.noise = NoiseBank(
            simulation.seed, rows, uniforms=self.devices.uniforms, normals=self.devices.normals
        )
        self.time = 0.0
        self.world = simulation.world
        self.floor = simulation.floor
        self.update()

    def reset(self) -> None:
        """Devices back to the start, noise from the start of each robot's stream."""
        self.devices.reset()
        self.noise = NoiseBank(
            self.simulation.seed, self.rows, uniforms=self.devices.uniforms, normals=self.devices.normals
        )

    # --- the Scene the devices see (hil_sim.core.devices.base.Scene) ---------------------

    def update(self) -> None:
        """Take the group's state from the physics backend, as of now."""
        physics, index = self.simulation.physics, self.index
        self.time = self.simulation.time
        self.x, self.y, self.yaw = physics.x[index], physics.y[index], physics.yaw[index]
        self.v, self.w = physics.v[index], physics.w[index]
        self.wheel_angle = physics.wheel_angle[index]

    def nearest(self, names: Sequence[str], rays: Rays, first: IndexArray, max_range: float) -> Array:
        """Nearest return of each ranger's rays, cast by the physics backend."""
        del names
        hits = self.simulation.physics.cast(rays, max_range, self.index)
        nearest: Array = np.minimum.reduceat(hits, first[:-1], axis=1)
        return nearest

    def field(self, yaw: Array) -> Array:
        """The earth's field in each robot's frame turned by ``yaw``."""
        return self.simulation.earth.body(self.yaw + yaw)


class Simulation:
    """N robots in one world; :meth:`step` advances everything by whole physics steps.

    Args:
        world: the world.
        models: every robot's model (one for all, or one per robot).
        robots: how many robots (default: one, or as many as ``models`` lists).
        physics_rate: physics steps per simulated second.
        sensor_rate: sensor samples per simulated second (must divide ``physics_rate``).
        seed: seed of every sensor's noise.
        starts: each robot's start pose (default: all at the world's start).
        earth: the magnetic field the compasses see.
        physics: the backend (:data:`~hil_sim.core.physics.BACKENDS`).

    Raises:
        HilSimError: a bad rate, robot count or model, or a backend that cannot be built.
    """

    def __init__(
        self,
        world: WorldConfig,
        *,
        models: RobotModel | Sequence[RobotModel],
        robots: int | None = None,
        physics_rate: float = 1000.0,
        sensor_rate: float = 50.0,
        seed: int = 0,
        starts: list[Pose] | None = None,
        earth: EarthField | None = None,
        physics: str = "native",
    ) -> None:
        if isinstance(models, RobotModel):
            robots = 1 if robots is None else robots
            per_robot = [models] * max(robots, 0)
        else:
            per_robot = list(models)
            robots = len(per_robot) if robots is None else robots
            if len(per_robot) != robots:
                raise HilSimError(f"{len(per_robot)} robot models for {robots} robots")
        if robots < 1:
            raise HilSimError(f"robots = {robots!r}: need at least one")
        if not (math.isfinite(physics_rate) and physics_rate > 0):
            raise HilSimError(f"physics_rate = {physics_rate!r} must be positive")
        if not (math.isfinite(sensor_rate) and 0 < sensor_rate <= physics_rate):
            raise HilSimError(f"sensor_rate = {sensor_rate!r} must be positive and at most physics_rate")
        ratio = physics_rate / sensor_rate
        if abs(ratio - round(ratio)) > 1e-9:
            raise HilSimError(f"sensor_rate = {sensor_rate!r} must divide physics_rate {physics_rate:g}")
        self.earth = earth or EarthField()
        self.count = robots
        self.models = tuple(per_robot)
        self.dt = 1.0 / physics_rate
        self.sensor_every = round(ratio)
        self.seed = seed
        self.starts = starts or [world.start] * robots
        if len(self.starts) != robots:
            raise HilSimError(f"{len(self.starts)} start poses for {robots} robots")
        self.physics: PhysicsBackend = make_backend(
            physics, world, self.models, starts=self.starts, dt=self.dt
        )
        self.world = self.physics.world
        self.floor = FloorMap(self.world)
        self.steps = 0
        rows: dict[int, list[int]] = {}
        for robot, model in enumerate(self.models):
            rows.setdefault(id(model), []).append(robot)
        #: Robots by model, in the order of each model's first robot.
        self.groups = [
            RobotGroup(self, self.models[members[0]], np.array(members, dtype=np.intp))
            for members in rows.values()
        ]
        self._group_of = np.zeros(robots, dtype=np.intp)
        self._row_of = np.zeros(robots, dtype=np.intp)
        for number, group in enumerate(self.groups):
            self._group_of[group.rows] = number
            self._row_of[group.rows] = np.arange(len(group.rows))
        self._joints = any(group.devices.joints for group in self.groups)
        self._supply = np.array([model.motor.supply_voltage for model in self.models])[:, None]
        #: Sensor samples taken so far, resets included: the sampled outputs change only with it.
        self.samples = 0
        self._refreshed: tuple[int, int] | None = None
        self.reset()

    # --- state ----------------------------------------------------------------------

    @property
    def backend(self) -> str:
        """The physics backend's name (``native``, ``mujoco``)."""
        return self.physics.name

    @property
    def geometry(self) -> BoardStates:
        """Which boards stand (the native backend: its whole world geometry)."""
        return self.physics.boards

    @property
    def x(self) -> Array:
        """(N,) position x (m) in the world frame."""
        return self.physics.x

    @property
    def y(self) -> Array:
        """(N,) position y (m)."""
        return self.physics.y

    @property
    def yaw(self) -> Array:
        """(N,) heading (rad), counter-clockwise from world +x."""
        return self.physics.yaw

    @property
    def v(self) -> Array:
        """(N,) forward speed (m/s)."""
        return self.physics.v

    @property
    def w(self) -> Array:
        """(N,) turn rate (rad/s)."""
        return self.physics.w

    @property
    def wheel_angle(self) -> Array:
        """(N, 2) wheel angles (rad), forward positive."""
        return self.physics.wheel_angle

    @property
    def motors(self) -> MotorBank | MotorGroups:
        """The (N, 2) motors: current and shaft speed."""
        return self.physics.motors

    def reset(self) -> None:
        """Robots back to their starts at rest, boards up, time and noise from zero."""
        n = self.count
        self.steps = 0
        self.physics.reset()
        for group in self.groups:
            group.reset()
        self._direct = np.full((n, 2), math.nan)
        self._released = np.zeros(n, dtype=bool)
        self.apply_inputs()
        self._refreshed = None
        self._sample_sensors()

    @property
    def time(self) -> float:
        """Simulated seconds since the last reset."""
        return self.steps * self.dt

    def devices_of(self, robot: int) -> tuple[DeviceSet, int]:
        """Robot ``robot``'s device set and its row there."""
        return self.groups[self._group_of[robot]].devices, int(self._row_of[robot])

    @property
    def bumpers(self) -> npt.NDArray[np.bool_]:
        """(N, B) each robot's bumper switches closed, in its model's order (robots with fewer: open)."""
        columns = max((sum(b.count for b in g.devices.bumpers) for g in self.groups), default=0)
        closed = np.zeros((self.count, columns), dtype=bool)
        for group in self.groups:
            parts = [batch.pressed(self.time) for batch in group.devices.bumpers]
            if parts:
                pressed = np.concatenate(parts, axis=1)
                closed[group.index, : pressed.shape[1]] = pressed
        return closed

    @property
    def led(self) -> Array:
        """(N,) 1.0 while any of a robot's LEDs is lit."""
        lit = np.zeros(self.count)
        for group in self.groups:
            for _, batch, index in group.devices.devices(["led"]):
                lit[group.index] = np.maximum(lit[group.index], batch.outputs[:, index, 0])
        return lit

    def teleport(self, index: int, pose: Pose) -> None:
        """Put robot ``index`` at ``pose``, stopped, bumpers open.

        Its sensor readings follow at the next sample (at most 1/sensor_rate later):
        sampling now would draw noise for every robot and shift their streams.

        Raises:
            HilSimError: no such robot, or the pose is outside the arena.
        """
        if not 0 <= index < self.count:
            raise HilSimError(f"no robot {index}: there are {self.count}")
        if not (in_arena(self.world, pose.x, pose.y) and math.isfinite(pose.yaw)):
            raise HilSimError(f"pose ({pose.x:g}, {pose.y:g}, {pose.yaw:g}) is outside the arena")
        self.physics.teleport(index, pose)
        devices, row = self.devices_of(index)
        devices.release_bumpers(np.array([row]))
        self._refreshed = None

    # --- inputs ---------------------------------------------------------------------

    def apply_inputs(self) -> None:
        """The devices take their inputs; the motors' voltages follow (call after changing inputs)."""
        voltage = np.zeros((self.count, 2))
        closed = np.zeros((self.count, 2), dtype=bool)
        for group in self.groups:
            group.devices.apply()
            fraction, shut = group.devices.drive()
            voltage[group.index] = fraction * group.model.motor.supply_voltage
            closed[group.index] = shut
        direct = ~np.isnan(self._direct)
        if direct.any():
            wanted = self._direct * self._supply
            voltage[direct], closed[direct] = wanted[direct], self._direct[direct] != 0.0
        if self._released.any():
            voltage[self._released], closed[self._released] = 0.0, False
        self._voltage, self._closed = voltage, closed

    def take_inputs(self, robot: int, signals: Iterable[tuple[str, str, float]]) -> tuple[bool, list[str]]:
        """Robot ``robot``'s INPUT signals (the MCU's pins): whether any changed, and unknown names.

        :meth:`apply_inputs` makes them count.
        """
        devices, row = self.devices_of(robot)
        return devices.take(row, signals)

    def set_input(self, name: str, value: float | npt.ArrayLike, robots: npt.ArrayLike | None = None) -> None:
        """Set ``device.signal`` of every robot (or of ``robots``) and apply it (tests and tools).

        Raises:
            HilSimError: a robot has no such input.
        """
        device, _, signal = name.partition(".")
        which = np.arange(self.count) if robots is None else np.atleast_1d(np.asarray(robots, dtype=np.intp))
        values = np.broadcast_to(np.asarray(value, dtype=float), which.shape)
        for number, group in enumerate(self.groups):
            mine = self._group_of[which] == number
            if mine.any():
                group.devices.set_input(self._row_of[which[mine]], device, signal, values[mine])
        self.apply_inputs()

    def setting(
        self, robot: int, device: str, value: float | Mapping[str, float], *, signal: str = ""
    ) -> Setting:
        """A user's ``value`` for robot ``robot``'s ``device`` (:meth:`DeviceSet.setting`), checked.

        Raises:
            HilSimError: no such robot, device or signal, or a value its kind does not take.
        """
        if not 0 <= robot < self.count:
            raise HilSimError(f"no robot {robot}: there are {self.count}")
        devices, _ = self.devices_of(robot)
        return devices.setting(device, value, signal=signal)

    def set_device(self, robot: int, setting: Setting) -> None:
        """Robot ``robot``'s user sets a device: a button, a knob, a remote's key, a sensor override.

        What the MCU reads follows at once (:meth:`signals`).
        """
        devices, row = self.devices_of(robot)
        devices.set(row, setting)

    def let_go(self, robot: int, setting: Setting) -> None:
        """Robot ``robot``'s user lets go of ``setting``'s device (back to rest, no more override)."""
        devices, row = self.devices_of(robot)
        devices.let_go(row, setting)

    def command_wheels(self, robot: int, duties: tuple[float, float] | None) -> None:
        """Drive robot ``robot``'s wheels directly (signed duty -1..1 each, 0: coast); None: drivers."""
        self._direct[robot] = (math.nan, math.nan) if duties is None else duties
        self.apply_inputs()

    def release(self, robot: int, released: bool = True) -> None:
        """Let robot ``robot``'s motors coast whatever its drivers' inputs (its MCU went silent), or not.

        :meth:`apply_inputs` makes it count.
        """
        self._released[robot] = released

    def driving(self, robot: int) -> bool:
        """Whether robot ``robot``'s motors are driven at all (a driver input or a direct command)."""
        devices, row = self.devices_of(robot)
        return devices.driving(row) or bool((np.nan_to_num(self._direct[robot]) != 0).any())

    # --- outputs --------------------------------------------------------------------

    def refresh(self) -> None:
        """Bring the outputs that follow the state (switches, encoders) up to now."""
        key = (self.steps, self.samples)
        if self._refreshed == key:
            return
        self._refreshed = key
        for group in self.groups:
            if group.devices.live:
                group.update()
                group.devices.refresh(group)

    def signals(self, robot: int) -> list[tuple[str, str, float]]:
        """Robot ``robot``'s OUTPUT signals (what its MCU's pins see), as of now."""
        self.refresh()
        devices, row = self.devices_of(robot)
        return devices.signals(row)

    def output(self, name: str) -> Array:
        """(N,) ``device.column`` of every robot (a signal, or a physical value such as ``ir.true_cm``).

        Robots whose model has no such device read NaN.

        Raises:
            HilSimError: no robot has it.
        """
        self.refresh()
        device, _, column = name.partition(".")
        values = np.full(self.count, math.nan)
        found = False
        for group in self.groups:
            if device in group.devices.where:
                values[group.index] = group.devices.value(device, column)
                found = True
        if not found:
            raise HilSimError(f"no robot has a device {device!r}")
        return values

    def input(self, name: str) -> Array:
        """(N,) the INPUT signal ``device.signal`` of every robot as taken (NaN: its model has none)."""
        device, _, signal = name.partition(".")
        values = np.full(self.count, math.nan)
        for group in self.groups:
            slot = group.devices.inputs.get((device, signal))
            if slot is not None:
                values[group.index] = slot.model.inputs[:, slot.index, slot.column]
        return values

    def joint_states(self, robot: int) -> list[tuple[str, float]]:
        """Robot ``robot``'s servo joints and their angles (rad)."""
        devices, row = self.devices_of(robot)
        return [(name, float(angles[row])) for name, angles in devices.joint_states()]

    # --- stepping ---------------------------------------------------------------------

    def step(self, count: int = 1) -> None:
        """Advance ``count`` physics steps, sampling sensors at their rate."""
        while count > 0:
            steps = min(count, self.sensor_every - self.steps % self.sensor_every)
            self.physics.advance(steps, self._voltage, self._closed, self.time, self._touch)
            self.steps += steps
            count -= steps
            if self._joints:
                for group in self.groups:
                    group.devices.advance(steps * self.dt)
            if self.steps % self.sensor_every == 0:
                self._sample_sensors()

    def _touch(self, robots: npt.NDArray[np.intp], bearing: Array, now: float) -> None:
        """Contacts at these bearings (body frame, rad): the bumpers whose sectors hold them close."""
        bearing = wrap_angle(bearing)
        if len(self.groups) == 1:
            self.groups[0].devices.touch(robots, bearing, now)
            return
        for number, group in enumerate(self.groups):
            mine = self._group_of[robots] == number
            if mine.any():
                group.devices.touch(self._row_of[robots[mine]], bearing[mine], now)

    def _sample_sensors(self) -> None:
        self.samples += 1
        for group in self.groups:
            uniform, normal = group.noise.draw()
            group.update()
            group.devices.sample(group, uniform, normal)
