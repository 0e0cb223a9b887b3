"""Physics backends side by side: headless speed of ``mujoco`` next to ``native``, and the
whole HIL loop in lockstep on each.

* Core: one robot, all sensors (ultrasonic + IR cones by ray casting, 4 photoresistors,
  magnetometer at 50 Hz), 1 kHz physics, the demo world (six boards, a box, walls),
  stepped in 5 ms periods as the simulator node does, driving an arc inside the ring
  for the first simulated seconds and then charging the ring (boards topple in
  MuJoCo). Target: mujoco >= 20x real time. Baseline: native, measured beside it.
* Whole loop: the one-process runner (``hil_sim_runner --rtf 0 --physics ...``) on the
  boards demo with the virtual MCU, every part stepped in simulated time over real
  ptys; RTF with mujoco, native beside it.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from _benchlib import bar_plot, emit, private_ros_domain, progress
from _runnerlib import lockstep_rtf

from hil_bringup.core.graph import GraphOptions
from hil_sim.core.build import build_simulation
from hil_sim.core.simulation import Simulation
from hil_sim.core.world import load_world

NAME = "physics_backends"
WORLDS = Path(__file__).resolve().parent.parent / "ws" / "src" / "hil_sim" / "worlds"
ARC = (700.0, 1024.0)  # left, right enable (A high, B low: forward)
CHARGE = (1024.0, 1024.0)


def drive(sim: Simulation, enables: tuple[float, float]) -> None:
    """The demo robot's L298 channels forward at these enable duties."""
    for side, enable in zip(("left", "right"), enables, strict=True):
        sim.set_input(f"motor_{side}.enable", enable)
        sim.set_input(f"motor_{side}.a", 1.0)


def core(physics: str, seconds: float, *, repeats: int) -> dict[str, float]:
    """RTF of the simulation core alone (best of ``repeats``), and the boards it knocked down."""
    best, down = float("inf"), 0
    world = load_world(WORLDS / "demo.yaml")
    for _ in range(repeats):
        sim = build_simulation(world, physics=physics)
        drive(sim, ARC)
        periods = round(seconds / 0.005)
        start = time.perf_counter()
        for period in range(periods):
            if period == periods // 2:
                drive(sim, CHARGE)
            sim.step(5)
        best = min(best, time.perf_counter() - start)
        down = sim.geometry.boards_down
    return {"rtf": seconds / best, "boards_down": down}


def whole_loop(physics: str, seconds: float) -> float:
    """RTF of the lockstep runner, virtual MCU, boards demo, over ``seconds`` simulated."""
    options = GraphOptions(rtf=0.0, mcu="virtual", behaviour="boards", physics=physics)
    return lockstep_rtf(options, seconds)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0, help="simulated seconds per core run")
    parser.add_argument("--loop-seconds", type=float, default=20.0, help="simulated seconds of whole loop")
    parser.add_argument(
        "--plot", default="bench/results/physics_backends.png", help="bar chart ('' for none)"
    )
    args = parser.parse_args()
    private_ros_domain()

    progress(NAME, "core, mujoco")
    mujoco_core = core("mujoco", args.seconds, repeats=3)
    progress(NAME, f"mujoco {mujoco_core['rtf']:.1f}x; core, native")
    native_core = core("native", args.seconds, repeats=3)
    progress(NAME, f"native {native_core['rtf']:.1f}x; whole loop, mujoco")
    mujoco_loop = whole_loop("mujoco", args.loop_seconds)
    progress(NAME, f"mujoco loop {mujoco_loop:.1f}x; whole loop, native")
    native_loop = whole_loop("native", args.loop_seconds)
    if args.plot:
        bar_plot(
            {
                "mujoco core": mujoco_core["rtf"],
                "native core": native_core["rtf"],
                "loop, mujoco": mujoco_loop,
                "loop, native": native_loop,
            },
            target=20.0,
            unit="x real time",
            title="physics backends: mujoco beside native",
            path=args.plot,
            thousands=False,
            target_label="target (mujoco core)",
        )
    emit(
        NAME,
        figures={
            "mujoco_one_robot_all_sensors_1khz_rtf": round(mujoco_core["rtf"], 1),
            "mujoco_boards_down": mujoco_core["boards_down"],
            "mujoco_whole_loop_lockstep_rtf": round(mujoco_loop, 2),
        },
        target={"mujoco_one_robot_all_sensors_1khz_rtf": ">= 20"},
        baseline={
            "native_one_robot_all_sensors_1khz_rtf": round(native_core["rtf"], 1),
            "native_boards_down": native_core["boards_down"],
            "native_whole_loop_lockstep_rtf": round(native_loop, 2),
        },
        notes=(
            f"demo world, one robot, 1 kHz physics, sensors at 50 Hz, 5 ms periods, {args.seconds:g} s "
            "simulated (arc, then a charge through the ring), best of 3; whole loop: virtual MCU, "
            f"boards demo, seed 0, {args.loop_seconds:g} s simulated"
        ),
    )


if __name__ == "__main__":
    main()
