"""The simulation: N differential-drive robots in one world, stepped at a fixed rate.

Every array has the robots as its first axis, so one robot and a swarm of 100 run the
same code. Robots do not collide with each other (they are ghosts to one another);
they share the world, so a board one robot knocks down is down for all.

Each physics step (default 1 kHz) the motors of every robot get their terminal
voltage from their pins (enable PWM, A, B through the L298 table), and the physics
backend (:mod:`hil_sim.core.physics`: ``native``, the 2-D numpy engine, or ``mujoco``)
advances the motors, moves the robots and resolves their contacts. The front bumper's
two switches close on contact within their sectors and stay closed ``bumper_hold``
seconds, as a real switch bounces shut; the backend says where a robot touched.

Sensors are sampled at ``sensor_rate`` (default 50 Hz) from the backend's pose and
ray casts, with per-robot seeded noise (:mod:`hil_sim.core.noise`), so runs are
reproducible and robot ``r`` gets the same noise alone or in a swarm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from hil_sim.core.motor import L298, DriverTable, MotorBank, MotorParams, bridge_state, bridge_voltage
from hil_sim.core.noise import NoiseBank
from hil_sim.core.physics import LEFT, RIGHT, BoardStates, PhysicsBackend, Rays, make_backend, wrap_angle
from hil_sim.core.sensors import (
    EarthField,
    PhotoresistorModel,
    RangerSpec,
    SharpIrModel,
    adc_counts,
    bumper_sectors,
    cone_directions,
    heading_deg,
    light_readings,
    ultrasonic_cm,
)
from hil_sim.core.world import Pose, WorldConfig, in_arena
from hil_sim.errors import HilSimError

Array = npt.NDArray[np.float64]
__all__ = ["LEFT", "RIGHT", "RobotParams", "SensorReadings", "Simulation"]
#: Longest ranger ray cast (m); beyond both sensors' ranges.
RAY_RANGE = 2.5
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
    ultrasonic_height: float = 0.07  # m above the floor (a 3-D engine's rays pass over a fallen board)
    ir_height: float = 0.055
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
        physics: str = "native",
        urdf: str | Path | None = None,
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
        self.physics: PhysicsBackend = make_backend(
            physics, world, self.robot, starts=self.starts, dt=self.dt, urdf=urdf
        )
        self.world = self.physics.world
        # Every ranger ray of a robot in one table (body frame): ultrasonic first, then IR.
        rangers = (
            (self.robot.ultrasonic, self.robot.ultrasonic_height),
            (self.robot.ir, self.robot.ir_height),
        )
        self._rays = Rays(
            x=np.concatenate([np.full(spec.rays, spec.x) for spec, _ in rangers]),
            y=np.concatenate([np.full(spec.rays, spec.y) for spec, _ in rangers]),
            z=np.concatenate([np.full(spec.rays, height) for spec, height in rangers]),
            angle=np.concatenate([cone_directions(spec) for spec, _ in rangers]),
        )
        self._ultrasonic_rays = self.robot.ultrasonic.rays
        self._light_mounts = np.asarray(self.robot.light_mounts)
        #: Sensor samples taken so far, resets included: :attr:`readings` change only with it.
        self.samples = 0
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
    def motors(self) -> MotorBank:
        """The (N, 2) motors: current and shaft speed."""
        return self.physics.motors

    def reset(self) -> None:
        """Robots back to their starts at rest, boards up, time and noise from zero."""
        n = self.count
        self.steps = 0
        self.physics.reset()
        self._enable, self._a, self._b = np.zeros((n, 2)), np.zeros((n, 2)), np.zeros((n, 2))
        self.set_pins(self._enable, self._a, self._b)
        self.led = np.zeros(n)
        self.bumper_until = np.full((n, 2), -math.inf)
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
        if not (in_arena(self.world, pose.x, pose.y) and math.isfinite(pose.yaw)):
            raise HilSimError(f"pose ({pose.x:g}, {pose.y:g}, {pose.yaw:g}) is outside the arena")
        self.physics.teleport(index, pose)
        self.bumper_until[index] = -math.inf

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
            self.physics.advance(steps, self._voltage, self._closed, self.time, self._press_bumpers)
            self.steps += steps
            count -= steps
            if self.steps % self.sensor_every == 0:
                self._sample_sensors()

    def _press_bumpers(self, robots: npt.NDArray[np.intp], bearing: Array, now: float) -> None:
        """Close the switches whose sectors hold the contact bearings (body frame, rad)."""
        robot = self.robot
        bearing = wrap_angle(bearing)
        # The switches' sectors overlap in front: a head-on hit closes both.
        left, right = bumper_sectors(
            bearing, half_angle=robot.bumper_half_angle, overlap=robot.bumper_overlap
        )
        until = now + robot.bumper_hold
        self.bumper_until[robots[left], LEFT] = until
        self.bumper_until[robots[right], RIGHT] = until

    # --- sensors ------------------------------------------------------------------------

    def _ranger_distances(self) -> tuple[Array, Array]:
        """Nearest echo (m) of the ultrasonic cone and of the IR cone, per robot."""
        hits = self.physics.cast(self._rays, RAY_RANGE)
        split = self._ultrasonic_rays
        return hits[:, :split].min(axis=1), hits[:, split:].min(axis=1)

    def _sample_sensors(self) -> None:
        self.samples += 1
        robot, readings = self.robot, self.readings
        uniform, normal = self.noise.draw()
        echo_m, ir_m = self._ranger_distances()
        readings.ultrasonic_cm = ultrasonic_cm(echo_m, normal[:, 0], sigma_cm=robot.ultrasonic_sigma_cm)
        ir_cm = ir_m * 100.0
        readings.ir_distance_cm = ir_cm
        readings.ir_voltage = self.ir.with_error(self.ir.voltage(ir_cm), uniform[:, 0], uniform[:, 1])
        readings.ir_adc = adc_counts(readings.ir_voltage)
        light = self.world.light
        readings.light = light_readings(
            self.photoresistor,
            (self.x, self.y, self.yaw),
            mounts=self._light_mounts,
            radius=robot.light_radius,
            light=(light.x, light.y, light.reference_distance),
            picks=uniform[:, 2:].reshape(self.count, 4, 3),
        )
        readings.magnetic_field = self.earth.body(self.yaw, normal[:, 1:4], robot.magnetometer_sigma)
        readings.heading_deg = heading_deg(readings.magnetic_field)
