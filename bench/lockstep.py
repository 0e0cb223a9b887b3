"""The whole HIL loop in lockstep, as fast as it goes, next to the physics core alone.

* Whole loop: the one-process runner (``hil_sim_runner --rtf 0``) on the boards demo,
  every part stepped in simulated time over real ptys: MCU, signal bridge, simulator,
  control loop. RTF = simulated s per wall s, with the virtual MCU (target >= 20) and
  with the robot firmware in simavr (target >= 3, near the AVR emulator's own
  ceiling, which ``bench/simavr.py`` measures). Also per CPU second of this process
  (the figure an idle machine would approach) and where a period's time goes.
* Baselines, measured in the same run: the physics core alone (same demo world, one
  robot driving an arc, all sensors, 1 kHz physics) stepped in the same 5 ms periods
  (target: the whole loop with the virtual MCU at least half its RTF), and the robot
  firmware's harness alone (``hil_simavr`` with the same coupling, no ROS, no
  simulator) driven in the same 5 ms steps (target: the whole loop with simavr at least
  three quarters of its RTF).
* The whole loops step as ``hil_sim_runner --rtf 0`` does (``step(ahead=True)``: a
  harness runs the next period's AVR step beside the physics when no loop frame falls
  between); the simavr loop stepped one period at a time (``step()``) beside them.
* The runs hold the CPUs' wake-up latency low (``cpu_latency`` auto, as a user's
  lockstep run does), and so do the baselines; the same two whole loops with
  ``cpu_latency`` off are measured beside them.
* Several HIL robots with their firmware in simavr: two in the swarm world, whose
  harnesses run each step side by side, beside one robot in the same world (no target;
  before the harnesses ran side by side two ran at 1.97x where one ran at 3.7x).
* ``--digest``: no timing; the digests (:mod:`hil_testing.run_digest`) of the lockstep
  runs in :data:`DIGEST_RUNS`, one JSON object, for comparing a change that must leave
  lockstep runs alone against the code before it.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from _benchlib import bar_plot, emit, private_ros_domain, progress
from _runnerlib import lockstep_rtf
from simavr import avr_speed

from hil_bridge.core.lockstep_io import passed_on
from hil_bridge.core.pty_link import PtyPair
from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner
from hil_common.core.cpu_latency import CpuLatencyHold
from hil_mcu.core.simavr import FirmwareOptions, build_firmware
from hil_sim.core.build import build_simulation
from hil_sim.core.world import load_world
from hil_testing.run_digest import lockstep_digest

NAME = "lockstep"
WORLDS = Path(__file__).resolve().parent.parent / "ws" / "src" / "hil_sim" / "worlds"
#: Figures of the issue that asked for this (before the work): whole loop 3.2x (virtual
#: MCU), 1.3-1.5x (simavr), physics core ~95x; two robots in simavr stepped one after
#: the other (at 634e1fd, one robot beside them 3.7x).
BEFORE = {
    "virtual_whole_loop_rtf": 3.2,
    "simavr_whole_loop_rtf": "1.3-1.5",
    "simavr_two_robots_rtf": 1.97,
}
#: The lockstep runs ``--digest`` fingerprints: the two MCUs, several robots with the
#: radio, link faults.
DIGEST_RUNS = {
    "virtual": GraphOptions(rtf=0.0, behaviour="boards"),
    "simavr": GraphOptions(rtf=0.0, behaviour="boards", mcu="simavr"),
    "swarm_radio": GraphOptions(
        rtf=0.0, behaviour="swarm", robots=3, hil_robots=2, radio=True, world="swarm"
    ),
    "faults": GraphOptions(rtf=0.0, behaviour="boards", faults=True, fault_drop=0.01),
    "simavr_swarm_radio": GraphOptions(
        rtf=0.0, behaviour="swarm", robots=3, hil_robots=2, radio=True, world="swarm", mcu="simavr"
    ),
}


def whole_loop(
    mcu: str, seconds: float, *, robots: int = 0, cpu_latency: str = "auto", ahead: bool = True
) -> dict[str, float]:
    """RTF (wall and per CPU second) of the lockstep runner over ``seconds`` simulated.

    ``robots``: that many HIL robots in the swarm world; 0: the boards demo.
    ``cpu_latency``: the run option (auto: held, as a user's lockstep run holds it).
    ``ahead``: stepped as ``hil_sim_runner`` steps (``step(ahead=True)``).
    """
    options = GraphOptions(rtf=0.0, mcu=mcu, behaviour="boards", cpu_latency=cpu_latency)
    if robots:
        options = replace(options, behaviour="swarm", robots=robots, hil_robots=robots, world="swarm")
    rtf, per_cpu = lockstep_rtf(options, seconds, ahead=ahead)
    return {"rtf": rtf, "rtf_per_cpu_s": per_cpu}


def breakdown(seconds: float) -> dict[str, float]:
    """Microseconds per 5 ms period in each part of a virtual-MCU lockstep run."""
    runner = GraphRunner(GraphOptions(rtf=0.0, mcu="virtual", behaviour="boards"))
    spent: dict[str, float] = defaultdict(float)

    def timed(owner: Any, method: str, part: str) -> None:
        inner: Callable[..., Any] = getattr(owner, method)

        def wrapper(*args: Any) -> Any:
            start = time.perf_counter()
            try:
                return inner(*args)
            finally:
                spent[part] += time.perf_counter() - start

        setattr(owner, method, wrapper)

    runner.start()
    try:
        mcu = runner.mcu
        assert mcu is not None
        timed(mcu, "advance_to", "mcu_us")
        timed(runner.bridge, "advance_to", "bridge_us")
        timed(runner.sim.sim, "step", "physics_and_sensors_us")
        timed(runner.sim, "publish_step", "sim_publish_us")
        timed(runner.loop, "advance_to", "control_loop_us")
        periods = 0
        start = time.perf_counter()
        while runner.sim.sim.time < seconds:
            runner.step()
            periods += 1
        total = time.perf_counter() - start
    finally:
        runner.stop()
    parts = {part: value / periods * 1e6 for part, value in spent.items()}
    parts["period_us"] = total / periods * 1e6
    parts["other_us"] = parts["period_us"] - sum(v for k, v in parts.items() if k != "period_us")
    return {k: round(v, 1) for k, v in parts.items()}


def physics_core(seconds: float, *, repeats: int = 3) -> float:
    """RTF of the physics core alone in 5 ms periods (best of ``repeats``)."""
    best = float("inf")
    for _ in range(repeats):
        sim = build_simulation(load_world(WORLDS / "demo.yaml"))
        for side, enable in (("left", 700.0), ("right", 1024.0)):
            sim.set_input(f"motor_{side}.enable", enable)
            sim.set_input(f"motor_{side}.a", 1.0)
        start = time.perf_counter()
        for _ in range(round(seconds / 0.005)):
            sim.step(5)
        best = min(best, time.perf_counter() - start)
    return seconds / best


#: Wall seconds without work after a hold on the CPU latency ends, before measuring
#: without one: a core that polled while it stood polls on until it idles again.
IDLE_AGAIN_S = 1.0


def pty_handovers(periods: int = 20_000, frame: int = 40) -> float:
    """Microseconds per period of two pty hand-overs alone, as a lockstep period has.

    A ``frame``-byte write on each of two ptys (the MCU's frame to the bridge, the
    bridge's to the MCU), each waited for on the other side (``passed_on``) and read:
    the kernel's share of a period, with nothing else in it.
    """
    data = bytes(frame)
    with PtyPair() as first, PtyPair() as second:
        ends = [(first.master_fd, os.open(first.slave_name, os.O_RDWR | os.O_NOCTTY))]
        ends.append((os.open(second.slave_name, os.O_RDWR | os.O_NOCTTY), second.master_fd))
        try:
            start = time.perf_counter()
            for _ in range(periods):
                for writer, reader in ends:
                    os.write(writer, data)
                    passed_on(reader, frame, yielding=False)
                    os.read(reader, 4096)
            return (time.perf_counter() - start) / periods * 1e6
        finally:
            os.close(ends[0][1])
            os.close(ends[1][0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=30.0, help="simulated seconds per whole-loop run")
    parser.add_argument("--simavr-seconds", type=float, default=10.0, help="simulated s with simavr")
    parser.add_argument("--plot", default="bench/results/lockstep.png", help="bar chart PNG ('' for none)")
    parser.add_argument(
        "--digest", action="store_true", help="print the digests of 5 s lockstep runs instead of timing"
    )
    args = parser.parse_args()
    private_ros_domain()
    if args.digest:
        digests = {name: lockstep_digest(options, seconds=5.0) for name, options in DIGEST_RUNS.items()}
        print(json.dumps(digests))
        return

    elf = build_firmware(FirmwareOptions(), progress=lambda line: progress(NAME, line))
    unheld_handovers = pty_handovers()
    # The baselines run under the same hold on the CPUs' wake-up latency as the runs
    # (cpu_latency auto); a hold the bench cannot get is named in the notes.
    with CpuLatencyHold() as hold:
        progress(NAME, f"{hold.describe()}; physics core alone")
        core = physics_core(args.seconds)
        progress(NAME, f"physics core {core:.1f}x; the harness alone")
        harness_alone = avr_speed(elf, 5.0)["avr_mhz_5ms_steps"] / 16.0
        progress(NAME, f"harness alone {harness_alone:.1f}x; two pty hand-overs alone")
        handovers = pty_handovers()
    progress(NAME, f"pty hand-overs {handovers:.1f} us a period ({unheld_handovers:.1f} unheld); whole loop")
    virtual = whole_loop("virtual", args.seconds)
    progress(NAME, f"virtual {virtual['rtf']:.1f}x; whole loop, firmware in simavr")
    simavr = whole_loop("simavr", args.simavr_seconds)
    progress(NAME, f"simavr {simavr['rtf']:.1f}x; simavr stepped one period at a time")
    simavr_in_turn = whole_loop("simavr", args.simavr_seconds, ahead=False)["rtf"]
    progress(NAME, f"simavr one period at a time {simavr_in_turn:.1f}x; both again with cpu_latency off")
    # A core that polled while the hold stood goes on polling until it idles again.
    time.sleep(IDLE_AGAIN_S)
    unheld = {
        mcu: whole_loop(mcu, seconds, cpu_latency="off")["rtf"]
        for mcu, seconds in (("virtual", args.seconds), ("simavr", args.simavr_seconds))
    }
    progress(
        NAME, f"cpu_latency off: virtual {unheld['virtual']:.1f}x, simavr {unheld['simavr']:.1f}x; swarm"
    )
    swarm = {n: whole_loop("simavr", args.simavr_seconds, robots=n)["rtf"] for n in (1, 2)}
    progress(NAME, f"simavr swarm: one robot {swarm[1]:.1f}x, two {swarm[2]:.1f}x; breakdown")
    parts = breakdown(min(args.seconds, 10.0))
    if args.plot:
        bar_plot(
            {
                "physics core": core,
                "whole loop, virtual MCU": virtual["rtf"],
                "whole loop, simavr": simavr["rtf"],
            },
            target=20.0,
            unit="x real time",
            title="lockstep speed (simulated s per wall s)",
            path=args.plot,
            thousands=False,
            target_label="target (virtual MCU)",
        )
    emit(
        NAME,
        figures={
            "virtual_whole_loop_rtf": round(virtual["rtf"], 2),
            "virtual_whole_loop_rtf_per_cpu_s": round(virtual["rtf_per_cpu_s"], 2),
            "simavr_whole_loop_rtf": round(simavr["rtf"], 2),
            "simavr_whole_loop_rtf_per_cpu_s_of_the_runner": round(simavr["rtf_per_cpu_s"], 2),
            "virtual_over_physics_core": round(virtual["rtf"] / core, 3),
            "simavr_over_harness_alone": round(simavr["rtf"] / harness_alone, 3),
            "simavr_two_robots_rtf": round(swarm[2], 2),
            **{f"virtual_period_{k}": v for k, v in parts.items()},
        },
        target={
            "virtual_whole_loop_rtf": ">= 20",
            "simavr_whole_loop_rtf": ">= 3",
            "virtual_over_physics_core": ">= 0.5",
            "simavr_over_harness_alone": ">= 0.75",
        },
        baseline={
            "physics_core_5ms_periods_rtf": round(core, 1),
            "harness_alone_5ms_steps_rtf": round(harness_alone, 2),
            "physics_core_period_us": round(0.005 / core * 1e6, 1),
            "two_pty_handovers_per_period_us": round(handovers, 1),
            "two_pty_handovers_per_period_us_cpu_latency_off": round(unheld_handovers, 1),
            "simavr_one_robot_swarm_world_rtf": round(swarm[1], 2),
            "virtual_whole_loop_rtf_cpu_latency_off": round(unheld["virtual"], 2),
            "simavr_whole_loop_rtf_cpu_latency_off": round(unheld["simavr"], 2),
            "virtual_over_physics_core_cpu_latency_off": round(unheld["virtual"] / core, 3),
            "simavr_over_harness_alone_cpu_latency_off": round(unheld["simavr"] / harness_alone, 3),
            "simavr_whole_loop_rtf_one_period_at_a_time": round(simavr_in_turn, 2),
            "simavr_over_harness_alone_one_period_at_a_time": round(simavr_in_turn / harness_alone, 3),
            **{f"before_{k}": v for k, v in BEFORE.items()},
        },
        notes=(
            "boards demo, seed 0, one process, rtf 0; per CPU second = simulated s per CPU s of this "
            "process (simavr's own process not counted; the runner spins for the harness's answer "
            "while a core is spare, so its CPU time is about its wall time); the harness alone is driven by "
            "the same request code, spin included; period parts timed with wrappers in a "
            "separate run (their overhead is in the parts); the runs hold the CPUs' wake-up latency "
            "at 0 (cpu_latency auto) and so do the baselines: "
            f"{hold.describe()}; the cpu_latency_off figures are the same runs without it; the runs "
            "step as hil_sim_runner does (step(ahead=True): a harness runs the next period's step "
            "beside the physics when no loop frame falls between), the one_period_at_a_time figures "
            "step without it (step(), as a test writing to a UART between periods does); two pty "
            "hand-overs: a 40-byte write on each of two ptys, waited for and read on the other side, "
            "nothing else (the kernel's share of a period); for virtual_over_physics_core >= 0.5 a "
            "whole period may take 2 x physics_core_period_us"
        ),
    )


if __name__ == "__main__":
    main()
