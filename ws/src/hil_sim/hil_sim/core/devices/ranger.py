"""``ranger``: ultrasonic and IR distance sensors, any number, each from its own mount.

Each ranger casts ``rays`` rays spread evenly over its cone (``cone_deg`` wide, centred
on its mount's yaw; one ray: along the yaw) from its mount (x, y, z in the body frame;
a ranger on a servo casts from where the servo has turned it) and takes the nearest
return. Beams:

* ``ultrasonic`` (HC-SR04, PING): the nearest echo plus Gaussian noise of ``sigma_cm``,
  within ``min_range_cm``..``max_range_cm`` (nothing in range reads the maximum).
  Signal ``distance`` (cm). One normal per sample.
* ``ir`` (Sharp GP2Y0A02YK0F): the output voltage from the distance table
  (``distance_cm``/``voltage_v``, the end values held outside it); with probability
  ``error_probability`` scaled down by U[0, ``error_bound``], with the same probability
  up, else exact. Signal ``voltage`` (V). Two uniforms per sample.

Outputs: ``distance`` (cm: the reading, for an IR ranger the distance its voltage
reads as: what the Range topic shows), ``voltage`` (V, IR) and ``true_cm`` (the
noise-free distance).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hil_sim.core.devices.base import Array, DeviceModel, IndexArray, Mounts, Scene
from hil_sim.core.physics_types import Rays
from hil_sim.core.robot_model import DeviceSpec, RobotModel
from hil_sim.core.sensors import SharpIrModel, ultrasonic_cm
from hil_sim.errors import HilSimError

#: Shortest ray cast (m): the demo's rangers (2 m, 1.5 m) have always been cast this far.
MIN_CAST_RANGE = 2.5
#: Rays are cast this much beyond the longest ranger's range.
CAST_MARGIN = 1.25


class Ranger(DeviceModel):
    """Every ranger of a group of robots (module docstring)."""

    KIND = "ranger"
    OUTPUTS = ("distance", "voltage", "true_cm")

    def __init__(self, specs: Sequence[DeviceSpec], *, robots: int, model: RobotModel, where: str) -> None:
        super().__init__(specs, robots=robots, model=model, where=where)
        self.ultrasonic = self.instances(beam="ultrasonic")
        self.ir: list[tuple[int, SharpIrModel]] = []
        for k in self.instances(beam="ir"):
            params = self.params[int(k)]
            table = {
                key: params[key] for key in ("distance_cm", "voltage_v", "error_probability", "error_bound")
            }
            if not table["distance_cm"]:
                raise HilSimError(
                    f"{where}: device {self.names[k]}: params.distance_cm: an IR ranger needs its table"
                )
            self.ir.append(
                (
                    int(k),
                    SharpIrModel.from_table(
                        {
                            **table,
                            "distance_cm": list(table["distance_cm"]),
                            "voltage_v": list(table["voltage_v"]),
                        }
                    ),
                )
            )
        self.low = np.array([params["min_range_cm"] for params in self.params])
        self.high = np.array([params["max_range_cm"] for params in self.params])
        self.sigma = np.array([params["sigma_cm"] for params in self.params])
        self.cast_range = max(MIN_CAST_RANGE, CAST_MARGIN * float(self.high.max()) / 100.0)
        counts = [int(params["rays"]) for params in self.params]
        self.first: IndexArray = np.concatenate([[0], np.cumsum(counts)]).astype(np.intp)
        self._fixed: Rays | None = None
        self._sonic_noise: IndexArray | None = None

    @classmethod
    def signals(cls, spec: DeviceSpec, params: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """An ultrasonic ranger gives ``distance`` (cm), an IR one ``voltage`` (V)."""
        del spec
        return (), ("distance",) if params["beam"] == "ultrasonic" else ("voltage",)

    @classmethod
    def noise(cls, params: Mapping[str, Any]) -> tuple[int, int]:
        """Ultrasonic: one normal; IR: two uniforms."""
        return (0, 1) if params["beam"] == "ultrasonic" else (2, 0)

    def reset(self) -> None:
        """Nothing in range until the first sample."""
        super().reset()
        self.outputs[..., self.column("distance")] = self.high
        self.outputs[..., self.column("true_cm")] = self.cast_range * 100.0
        for k, ir in self.ir:
            self.outputs[:, k, self.column("voltage")] = ir.voltage(np.array(self.high[k]))

    def rays(self, mounts: Mounts) -> Rays:
        """Every ranger's rays in the body frame, ranger by ranger (:attr:`first`)."""
        moving = any(mounts.moving(name) for name in self.names)
        if self._fixed is not None and not moving:
            return self._fixed
        xs: list[Array] = []
        ys: list[Array] = []
        zs: list[Array] = []
        angles: list[Array] = []
        for spec, params in zip(self.specs, self.params, strict=True):
            x, y, yaw = mounts.pose(spec.name)
            count = int(params["rays"])
            half = math.radians(params["cone_deg"] / 2)
            spread = np.zeros(1) if count == 1 else np.linspace(-half, half, count)
            if moving:
                xs.append(np.repeat(x[:, None], count, axis=1))
                ys.append(np.repeat(y[:, None], count, axis=1))
                zs.append(np.full((self.robots, count), spec.mount.z))
                angles.append(yaw[:, None] + spread[None, :])
            else:
                xs.append(np.full(count, spec.mount.x))
                ys.append(np.full(count, spec.mount.y))
                zs.append(np.full(count, spec.mount.z))
                angles.append(spec.mount.yaw + spread if count > 1 else np.array([spec.mount.yaw]))
        axis = 1 if moving else 0
        rays = Rays(
            x=np.concatenate(xs, axis=axis),
            y=np.concatenate(ys, axis=axis),
            z=np.concatenate(zs, axis=axis),
            angle=np.concatenate(angles, axis=axis),
        )
        if not moving:
            self._fixed = rays
        return rays

    def sample(self, scene: Scene, mounts: Mounts, uniform: Array, normal: Array) -> None:
        """Nearest return of each ranger and its error model."""
        nearest = scene.nearest(self.names, self.rays(mounts), self.first, self.cast_range)
        out = self.outputs
        out[..., self.column("true_cm")] = nearest * 100.0
        sonic = self.ultrasonic
        if sonic.size:
            if self._sonic_noise is None:
                self._sonic_noise = np.concatenate([self.normal_columns[k] for k in sonic])
            noise = normal[:, self._sonic_noise]
            out[:, sonic, self.column("distance")] = ultrasonic_cm(
                nearest[:, sonic],
                noise,
                sigma_cm=self.sigma[sonic],
                low=self.low[sonic],
                high=self.high[sonic],
            )
        for k, ir in self.ir:
            pick = uniform[:, self.uniform_columns[k]]
            volts = ir.with_error(ir.voltage(nearest[:, k] * 100.0), pick[:, 0], pick[:, 1])
            out[:, k, self.column("voltage")] = volts
            out[:, k, self.column("distance")] = ir.distance(volts)
