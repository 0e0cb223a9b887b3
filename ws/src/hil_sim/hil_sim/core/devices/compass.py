"""``compass``: a magnetometer (HMC5883L) reduced to a heading.

The earth's field (the scene's: north along world +y, pointing down) in the chip's
frame (the body's turned by the mount's yaw) plus Gaussian noise of ``sigma_t`` per
axis; heading = atan2(by, bx), clockwise from north, 0..360. Three normals per sample.
Signal ``heading`` (deg); ``bx``, ``by``, ``bz`` (T) for the MagneticField topic.
"""

from __future__ import annotations

from collections.abc import Mapping

from hil_sim.core.devices.base import Array, DeviceModel, Mounts, Scene
from hil_sim.core.robot_model import DeviceSpec
from hil_sim.core.sensors import heading_deg


class Compass(DeviceModel):
    """Every compass of a group of robots (module docstring)."""

    KIND = "compass"
    OUTPUTS = ("heading", "bx", "by", "bz")

    @classmethod
    def signals(
        cls, spec: DeviceSpec, params: Mapping[str, object]
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``heading`` (deg)."""
        del spec, params
        return (), ("heading",)

    @classmethod
    def noise(cls, params: Mapping[str, object]) -> tuple[int, int]:
        """Three normals: one per axis."""
        del params
        return 0, 3

    def sample(self, scene: Scene, mounts: Mounts, uniform: Array, normal: Array) -> None:
        """Field and heading of every compass."""
        del uniform
        for k, name in enumerate(self.names):
            _, _, yaw = mounts.pose(name)
            clean = scene.field(yaw)
            if clean is None:
                continue  # no field known yet (Gazebo's first magnetometer message): keep the reading
            # The noise first, the field added to it: the same sums whatever gives the field.
            field: Array = self.params[k]["sigma_t"] * normal[:, self.normal_columns[k]]
            field += clean
            self.outputs[:, k, 1:4] = field
            self.outputs[:, k, 0] = heading_deg(field)
