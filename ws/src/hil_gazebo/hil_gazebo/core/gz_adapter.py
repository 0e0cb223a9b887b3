"""Gazebo (gz sim) in place of the simulator: MCU pins to wheel commands, Gazebo's sensors to signals.

The ``gz_adapter`` node stands where the ``sim`` node stands in the HIL chain: it
takes the MCU's pins from ``hil/signals/to_sim`` and answers on
``hil/signals/from_sim`` with the same signals, names and units as the simulator,
while Gazebo moves the robot. This module is its logic, without ROS; the node only
converts messages. The robot is a :class:`~hil_sim.core.robot_model.RobotModel`; its
devices are the simulator's models (:class:`~hil_sim.core.device_set.DeviceSet`, one
robot) fed from Gazebo instead of the physics backend, and the MCU's end of the link
is the simulator's (:class:`~hil_sim.core.mcu_port.McuPort`: pins in, the silence rule,
signals out).

* Wheels, ``drive`` ``torque`` (the default): the robot's wheel joints are driven by
  Gazebo's ApplyJointForce systems. Each time Gazebo reports the wheel speeds
  (``joint_states``), the motors' electrical half (:meth:`MotorBank.step_current`: the
  motor drivers' voltages, ``L di/dt = V - R i - Ke w`` at the measured speed) gives
  the current, and ``kt * current * gear`` is the torque sent back. The mechanical half
  is Gazebo's: the exported robot carries the rotors' inertia and the gearbox's
  viscous and Coulomb friction on its wheel joints (:mod:`hil_gazebo.core.sdf`), so
  a wheel against a wall stalls its motor as it would.
* Wheels, ``drive`` ``velocity``: Gazebo's DiffDrive system takes ``cmd_vel``; the
  motors run here in full (:class:`MotorBank` with the robot's mass reflected, as in
  the native engine) on Gazebo's clock, and their wheel speeds become the twist. A
  fallback: Gazebo then moves the robot kinematically, so a blocked robot's motors do
  not stall.
* Sensors, every ``1/sensor_rate`` of Gazebo time, with the native simulator's models
  and noise streams (:class:`NoiseBank`, the same draws per sample): each ranger from a
  Gazebo lidar spread over its cone (nearest return; :func:`scan_specs`), the bumpers
  from a short lidar fan over their sectors (a return within ``body_radius +
  bumper_travel`` is a contact at that bearing), each compass from a Gazebo
  magnetometer in its frame, the photoresistors and line sensors from the robot's pose
  (Gazebo's odometry) and the world's light and floor, the IMUs from odometry's speeds,
  the encoders from the wheels' joint positions. A servo turns here on Gazebo's clock;
  the exported lidar of a ranger riding on it stays at its mount (a limit of the
  export).
* A lidar reports no return as ``+inf`` and one closer than its minimum as ``-inf``
  (Gazebo's convention, kept by ros_gz_bridge): nothing in range, and as close as the
  sensor can tell.
* MCU silence: no pins for ``pin_timeout`` (on the MCU's clock) and the motors coast,
  as in the simulator.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hil_gazebo.errors import HilGazeboError
from hil_sim.core.device_set import DeviceSet
from hil_sim.core.devices.base import IndexArray
from hil_sim.core.mcu_port import McuPort
from hil_sim.core.motor import MotorBank
from hil_sim.core.noise import NoiseBank
from hil_sim.core.physics_types import Rays
from hil_sim.core.robot_model import LEFT, RIGHT, RobotModel, demo_robot
from hil_sim.core.world import FloorMap, WorldConfig

Array = npt.NDArray[np.float64]

#: The robot's model name in Gazebo (its topics are under ``/model/<name>/``).
MODEL_NAME = "hil_robot"
#: How the adapter drives the wheels (module docstring).
DRIVES = ("torque", "velocity")
#: The lidar fan standing in for the bumpers (its name, also in its topics).
BUMPER_SCAN = "bumper"
#: The wheel joints of the robot's URDF, left then right.
WHEEL_JOINTS = ("left_wheel_joint", "right_wheel_joint")
#: Farthest a range lidar reports (m): as far as the native simulator casts its rays,
#: and the nearest (m).
SCAN_RANGE = 2.5
SCAN_MIN = 0.02
#: Height (m) of the bumper's lidar fan above the floor: over the body disc and the
#: sensor boxes (so it sees no part of the robot), under the 0.2 m walls and boxes.
BUMPER_FAN_HEIGHT = 0.085
#: Rays of the bumper fan across both switches' sectors.
BUMPER_FAN_RAYS = 61
#: Longest stretch of Gazebo time (s) the velocity drive integrates at once (after a
#: pause the motors do not replay what Gazebo did not simulate).
MAX_CATCH_UP_S = 0.1


@dataclass(frozen=True)
class BridgedTopic:
    """One ros_gz_bridge entry: the ROS name (relative: the node's namespace applies), Gazebo's, types."""

    ros: str
    gz: str
    ros_type: str
    gz_type: str
    direction: str  # GZ_TO_ROS or ROS_TO_GZ


def scanners(robot: RobotModel) -> list[str]:
    """The Gazebo lidars of a robot: one per ranger (named as it), and the bumper fan if it has bumpers."""
    names = [spec.name for spec in robot.of_kind("ranger")]
    return [*names, BUMPER_SCAN] if robot.of_kind("bumper") else names


def magnetometers(robot: RobotModel) -> dict[str, str]:
    """Each compass's Gazebo magnetometer: its role (``mag:<name>``) and ROS topic (as the simulator's)."""
    return {f"mag:{spec.name}": spec.topic or f"mag/{spec.name}" for spec in robot.of_kind("compass")}


def bridged_topics(
    drive: str, *, model: str = MODEL_NAME, robot: RobotModel | None = None
) -> dict[str, BridgedTopic]:
    """What ros_gz_bridge carries for the adapter, by role; the export writes the same names.

    Roles: ``clock``, ``odom``, ``joint_states``, each lidar of :func:`scanners` by its
    name, ``mag:<compass>``, and the drive's commands (``left_force``/``right_force``
    or ``cmd_vel``). ``robot`` None: the demo robot.

    Raises:
        HilGazeboError: ``drive`` is not one of :data:`DRIVES`.
    """
    robot = robot or demo_robot()
    if drive not in DRIVES:
        raise HilGazeboError(f"drive = {drive!r} is not one of {', '.join(DRIVES)}")
    base = f"/model/{model}"
    gz_in = "GZ_TO_ROS"
    topics = {
        "clock": BridgedTopic("/clock", "/clock", "rosgraph_msgs/msg/Clock", "gz.msgs.Clock", gz_in),
        "odom": BridgedTopic("odom", f"{base}/odometry", "nav_msgs/msg/Odometry", "gz.msgs.Odometry", gz_in),
        "joint_states": BridgedTopic(
            "joint_states", f"{base}/joint_state", "sensor_msgs/msg/JointState", "gz.msgs.Model", gz_in
        ),
    }
    for role, ros in magnetometers(robot).items():
        topics[role] = BridgedTopic(
            ros, f"{base}/{ros}", "sensor_msgs/msg/MagneticField", "gz.msgs.Magnetometer", gz_in
        )
    for name in scanners(robot):
        topics[name] = BridgedTopic(
            f"gz/{name}", f"{base}/{name}/scan", "sensor_msgs/msg/LaserScan", "gz.msgs.LaserScan", gz_in
        )
    if drive == "torque":
        for side, joint in zip(("left", "right"), WHEEL_JOINTS, strict=True):
            topics[f"{side}_force"] = BridgedTopic(
                f"gz/{side}_wheel/cmd_force",
                f"{base}/joint/{joint}/cmd_force",
                "std_msgs/msg/Float64",
                "gz.msgs.Double",
                "ROS_TO_GZ",
            )
    else:
        topics["cmd_vel"] = BridgedTopic(
            "gz/cmd_vel", f"{base}/cmd_vel", "geometry_msgs/msg/Twist", "gz.msgs.Twist", "ROS_TO_GZ"
        )
    return topics


@dataclass(frozen=True)
class ScanSpec:
    """A Gazebo lidar standing in for a sensor: a horizontal fan of rays.

    ``frame`` is the URDF link it is mounted on, ``height`` overrides that link's
    height (the bumper fan sits on ``base_link``).
    """

    frame: str
    samples: int
    min_angle: float
    max_angle: float
    range_min: float
    range_max: float
    update_rate: float
    height: float | None = None


def scan_specs(robot: RobotModel, *, sensor_rate: float) -> dict[str, ScanSpec]:
    """The lidars of :func:`scanners`: the rangers' cones as the native simulator casts them.

    A ranger's lidar sits in its frame (which faces its mount's yaw) and spreads its rays
    over the cone; the bumper fan sits on ``base_link`` across every bumper's sector, at
    twice the rate at which a held switch would open, so a lasting contact keeps it closed.
    """
    specs = {}
    for spec in robot.of_kind("ranger"):
        params = spec.params
        half = math.radians(float(params.get("cone_deg", 30.0))) / 2
        specs[spec.name] = ScanSpec(
            spec.frame_id, int(params.get("rays", 5)), -half, half, SCAN_MIN, SCAN_RANGE, sensor_rate
        )
    bumpers = robot.of_kind("bumper")
    if bumpers:
        body = robot.body
        reach = body.body_radius + body.bumper_travel
        edges = [abs(float(spec.params.get(key, 75.0))) for spec in bumpers for key in ("from_deg", "to_deg")]
        half = math.radians(min(max(edges), 180.0))
        hold = min(float(spec.params.get("hold_s", 0.05)) for spec in bumpers)
        specs[BUMPER_SCAN] = ScanSpec(
            "base_link",
            BUMPER_FAN_RAYS,
            -half,
            half,
            body.body_radius / 2,
            2 * reach,
            max(2.0 / hold, sensor_rate) if hold > 0 else sensor_rate,
            BUMPER_FAN_HEIGHT,
        )
    return specs


@dataclass
class Scan:
    """A lidar's last scan: its rays' bearings (rad, body frame) and ranges (m), and when."""

    bearing: Array
    ranges: Array
    stamp: float


def scan_ranges(ranges: Sequence[float] | Array, range_min: float, range_max: float) -> Array:
    """Ranges (m) within [range_min, range_max]: no return (``+inf``, NaN) is ``range_max``.

    Too close (``-inf``) is ``range_min``.
    """
    raw = np.asarray(ranges, dtype=float)
    raw = np.where(np.isnan(raw) | (raw == math.inf), range_max, raw)
    clipped: Array = np.clip(raw, range_min, range_max)
    return clipped


@dataclass
class AdapterCounters:
    """What the adapter took and refused, for diagnostics."""

    pins: int = 0
    scans: int = 0
    bad_scans: int = 0
    odometry: int = 0
    fields: int = 0
    bad_fields: int = 0
    joint_states: int = 0
    bad_joint_states: int = 0
    samples: int = 0


class GzAdapter:
    """The conversions of the ``gz_adapter`` node for one robot (module docstring)."""

    def __init__(
        self,
        world: WorldConfig,
        *,
        robot: RobotModel | None = None,
        drive: str = "torque",
        seed: int = 0,
        sensor_rate: float = 50.0,
        wheel_period: float = 0.005,
        physics_rate: float = 1000.0,
        pin_timeout: float = 0.1,
    ) -> None:
        """Set up one robot.

        Args:
            world: the world (its light and floor, its start until Gazebo reports a pose).
            robot: the robot's model; None: the demo robot.
            drive: ``torque`` or ``velocity`` (module docstring).
            seed: seed of the sensor noise (robot 0's stream of the native simulator).
            sensor_rate: sensor samples per second of Gazebo time.
            wheel_period: Gazebo time (s) between joint states (torque drive): the
                electrical step.
            physics_rate: steps per second of the motors' own integration (velocity drive).
            pin_timeout: seconds without MCU pins before the motors coast.

        Raises:
            HilGazeboError: a rate, period or timeout that is not positive, or an unknown drive.
        """
        for name, value in (
            ("sensor_rate", sensor_rate),
            ("wheel_period", wheel_period),
            ("physics_rate", physics_rate),
            ("pin_timeout", pin_timeout),
        ):
            if not (math.isfinite(value) and value > 0):
                raise HilGazeboError(f"gz_adapter: {name} = {value!r} must be a positive number")
        if drive not in DRIVES:
            raise HilGazeboError(f"gz_adapter: drive = {drive!r} is not one of {', '.join(DRIVES)}")
        self.world = world
        self.floor = FloorMap(world)
        self.robot = robot or demo_robot()
        self.drive = drive
        self.sensor_rate = sensor_rate
        self.counters = AdapterCounters()
        motor = self.robot.motor
        if drive == "torque":
            # Gazebo integrates the mechanics: only the electrical step is taken here.
            self.motors = MotorBank(motor, (1, 2), dt=wheel_period)
        else:
            self.motors = MotorBank(
                motor, (1, 2), load_inertia=self.robot.load_inertia, dt=1.0 / physics_rate
            )
        self.devices = DeviceSet(self.robot, 1)
        self.devices.reset()
        self.port = McuPort(self, 1, pin_timeout=pin_timeout, now=None)
        self._released = False
        self._motor_time: float | None = None
        self.noise = NoiseBank(seed, [0], uniforms=self.devices.uniforms, normals=self.devices.normals)
        start = world.start
        self.x, self.y, self.yaw = np.array([start.x]), np.array([start.y]), np.array([start.yaw])
        self.v, self.w = np.zeros(1), np.zeros(1)
        self.wheel_angle = np.zeros((1, 2))
        self.magnetic: Array | None = None
        self.scans: dict[str, Scan] = {}
        self._scanners = set(scanners(self.robot))
        self.time = self.now = 0.0
        self._sampled: int | None = None
        self._advanced = 0.0
        self.apply_inputs()

    @property
    def pin_timeout(self) -> float:
        """Seconds without MCU pins before the motors coast."""
        return self.port.pin_timeout

    @property
    def coasting(self) -> bool:
        """Whether the motors coast because the MCU went silent."""
        return self.port.coasting[0]

    # --- the port's target (hil_sim.core.mcu_port.PortTarget) ---------------------------

    def devices_of(self, robot: int) -> tuple[DeviceSet, int]:
        """The robot's devices (there is one robot)."""
        del robot
        return self.devices, 0

    def take_inputs(self, robot: int, signals: Iterable[tuple[str, str, float]]) -> tuple[bool, list[str]]:
        """Store the robot's INPUT signals."""
        del robot
        return self.devices.take(0, signals)

    def apply_inputs(self) -> None:
        """The devices take their inputs; the motors' voltages follow."""
        self.devices.apply()
        fraction, closed = self.devices.drive()
        if self._released:
            fraction, closed = np.zeros_like(fraction), np.zeros_like(closed)
        self._voltage, self._closed = fraction * self.robot.motor.supply_voltage, closed

    def release(self, robot: int, released: bool = True) -> None:
        """Let the motors coast whatever the pins say (or stop doing so)."""
        del robot
        self._released = released

    def driving(self, robot: int) -> bool:
        """Whether any motor driver input is non-zero."""
        del robot
        return self.devices.driving(0)

    # --- MCU side ---------------------------------------------------------------------

    def take_pins(self, signals: list[tuple[str, str, float]], *, mcu_time: float) -> list[str]:
        """The MCU's pins (``hil/signals/to_sim``); returns the names that are no pin of the robot."""
        self.counters.pins += 1
        unknown, _ = self.port.take(0, signals, now=mcu_time)
        self.port.flush()
        return unknown

    def check_silence(self, *, mcu_time: float) -> bool:
        """Let the motors coast when the MCU has been silent for ``pin_timeout``; True when that began now."""
        return bool(self.port.check_silence(mcu_time))

    # --- wheels -----------------------------------------------------------------------

    def wheel_speeds(
        self, names: Sequence[str], velocities: Sequence[float], positions: Sequence[float] = ()
    ) -> tuple[float, float] | None:
        """The wheels' speeds (rad/s, forward positive) from a joint state; None if it lacks them.

        Its positions (when given) are the wheels' angles the encoders count.
        """
        found = dict(zip(names, velocities, strict=False))
        try:
            speeds = tuple(float(found[joint]) for joint in WHEEL_JOINTS)
        except KeyError:
            self.counters.bad_joint_states += 1
            return None
        if not all(math.isfinite(s) for s in speeds):
            self.counters.bad_joint_states += 1
            return None
        self.counters.joint_states += 1
        angles = dict(zip(names, positions, strict=False))
        if all(joint in angles and math.isfinite(angles[joint]) for joint in WHEEL_JOINTS):
            self.wheel_angle = np.array([[float(angles[joint]) for joint in WHEEL_JOINTS]])
        return speeds[LEFT], speeds[RIGHT]

    def wheel_torques(self, speeds: tuple[float, float]) -> tuple[float, float]:
        """Torque drive: the motors' torque at the wheels (N m) for the wheels' present speeds."""
        gear = self.robot.motor.gear_ratio
        self.motors.speed[0] = np.asarray(speeds) * gear
        self.motors.current = self.motors.step_current(self._voltage, self._closed)
        torque = self.motors.torque()[0] * gear
        return float(torque[LEFT]), float(torque[RIGHT])

    def twist(self, now: float) -> tuple[float, float]:
        """Velocity drive: run the motors up to Gazebo time ``now``; forward (m/s) and turn (rad/s) speed."""
        if self._motor_time is None or now < self._motor_time:
            self._motor_time = now  # the first tick, or Gazebo was reset: nothing to integrate
        steps = round(min(now - self._motor_time, MAX_CATCH_UP_S) / self.motors.dt)
        for _ in range(steps):
            self.motors.step(self._voltage, self._closed)
        self._motor_time = now
        wheel = self.motors.speed[0] / self.robot.motor.gear_ratio
        radius, base = self.robot.body.wheel_radius, self.robot.body.wheel_base
        return (
            float(radius * (wheel[LEFT] + wheel[RIGHT]) / 2),
            float(radius * (wheel[RIGHT] - wheel[LEFT]) / base),
        )

    # --- Gazebo's sensors -------------------------------------------------------------

    def _clock(self, stamp: float) -> None:
        self.now = max(self.now, stamp)
        if self.devices.joints and self.now > self._advanced:
            self.devices.advance(min(self.now - self._advanced, MAX_CATCH_UP_S))
        self._advanced = self.now

    def take_odometry(
        self, x: float, y: float, yaw: float, *, stamp: float, v: float = 0.0, w: float = 0.0
    ) -> None:
        """The robot's pose in the world and its forward and turn speed (Gazebo's OdometryPublisher)."""
        if not all(math.isfinite(value) for value in (x, y, yaw, stamp, v, w)):
            return
        self.counters.odometry += 1
        self.x[0], self.y[0], self.yaw[0], self.v[0], self.w[0] = x, y, yaw, v, w
        self._clock(stamp)

    def take_field(self, field: tuple[float, float, float], *, stamp: float) -> None:
        """Gazebo's magnetometer: the field (T) in the compass's frame (x forward, y left, z up)."""
        if not all(math.isfinite(v) for v in (*field, stamp)):
            self.counters.bad_fields += 1
            return
        self.counters.fields += 1
        self.magnetic = np.asarray(field, dtype=float)
        self._clock(stamp)

    def take_scan(
        self,
        name: str,
        ranges: Sequence[float] | Array,
        *,
        angle_min: float,
        angle_increment: float,
        range_min: float,
        range_max: float,
        stamp: float,
    ) -> bool:
        """A lidar's scan (a ranger's, or the bumper fan); False (counted) if it is malformed."""
        raw = np.asarray(ranges, dtype=float)
        numbers = (angle_min, angle_increment, range_min, range_max, stamp)
        if (
            name not in self._scanners
            or raw.ndim != 1
            or not raw.size
            or not all(map(math.isfinite, numbers))
        ):
            self.counters.bad_scans += 1
            return False
        if not 0 <= range_min < range_max:
            self.counters.bad_scans += 1
            return False
        self.counters.scans += 1
        along = angle_min + angle_increment * np.arange(raw.size)
        bearing = np.asarray((along + math.pi) % (2 * math.pi) - math.pi, dtype=np.float64)
        scan = Scan(bearing, scan_ranges(raw, range_min, range_max), stamp)
        self.scans[name] = scan
        self._clock(stamp)
        if name == BUMPER_SCAN:
            body = self.robot.body
            touching = scan.ranges <= body.body_radius + body.bumper_travel
            bearings = scan.bearing[touching]
            self.devices.touch(np.zeros(len(bearings), dtype=np.intp), bearings, scan.stamp)
        return True

    # --- the Scene the devices see (hil_sim.core.devices.base.Scene) ---------------------

    def nearest(self, names: Sequence[str], rays: Rays, first: IndexArray, max_range: float) -> Array:
        """Each ranger's nearest return, from its lidar's last scan (nothing yet: out of range)."""
        del rays, first
        nearest = np.full((1, len(names)), SCAN_RANGE)
        for k, name in enumerate(names):
            scan = self.scans.get(name)
            if scan is not None:
                nearest[0, k] = float(scan.ranges.min())
        clipped: Array = np.minimum(nearest, max_range)
        return clipped

    def field(self, yaw: Array) -> Array | None:
        """Gazebo's magnetometer field (in the compass's frame already); None before the first."""
        del yaw
        return None if self.magnetic is None else self.magnetic[None, :]

    def _sample(self) -> None:
        """One sensor update: the native simulator's device models on Gazebo's values."""
        uniform, normal = self.noise.draw()
        self.counters.samples += 1
        self.time = self.now
        self.devices.sample(self, uniform, normal)

    def signals(self, robot: int = 0) -> list[tuple[str, str, float]]:
        """The OUTPUT signals at Gazebo's present time, as the simulator's.

        The sensors are sampled anew once per ``1/sensor_rate`` of Gazebo time.
        """
        del robot
        period = math.floor(self.now * self.sensor_rate + 1e-9)
        if period != self._sampled:
            self._sampled = period
            self._sample()
        self.time = self.now
        self.devices.refresh(self)
        return self.devices.signals(0)
