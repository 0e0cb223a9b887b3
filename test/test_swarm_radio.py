"""The swarm in the loop (issue 13): K HIL robots, each with its MCU, bridge, loop and radio module.

The MCUs are virtual or the real firmware in simavr (relaying through its emulated
SC16IS750 UART bridge).

Lockstep runs of the swarm world: the robot nearest the light sees it, the others
only hear about it. With the radio they gather; without it the blind ones never
leave; with a robot's radio module gone its MCU reports the radio lost and the robot,
blind, stays where it is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hil_bringup.core.done import swarm_gathered
from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner

WORLD = Path(__file__).resolve().parents[1] / "ws" / "src" / "hil_sim" / "worlds" / "swarm.yaml"
K = 5
#: The swarm world's start grid: robot 3 sees the light, the others are 2.3 m or more from it.
SPACING = 0.8
#: Generous: the swarm gathers in about 7 s simulated here.
GATHER_LIMIT_S = 60.0


def swarm_runner(*, radio: bool, robots: int = K, mcu: str = "virtual") -> GraphRunner:
    return GraphRunner(
        GraphOptions(
            rtf=0.0,
            robots=robots,
            hil_robots=robots,
            radio=radio,
            robot_spacing=SPACING,
            mcu=mcu,
            behaviour="swarm",
            world=str(WORLD),
        )
    )


@pytest.mark.parametrize("mcu", ["virtual", "simavr"])
def test_the_swarm_gathers_at_the_light_when_the_robots_share_what_they_see(mcu: str) -> None:
    runner = swarm_runner(radio=True, mcu=mcu)
    runner.start()
    try:
        sim = runner.sim.sim
        while not swarm_gathered(sim, K) and sim.time < GATHER_LIMIT_S:
            runner.step()
        assert swarm_gathered(sim, K), f"not gathered in {GATHER_LIMIT_S} s: x = {sim.x.round(2)}"
        assert runner.sim.radio is not None
        total = runner.sim.radio.stats()["total"]
        assert total["delivered"] > 0 and runner.sim.radio_errors == 0  # type: ignore[index]
        assert all(c.radio is not None and c.radio.module.sent > 0 for c in runner.chains)
        assert all(c.loop.loop.radio.heard > 0 for c in runner.chains)
    finally:
        runner.stop()


def test_without_the_radio_the_robots_that_cannot_see_the_light_never_leave() -> None:
    runner = swarm_runner(radio=False)
    runner.start()
    try:
        sim = runner.sim.sim
        start = sim.x.copy(), sim.y.copy()
        while sim.time < 20.0:
            runner.step()
        assert not swarm_gathered(sim, K)
        moved = abs(sim.x - start[0]) + abs(sim.y - start[1])
        assert (moved < 0.05).sum() >= 3, moved.round(3)  # the blind ones waited
        assert moved.max() > 0.3  # the one that sees the light went to it
    finally:
        runner.stop()


def test_a_lost_radio_is_reported_and_leaves_the_blind_robot_standing() -> None:
    runner = swarm_runner(radio=True)
    runner.start()
    try:
        sim = runner.sim.sim
        blind = 2  # 3.1 m from the light, behind the others
        runner.kill_radio(robot=blind)
        start = float(sim.x[blind]), float(sim.y[blind])
        while sim.time < 5.0:
            runner.step()
        assert runner.chains[blind].loop.loop.radio.state == "LOST"  # the MCU's RST,LOST after 3 s
        assert abs(sim.x[blind] - start[0]) + abs(sim.y[blind] - start[1]) < 0.05
        assert sim.v[blind] == pytest.approx(0.0, abs=1e-3)
    finally:
        runner.stop()
