"""When a run's task is done: predicates on the simulation, checked every period.

A done predicate is any callable that takes the simulation core and says whether the
task is done; the runner checks it every period (every lockstep step, or every pass
of its real-time loop) through a :class:`DoneWatch`, which ends the run once the task
has stayed done for a settle time. :func:`task_done` gives the demo behaviours'
tasks; a scenario can plug in its own predicate.

* ``boards``: every board of the world is down (a world without boards is done at once).
* ``light``: robot 0's centre is within the light's ``reference_distance``, where a
  photoresistor facing it reads full scale (the light behaviour stops about 0.37 m
  from the demo world's light, whose reference distance is 0.5 m).
* ``swarm``: every HIL robot is within :data:`GATHER_RADIUS` (1 m) of the light.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from hil_bringup.errors import HilBringupError

if TYPE_CHECKING:  # the runner imports this before the heavy simulation modules
    from hil_sim.core.simulation import Simulation

#: Whether the task is done, from the simulator's state (called under its lock).
DonePredicate: TypeAlias = "Callable[[Simulation], bool]"

#: Simulated seconds the task must stay done before the run ends, so the report
#: shows the robot settling (a light run's approach, a board's fall).
SETTLE_S = 1.0


def all_boards_down(sim: Simulation) -> bool:
    """``boards``: every board of the world has fallen."""
    return sim.geometry.boards_down >= len(sim.world.boards)


def light_reached(sim: Simulation) -> bool:
    """``light``: robot 0 is within the light's reference distance of it."""
    light = sim.world.light
    return math.hypot(float(sim.x[0]) - light.x, float(sim.y[0]) - light.y) <= light.reference_distance


#: The task of each AUTO behaviour.
#: ``swarm``: every robot within this distance (m) of the light.
GATHER_RADIUS = 1.0


def swarm_gathered(sim: Simulation, robots: int | None = None) -> bool:
    """``swarm``: the HIL robots (the first ``robots``; all if None) are within GATHER_RADIUS of the light."""
    light = sim.world.light
    count = sim.count if robots is None else robots
    return all(
        math.hypot(float(sim.x[i]) - light.x, float(sim.y[i]) - light.y) <= GATHER_RADIUS
        for i in range(count)
    )


TASKS: dict[str, DonePredicate] = {"boards": all_boards_down, "light": light_reached, "swarm": swarm_gathered}
#: Each task in words (the run report's pictures name it).
TASK_TEXT = {
    "boards": "every board down",
    "light": "robot 0 within the light's reference distance",
    "swarm": f"every HIL robot within {GATHER_RADIUS:g} m of the light",
}


def task_done(behaviour: str) -> DonePredicate:
    """The done predicate of ``behaviour``'s task.

    Raises:
        HilBringupError: the behaviour has no task (MANUAL, ``''``, or unknown).
    """
    try:
        return TASKS[behaviour]
    except KeyError:
        raise HilBringupError(
            f"behaviour {behaviour!r} has no task to be done (tasks: {', '.join(TASKS)})"
        ) from None


@dataclass
class DoneWatch:
    """Whether a run's task is done, and since when, from one check per period."""

    predicate: DonePredicate
    settle: float = SETTLE_S
    #: Simulated time since which the task has been done without a break; None: not done.
    done_at: float | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.settle) and self.settle >= 0):
            raise HilBringupError(f"settle = {self.settle!r} must be a number >= 0 (seconds)")

    @property
    def done(self) -> bool:
        """The task is done now (perhaps still settling)."""
        return self.done_at is not None

    def update(self, now: float, sim: Simulation) -> bool:
        """Check the task at simulated time ``now``; True once it has stayed done ``settle`` s."""
        if not self.predicate(sim):
            self.done_at = None  # undone (a reset world, a robot pushed away): start again
            return False
        if self.done_at is None:
            self.done_at = now
        return now - self.done_at >= self.settle
