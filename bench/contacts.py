"""Contacts: the native engine where robots touch things, beside MuJoCo on the same scenes.

Each scene is one :class:`~hil_sim.core.simulation.Simulation` of the demo robot with
all its sensors (ultrasonic and IR cones, four photoresistors, compass, bumpers at
50 Hz), 1 kHz physics, stepped a sensor period at a time (as ``sim_core``), run once
with ``physics="native"`` and once with ``physics="mujoco"``: the same world file, the
same robot (MuJoCo builds it from its URDF), the same motor inputs.

* ``wall``: a 4 m arena; the robot 0.3 m from a wall drives into it at full power and
  keeps pushing.
* ``slide``: the robot meets a wall at 30 degrees at full power and slides along it.
* ``board_pair``: robots are ghosts to each other in both engines (DESIGN.md
  "Simulation"), so two robots push each other through something between them: a
  board (2 kg) they drive into from its two faces at full power and keep pushing. The
  world's ``push_threshold`` is 1 m/s so that natively the board stands the hits.
* ``board_push``: natively a board never slides: hit slower than ``push_threshold`` it
  stands and stops the robot like a wall, faster it falls and vanishes. A board pushed
  along the floor is therefore natively a robot held against a standing board it
  creeps into below the threshold (duty 80 of 1024, the demo world's 0.2 kg board and
  0.05 m/s threshold); MuJoCo pushes that board along the floor.
* ``crowd``: 100 robots on a 0.4 m grid in a 6 m arena, each driving at full power
  toward the same corner (robots meet walls, slide along them, and press into the
  corner), 200 Hz physics; native only.

Targets (issue 26): each of the four scenes natively at least twice MuJoCo's RTF on
the same scene in the same run; the crowd at least 10x real time. Baselines: MuJoCo's
RTF per scene (same run), and the native engine before its contact fast path
(:data:`BEFORE`, measured with this script on this machine, stated with its commit).
"""

from __future__ import annotations

import argparse
import math
import time

from _benchlib import bar_plot, emit, progress

from hil_sim.core.build import build_simulation
from hil_sim.core.simulation import Simulation
from hil_sim.core.world import Board, Pose, WorldConfig

NAME = "contacts"
FULL = 1024.0
CREEP = 80.0
ARENA = WorldConfig(width=4.0, height=4.0)
PAIR_WORLD = WorldConfig(
    width=4.0, height=4.0, boards=(Board(0.0, 0.0, 0.0, width=0.6, mass=2.0),), push_threshold=1.0
)
PUSH_WORLD = WorldConfig(width=4.0, height=4.0, boards=(Board(0.6, 0.0, math.pi),))
CROWD_WORLD = WorldConfig(width=6.0, height=6.0)
CORNER = (3.0, 3.0)
SCENES = ("wall", "slide", "board_pair", "board_push")
#: The native engine before held contacts took their blocks at once: this script (20 s
#: simulated, best of 3) on the engine of commit f02a552, on this 2-core machine with
#: other jobs beside it (load average ~3), a minute before the results it stands beside.
BEFORE_COMMIT = "f02a552"
BEFORE = {"wall": 8.0, "slide": 8.2, "board_pair": 7.5, "board_push": 8.6, "crowd": 16.8}


def drive(sim: Simulation, duty: float) -> None:
    """Every robot's two L298 channels forward at this enable duty."""
    for side in ("left", "right"):
        sim.set_input(f"motor_{side}.enable", duty)
        sim.set_input(f"motor_{side}.a", 1.0)


def scene(name: str, physics: str) -> Simulation:
    """The scene ``name`` built and driven, at time 0."""
    if name == "wall":
        sim = build_simulation(ARENA, physics=physics)
        sim.teleport(0, Pose(1.6, 0.0, 0.0))
        drive(sim, FULL)
    elif name == "slide":
        sim = build_simulation(ARENA, physics=physics)
        sim.teleport(0, Pose(1.4, -1.0, math.radians(60.0)))
        drive(sim, FULL)
    elif name == "board_pair":
        sim = build_simulation(PAIR_WORLD, robots=2, physics=physics)
        sim.teleport(0, Pose(-0.4, 0.0, 0.0))
        sim.teleport(1, Pose(0.4, 0.0, math.pi))
        drive(sim, FULL)
    elif name == "board_push":
        sim = build_simulation(PUSH_WORLD, physics=physics)
        sim.teleport(0, Pose(0.45, 0.0, 0.0))
        drive(sim, CREEP)
    elif name == "crowd":
        sim = build_simulation(CROWD_WORLD, robots=100, spacing=0.4, physics=physics, physics_rate=200.0)
        for robot in range(sim.count):
            x, y = float(sim.x[robot]), float(sim.y[robot])
            sim.teleport(robot, Pose(x, y, math.atan2(CORNER[1] - y, CORNER[0] - x)))
        drive(sim, FULL)
    else:
        raise ValueError(name)
    return sim


