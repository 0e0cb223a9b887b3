"""world/markers: the world's markers kept between messages, the same as built afresh."""

from __future__ import annotations

from pathlib import Path

from builtin_interfaces.msg import Time

from hil_sim.core.build import build_simulation
from hil_sim.core.scene import led_shapes, world_shapes
from hil_sim.core.simulation import Simulation
from hil_sim.core.world import load_world
from hil_sim.sim_markers import WorldMarkers, marker_array

WORLDS = Path(__file__).resolve().parent.parent / "worlds"


def _afresh(sim: Simulation, stamp: Time) -> list[object]:
    standing = [bool(s) for s in sim.geometry.standing]
    shapes = [*world_shapes(sim.world, standing), *led_shapes(sim.x, sim.y, sim.led)]
    return marker_array(shapes, stamp).markers


def test_world_markers_are_those_built_afresh_also_after_a_board_falls_and_the_leds_change() -> None:
    sim = build_simulation(load_world(WORLDS / "demo.yaml"))
    markers = WorldMarkers()
    assert markers.message(sim, Time(sec=1)).markers == _afresh(sim, Time(sec=1))
    sim.geometry.standing[0] = False
    sim.led[0] = 1.0
    assert markers.message(sim, Time(sec=2)).markers == _afresh(sim, Time(sec=2))
    sim.geometry.standing[:] = True
    assert markers.message(sim, Time(sec=3)).markers == _afresh(sim, Time(sec=3))
