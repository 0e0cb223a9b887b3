"""The simulation: N differential-drive robots in one world, stepped at a fixed rate.

Every array has the robots as its first axis, so one robot and a swarm of 100 run the
same code. Robots do not collide with each other (they are ghosts to one another);
they share the world, so a board one robot knocks down is down for all.

Each physics step (default 1 kHz): the two motors of every robot are advanced from
their pins (enable PWM, A, B through the L298 table), the wheel speeds move the robot
(midpoint rule), and collisions with walls, boxes and standing boards are resolved:
a board hit faster than the world's push threshold falls, anything else stops the
robot at the contact (no penetration, and at 1 kHz a robot moves under a millimetre
a step, far less than its radius, so it cannot tunnel) and the wheels slow to the
motion that is left. The front bumper's two switches close on contact within their
sectors and stay closed ``bumper_hold`` seconds, as a real switch bounces shut.

Sensors are sampled at ``sensor_rate`` (default 50 Hz) with per-robot seeded noise
(:mod:`hil_sim.core.noise`), so runs are reproducible and robot ``r`` gets the same
noise alone or in a swarm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from hil_sim.core.motor import L298, DriverTable, MotorBank, MotorParams, bridge_state, bridge_voltage
from hil_sim.core.noise import NoiseBank
from hil_sim.core.sensors import (
    EarthField,
    PhotoresistorModel,
    RangerSpec,
    SharpIrModel,
    adc_counts,
    cone_directions,
    heading_deg,
    ultrasonic_cm,
)
from hil_sim.core.world import Pose, WorldConfig, WorldGeometry
from hil_sim.errors import HilSimError

Array = npt.NDArray[np.float64]
LEFT, RIGHT = 0, 1
#: Penetration (m) below which a contact counts as resolved.
CONTACT_TOLERANCE = 1e-9
#: Uniforms and normals each robot draws per sensor update (see _sample_sensors).
UNIFORMS_PER_UPDATE = 2 + 3 * 4
NORMALS_PER_UPDATE = 1 + 3


@dataclass(frozen=True)
class RobotParams:
    """The demo robot: geometry, drive train, bumper and sensor mounts (SI units)."""

    wheel_radius: float = 0.033
    wheel_base: float = 0.14
    body_radius: float = 0.09
    mass: float = 0.8
    motor: MotorParams = field(default_factory=MotorParams)
    encoder_cpr: int = 960
    bumper_travel: float = 0.005
    bumper_half_angle: float = math.radians(75.0)
    bumper_overlap: float = math.radians(15.0)
    bumper_hold: float = 0.05
    ultrasonic: RangerSpec = field(default_factory=lambda: RangerSpec(0.09, 0.0, 0.0, math.radians(15.0), 5))
    ultrasonic_sigma_cm: float = 0.3
    ir: RangerSpec = field(default_factory=lambda: RangerSpec(0.09, 0.02, 0.0, math.radians(3.0), 5))
    light_mounts: tuple[float, ...] = (0.0, math.pi / 2, math.pi, 3 * math.pi / 2)  # front, left, back, right
    light_radius: float = 0.01  # GL5506 cells (5 mm) clustered on a mast; parallax < 2 deg beyond 0.5 m
    magnetometer_sigma: float = 3.5e-7  # T per axis: about 1 degree of heading

    def __post_init__(self) -> None:
        for name in ("wheel_radius", "wheel_base", "body_radius", "mass"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise HilSimError(f"robot: {name} = {value!r} must be a positive number")
        if self.encoder_cpr < 1:
            raise HilSimError(f"robot: encoder_cpr = {self.encoder_cpr!r} must be at least 1")

    @property
    def load_inertia(self) -> float:
        """Robot mass reflected to each motor shaft (half the mass per wheel)."""
        return 0.5 * self.mass * self.wheel_radius**2 / self.motor.gear_ratio**2

    @property
    def max_wheel_speed(self) -> float:
        """Analytic no-load wheel speed at full supply (rad/s)."""
        return self.motor.steady_speed(self.motor.supply_voltage) / self.motor.gear_ratio


@dataclass
class SensorReadings:
    """The latest sensor sample of every robot (physical values and what the MCU reads)."""

    ultrasonic_cm: Array
    ir_distance_cm: Array  # noise-free truth, for the Range topic's reference
    ir_voltage: Array
    ir_adc: Array
    light: Array  # (N, 4) ADC counts
    magnetic_field: Array  # (N, 3) T, body frame
    heading_deg: Array

    @classmethod
    def empty(cls, robots: int) -> SensorReadings:
        """Readings before the first sample: nothing in range, no light."""
        return cls(
            np.full(robots, 200.0),
            np.full(robots, 150.0),
            np.full(robots, 0.45),
            np.zeros(robots),
            np.zeros((robots, 4)),
            np.zeros((robots, 3)),
            np.zeros(robots),
        )


class Simulation:
    """N robots in one world; :meth:`step` advances everything by whole physics steps."""

    def __init__(
        self,
        world: WorldConfig,
        *,
        ir: SharpIrModel,
        photoresistor: PhotoresistorModel,
        robots: int = 1,
        robot: RobotParams | None = None,
        physics_rate: float = 1000.0,
        sensor_rate: float = 50.0,
        seed: int = 0,
        driver: DriverTable = L298,
        starts: list[Pose] | None = None,
        earth: EarthField | None = None,
    ) -> None:
        if robots < 1:
            raise HilSimError(f"robots = {robots!r}: need at least one")
        if not (math.isfinite(physics_rate) and physics_rate > 0):
            raise HilSimError(f"physics_rate = {physics_rate!r} must be positive")
        if not (math.isfinite(sensor_rate) and 0 < sensor_rate <= physics_rate):
            raise HilSimError(f"sensor_rate = {sensor_rate!r} must be positive and at most physics_rate")
        ratio = physics_rate / sensor_rate
        if abs(ratio - round(ratio)) > 1e-9:
            raise HilSimError(f"sensor_rate = {sensor_rate!r} must divide physics_rate {physics_rate:g}")
        self.world = world
        self.geometry = WorldGeometry(world)
        self.robot = robot or RobotParams()
        self.ir = ir
        self.photoresistor = photoresistor
        self.earth = earth or EarthField()
        self.driver = driver
        self.count = robots
        self.dt = 1.0 / physics_rate
        self.sensor_every = round(ratio)
        self.seed = seed
        self.starts = starts or [world.start] * robots
        if len(self.starts) != robots:
            raise HilSimError(f"{len(self.starts)} start poses for {robots} robots")
        # Every ranger ray of a robot in one table (body frame): ultrasonic first, then IR.
        rangers = (self.robot.ultrasonic, self.robot.ir)
        self._ray_angle = np.concatenate([cone_directions(spec) for spec in rangers])
        self._ray_x = np.concatenate([np.full(spec.rays, spec.x) for spec in rangers])
        self._ray_y = np.concatenate([np.full(spec.rays, spec.y) for spec in rangers])
        self._ultrasonic_rays = self.robot.ultrasonic.rays
        self._light_mounts = np.asarray(self.robot.light_mounts)
        self.reset()

    # --- state ----------------------------------------------------------------------

    def reset(self) -> None:
        """Robots back to their starts at rest, boards up, time and noise from zero."""
        n = self.count
        self.steps = 0
        self.x = np.array([p.x for p in self.starts])
        self.y = np.array([p.y for p in self.starts])
        self.yaw = np.array([p.yaw for p in self.starts])
        self.v = np.zeros(n)
        self.w = np.zeros(n)
        self.wheel_angle = np.zeros((n, 2))
        self.motors = MotorBank(self.robot.motor, (n, 2), load_inertia=self.robot.load_inertia, dt=self.dt)
        self._enable, self._a, self._b = np.zeros((n, 2)), np.zeros((n, 2)), np.zeros((n, 2))
        self.set_pins(self._enable, self._a, self._b)
        self.led = np.zeros(n)
        self.bumper_until = np.full((n, 2), -math.inf)
        self._clearance = np.full(n, -1.0)  # unknown: check collisions on the next step
        self.geometry.reset()
        self.noise = NoiseBank(
            self.seed, np.arange(n), uniforms=UNIFORMS_PER_UPDATE, normals=NORMALS_PER_UPDATE
        )
        self.readings = SensorReadings.empty(n)
        self._sample_sensors()

    @property
    def time(self) -> float:
        """Simulated seconds since the last reset."""
        return self.steps * self.dt

    @property
    def bumpers(self) -> npt.NDArray[np.bool_]:
        """(N, 2) left and right bumper switches closed."""
        return self.bumper_until > self.time

    @property
    def encoder_ticks(self) -> npt.NDArray[np.int64]:
        """(N, 2) quadrature-decoded wheel encoder counts."""
        return np.floor(self.wheel_angle / (2 * math.pi) * self.robot.encoder_cpr).astype(np.int64)

    def teleport(self, index: int, pose: Pose) -> None:
        """Put robot ``index`` at ``pose``, stopped, bumpers open.

        Its sensor readings follow at the next sample (at most 1/sensor_rate later):
        sampling now would draw noise for every robot and shift their streams.

        Raises:
            HilSimError: no such robot, or the pose is outside the arena.
        """
        if not 0 <= index < self.count:
            raise HilSimError(f"no robot {index}: there are {self.count}")
        half_w, half_h = self.world.width / 2, self.world.height / 2
        if not (abs(pose.x) < half_w and abs(pose.y) < half_h and math.isfinite(pose.yaw)):
            raise HilSimError(f"pose ({pose.x:g}, {pose.y:g}, {pose.yaw:g}) is outside the arena")
        self.x[index], self.y[index], self.yaw[index] = pose.x, pose.y, pose.yaw
        self.v[index] = self.w[index] = 0.0
        self.motors.speed[index] = 0.0
        self.motors.current[index] = 0.0
        self.bumper_until[index] = -math.inf
        self._clearance[index] = -1.0

    def set_pins(self, enable: Array, a: Array, b: Array, robots: npt.ArrayLike | None = None) -> None:
        """Motor driver pins, (N, 2) [left, right] each (or rows for ``robots`` only)."""
        rows = slice(None) if robots is None else np.asarray(robots)
        self._enable[rows], self._a[rows], self._b[rows] = enable, a, b
        state = bridge_state(self._enable, self._a, self._b, self.driver)
        self._voltage = bridge_voltage(state, self._enable, self.robot.motor.supply_voltage)
        self._closed = state != 0

    # --- stepping ---------------------------------------------------------------------

    def step(self, count: int = 1) -> None:
        """Advance ``count`` physics steps, sampling sensors at their rate."""
        while count > 0:
            steps = min(count, self.sensor_every - self.steps % self.sensor_every)
            self._advance(steps)
            self.steps += steps
            count -= steps
            if self.steps % self.sensor_every == 0:
                self._sample_sensors()

    def _advance(self, steps: int) -> None:
        """``steps`` physics steps: in closed form per robot where possible, else one by one.

        A robot is stepped one by one when its motors leave the closed form (friction
        changes direction) or when the block's travel could reach an obstacle. The
        choice depends on that robot alone, so its results do not depend on the others.
        """
        robot, dt = self.robot, self.dt
        saved_current, saved_speed = self.motors.current.copy(), self.motors.speed.copy()
        speeds, exact = self.motors.advance(self._voltage, self._closed, steps)
        wheel = speeds / robot.motor.gear_ratio  # (N, 2, steps)
        v = robot.wheel_radius * (wheel[:, LEFT] + wheel[:, RIGHT]) / 2
        w = robot.wheel_radius * (wheel[:, RIGHT] - wheel[:, LEFT]) / robot.wheel_base
        turn = w * dt
        yaw_after = self.yaw[:, None] + np.cumsum(turn, axis=1)
        heading = yaw_after - turn / 2
        dx, dy = v * np.cos(heading) * dt, v * np.sin(heading) * dt
        travel = np.hypot(dx, dy).sum(axis=1)
        one_by_one = exact.any(axis=1) | (travel >= self._clearance)
        closed_form = ~one_by_one
        if closed_form.any():
            rows = np.flatnonzero(closed_form)
            self.x[rows] += dx[rows].sum(axis=1)
            self.y[rows] += dy[rows].sum(axis=1)
            self.yaw[rows] = yaw_after[rows, -1]
            self.v[rows], self.w[rows] = v[rows, -1], w[rows, -1]
            self.wheel_angle[rows] += wheel[rows].sum(axis=-1) * dt
            self._clearance[rows] -= travel[rows]
        if one_by_one.any():
            rows = np.flatnonzero(one_by_one)
            self.motors.current[rows], self.motors.speed[rows] = saved_current[rows], saved_speed[rows]
            for offset in range(steps):
                self._physics_step(rows, self.time + (offset + 1) * dt)

    def _physics_step(self, rows: npt.NDArray[np.intp], now: float) -> None:
        """One exact physics step of the robots in ``rows``, ending at time ``now``."""
        robot, dt = self.robot, self.dt
        self.motors.step(self._voltage, self._closed, rows)
        wheel = self.motors.speed[rows] / robot.motor.gear_ratio
        v = robot.wheel_radius * (wheel[:, LEFT] + wheel[:, RIGHT]) / 2
        w = robot.wheel_radius * (wheel[:, RIGHT] - wheel[:, LEFT]) / robot.wheel_base
        heading = self.yaw[rows] + w * dt / 2
        dx, dy = v * np.cos(heading) * dt, v * np.sin(heading) * dt
        self.yaw[rows] += w * dt
        self.w[rows] = w
        self._clearance[rows] -= np.hypot(dx, dy)
        near = self._clearance[rows] <= 0.0
        if near.any():
            dx, dy, v = self._resolve_contacts(rows, near, (dx, dy, v), now)
        self.x[rows] += dx
        self.y[rows] += dy
        self.v[rows] = v
        self.wheel_angle[rows] += self.motors.speed[rows] / robot.motor.gear_ratio * dt

    def _resolve_contacts(
        self,
        rows: npt.NDArray[np.intp],
        near: npt.NDArray[np.bool_],
        motion: tuple[Array, Array, Array],
        now: float,
    ) -> tuple[Array, Array, Array]:
        """Collisions, board falls and bumpers for the robots whose clearance ran out."""
        robot, geometry = self.robot, self.geometry
        radius = robot.body_radius
        dx, dy, v = motion
        which = np.flatnonzero(near)
        ids = rows[which]

        def query() -> tuple[Array, Array, Array, Array, npt.NDArray[np.intp]]:
            px, py = self.x[ids] + dx[which], self.y[ids] + dy[which]
            dist, nearest, segment = geometry.closest(np.stack([px, py], axis=1))
            return px, py, dist, nearest, segment

        px, py, dist, nearest, segment = query()
        self._press_bumpers(ids, nearest, (px, py), dist, now)
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
        self._clearance[ids] = dist - radius - robot.bumper_travel
        # Wheels slow to the motion that was left (stall against an obstacle).
        heading = self.yaw[ids]
        v_left = (dx[which] * np.cos(heading) + dy[which] * np.sin(heading)) / self.dt
        stalled = np.abs(v_left) < np.abs(v[which]) - 1e-12
        if stalled.any():
            v[which[stalled]] = v_left[stalled]
            stuck = ids[stalled]
            half_turn = self.w[stuck] * robot.wheel_base / 2
            gear = robot.motor.gear_ratio / robot.wheel_radius
            self.motors.speed[stuck, LEFT] = (v_left[stalled] - half_turn) * gear
            self.motors.speed[stuck, RIGHT] = (v_left[stalled] + half_turn) * gear
        return dx, dy, v

    def _press_bumpers(
        self, ids: npt.NDArray[np.intp], nearest: Array, point: tuple[Array, Array], dist: Array, now: float
    ) -> None:
        robot = self.robot
        touching = dist <= robot.body_radius + robot.bumper_travel
        if not touching.any():
            return
        px, py = point
        bearing = np.arctan2(nearest[:, 1] - py, nearest[:, 0] - px) - self.yaw[ids]
        bearing = (bearing + math.pi) % (2 * math.pi) - math.pi
        # The switches' sectors overlap in front: a head-on hit closes both.
        left = touching & (bearing >= -robot.bumper_overlap) & (bearing <= robot.bumper_half_angle)
        right = touching & (bearing <= robot.bumper_overlap) & (bearing >= -robot.bumper_half_angle)
        until = now + robot.bumper_hold
        self.bumper_until[ids[left], LEFT] = until
        self.bumper_until[ids[right], RIGHT] = until

    # --- sensors ------------------------------------------------------------------------

    def _ranger_distances(self) -> tuple[Array, Array]:
        """Nearest echo (m) of the ultrasonic cone and of the IR cone, per robot."""
        c, s = np.cos(self.yaw)[:, None], np.sin(self.yaw)[:, None]
        ox = self.x[:, None] + c * self._ray_x - s * self._ray_y
        oy = self.y[:, None] + s * self._ray_x + c * self._ray_y
        angle = self.yaw[:, None] + self._ray_angle
        hits = self.geometry.cast(ox, oy, np.cos(angle), np.sin(angle), 2.5)
        split = self._ultrasonic_rays
        return hits[:, :split].min(axis=1), hits[:, split:].min(axis=1)

    def _sample_sensors(self) -> None:
        robot, readings = self.robot, self.readings
        uniform, normal = self.noise.draw()
        echo_m, ir_m = self._ranger_distances()
        readings.ultrasonic_cm = ultrasonic_cm(echo_m, normal[:, 0], sigma_cm=robot.ultrasonic_sigma_cm)
        ir_cm = ir_m * 100.0
        readings.ir_distance_cm = ir_cm
        readings.ir_voltage = self.ir.with_error(self.ir.voltage(ir_cm), uniform[:, 0], uniform[:, 1])
        readings.ir_adc = adc_counts(readings.ir_voltage)
        mounts = self.yaw[:, None] + self._light_mounts[None, :]
        sx = self.x[:, None] + robot.light_radius * np.cos(mounts)
        sy = self.y[:, None] + robot.light_radius * np.sin(mounts)
        light = self.world.light
        to_x, to_y = light.x - sx, light.y - sy
        clean = self.photoresistor.reading(
            np.hypot(to_x, to_y), np.arctan2(to_y, to_x) - mounts, light.reference_distance
        )
        picks = uniform[:, 2:].reshape(self.count, 4, 3)
        readings.light = np.round(
            self.photoresistor.with_error(clean, picks[..., 0], picks[..., 1], picks[..., 2])
        )
        readings.magnetic_field = self.earth.body(self.yaw, normal[:, 1:4], robot.magnetometer_sigma)
        readings.heading_deg = heading_deg(readings.magnetic_field)
