"""Motion cueing: the classical washout filter that turns a vehicle's motion into platform poses.

A motion platform moves a few centimetres and tilts a few degrees; the vehicle it
stands for drives away. The classical washout filter (Reid and Nahon) reproduces
what a rider feels (the specific force and the rotation rates) in three channels:

* Translation: the vehicle's acceleration, scaled, drives the platform's
  acceleration through a third-order high-pass. A step in acceleration gives the
  full (scaled) onset at once, which then washes out while the platform returns
  to neutral: position = ``s / ((s^2 + 2 zeta w s + w^2)(s + w_b))`` times the
  acceleration, whose final value for a step is zero.
* Tilt coordination: a sustained acceleration is felt by tilting the platform so
  that gravity supplies it. The scaled acceleration through a second-order
  low-pass sets the target tilt (``pitch = -asin(a_x / g)``, ``roll =
  asin(a_y / g)``: a forward acceleration tilts the nose up, REP-103); the tilt
  moves towards it no faster than a rate limit (rotation below the rider's
  perception threshold, about 3 deg/s).
* Rotation: the vehicle's roll, pitch and yaw rates, scaled, through a
  second-order high-pass become the platform's angular rates, so a constant turn
  rate gives an onset that washes back to neutral: angle = ``s / (s^2 + 2 zeta w
  s + w^2)`` times the rate.

Roll and pitch are the sum of tilt and rotation. Finally every pose is limited:
each axis to ``limit_fraction`` of the platform's DOF limits, then, if an
actuator would leave ``[min_length + length_margin, max_length - length_margin]``,
the whole pose is scaled towards neutral until it does not. The check runs on the
float32 values the datagram will carry, with the platform's own inverse
kinematics, so a pose from :meth:`MotionCueing.step` is never refused as
OUT_OF_RANGE. This is the classical filter without its inertial-frame
transformation (the small-angle case, which is what a platform can show anyway).

The filters are continuous transfer functions discretised with the bilinear
(Tustin) transform at the fixed period, which keeps them stable and their DC gains
exact. :class:`AccelerationEstimator` derives the inputs from odometry: the
body-frame acceleration of successive body-frame twists, ``dv/dt + w x v``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

from hil_platform.core.motion_platform import DOF_AXES, PlatformGeometry, actuator_lengths
from hil_platform.errors import HilPlatformError

#: Standard gravity (m/s^2).
GRAVITY = 9.80665

FloatArray = npt.NDArray[np.float64]

_ROLL, _PITCH, _HEAVE, _SURGE, _YAW, _LATERAL = range(6)


@dataclass(frozen=True)
class CueingConfig:
    """Tuning of the washout filter; frequencies in rad/s.

    Attributes:
        period: Seconds between two steps (the setpoint rate).
        translation_scale: Fraction of the vehicle's acceleration given as onset.
        translation_frequency: Natural frequency of the translational high-pass.
        translation_damping: Its damping ratio.
        translation_washout: Corner of the extra first-order high-pass that brings
            the platform back to neutral under a sustained acceleration.
        tilt_scale: Fraction of a sustained acceleration given as tilt.
        tilt_frequency: Natural frequency of the tilt low-pass.
        tilt_damping: Its damping ratio.
        tilt_rate_limit: Fastest tilt change (rad/s).
        rotation_scale: Fraction of the vehicle's angular rates given as onset.
        rotation_frequency: Natural frequency of the rotational high-pass.
        rotation_damping: Its damping ratio.
        max_acceleration: Inputs are clipped to this magnitude per axis (m/s^2).
        max_angular_rate: Inputs are clipped to this magnitude per axis (rad/s).
        limit_fraction: Fraction of the platform's DOF limits the cue may use.
        length_margin: Distance kept from the actuators' length limits (m).

    Raises:
        HilPlatformError: If a field is out of range; the message names it.
    """

    period: float = 0.02
    translation_scale: float = 0.5
    translation_frequency: float = 6.0
    translation_damping: float = 1.0
    translation_washout: float = 1.0
    tilt_scale: float = 1.0
    tilt_frequency: float = 3.0
    tilt_damping: float = 1.0
    tilt_rate_limit: float = 0.0524  # 3 deg/s
    rotation_scale: float = 0.5
    rotation_frequency: float = 2.0
    rotation_damping: float = 1.0
    max_acceleration: float = 20.0
    max_angular_rate: float = 10.0
    limit_fraction: float = 0.9
    length_margin: float = 0.002

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise HilPlatformError(
                    f"CueingConfig: {field.name} must be a finite number >= 0, got {value!r}"
                )
        positive = (
            "period",
            "translation_frequency",
            "translation_damping",
            "translation_washout",
            "tilt_frequency",
            "tilt_damping",
            "rotation_frequency",
            "rotation_damping",
        )
        for name in positive:
            if getattr(self, name) == 0:
                raise HilPlatformError(f"CueingConfig: {name} must be > 0")
        if self.limit_fraction > 1:
            raise HilPlatformError(
                f"CueingConfig: limit_fraction must be in [0, 1], got {self.limit_fraction}"
            )


@dataclass(frozen=True)
class Cue:
    """One step of the washout filter.

    Attributes:
        pose: Roll, pitch, heave, surge, yaw, lateral (rad, m; the DOF wire order),
            float32 values within every limit: send it as it is.
        acceleration: Surge, lateral, heave acceleration the translational channel
            asks of the platform (m/s^2), before limits.
        tilt: Roll and pitch of the tilt coordination (rad), before limits.
        limited: Whether the limits changed the pose.
    """

    pose: tuple[float, ...]
    acceleration: tuple[float, float, float]
    tilt: tuple[float, float]
    limited: bool


class _Lti:
    """Transfer functions sharing one denominator, discretised (Tustin), on several channels.

    The state is in controllable canonical form, so each numerator is just another
    output row of the same state.
    """

    def __init__(
        self,
        numerators: Sequence[Sequence[float]],
        denominator: npt.ArrayLike,
        *,
        period: float,
        channels: int,
    ) -> None:
        den = np.asarray(denominator, dtype=np.float64)
        den = den / den[0]
        order = den.size - 1
        a = np.zeros((order, order))
        a[:-1, 1:] = np.eye(order - 1)
        a[-1, :] = -den[:0:-1]
        b = np.zeros(order)
        b[-1] = 1.0
        c_rows, d_terms = [], []
        for numerator in numerators:
            num = np.zeros(order + 1)
            num[order + 1 - len(numerator) :] = numerator
            c_rows.append(num[:0:-1] - den[:0:-1] * num[0])
            d_terms.append(num[0])
        c = np.array(c_rows)
        m = np.eye(order) - a * period / 2
        self._ad: FloatArray = np.linalg.solve(m, np.eye(order) + a * period / 2).astype(np.float64)
        self._bd: FloatArray = np.linalg.solve(m, b * period).astype(np.float64)
        self._cd: FloatArray = np.linalg.solve(m.T, c.T).T.astype(np.float64)
        self._dd: FloatArray = np.array(d_terms) + c @ self._bd / 2
        self._x: FloatArray = np.zeros((channels, order))

    def reset(self) -> None:
        self._x[:] = 0.0

    def step(self, u: FloatArray) -> FloatArray:
        """Outputs for input ``u`` (one value per channel): shape (outputs, channels)."""
        y: FloatArray = (self._x @ self._cd.T + u[:, None] * self._dd).T
        self._x = self._x @ self._ad.T + u[:, None] * self._bd
        return y


def _vector(values: Sequence[float], name: str) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.shape != (3,):
        raise HilPlatformError(f"motion cueing: {name} must have 3 values (x, y, z), got {len(values)}")
    if not np.all(np.isfinite(array)):
        raise HilPlatformError(f"motion cueing: {name} {tuple(values)!r} is not finite")
    return array


class MotionCueing:
    """The washout filter of one platform, stepped at a fixed period.

    Args:
        geometry: The platform (its DOF and actuator length limits).
        config: The tuning; the defaults when omitted.

    Raises:
        HilPlatformError: If ``length_margin`` leaves no room around the neutral pose.
    """

    def __init__(self, geometry: PlatformGeometry, config: CueingConfig | None = None) -> None:
        self.geometry = geometry
        self.config = cfg = config if config is not None else CueingConfig()
        self._low = geometry.min_length + cfg.length_margin
        self._high = geometry.max_length - cfg.length_margin
        if not self._low <= geometry.neutral_length() <= self._high:
            raise HilPlatformError(
                f"CueingConfig: length_margin {cfg.length_margin} m leaves the neutral actuator length "
                f"{geometry.neutral_length():.4f} m outside [{self._low:.4f}, {self._high:.4f}]"
            )
        # Rounded down to float32, so a value clipped to a limit stays within it on the wire.
        self._axis_limits: FloatArray = np.nextafter(
            np.array(geometry.dof_limits, dtype=np.float32) * np.float32(cfg.limit_fraction), np.float32(0)
        ).astype(np.float64)
        w, z, wb = cfg.translation_frequency, cfg.translation_damping, cfg.translation_washout
        # Outputs: position (s / den) and the platform's acceleration (s^3 / den).
        self._translation = _Lti(
            [[1.0, 0.0], [1.0, 0.0, 0.0, 0.0]],
            np.polymul([1.0, 2 * z * w, w * w], [1.0, wb]),
            period=cfg.period,
            channels=3,
        )
        w, z = cfg.tilt_frequency, cfg.tilt_damping
        self._tilt_lowpass = _Lti([[w * w]], [1.0, 2 * z * w, w * w], period=cfg.period, channels=2)
        w, z = cfg.rotation_frequency, cfg.rotation_damping
        self._rotation = _Lti([[1.0, 0.0]], [1.0, 2 * z * w, w * w], period=cfg.period, channels=3)
        self._tilt: FloatArray = np.zeros(2)
        self.steps = 0
        self.limited = 0

    def reset(self) -> None:
        """Back to neutral, every filter at rest (before a new session)."""
        for lti in (self._translation, self._tilt_lowpass, self._rotation):
            lti.reset()
        self._tilt[:] = 0.0

    def step(self, acceleration: Sequence[float], angular_velocity: Sequence[float]) -> Cue:
        """Advance one period and return the pose to send.

        Args:
            acceleration: The vehicle's acceleration in its body frame, gravity
                excluded (x forward, y left, z up; m/s^2).
            angular_velocity: Its roll, pitch and yaw rates (rad/s).

        Returns:
            The cue; its pose is within every limit of the platform.

        Raises:
            HilPlatformError: If an input does not have 3 finite values; the filter
                state is then unchanged.
        """
        cfg = self.config
        acc = np.clip(_vector(acceleration, "acceleration"), -cfg.max_acceleration, cfg.max_acceleration)
        rate = np.clip(
            _vector(angular_velocity, "angular_velocity"), -cfg.max_angular_rate, cfg.max_angular_rate
        )
        position, platform_acc = self._translation.step(cfg.translation_scale * acc)
        (sustained,) = self._tilt_lowpass.step(cfg.tilt_scale * acc[:2])
        (angles,) = self._rotation.step(cfg.rotation_scale * rate)

        ratio = np.clip(sustained / GRAVITY, -1.0, 1.0)
        target = np.array([math.asin(ratio[1]), -math.asin(ratio[0])])  # roll from y, pitch from x
        target = np.clip(target, -self._axis_limits[[_ROLL, _PITCH]], self._axis_limits[[_ROLL, _PITCH]])
        step = cfg.tilt_rate_limit * cfg.period
        self._tilt += np.clip(target - self._tilt, -step, step)

        pose = np.empty(6)
        pose[[_ROLL, _PITCH, _YAW]] = angles
        pose[[_ROLL, _PITCH]] += self._tilt
        pose[[_SURGE, _LATERAL, _HEAVE]] = position
        limited_pose, limited = self.limit(pose)
        self.steps += 1
        self.limited += int(limited)
        return Cue(
            pose=limited_pose,
            acceleration=(float(platform_acc[0]), float(platform_acc[1]), float(platform_acc[2])),
            tilt=(float(self._tilt[0]), float(self._tilt[1])),
            limited=limited,
        )

    def limit(self, pose: Sequence[float] | FloatArray) -> tuple[tuple[float, ...], bool]:
        """``pose`` within every limit, as float32 values; and whether it had to change.

        Each axis is clipped to its limit, then the pose is scaled towards neutral
        (bisection) until every actuator length is within its margin.

        Raises:
            HilPlatformError: If ``pose`` does not have six values.
        """
        if len(pose) != 6:
            raise HilPlatformError(f"motion cueing: pose must have 6 values ({', '.join(DOF_AXES)})")
        wanted = np.nan_to_num(np.asarray(pose, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
        clipped = _float32(np.clip(wanted, -self._axis_limits, self._axis_limits))
        if not self._inside(clipped):
            low, high = 0.0, 1.0  # the neutral pose (scale 0) is inside
            for _ in range(30):
                middle = (low + high) / 2
                if self._inside(_float32(clipped * middle)):
                    low = middle
                else:
                    high = middle
            clipped = _float32(clipped * low)
        changed = not np.array_equal(clipped, _float32(wanted))
        return tuple(float(v) for v in clipped), changed

    def _inside(self, pose: FloatArray) -> bool:
        lengths = actuator_lengths(pose.tolist(), self.geometry)
        return bool(np.all((lengths >= self._low) & (lengths <= self._high)))


def _float32(values: FloatArray) -> FloatArray:
    return values.astype(np.float32).astype(np.float64)


class AccelerationEstimator:
    """Body-frame acceleration and angular velocity from successive body-frame twists.

    Odometry carries the twist in the body (child) frame; the body's acceleration
    is ``dv/dt + w x v`` (a robot driving a circle at constant speed accelerates
    towards the centre). Optionally smoothed by a first-order low-pass, since
    differences of sampled velocities are noisy.

    Args:
        max_gap: A sample more than this many seconds after the previous one starts
            afresh (no acceleration across a gap).
        smoothing: Time constant of the low-pass (s); 0 turns it off.

    Raises:
        HilPlatformError: If an option is out of range.
    """

    def __init__(self, *, max_gap: float = 0.5, smoothing: float = 0.0) -> None:
        if not (math.isfinite(max_gap) and max_gap > 0):
            raise HilPlatformError(f"AccelerationEstimator: max_gap must be > 0 s, got {max_gap!r}")
        if not (math.isfinite(smoothing) and smoothing >= 0):
            raise HilPlatformError(f"AccelerationEstimator: smoothing must be >= 0 s, got {smoothing!r}")
        self.max_gap = max_gap
        self.smoothing = smoothing
        self._last: tuple[float, FloatArray, FloatArray] | None = None
        self._acceleration: FloatArray | None = None

    def reset(self) -> None:
        """Forget the previous sample."""
        self._last = None
        self._acceleration = None

    def update(
        self, stamp: float, linear: Sequence[float], angular: Sequence[float]
    ) -> tuple[FloatArray, FloatArray] | None:
        """Take one twist; return (acceleration, angular velocity), None for a first sample.

        Args:
            stamp: Time of the sample (s).
            linear: Linear velocity in the body frame (m/s).
            angular: Angular velocity in the body frame (rad/s).

        A stamp before the previous one (the simulation was reset, a bag looped)
        starts afresh from this sample.

        Raises:
            HilPlatformError: If a value is not finite or ``stamp`` repeats the
                previous sample's; the estimator is then unchanged.
        """
        if not math.isfinite(stamp):
            raise HilPlatformError(f"twist: stamp {stamp!r} is not finite")
        v = _vector(linear, "twist linear")
        w = _vector(angular, "twist angular")
        last = self._last
        if last is not None and stamp == last[0]:
            raise HilPlatformError(f"twist: stamp {stamp:.6f} s repeats the previous sample's")
        self._last = (stamp, v, w)
        if last is None or not 0 < stamp - last[0] <= self.max_gap:
            self._acceleration = None
            return None
        dt = stamp - last[0]
        raw = (v - last[1]) / dt + np.cross((w + last[2]) / 2, (v + last[1]) / 2)
        if self._acceleration is None or self.smoothing == 0:
            self._acceleration = raw
        else:
            self._acceleration = self._acceleration + (raw - self._acceleration) * (
                dt / (self.smoothing + dt)
            )
        return self._acceleration.copy(), w
