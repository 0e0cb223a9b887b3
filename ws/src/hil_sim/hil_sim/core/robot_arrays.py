"""Each robot's body and drive-train figures as (N,) arrays, for the physics backends.

Both engines (:mod:`hil_sim.core.physics`, :mod:`hil_sim.core.mujoco_physics`) take
their per-robot figures from here, so neither imports the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from hil_sim.core.motor import MotorBank, MotorGroups, motor_banks

if TYPE_CHECKING:
    from hil_sim.core.robot_model import RobotModel


class RobotArrays:
    """Each robot's body and drive-train figures as (N,) arrays, and their motors' grouping."""

    def __init__(self, models: Sequence[RobotModel]) -> None:
        self.models = list(models)
        self.wheel_radius = np.array([m.body.wheel_radius for m in models])
        self.wheel_base = np.array([m.body.wheel_base for m in models])
        self.body_radius = np.array([m.body.body_radius for m in models])
        self.bumper_travel = np.array([m.body.bumper_travel for m in models])
        self.gear = np.array([m.motor.gear_ratio for m in models])
        self.kt = np.array([m.motor.kt for m in models])
        self.ke = np.array([m.motor.ke for m in models])
        self.resistance = np.array([m.motor.resistance for m in models])
        self.viscous = np.array([m.motor.viscous for m in models])
        self.coulomb = np.array([m.motor.coulomb for m in models])
        #: Each motor's rotor inertia with the robot's mass reflected to its shaft (native).
        self.loaded_inertia = np.array([m.motor.rotor_inertia + m.load_inertia for m in models])
        #: Robots by model (first appearance first): (rows, model).
        groups: dict[int, tuple[list[int], RobotModel]] = {}
        for robot, model in enumerate(models):
            groups.setdefault(id(model), ([], model))[0].append(robot)
        self.groups = [(np.array(rows, dtype=np.intp), model) for rows, model in groups.values()]

    def motors(self, dt: float, *, loaded: bool) -> MotorBank | MotorGroups:
        """Every robot's two motors (with the robot's mass reflected to them when ``loaded``)."""
        return motor_banks(
            [(rows, model.motor, model.load_inertia if loaded else 0.0) for rows, model in self.groups],
            len(self.models),
            dt=dt,
        )
