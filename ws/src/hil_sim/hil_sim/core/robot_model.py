"""The robot the world simulator simulates: its body, its motors and its devices.

A :class:`RobotModel` is everything the simulation needs to know about one robot;
nothing in the simulator names a particular robot's devices.
:func:`robot_model_from_profile` builds one from a robot profile (robot.yaml, the
device library); :func:`demo_robot` is the shipped demo robot's. The constructor's
contract:

``RobotModel(name, body=Body(...), motor=MotorParams(...), devices=(DeviceSpec(...), ...), urdf="")``

* ``body`` (:class:`Body`): the differential-drive chassis: wheel radius and width, the
  wheel base (track), the body disc (radius, from ``clearance`` to ``height`` above the
  floor: the native engine's collision disc and the bumpers' contacts), masses (total,
  per wheel, caster) and the body's centre of mass, the ball caster, and
  ``bumper_travel`` (how far before touching a contact is reported).
* ``motor`` (:class:`~hil_sim.core.motor.MotorParams`): both wheels' DC gearmotors.
* ``devices``: :class:`DeviceSpec` each: a unique ``name`` (the signal link's device
  name, e.g. ``sonar_left``), its model ``kind``, its ``mount`` (x, y, z, yaw in the
  body frame; ``servo``: the servo device it rides on, its pose then given with the
  servo at the centre of its range), ``params`` (the kind's, see below), ``wheel``
  (``left``/``right``: motor drivers and encoders), ``ties`` (inputs held at a fixed
  value instead of coming from the MCU, e.g. an L298's enable jumpered high:
  ``{"enable": 1024}``), and optionally its TF ``frame`` (default ``<name>_link``) and
  ``topic`` (default per kind: ``range/<name>``...).
* ``urdf``: a URDF file of this robot for MuJoCo and rviz; empty: generated from the
  model (:mod:`hil_sim.core.robot_urdf`).

Every wheel is driven by exactly one driver device. The kinds and their parameters
(:data:`hil_sim.core.devices.KINDS`; each kind's module says more):

* ``ranger``: beam (ultrasonic | ir), cone_deg, rays, min_range_cm, max_range_cm,
  sigma_cm (ultrasonic), distance_cm + voltage_v + error_probability + error_bound
  (ir: the Sharp table). Gives ``distance`` (ultrasonic, cm) or ``voltage`` (ir, V).
* ``bumper``: from_deg, to_deg (contact bearing sector), hold_s. Gives ``pressed``.
* ``light``: angle_deg + response + intensity + error_bound + exact_probability (the
  GL5506 table). Gives ``reading`` (ADC counts).
* ``compass``: sigma_t. Gives ``heading`` (deg).
* ``encoder`` (wheel): counts_per_rev, gear_ratio, quadrature (1: x4), direction.
  Gives ``position`` (counts, 16-bit).
* ``line``: output (analog | digital), spot_mm, counts_black, counts_white,
  sigma_counts, threshold. Gives ``reading`` (analog) or ``detected`` (digital).
* ``imu``: accel_noise_ug, gyro_noise_mdps, bandwidth_hz, accel_bias_{x,y,z}_mg,
  gyro_bias_{x,y,z}_dps, temp_c. Gives ``ax ay az`` (m/s^2), ``gx gy gz`` (rad/s), ``temp``.
* ``servo``: min_pulse_us, max_pulse_us, range_deg, speed_deg_s. Takes ``pulse_us``.
* motor drivers (wheel; each has ``direction``): ``l298n`` (in_full_scale; takes
  ``enable``, ``a``, ``b``), ``tb6612fng`` (``pwm``, ``in1``, ``in2``, ``stby``),
  ``drv8833`` (``in1``, ``in2``), ``l9110s`` (``ia``, ``ib``), ``pwm_dir`` (``pwm``,
  ``dir``), ``cr_servo`` (centre_us, span_us, deadband_us; ``pulse_us``).
* ``led``: takes ``active``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from hil_devices.core.devices import DeviceConfig
from hil_devices.core.profile import RobotProfile, load_profile, model_devices
from hil_sim.core.motor import MotorParams
from hil_sim.errors import HilSimError

#: Wheel names, in the order of every (N, 2) wheel array.
WHEELS = ("left", "right")
LEFT, RIGHT = 0, 1


@dataclass(frozen=True)
class Mount:
    """Where a device sits on the body (m, rad; x forward, y left, z up), and on what."""

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    yaw: float = 0.0
    #: The servo device it rides on (empty: the body).
    servo: str = ""


@dataclass(frozen=True)
class DeviceSpec:
    """One device of a robot (see the module docstring)."""

    name: str
    kind: str
    mount: Mount = Mount()
    params: Mapping[str, Any] = field(default_factory=dict)
    wheel: str = ""
    ties: Mapping[str, float] = field(default_factory=dict)
    frame: str = ""
    topic: str = ""

    @property
    def frame_id(self) -> str:
        """Its TF frame (``<name>_link`` unless given)."""
        return self.frame or f"{self.name}_link"


@dataclass(frozen=True)
class Body:
    """A differential-drive chassis: two wheels, a ball caster, a body disc (SI units)."""

    wheel_radius: float = 0.033
    wheel_base: float = 0.14
    wheel_width: float = 0.02
    body_radius: float = 0.09
    #: The body disc spans these heights above the floor.
    clearance: float = 0.03
    height: float = 0.06
    #: The whole robot's mass, and of each wheel and the caster (the body has the rest).
    mass: float = 0.8
    wheel_mass: float = 0.07
    caster_mass: float = 0.02
    #: The body's centre of mass ahead of the axle (negative: behind it, over the caster).
    com_x: float = -0.03
    caster_x: float = -0.07
    caster_radius: float = 0.013
    #: Contacts are reported this far before the body touches (the bumper switches' travel).
    bumper_travel: float = 0.005

    def __post_init__(self) -> None:
        for name in (
            "wheel_radius",
            "wheel_base",
            "wheel_width",
            "body_radius",
            "height",
            "mass",
            "wheel_mass",
            "caster_mass",
            "caster_radius",
            "bumper_travel",
        ):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise HilSimError(f"robot body: {name} = {value!r} must be a positive number")
        for name in ("clearance", "com_x", "caster_x"):
            if not math.isfinite(getattr(self, name)):
                raise HilSimError(f"robot body: {name} = {getattr(self, name)!r} must be a finite number")
        if not 0 <= self.clearance < self.height:
            raise HilSimError(f"robot body: clearance = {self.clearance!r} must be >= 0 and below height")
        if self.mass <= 2 * self.wheel_mass + self.caster_mass:
            raise HilSimError(f"robot body: mass = {self.mass!r} must exceed the wheels' and the caster's")

    @property
    def body_mass(self) -> float:
        """The body disc's share of the mass."""
        return self.mass - 2 * self.wheel_mass - self.caster_mass


