"""Gazebo (gz sim) in place of the simulator: MCU pins to wheel commands, Gazebo's sensors to signals.

The ``gz_adapter`` node stands where the ``sim`` node stands in the HIL chain: it
takes the MCU's pins from ``hil/signals/to_sim`` and answers on
``hil/signals/from_sim`` with the same signals, names and units as
:func:`~hil_sim.core.signals.sensor_signals`, while Gazebo moves the robot. This
module is its logic, without ROS; the node only converts messages.

* Wheels, ``drive`` ``torque`` (the default): the robot's wheel joints are driven by
  Gazebo's ApplyJointForce systems. Each time Gazebo reports the wheel speeds
  (``joint_states``), the motors' electrical half (:meth:`MotorBank.step_current`: the
  L298 table of the pins, ``L di/dt = V - R i - Ke w`` at the measured speed) gives the
  current, and ``kt * current * gear`` is the torque sent back. The mechanical half is
  Gazebo's: the exported robot carries the rotors' inertia and the gearbox's viscous
  and Coulomb friction on its wheel joints (:mod:`hil_bringup.core.gazebo`), so a wheel
  against a wall stalls its motor as it would.
* Wheels, ``drive`` ``velocity``: Gazebo's DiffDrive system takes ``cmd_vel``; the
  motors run here in full (:class:`MotorBank` with the robot's mass reflected, as in
  the native engine) on Gazebo's clock, and their wheel speeds become the twist. A
  fallback: Gazebo then moves the robot kinematically, so a blocked robot's motors do
  not stall.
* Sensors, every ``1/sensor_rate`` of Gazebo time, with the native simulator's error
  models and noise streams (:class:`NoiseBank`, the same draws per update): HC-SR04
  and Sharp IR from Gazebo lidars spread over their cones (nearest return), the front
  bumper's two switches from a short lidar fan (a return within ``body_radius +
  bumper_travel`` in a switch's sector closes it for ``bumper_hold``), the compass from
  Gazebo's magnetometer (heading of the body-frame field plus the HMC5883L noise), and
  the four photoresistors from the robot's pose (Gazebo's odometry) and the world's
  light: Gazebo has no photoresistor, so the GL5506 model of the native simulator reads
  the light from where the robot is.
* A lidar reports no return as ``+inf`` and one closer than its minimum as ``-inf``
  (Gazebo's convention, kept by ros_gz_bridge): nothing in range, and as close as the
  sensor can tell.
* MCU silence: no pins for ``pin_timeout`` (on the MCU's clock) and the motors coast,
  as in the simulator.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hil_sim.core.motor import L298, DriverTable, MotorBank, bridge_state, bridge_voltage
from hil_sim.core.noise import NoiseBank
from hil_sim.core.sensors import (
    EarthField,
    PhotoresistorModel,
    SharpIrModel,
    bumper_sectors,
    heading_deg,
    light_readings,
    ultrasonic_cm,
)
from hil_sim.core.signals import PinState
from hil_sim.core.simulation import (
    LEFT,
    NORMALS_PER_UPDATE,
    RIGHT,
    UNIFORMS_PER_UPDATE,
    RobotParams,
)
from hil_sim.core.world import WorldConfig
from hil_sim.errors import HilSimError

Array = npt.NDArray[np.float64]

#: The robot's model name in Gazebo (its topics are under ``/model/<name>/``).
MODEL_NAME = "hil_robot"
#: How the adapter drives the wheels (module docstring).
DRIVES = ("torque", "velocity")
#: The lidars standing in for sensors, by name (also in their topic names).
SCANNERS = ("ultrasonic", "ir", "bumper")
#: The wheel joints of the robot's URDF, left then right.
WHEEL_JOINTS = ("left_wheel_joint", "right_wheel_joint")
#: Farthest a range lidar reports (m): as far as the native simulator casts its rays.
SCAN_RANGE = 2.5
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


def bridged_topics(drive: str, *, model: str = MODEL_NAME) -> dict[str, BridgedTopic]:
    """What ros_gz_bridge carries for the adapter, by role; the export writes the same names.

    Raises:
        HilSimError: ``drive`` is not one of :data:`DRIVES`.
    """
    if drive not in DRIVES:
        raise HilSimError(f"drive = {drive!r} is not one of {', '.join(DRIVES)}")
    base = f"/model/{model}"
    gz_in = "GZ_TO_ROS"
    topics = {
        "clock": BridgedTopic("/clock", "/clock", "rosgraph_msgs/msg/Clock", "gz.msgs.Clock", gz_in),
        "odom": BridgedTopic("odom", f"{base}/odometry", "nav_msgs/msg/Odometry", "gz.msgs.Odometry", gz_in),
        "joint_states": BridgedTopic(
            "joint_states", f"{base}/joint_state", "sensor_msgs/msg/JointState", "gz.msgs.Model", gz_in
        ),
        "mag": BridgedTopic(
            "mag", f"{base}/mag", "sensor_msgs/msg/MagneticField", "gz.msgs.Magnetometer", gz_in
        ),
    }
    for name in SCANNERS:
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


def scan_specs(robot: RobotParams, *, sensor_rate: float) -> dict[str, ScanSpec]:
    """The lidars of :data:`SCANNERS`: the rangers' cones as the native simulator casts them.

    The bumper fan runs at twice the rate at which a held switch would open, so a
    lasting contact keeps it closed.
    """
    specs = {}
    for name, ranger, low in (("ultrasonic", robot.ultrasonic, 0.02), ("ir", robot.ir, 0.02)):
        specs[name] = ScanSpec(
            f"{name}_link",
            ranger.rays,
            ranger.yaw - ranger.half_angle,
            ranger.yaw + ranger.half_angle,
            low,
            SCAN_RANGE,
            sensor_rate,
        )
    reach = robot.body_radius + robot.bumper_travel
    specs["bumper"] = ScanSpec(
        "base_link",
        BUMPER_FAN_RAYS,
        -robot.bumper_half_angle,
        robot.bumper_half_angle,
        robot.body_radius / 2,
        2 * reach,
        max(2.0 / robot.bumper_hold, sensor_rate),
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
class Readings:
    """The last sensor sample, as the MCU's pins see it."""

    ultrasonic_cm: float
    ir_voltage: float
    light: Array  # (4,) ADC counts, front, left, back, right
    heading_deg: float


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
        ir: SharpIrModel,
        photoresistor: PhotoresistorModel,
        robot: RobotParams | None = None,
        driver: DriverTable = L298,
        drive: str = "torque",
        seed: int = 0,
        sensor_rate: float = 50.0,
        wheel_period: float = 0.005,
        physics_rate: float = 1000.0,
        pin_timeout: float = 0.1,
        earth: EarthField | None = None,
    ) -> None:
        """Set up one robot.

        Args:
            world: the world (its light, its start until Gazebo reports a pose).
            ir: the Sharp IR model (sharp_ir.json).
            photoresistor: the GL5506 model (photoresistor.json).
            robot: the robot's parameters; None: the demo robot.
            driver: the motor driver's truth table (dc_motor.json).
            drive: ``torque`` or ``velocity`` (module docstring).
            seed: seed of the sensor noise (robot 0's stream of the native simulator).
            sensor_rate: sensor samples per second of Gazebo time.
            wheel_period: Gazebo time (s) between joint states (torque drive): the
                electrical step.
            physics_rate: steps per second of the motors' own integration (velocity drive).
            pin_timeout: seconds without MCU pins before the motors coast.
            earth: the field the compass expects; only its noise is used here (Gazebo
                supplies the field).

        Raises:
            HilSimError: a rate, period or timeout that is not positive, or an unknown drive.
        """
        for name, value in (
            ("sensor_rate", sensor_rate),
            ("wheel_period", wheel_period),
            ("physics_rate", physics_rate),
            ("pin_timeout", pin_timeout),
        ):
            if not (math.isfinite(value) and value > 0):
                raise HilSimError(f"gz_adapter: {name} = {value!r} must be a positive number")
        if drive not in DRIVES:
            raise HilSimError(f"gz_adapter: drive = {drive!r} is not one of {', '.join(DRIVES)}")
        self.world = world
        self.robot = robot or RobotParams()
        self.ir = ir
        self.photoresistor = photoresistor
        self.driver = driver
        self.drive = drive
        self.sensor_rate = sensor_rate
        self.pin_timeout = pin_timeout
        self.earth = earth or EarthField()
        self.counters = AdapterCounters()
        motor = self.robot.motor
        if drive == "torque":
            # Gazebo integrates the mechanics: only the electrical step is taken here.
            self.motors = MotorBank(motor, (1, 2), dt=wheel_period)
        else:
            self.motors = MotorBank(
                motor, (1, 2), load_inertia=self.robot.load_inertia, dt=1.0 / physics_rate
            )
        self.pins = PinState.zeros(1)
        self.coasting = False
        self._pins_at: float | None = None
        self._motor_time: float | None = None
        self.noise = NoiseBank(seed, [0], uniforms=UNIFORMS_PER_UPDATE, normals=NORMALS_PER_UPDATE)
        start = world.start
        self.pose = (start.x, start.y, start.yaw)
        self.field: Array | None = None
        self.scans: dict[str, Scan] = {}
        self.now = 0.0
        self._sampled: int | None = None
        self._bumper_until = np.full(2, -math.inf)
        # Before the first sample: nothing in range, no light (the simulator's start).
        self.readings = Readings(200.0, float(ir.voltage(np.array(SCAN_RANGE * 100.0))), np.zeros(4), 0.0)

    # --- MCU side ---------------------------------------------------------------------

    def take_pins(self, signals: list[tuple[str, str, float]], *, mcu_time: float) -> list[str]:
        """The MCU's pins (``hil/signals/to_sim``); returns the names that are no pin of the robot."""
        self.counters.pins += 1
        self._pins_at = mcu_time
        self.coasting = False
        return self.pins.update(0, signals)

    def check_silence(self, *, mcu_time: float) -> bool:
        """Let the motors coast when the MCU has been silent for ``pin_timeout``; True when that began now."""
        silent = self._pins_at is None or mcu_time - self._pins_at > self.pin_timeout
        if silent and not self.coasting and self.pins.motors.any():
            self.coasting = True
            self.pins.motors[:] = 0.0
            return True
        return False

    def _voltage(self) -> tuple[Array, npt.NDArray[np.bool_]]:
        motors = self.pins.motors
        enable, a, b = motors[..., 0], motors[..., 1], motors[..., 2]
        state = bridge_state(enable, a, b, self.driver)
        return bridge_voltage(state, enable, self.robot.motor.supply_voltage), state != 0

    # --- wheels -----------------------------------------------------------------------

    def wheel_speeds(self, names: Sequence[str], velocities: Sequence[float]) -> tuple[float, float] | None:
        """The wheels' speeds (rad/s, forward positive) from a joint state; None if it lacks them."""
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
        return speeds[LEFT], speeds[RIGHT]

    def wheel_torques(self, speeds: tuple[float, float]) -> tuple[float, float]:
        """Torque drive: the motors' torque at the wheels (N m) for the wheels' present speeds."""
        gear = self.robot.motor.gear_ratio
        self.motors.speed[0] = np.asarray(speeds) * gear
        voltage, closed = self._voltage()
        self.motors.current = self.motors.step_current(voltage, closed)
        torque = self.motors.torque()[0] * gear
        return float(torque[LEFT]), float(torque[RIGHT])

    def twist(self, now: float) -> tuple[float, float]:
        """Velocity drive: run the motors up to Gazebo time ``now``; forward (m/s) and turn (rad/s) speed."""
        if self._motor_time is None or now < self._motor_time:
            self._motor_time = now  # the first tick, or Gazebo was reset: nothing to integrate
        steps = round(min(now - self._motor_time, MAX_CATCH_UP_S) / self.motors.dt)
        voltage, closed = self._voltage()
        for _ in range(steps):
            self.motors.step(voltage, closed)
        self._motor_time = now
        wheel = self.motors.speed[0] / self.robot.motor.gear_ratio
        radius, base = self.robot.wheel_radius, self.robot.wheel_base
        return (
            float(radius * (wheel[LEFT] + wheel[RIGHT]) / 2),
            float(radius * (wheel[RIGHT] - wheel[LEFT]) / base),
        )

    # --- Gazebo's sensors -------------------------------------------------------------

    def _clock(self, stamp: float) -> None:
        self.now = max(self.now, stamp)

    def take_odometry(self, x: float, y: float, yaw: float, *, stamp: float) -> None:
        """The robot's pose in the world (Gazebo's OdometryPublisher)."""
        if not all(math.isfinite(v) for v in (x, y, yaw, stamp)):
            return
        self.counters.odometry += 1
        self.pose = (x, y, yaw)
        self._clock(stamp)

    def take_field(self, field: tuple[float, float, float], *, stamp: float) -> None:
        """Gazebo's magnetometer: the field (T) in the body frame (x forward, y left, z up)."""
        if not all(math.isfinite(v) for v in (*field, stamp)):
            self.counters.bad_fields += 1
            return
        self.counters.fields += 1
        self.field = np.asarray(field, dtype=float)
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
        """A lidar's scan (``ultrasonic``, ``ir``, ``bumper``); False (counted) if it is malformed."""
        raw = np.asarray(ranges, dtype=float)
        numbers = (angle_min, angle_increment, range_min, range_max, stamp)
        if name not in SCANNERS or raw.ndim != 1 or not raw.size or not all(map(math.isfinite, numbers)):
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
        if name == "bumper":
            self._press_bumpers(scan)
        return True

    def _press_bumpers(self, scan: Scan) -> None:
        robot = self.robot
        touching = scan.ranges <= robot.body_radius + robot.bumper_travel
        left, right = bumper_sectors(
            scan.bearing[touching], half_angle=robot.bumper_half_angle, overlap=robot.bumper_overlap
        )
        until = scan.stamp + robot.bumper_hold
        if left.any():
            self._bumper_until[LEFT] = until
        if right.any():
            self._bumper_until[RIGHT] = until

    def _nearest(self, name: str) -> float:
        scan = self.scans.get(name)
        return float(scan.ranges.min()) if scan is not None else SCAN_RANGE

    def _sample(self) -> None:
        """One sensor update: the native simulator's error models on Gazebo's values."""
        robot = self.robot
        uniform, normal = self.noise.draw()
        self.counters.samples += 1
        echo = np.array([self._nearest("ultrasonic")])
        readings = self.readings
        readings.ultrasonic_cm = float(
            ultrasonic_cm(echo, normal[:, 0], sigma_cm=robot.ultrasonic_sigma_cm)[0]
        )
        ir_cm = np.array([self._nearest("ir") * 100.0])
        readings.ir_voltage = float(
            self.ir.with_error(self.ir.voltage(ir_cm), uniform[:, 0], uniform[:, 1])[0]
        )
        x, y, yaw = self.pose
        light = self.world.light
        readings.light = light_readings(
            self.photoresistor,
            (np.array([x]), np.array([y]), np.array([yaw])),
            mounts=np.asarray(robot.light_mounts),
            radius=robot.light_radius,
            light=(light.x, light.y, light.reference_distance),
            picks=uniform[:, 2:].reshape(1, len(robot.light_mounts), 3),
        )[0]
        if self.field is not None:
            field = self.field[None, :] + robot.magnetometer_sigma * normal[:, 1:4]
            readings.heading_deg = float(heading_deg(field)[0])

    def signals(self) -> list[tuple[str, str, float]]:
        """The OUTPUT signals at Gazebo's present time, as the simulator's :func:`sensor_signals`.

        The sensors are sampled anew once per ``1/sensor_rate`` of Gazebo time.
        """
        period = math.floor(self.now * self.sensor_rate + 1e-9)
        if period != self._sampled:
            self._sampled = period
            self._sample()
        readings = self.readings
        pressed = self._bumper_until > self.now
        signals = [
            ("bumper_left", "pressed", float(pressed[LEFT])),
            ("bumper_right", "pressed", float(pressed[RIGHT])),
            ("ultrasonic", "distance", readings.ultrasonic_cm),
            ("ir", "voltage", readings.ir_voltage),
        ]
        signals += [(f"light_{k}", "reading", float(value)) for k, value in enumerate(readings.light)]
        signals.append(("compass", "heading", readings.heading_deg))
        return signals
