"""Sensor models: noise-free physics plus each sensor's measured error model.

All functions are vectorised and pure; the random numbers come in as arguments (from
:class:`~hil_sim.core.noise.NoiseBank`), so a model's output is reproducible and its
statistics testable. Tables come from the device library (``hil_bridge/config/
devices/*.json``), the same files the robot side reads to invert them.

* HC-SR04: nearest echo within a cone, within its range (the demo's saturates at
  200 cm), Gaussian noise.
* Sharp GP2Y0A02YK0F: 6 degree cone cast as rays; voltage from the distance table;
  with probability p scaled down by U[0, bound], with p scaled up, else exact.
* GL5506 photoresistor: inverse-square intensity times the angular response table,
  scaled so the peak reads 1000 at the light's reference distance; error bound and
  exact probability interpolated on intensity, otherwise scaled down or up (equally
  likely) by U[0, bound].
* HMC5883L: the earth field (north along world +y, pointing down) in the body frame
  with Gaussian noise; heading = atan2(by, bx), clockwise from north.

The device model kinds (:mod:`hil_sim.core.devices`) apply them to each device.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from hil_sim.errors import HilSimError

Array = npt.NDArray[np.float64]

#: HC-SR04 range limit (DESIGN/issue: saturating at 200 cm) and 10-bit ADC full scale.
ULTRASONIC_MAX_CM = 200.0
ADC_MAX = 1023
ADC_REFERENCE_V = 5.0


def clip(values: Array, low: float | Array, high: float | Array) -> Array:
    """``np.clip(values, low, high)`` in two ufuncs: np.clip's own checks cost a microsecond a call."""
    clipped: Array = np.minimum(np.maximum(values, low), high)
    return clipped


def _table(table: dict[str, Any], key: str, device: str) -> Array:
    values = table.get(key)
    if not isinstance(values, list) or len(values) < 2:
        raise HilSimError(f"device {device}: table.{key}: expected a list of numbers")
    return np.asarray(values, dtype=float)


@dataclass(frozen=True)
class SharpIrModel:
    """GP2Y0A02YK0F: distance <-> voltage table and the measured error model."""

    distance_cm: Array
    voltage_v: Array
    error_probability: float
    error_bound: float

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> SharpIrModel:
        """Build from the ``table`` of the sharp_ir device config."""
        distance, voltage = _table(table, "distance_cm", "sharp_ir"), _table(table, "voltage_v", "sharp_ir")
        if distance.shape != voltage.shape or np.any(np.diff(distance) <= 0) or np.any(np.diff(voltage) >= 0):
            raise HilSimError(
                "device sharp_ir: table: distance must increase and voltage decrease, same length"
            )
        return cls(distance, voltage, float(table["error_probability"]), float(table["error_bound"]))

    def voltage(self, distance_cm: Array) -> Array:
        """Noise-free output voltage; outside the table the end values hold."""
        return np.interp(distance_cm, self.distance_cm, self.voltage_v)

    def distance(self, voltage_v: Array) -> Array:
        """The inverse the robot side uses: volts back to centimetres (15..150)."""
        return np.interp(voltage_v, self.voltage_v[::-1], self.distance_cm[::-1])

    def with_error(self, voltage_v: Array, pick: Array, factor: Array) -> Array:
        """Apply the error model: ``pick`` < p scales down, p <= ``pick`` < 2p up, by ``factor`` * bound."""
        p = self.error_probability
        size = factor * self.error_bound
        return voltage_v * np.where(pick < p, 1.0 - size, np.where(pick < 2 * p, 1.0 + size, 1.0))


