"""A user's robot profile in the loop (issue 23): lockstep RTF beside the demo robot's.

* User profile: ``bench/robots/encoders_sonars`` (an UNO, two quadrature encoders on
  pin-change interrupts, three HC-SR04 read with pulseIn, an L298N; its own sketch,
  brain none) in the one-process runner, lockstep, ``mcu simavr``, in the empty world:
  it drives ahead (about 0.5 m/s: each encoder some 5,500 edges a second) and turns
  away from the walls, while the runner's serial port takes its status lines.
* Baseline: the demo robot in the same bench run (its robot_mcu firmware in simavr
  under the control loop, the boards demo), timed the same way.

RTF is simulated seconds per wall second over ``--seconds`` of simulated time; the two
runs alternate ``--repeats`` times and the best of each is kept (the machine is shared).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from _benchlib import emit, private_ros_domain, progress

from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner

NAME = "profile_rtf"
ROBOT = Path(__file__).resolve().parent / "robots" / "encoders_sonars"


def lockstep_rtf(options: GraphOptions, seconds: float, *, warmup: float = 1.0) -> tuple[float, float, int]:
    """(wall RTF, CPU RTF of this process, bytes the firmware sent on its UART) over ``seconds``."""
    runner = GraphRunner(options)
    runner.start()
    try:
        while runner.sim.sim.time < warmup:
            runner.step()
        start_sim, start, cpu = runner.sim.sim.time, time.perf_counter(), time.process_time()
        heard = 0
        while runner.sim.sim.time - start_sim < seconds:
            runner.step(ahead=True)  # as hil_sim_runner steps: the UART is only read between periods
            if runner.serial is not None:
                heard += len(runner.serial.read())
        simulated = runner.sim.sim.time - start_sim
        return simulated / (time.perf_counter() - start), simulated / (time.process_time() - cpu), heard
    finally:
        runner.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=20.0, help="simulated seconds per timed run")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs of each robot, alternating")
    args = parser.parse_args()
    private_ros_domain()
    runs = {
        "user": GraphOptions(rtf=0.0, mcu="simavr", robot=str(ROBOT), world="empty"),
        "demo": GraphOptions(rtf=0.0, mcu="simavr", behaviour="boards"),
    }
    best: dict[str, tuple[float, float, int]] = {}
    for repeat in range(args.repeats):
        for kind, options in runs.items():
            result = lockstep_rtf(options, args.seconds)
            rtf, cpu_rtf, _ = result
            progress(NAME, f"{kind} run {repeat + 1}/{args.repeats}: RTF {rtf:.2f} (CPU {cpu_rtf:.2f})")
            if kind not in best or result[0] > best[kind][0]:
                best[kind] = result
    user, demo = best["user"], best["demo"]
    emit(
        NAME,
        figures={
            "user_profile_rtf": round(user[0], 2),
            "user_profile_cpu_rtf": round(user[1], 2),
            "user_over_demo": round(user[0] / demo[0], 3),
            "user_uart_bytes_per_s": round(user[2] / args.seconds),
        },
        target={"user_profile_rtf": ">= 1"},
        baseline={"demo_rtf": round(demo[0], 2), "demo_cpu_rtf": round(demo[1], 2)},
        notes=(
            f"lockstep, mcu simavr, {args.seconds:g} s simulated per run, best of {args.repeats};"
            " user profile: bench/robots/encoders_sonars (2 encoders, 3 HC-SR04, brain none) in the"
            " empty world; demo: robot_mcu under the control loop, boards demo"
        ),
    )


if __name__ == "__main__":
    main()