def rtf(name: str, physics: str, seconds: float, *, repeats: int) -> tuple[float, Simulation]:
    """Best RTF of ``repeats`` runs of the scene, and the last run's simulation."""
    best, sim = math.inf, None
    for _ in range(repeats):
        sim = scene(name, physics)
        steps = round(seconds / sim.dt)
        start = time.perf_counter()
        sim.step(steps)
        best = min(best, time.perf_counter() - start)
    assert sim is not None
    return seconds / best, sim


def outcome(sim: Simulation) -> dict[str, object]:
    """Where the robots ended: what shows that a scene did what it says."""
    return {
        "x": [round(float(v), 4) for v in sim.x[:2]],
        "y": [round(float(v), 4) for v in sim.y[:2]],
        "v": [round(float(v), 4) for v in sim.v[:2]],
        "bumpers_pressed": int(sim.bumpers.any(axis=1).sum()),
        "boards_down": sim.geometry.boards_down,
    }


def crowd_spread(sim: Simulation) -> dict[str, float]:
    """How far the crowd's robots are from the corner they drive to (m)."""
    gap = [math.hypot(CORNER[0] - float(x), CORNER[1] - float(y)) for x, y in zip(sim.x, sim.y, strict=True)]
    return {
        "nearest_m": round(min(gap), 3),
        "farthest_m": round(max(gap), 3),
        "pressed": int(sim.bumpers.any(axis=1).sum()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="simulated seconds per scene")
    parser.add_argument("--repeats", type=int, default=3, help="runs per scene and engine (best counts)")
    parser.add_argument("--plot", default="bench/results/contacts.png", help="bar chart ('' for none)")
    args = parser.parse_args()

    figures: dict[str, float] = {}
    target: dict[str, str] = {}
    baseline: dict[str, float | str] = {}
    details: dict[str, object] = {}
    ratios: dict[str, float] = {}
    for name in SCENES:
        progress(NAME, f"{name}: mujoco")
        mujoco_rtf, mujoco_sim = rtf(name, "mujoco", args.seconds, repeats=args.repeats)
        progress(NAME, f"{name}: mujoco {mujoco_rtf:.1f}x; native")
        native_rtf, native_sim = rtf(name, "native", args.seconds, repeats=args.repeats)
        progress(NAME, f"{name}: native {native_rtf:.1f}x")
        figures[f"{name}_native_rtf"] = round(native_rtf, 1)
        figures[f"{name}_native_over_mujoco"] = round(native_rtf / mujoco_rtf, 2)
        target[f"{name}_native_over_mujoco"] = ">= 2"
        baseline[f"{name}_mujoco_rtf"] = round(mujoco_rtf, 1)
        if name in BEFORE:
            baseline[f"{name}_native_rtf_before_{BEFORE_COMMIT}"] = BEFORE[name]
        details[name] = {"native": outcome(native_sim), "mujoco": outcome(mujoco_sim)}
        ratios[name] = native_rtf / mujoco_rtf
    progress(NAME, "crowd: native")
    crowd_rtf, crowd_sim = rtf("crowd", "native", args.seconds, repeats=args.repeats)
    progress(NAME, f"crowd: native {crowd_rtf:.1f}x")
    figures["crowd_100_robots_200hz_rtf"] = round(crowd_rtf, 1)
    target["crowd_100_robots_200hz_rtf"] = ">= 10"
    if "crowd" in BEFORE:
        baseline[f"crowd_100_robots_200hz_rtf_before_{BEFORE_COMMIT}"] = BEFORE["crowd"]
    details["crowd"] = crowd_spread(crowd_sim)
    if args.plot:
        bar_plot(
            ratios,
            target=2.0,
            unit="x MuJoCo's RTF",
            title="native contacts: RTF over MuJoCo's on the same scene",
            path=args.plot,
            thousands=False,
        )
    emit(
        NAME,
        figures=figures,
        target=target,
        baseline=baseline,
        notes=" ".join(
            (
                f"demo robot, all sensors at 50 Hz, 1 kHz physics, {args.seconds:g} s simulated per scene,",
                f"stepped a sensor period at a time, best of {args.repeats}; wall: full power into a wall;",
                "slide: into a wall at 30 degrees, sliding along it; board_pair: two robots (ghosts to each",
                "other) pushing a 2 kg board from its two faces (push_threshold 1 m/s); board_push: creeping",
                "(duty 80) into a 0.2 kg board below push_threshold (natively held at it, MuJoCo pushes it",
                "along); crowd: 100 robots, 6 m arena, 200 Hz physics, all driving to one corner; baselines:",
                "MuJoCo on the same scene in the same run, and the native engine before held contacts took",
                f"their blocks at once, measured with this script at {BEFORE_COMMIT}",
            )
        ),
        details={"scenes": details},
    )


if __name__ == "__main__":
    main()
