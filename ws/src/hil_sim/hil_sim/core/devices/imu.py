"""``imu``: an MPU-6050 accelerometer and gyroscope, from the physics.

Each sample takes the body's forward and turn speed from the physics backend and
differentiates them over the sample period: the chip, level at its mount, measures
the specific force of its point of the body (forward acceleration, the centripetal
``v w``, the lever arm's tangential and centripetal terms, and +1 g up: at rest it
reads (0, 0, +9.81)) in its own frame (the body's turned by the mount's yaw), and the
rotation rate (about z: the turn rate). Each axis gets the datasheet's noise density
times the square root of the bandwidth (``accel_noise_ug``: 400 ug/sqrt(Hz),
``gyro_noise_mdps``: 5 mdeg/s/sqrt(Hz), ``bandwidth_hz``: the low-pass filter, 260 Hz
unfiltered) and a fixed bias per axis. Six normals per sample. Signals ``ax``, ``ay``,
``az`` (m/s^2), ``gx``, ``gy``, ``gz`` (rad/s), ``temp`` (C).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from hil_sim.core.devices.base import Array, DeviceModel, Mounts, Scene
from hil_sim.core.robot_model import DeviceSpec, RobotModel

#: Standard gravity (m/s^2).
GRAVITY = 9.80665


class Imu(DeviceModel):
    """Every IMU of a group of robots (module docstring)."""

    KIND = "imu"
    OUTPUTS = ("ax", "ay", "az", "gx", "gy", "gz", "temp")

    def __init__(self, specs: Sequence[DeviceSpec], *, robots: int, model: RobotModel, where: str) -> None:
        super().__init__(specs, robots=robots, model=model, where=where)
        root = np.array([math.sqrt(p["bandwidth_hz"]) for p in self.params])
        self.accel_sigma = np.array([p["accel_noise_ug"] * 1e-6 * GRAVITY for p in self.params]) * root
        self.gyro_sigma = np.array([math.radians(p["gyro_noise_mdps"] * 1e-3) for p in self.params]) * root
        self.bias = np.array(
            [
                [p[f"accel_bias_{a}_mg"] * 1e-3 * GRAVITY for a in "xyz"]
                + [math.radians(p[f"gyro_bias_{a}_dps"]) for a in "xyz"]
                for p in self.params
            ]
        )
        self._last: tuple[float, Array, Array] | None = None

    @classmethod
    def noise(cls, params: Mapping[str, object]) -> tuple[int, int]:
        """Six normals: three accelerometer axes, three gyroscope axes."""
        del params
        return 0, 6

    def reset(self) -> None:
        """At rest, level: +1 g on z."""
        super().reset()
        self._last = None
        self.outputs[..., 2] = GRAVITY
        self.outputs[..., 6] = [p["temp_c"] for p in self.params]

    def sample(self, scene: Scene, mounts: Mounts, uniform: Array, normal: Array) -> None:
        """Specific force and rotation rate at every IMU's mount."""
        del uniform
        v, w = scene.v.copy(), scene.w.copy()
        if self._last is None or scene.time <= self._last[0]:
            accel, spin = np.zeros_like(v), np.zeros_like(w)
        else:
            period = scene.time - self._last[0]
            accel, spin = (v - self._last[1]) / period, (w - self._last[2]) / period
        self._last = (scene.time, v, w)
        for k, name in enumerate(self.names):
            x, y, yaw = mounts.pose(name)
            # The mount point's acceleration in the body frame (planar rigid body).
            ax = accel - spin * y - w * w * x
            ay = v * w + spin * x - w * w * y
            c, s = np.cos(yaw), np.sin(yaw)
            noise = normal[:, self.normal_columns[k]]
            out = self.outputs[:, k]
            out[:, 0] = c * ax + s * ay + self.bias[k, 0] + self.accel_sigma[k] * noise[:, 0]
            out[:, 1] = -s * ax + c * ay + self.bias[k, 1] + self.accel_sigma[k] * noise[:, 1]
            out[:, 2] = GRAVITY + self.bias[k, 2] + self.accel_sigma[k] * noise[:, 2]
            out[:, 3] = self.bias[k, 3] + self.gyro_sigma[k] * noise[:, 3]
            out[:, 4] = self.bias[k, 4] + self.gyro_sigma[k] * noise[:, 4]
            out[:, 5] = w + self.bias[k, 5] + self.gyro_sigma[k] * noise[:, 5]