@dataclass(frozen=True)
class RobotModel:
    """A robot: body, motors, devices (module docstring).

    Raises:
        HilSimError: a device's kind, name, wheel, mount, ties or parameters are wrong,
            or a wheel has no driver or two; names the robot and the device.
    """

    name: str
    body: Body = field(default_factory=Body)
    motor: MotorParams = field(default_factory=MotorParams)
    devices: tuple[DeviceSpec, ...] = ()
    urdf: str = ""

    def __post_init__(self) -> None:
        _check_names(self)

    @property
    def load_inertia(self) -> float:
        """Robot mass reflected to each motor shaft (half the mass per wheel)."""
        return 0.5 * self.body.mass * self.body.wheel_radius**2 / self.motor.gear_ratio**2

    @property
    def max_wheel_speed(self) -> float:
        """Analytic no-load wheel speed at full supply (rad/s)."""
        return self.motor.steady_speed(self.motor.supply_voltage) / self.motor.gear_ratio

    def device(self, name: str) -> DeviceSpec:
        """The device called ``name``.

        Raises:
            HilSimError: no such device.
        """
        for spec in self.devices:
            if spec.name == name:
                return spec
        raise HilSimError(f"robot {self.name}: no device {name!r}")

    def of_kind(self, *kinds: str) -> tuple[DeviceSpec, ...]:
        """The devices of these kinds, in order."""
        return tuple(spec for spec in self.devices if spec.kind in kinds)


