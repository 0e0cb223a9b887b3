"""``light``: a photoresistor (GL5506) reading the world's light.

The cell sits at its mount (x, y in the body frame) facing the mount's yaw; its reading
is the light's inverse-square intensity times the angular response table
(``angle_deg``/``response``), scaled so the peak reads 1000 at the light's reference
distance, clipped at the 10-bit ADC's 1023; the error model (``intensity``,
``error_bound``, ``exact_probability``: exact with that probability, otherwise scaled
down or up, equally likely, by U[0, bound]) and rounding to counts follow. Three
uniforms per sample. Signal ``reading`` (ADC counts); ``illuminance`` the same value
for the Illuminance topic.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from hil_sim.core.devices.base import Array, DeviceModel, IndexArray, Mounts, Scene
from hil_sim.core.robot_model import DeviceSpec, RobotModel
from hil_sim.core.sensors import PhotoresistorModel, light_readings

TABLE = ("angle_deg", "response", "intensity", "error_bound", "exact_probability")


class Light(DeviceModel):
    """Every photoresistor of a group of robots (module docstring)."""

    KIND = "light"
    OUTPUTS = ("reading",)

    def __init__(self, specs: Sequence[DeviceSpec], *, robots: int, model: RobotModel, where: str) -> None:
        super().__init__(specs, robots=robots, model=model, where=where)
        # Cells with the same table are read together (the demo's four: one call).
        tables: dict[tuple[tuple[float, ...], ...], list[int]] = {}
        for k, params in enumerate(self.params):
            tables.setdefault(tuple(params[key] for key in TABLE), []).append(k)
        self.batches = []
        for table, members in tables.items():
            photo = PhotoresistorModel.from_table(
                {key: list(values) for key, values in zip(TABLE, table, strict=True)}
            )
            self.batches.append((photo, np.array(members, dtype=np.intp)))
        #: Per batch: where its cells sit and which uniforms they draw, once their mounts are known.
        self._places: list[tuple[Array, Array, Array, IndexArray] | None] = [None] * len(self.batches)

    @classmethod
    def signals(
        cls, spec: DeviceSpec, params: Mapping[str, object]
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``reading`` (ADC counts)."""
        del spec, params
        return (), ("reading",)

    @classmethod
    def noise(cls, params: Mapping[str, object]) -> tuple[int, int]:
        """Three uniforms: pick, direction, factor."""
        del params
        return 3, 0

    def sample(self, scene: Scene, mounts: Mounts, uniform: Array, normal: Array) -> None:
        """Every cell's reading from where it is and where it faces."""
        del normal
        light = scene.world.light
        for number, (photo, members) in enumerate(self.batches):
            place = self._places[number]
            if place is None:
                offsets = [_polar(mounts, self.names[k]) for k in members]
                place = (
                    np.stack([r for r, _, _ in offsets], axis=-1),
                    np.stack([b for _, b, _ in offsets], axis=-1),
                    np.stack([f for _, _, f in offsets], axis=-1),
                    np.concatenate([self.uniform_columns[k] for k in members]),
                )
                if not any(mounts.moving(self.names[k]) for k in members):
                    self._places[number] = place  # fixed on the body: the same every sample
            radius, bearing, facing, columns = place
            self.outputs[:, members, 0] = light_readings(
                photo,
                (scene.x, scene.y, scene.yaw),
                facing=facing,
                radius=radius,
                bearing=bearing,
                light=(light.x, light.y, light.reference_distance),
                picks=uniform[:, columns].reshape(self.robots, len(members), 3),
            )


def _polar(mounts: Mounts, name: str) -> tuple[Array, Array, Array]:
    """A cell's distance from the body's centre, its bearing and its facing (rad).

    A cell facing straight away from the centre (the usual mast) has its bearing equal
    to its facing: the same angle, not one a turn away.
    """
    x, y, yaw = mounts.pose(name)
    radius = np.hypot(x, y)
    bearing = np.arctan2(y, x)
    radial = (radius == 0) | (np.abs((bearing - yaw + math.pi) % (2 * math.pi) - math.pi) < 1e-9)
    return radius, np.where(radial, yaw, bearing), yaw
