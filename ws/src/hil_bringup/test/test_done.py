"""When a run's task is done: the behaviours' predicates on the simulation core, and the settle time."""

from __future__ import annotations

import numpy as np
import pytest

from hil_bringup.core.done import DoneWatch, all_boards_down, light_reached, task_done
from hil_bringup.errors import HilBringupError
from hil_sim.core.build import build_simulation
from hil_sim.core.simulation import Simulation
from hil_sim.core.world import Board, Light, Pose, WorldConfig

#: One board 0.3 m ahead of the robot, broad face toward it; the light in a corner.
ONE_BOARD = WorldConfig(width=4.0, height=4.0, light=Light(1.5, 1.5, 0.5), boards=(Board(0.3, 0.0, np.pi),))


def full_ahead(sim: Simulation) -> None:
    for side in ("left", "right"):
        sim.set_input(f"motor_{side}.enable", 1024.0)
        sim.set_input(f"motor_{side}.a", 1.0)


def test_boards_task_is_done_when_the_robot_has_knocked_every_board_down() -> None:
    sim = build_simulation(ONE_BOARD)
    assert not all_boards_down(sim)
    full_ahead(sim)
    sim.step(1000)  # 1 s at full speed: far more than 0.3 m
    assert sim.geometry.boards_down == 1
    assert all_boards_down(sim)
    sim.geometry.reset()
    assert not all_boards_down(sim)


def test_boards_task_needs_every_board_of_the_world_down() -> None:
    sim = build_simulation()  # the demo world: six boards
    sim.geometry.standing[:5] = False
    assert not all_boards_down(sim)
    sim.geometry.standing[5] = False
    assert all_boards_down(sim)


@pytest.mark.parametrize(("distance", "reached"), [(2.0, False), (0.51, False), (0.49, True), (0.0, True)])
def test_light_task_is_done_within_the_lights_reference_distance(distance: float, reached: bool) -> None:
    sim = build_simulation(ONE_BOARD)
    sim.teleport(0, Pose(1.5 - distance, 1.5, 0.0))
    assert light_reached(sim) is reached


def test_watch_ends_the_run_once_the_task_stayed_done_for_the_settle_time() -> None:
    sim = build_simulation(ONE_BOARD)
    watch = DoneWatch(light_reached, settle=1.0)
    assert not watch.update(0.0, sim) and not watch.done
    sim.teleport(0, Pose(1.4, 1.5, 0.0))
    assert not watch.update(2.0, sim)
    assert watch.done and watch.done_at == 2.0
    assert not watch.update(2.5, sim)
    sim.teleport(0, Pose(0.0, 0.0, 0.0))  # pushed away: not done any more, the settle starts again
    assert not watch.update(2.6, sim) and watch.done_at is None
    sim.teleport(0, Pose(1.4, 1.5, 0.0))
    assert not watch.update(3.0, sim)
    assert watch.update(4.0, sim) and watch.done_at == 3.0


def test_any_callable_is_a_done_predicate() -> None:
    sim = build_simulation(ONE_BOARD)
    watch = DoneWatch(lambda s: s.time >= 0.0, settle=0.0)
    assert watch.update(sim.time, sim)


@pytest.mark.parametrize("behaviour", ["boards", "light"])
def test_each_auto_behaviour_has_a_task(behaviour: str) -> None:
    assert callable(task_done(behaviour))


@pytest.mark.parametrize("behaviour", ["", "dance"])
def test_a_behaviour_without_a_task_is_refused_by_name(behaviour: str) -> None:
    with pytest.raises(HilBringupError, match=f"behaviour {behaviour!r} has no task"):
        task_done(behaviour)


def test_negative_settle_is_refused() -> None:
    with pytest.raises(HilBringupError, match="settle"):
        DoneWatch(all_boards_down, settle=-1.0)
