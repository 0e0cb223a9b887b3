"""What a physics backend offers (:class:`PhysicsBackend`) and the array types it speaks.

Backends: :mod:`hil_sim.core.physics` (native, and :func:`~hil_sim.core.physics.make_backend`)
and :mod:`hil_sim.core.mujoco_physics`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from hil_sim.core.motor import MotorBank, MotorGroups
from hil_sim.core.world import Pose, WorldConfig

if TYPE_CHECKING:
    pass


Array = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IndexArray = npt.NDArray[np.intp]
#: ``touch(robots, bearings, time)``: robots touched something at ``time`` (s), at
#: ``bearings`` (rad, body frame, counter-clockwise from straight ahead).
Touch = Callable[[IndexArray, Array, float], None]


@dataclass(frozen=True)
class Rays:
    """Ray origins (m) and directions (rad about z) in the body frame, one entry per ray.

    Each array is (R,), the same rays for every robot, or (N, R), each robot's own.
    """

    x: Array
    y: Array
    z: Array
    angle: Array


class BoardStates(Protocol):
    """Which boards stand (index as in :attr:`WorldConfig.boards`)."""

    @property
    def standing(self) -> BoolArray:
        """(B,) True while a board stands."""
        ...

    @property
    def boards_down(self) -> int:
        """How many boards are down."""
        ...

    def reset(self) -> None:
        """Every board up again."""
        ...


class PhysicsBackend(Protocol):
    """A rigid-body engine for :class:`~hil_sim.core.simulation.Simulation`."""

    name: str
    #: The world as the backend has it (an MJCF world's boards filled in).
    world: WorldConfig
    x: Array
    y: Array
    yaw: Array
    v: Array
    w: Array
    wheel_angle: Array
    motors: MotorBank | MotorGroups

    @property
    def boards(self) -> BoardStates:
        """Which boards stand."""
        ...

    def reset(self) -> None:
        """Robots at their starts at rest, motors off, boards standing."""
        ...

    def teleport(self, index: int, pose: Pose) -> None:
        """Robot ``index`` at ``pose``, at rest (the pose is already checked)."""
        ...

    def advance(self, steps: int, voltage: Array, closed: BoolArray, start: float, touch: Touch) -> None:
        """``steps`` physics steps from time ``start`` with these motor voltages (N, 2)."""
        ...

    def cast(self, rays: Rays, max_range: float, rows: IndexArray | slice = slice(None)) -> Array:
        """(n, R) distance along each ray of robots ``rows`` to the first solid thing (or ``max_range``)."""
        ...