@dataclass(frozen=True)
class PhotoresistorModel:
    """GL5506: angular response and the intensity-dependent error model."""

    angle_rad: Array
    response: Array  # normalised to a peak of 1
    intensity: Array
    error_bound: Array
    exact_probability: Array

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> PhotoresistorModel:
        """Build from the ``table`` of the photoresistor device config."""
        angle = np.radians(_table(table, "angle_deg", "photoresistor"))
        response = _table(table, "response", "photoresistor")
        intensity = _table(table, "intensity", "photoresistor")
        bound = _table(table, "error_bound", "photoresistor")
        exact = _table(table, "exact_probability", "photoresistor")
        if angle.shape != response.shape or not (intensity.shape == bound.shape == exact.shape):
            raise HilSimError("device photoresistor: table: mismatched list lengths")
        return cls(angle, response / response.max(), intensity, bound, exact)

    def reading(self, distance: Array, angle: Array, reference_distance: float) -> Array:
        """Noise-free ADC reading for a light at ``distance`` and ``angle`` off the sensor axis."""
        wrapped = (angle + math.pi) % (2 * math.pi) - math.pi
        gain = np.interp(wrapped, self.angle_rad, self.response, left=0.0, right=0.0)
        raw = 1000.0 * gain * (reference_distance / np.maximum(distance, 1e-3)) ** 2
        return clip(raw, 0.0, ADC_MAX)

    def with_error(self, reading: Array, pick: Array, direction: Array, factor: Array) -> Array:
        """Apply the error model: exact when ``pick`` < p(I), else down or up by U[0, bound(I)].

        ``direction`` < 0.5 scales down, otherwise up; ``factor`` picks the size.
        """
        exact = pick < np.interp(reading, self.intensity, self.exact_probability)
        size = factor * np.interp(reading, self.intensity, self.error_bound)
        scale = np.where(exact, 1.0, np.where(direction < 0.5, 1.0 - size, 1.0 + size))
        return clip(reading * scale, 0.0, ADC_MAX)


def ultrasonic_cm(
    nearest_m: Array,
    noise: Array,
    *,
    sigma_cm: float | Array,
    low: float | Array = 2.0,
    high: float | Array = ULTRASONIC_MAX_CM,
) -> Array:
    """An ultrasonic ranger's reading: nearest echo plus Gaussian noise, within ``low``..``high`` cm."""
    return clip(nearest_m * 100.0 + sigma_cm * noise, low, high)


def adc_counts(voltage: Array) -> Array:
    """10-bit ADC counts of a voltage on a 5 V reference, as the MCU reads it."""
    return clip(np.rint(voltage / ADC_REFERENCE_V * ADC_MAX), 0, ADC_MAX)


@dataclass(frozen=True)
class EarthField:
    """The geomagnetic field the magnetometer sees (T): horizontal north, vertical down."""

    horizontal: float = 2.0e-5
    vertical: float = 4.5e-5

    def body(self, yaw: Array) -> Array:
        """Field (N, 3) in a frame turned ``yaw`` from north-is-+y (x forward, y left, z up)."""
        return np.stack(
            [
                self.horizontal * np.sin(yaw),
                self.horizontal * np.cos(yaw),
                np.full(np.shape(yaw), -self.vertical),
            ],
            axis=-1,
        )


def heading_deg(field_body: Array) -> Array:
    """Compass heading (0..360, clockwise from north) from the body-frame field."""
    return np.degrees(np.arctan2(field_body[:, 1], field_body[:, 0])) % 360.0


def light_readings(
    model: PhotoresistorModel,
    pose: tuple[Array, Array, Array],
    *,
    facing: Array,
    radius: Array,
    bearing: Array,
    light: tuple[float, float, float],
    picks: Array,
) -> Array:
    """The photoresistors' ADC readings (N, M) with their error model, from robot poses.

    Args:
        model: the GL5506 model.
        pose: x, y (m) and yaw (rad) of N robots.
        facing: (N, M) or (M,) the cells' directions in the body frame (rad).
        radius: how far from the robot's centre the cells sit (m), (N, M) or (M,).
        bearing: in which direction from the centre they sit (body frame, rad).
        light: the light's x, y (m) and reference distance (m).
        picks: (N, M, 3) uniforms of the error model (pick, direction, factor).
    """
    x, y, yaw = pose
    heading = yaw[:, None] + facing
    place = yaw[:, None] + bearing
    to_x = light[0] - (x[:, None] + radius * np.cos(place))
    to_y = light[1] - (y[:, None] + radius * np.sin(place))
    clean = model.reading(np.hypot(to_x, to_y), np.arctan2(to_y, to_x) - heading, light[2])
    return np.rint(model.with_error(clean, picks[..., 0], picks[..., 1], picks[..., 2]))