def robot_model_from_profile(profile: RobotProfile) -> RobotModel:
    """The robot model of a robot profile (:mod:`hil_devices.core.profile`).

    Each device whose library type has a ``model`` becomes a :class:`DeviceSpec`
    (:func:`~hil_devices.core.profile.model_devices`: its kind, pose, the servo it rides
    on, its kind's parameters from the type's table, model and the profile, its wheel,
    its tied inputs, its frame and topic); the body's ``track`` is the wheel base, its
    footprint's radius the body's radius; ``body.motor`` goes over the motor model's
    defaults. The kinds' own rules are :func:`hil_sim.core.devices.check_model`'s.

    Raises:
        HilSimError: a body or motor value the model refuses; names the profile's file
            and the field.
    """
    where = f"{profile.source}: body"
    body = profile.body
    try:
        chassis = Body(
            wheel_radius=body.wheel_radius,
            wheel_base=body.track,
            body_radius=body.footprint_radius,
            height=body.height,
            mass=body.mass,
            caster_x=body.caster.x,
            caster_radius=body.caster.radius,
        )
    except HilSimError as exc:
        raise HilSimError(f"{where}: {exc}") from None
    known = [f.name for f in fields(MotorParams)]
    unknown = sorted(set(body.motor) - set(known))
    if unknown:
        raise HilSimError(f"{where}.motor.{unknown[0]}: not a motor parameter (known: {', '.join(known)})")
    try:
        motor = MotorParams(**body.motor)
    except HilSimError as exc:
        raise HilSimError(f"{where}.{exc}") from None
    devices = tuple(
        DeviceSpec(
            device.name,
            device.kind,
            Mount(device.pose.x, device.pose.y, device.pose.z, device.pose.yaw, servo=device.mount),
            dict(device.params),
            wheel=device.wheel,
            ties=dict(device.ties),
            frame=device.frame,
            topic=device.topic,
        )
        for device in model_devices(profile)
    )
    return RobotModel(profile.name, body=chassis, motor=motor, devices=devices)


def demo_robot(library: Mapping[str, DeviceConfig] | None = None) -> RobotModel:
    """The demo robot: its profile (the shipped robot ``demo``) as a model.

    Two L298 channels (PWM on enable, levels on A/B), an LED, two front bumpers, an
    HC-SR04 and a Sharp IR ranger ahead, four photoresistors on a mast (front, left,
    back, right) and an HMC5883L compass (``hil_robots/robots/demo/robot.yaml``).

    Args:
        library: the device library (default: hil_devices').

    Raises:
        HilError: the profile does not load over ``library`` (naming the field).
    """
    return robot_model_from_profile(load_profile("demo", library=library))


def _check_names(model: RobotModel) -> None:
    """What a model is without its kinds: device names unique identifiers, mounts finite.

    The kinds' own rules (which kinds exist, wheels, ties, parameters, servos) are
    :func:`hil_sim.core.devices.check_model`'s.
    """
    seen: set[str] = set()
    for index, spec in enumerate(model.devices):
        at = f"robot {model.name}: devices[{index}]"
        if not spec.name.isidentifier():
            raise HilSimError(f"{at}: name {spec.name!r} must be an identifier (letters, digits, _)")
        if spec.name in seen:
            raise HilSimError(f"{at}: name {spec.name!r} is used twice")
        seen.add(spec.name)
        pose = (spec.mount.x, spec.mount.y, spec.mount.z, spec.mount.yaw)
        if not all(math.isfinite(v) for v in pose):
            raise HilSimError(f"{at} ({spec.name}): mount: {pose} must be finite numbers")
