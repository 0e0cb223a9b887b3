"""Headless simulator core speed, as real-time factor (simulated s per wall s).

* One robot, all sensors (ultrasonic + IR cones, 4 photoresistors, magnetometer at
  50 Hz), 1 kHz physics, the demo world, driving an arc inside the board ring:
  target >= 100x. Also reported: the same robot pushing against a wall (held against
  it; ``contacts`` has the contact scenes beside MuJoCo).
* 100 robots at 200 Hz physics in a 10 m arena: target >= 10x, next to the
  per-robot Python loop it replaces (100 one-robot simulations stepped in turn).

Baseline: MuJoCo stepping an equivalent scene (a two-wheeled robot with a caster,
ten rangefinders, walls and six free-standing boards, 1 kHz) when it is installed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _benchlib import emit, progress

from hil_sim.core.build import build_simulation
from hil_sim.core.simulation import Simulation
from hil_sim.core.world import Pose, WorldConfig, load_world

WORLDS = Path(__file__).resolve().parent.parent / "ws" / "src" / "hil_sim" / "worlds"
ARC = (700.0, 1024.0)  # left, right enable: a 0.37 m circle inside the ring of boards


def drive(sim: Simulation, left: float, right: float) -> None:
    for side, enable in (("left", left), ("right", right)):
        sim.set_input(f"motor_{side}.enable", enable)
        sim.set_input(f"motor_{side}.a", 1.0)


def rtf(run: Callable[[], None], simulated: float, *, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return simulated / best


def one_robot(seconds: float) -> dict[str, float]:
    def arc() -> None:
        sim = build_simulation(load_world(WORLDS / "demo.yaml"))
        drive(sim, *ARC)
        sim.step(round(seconds * 1000))

    def wall() -> None:
        sim = build_simulation(WorldConfig(width=4.0, height=4.0))
        sim.teleport(0, Pose(1.7, 0.0, 0.0))
        drive(sim, 1024.0, 1024.0)
        sim.step(round(seconds * 1000))

    return {
        "one_robot_arc_rtf": rtf(arc, seconds),
        "one_robot_pushing_wall_rtf": rtf(wall, seconds, repeats=1),
    }


def swarm(seconds: float, robots: int = 100) -> dict[str, float]:
    world = load_world(WORLDS / "empty.yaml")
    options = {"physics_rate": 200.0, "sensor_rate": 50.0}

    def vectorised() -> None:
        sim = build_simulation(world, robots=robots, spacing=0.4, **options)
        drive(sim, *ARC)
        sim.step(round(seconds * 200))

    def per_robot() -> None:
        sims = [build_simulation(world, **options) for _ in range(robots)]
        for sim in sims:
            drive(sim, *ARC)
        for _ in range(round(seconds * 200)):
            for sim in sims:
                sim.step(1)

    return {
        "swarm_100_robots_200hz_rtf": rtf(vectorised, seconds),
        "per_robot_loop_100_robots_200hz_rtf": rtf(per_robot, seconds / 4, repeats=1),
    }


MJCF = """
<mujoco>
  <option timestep="0.001"/>
  <worldbody>
    <geom type="plane" size="2 2 0.1"/>
    <geom type="box" pos="2 0 0.1" size="0.01 2 0.1"/>
    <geom type="box" pos="-2 0 0.1" size="0.01 2 0.1"/>
    <geom type="box" pos="0 2 0.1" size="2 0.01 0.1"/>
    <geom type="box" pos="0 -2 0.1" size="2 0.01 0.1"/>
    {boards}
    <body name="robot" pos="0 0 0.035">
      <freejoint/>
      <geom type="cylinder" size="0.09 0.015" mass="0.6"/>
      <geom type="sphere" pos="-0.07 0 -0.02" size="0.013" friction="0.01 0.005 0.0001" mass="0.01"/>
      <body pos="0 0.07 0"><joint name="left" type="hinge" axis="0 1 0"/>
        <geom type="cylinder" size="0.033 0.01" euler="90 0 0" mass="0.05"/></body>
      <body pos="0 -0.07 0"><joint name="right" type="hinge" axis="0 1 0"/>
        <geom type="cylinder" size="0.033 0.01" euler="90 0 0" mass="0.05"/></body>
      {sites}
    </body>
  </worldbody>
  <actuator>
    <motor joint="left" gear="1" ctrlrange="-0.5 0.5"/>
    <motor joint="right" gear="1" ctrlrange="-0.5 0.5"/>
  </actuator>
  <sensor>{rangefinders}</sensor>
</mujoco>
"""


def mujoco_baseline(seconds: float) -> dict[str, float] | None:
    try:
        import mujoco  # noqa: PLC0415 - optional baseline
    except ImportError:
        return None
    boards = "".join(
        f'<body pos="{0.6 * np.cos(a):.3f} {0.6 * np.sin(a):.3f} 0.15" euler="0 0 {np.degrees(a):.1f}">'
        '<freejoint/><geom type="box" size="0.01 0.05 0.15" mass="0.05"/></body>'
        for a in np.linspace(0, 2 * np.pi, 6, endpoint=False)
    )
    angles = list(np.linspace(-15, 15, 5)) + list(np.linspace(-3, 3, 5))
    sites = "".join(
        f'<site name="ray{k}" pos="0.09 0 0" euler="0 90 {-a:.1f}"/>' for k, a in enumerate(angles)
    )
    rangefinders = "".join(f'<rangefinder site="ray{k}"/>' for k in range(len(angles)))
    model = mujoco.MjModel.from_xml_string(MJCF.format(boards=boards, sites=sites, rangefinders=rangefinders))
    data = mujoco.MjData(model)

    def run() -> None:
        mujoco.mj_resetData(model, data)
        data.ctrl[:] = [0.02, 0.03]
        for _ in range(round(seconds * 1000)):
            mujoco.mj_step(model, data)

    return {"mujoco_one_robot_1khz_rtf": rtf(run, seconds)}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="simulated seconds per measurement")
    args = parser.parse_args()
    progress("sim_core", f"one robot, {args.seconds:g} s simulated ...")
    figures = one_robot(args.seconds)
    progress("sim_core", "100 robots ...")
    figures |= swarm(args.seconds / 4)
    progress("sim_core", "MuJoCo ...")
    baseline: dict[str, float | str] = {
        "per_robot_loop_100_robots_200hz_rtf": figures.pop("per_robot_loop_100_robots_200hz_rtf")
    }
    baseline |= mujoco_baseline(args.seconds) or {"mujoco_one_robot_1khz_rtf": "not installed"}
    emit(
        "sim_core",
        figures={k: round(v, 1) for k, v in figures.items()},
        target={"one_robot_arc_rtf": ">= 100", "swarm_100_robots_200hz_rtf": ">= 10"},
        baseline={k: round(v, 1) if isinstance(v, float) else v for k, v in baseline.items()},
        notes=" ".join(
            (
                "headless core, best of 3; one robot: demo world, all sensors at 50 Hz, 1 kHz physics,",
                "arc inside the board ring (and pushing a wall);",
                "swarm: 100 robots, 10 m arena, 200 Hz physics; baselines: MuJoCo with an equivalent",
                "robot, 10 rangefinders and 6 free boards at 1 kHz, and 100 one-robot simulations",
                "stepped in a Python loop",
            )
        ),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
