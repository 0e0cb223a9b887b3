"""What two quadrature encoders cost a firmware-in-the-loop run (issue 24), at 0.5 m/s.

* Graph: the shipped rab_style robot (its own sketch in simavr, brain none: the
  runner's serial port sends ``o P P`` with P found to drive about 0.5 m/s) in the
  one-process runner, lockstep, empty world; RTF (simulated s per wall s) with its two
  encoders (12 CPR x4 on a 1:48 gearbox: some 5,500 edges a second per wheel at that
  speed, each a pin-change interrupt in the firmware), and without them
  (``bench/robots/rab_style_no_encoders``: the same sketch and pins, no encoder
  coupled, so no edge comes). The two alternate ``--repeats`` times; the best of each.
* Harness alone: the same firmware and coupling in the ``hil_simavr`` harness
  (:class:`~hil_mcu.core.simavr.SimavrProcess`) stepped by the same 5 ms cycles, no
  ROS and no simulator: the signal link gets frames whose encoder positions advance
  at the wheel speed of 0.5 m/s (or stand still), the UART the same ``o P P``.

Target: the encoders cost at most 20 % of the graph's RTF.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

from _benchlib import emit, private_ros_domain, progress

from hil_bridge.core.pty_link import PtyPair
from hil_bridge.core.signal_protocol import FrameEncoder, profile_layout
from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner
from hil_devices.core.profile import load_profile
from hil_mcu.core.simavr import SimavrProcess, cycles, profile_coupling, profile_firmware
from hil_sim.core.world import Pose

NAME = "encoders"
WITHOUT = Path(__file__).resolve().parent / "robots" / "rab_style_no_encoders"
SPEED = 0.5  # m/s
PERIOD = 0.005  # s, the signal period the runner steps by
#: How often the program repeats its motor command (the sketch stops the motors 2 s
#: after the last one, as ROSArduinoBridge does; a ros2_control driver sends them all along).
RESEND_S = 0.5
#: Where the robot starts in the 10 m empty world, facing +x: room for 8 m ahead.
START = Pose(-4.0, 0.0, 0.0)


def command(runner: GraphRunner, pwm: int) -> None:
    port = runner.serial
    assert port is not None
    port.write(f"o {pwm} {pwm}\r".encode())


def graph_run(robot: str, pwm: int, seconds: float) -> tuple[float, float]:
    """(RTF, mean speed m/s) of a lockstep run driving at ``o pwm pwm`` for ``seconds``."""
    runner = GraphRunner(GraphOptions(rtf=0.0, mcu="simavr", robot=robot, world="empty"))
    runner.start()
    try:
        sim = runner.sim.sim
        sim.teleport(0, START)
        next_command = 0.2  # the sketch is up

        def step() -> None:
            nonlocal next_command
            if sim.time >= next_command - 1e-9:
                next_command += RESEND_S
                command(runner, pwm)
            runner.step()
            if runner.serial is not None:
                runner.serial.read()  # the firmware's answers, taken as a program would

        while sim.time < 1.2:  # up to speed
            step()
        x0, start_sim, start = float(sim.x[0]), sim.time, time.perf_counter()
        while sim.time - start_sim < seconds:
            step()
        wall = time.perf_counter() - start
        return (sim.time - start_sim) / wall, (float(sim.x[0]) - x0) / (sim.time - start_sim)
    finally:
        runner.stop()


def calibrate(seconds: float = 2.0) -> tuple[int, float]:
    """The ``o`` PWM that drives rab_style at about SPEED, and the speed it gives."""
    trial = 200
    _, speed = graph_run("rab_style", trial, seconds)
    pwm = min(255, round(trial * SPEED / speed))
    _, reached = graph_run("rab_style", pwm, seconds)
    return pwm, reached


def harness_alone(pwm: int, seconds: float, *, moving: bool) -> float:
    """AVR seconds per wall second of the harness stepped by 5 ms, encoders turning at SPEED or still."""
    profile = load_profile("rab_style")
    layout = profile_layout(profile)
    elf = profile_firmware(profile)
    encoder = FrameEncoder(layout.outputs)
    counts_per_rad = 12 * 4 * 48 / (2 * math.pi)
    rate = SPEED / profile.body.wheel_radius * counts_per_rad if moving else 0.0
    signs = [-1.0 if slot.device == "encoder_right" else 1.0 for slot in layout.outputs]
    with PtyPair() as uart, PtyPair() as signal:
        process = SimavrProcess(
            elf,
            command_fd=uart.master_fd,
            signal_fd=signal.master_fd,
            coupling=profile_coupling(profile),
            lockstep=True,
            board=profile.board,
        )
        user, link = uart.user_end(), signal.user_end()
        try:
            process.run_to(cycles(0.2))
            os.write(user, f"o {pwm} {pwm}\r".encode())
            t, start = 0.2, time.perf_counter()
            while t < 0.2 + seconds - 1e-9:
                t += PERIOD
                counts = rate * t
                values = [((sign * counts + 32768) % 65536) - 32768 for sign in signs]
                os.write(link, encoder.encode(values))
                process.run_to(cycles(t))
                for fd in (user, link):  # what the firmware sent: read and dropped
                    try:
                        while os.read(fd, 65536):
                            pass
                    except BlockingIOError:
                        pass
            return seconds / (time.perf_counter() - start)
        finally:
            process.stop()
            os.close(user)
            os.close(link)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0, help="simulated seconds per timed run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each, alternating")
    args = parser.parse_args()
    private_ros_domain()
    pwm, speed = calibrate()
    progress(NAME, f"o {pwm} {pwm} drives rab_style at {speed:.3f} m/s")
    best: dict[str, float] = {}
    runs = {"with": "rab_style", "without": str(WITHOUT)}
    for repeat in range(args.repeats):
        for kind, robot in runs.items():
            rtf, _ = graph_run(robot, pwm, args.seconds)
            progress(NAME, f"graph {kind} encoders, run {repeat + 1}/{args.repeats}: RTF {rtf:.2f}")
            best[kind] = max(best.get(kind, 0.0), rtf)
        for kind, moving in (("alone_with", True), ("alone_without", False)):
            ratio = harness_alone(pwm, args.seconds, moving=moving)
            progress(NAME, f"harness {kind} encoders turning, run {repeat + 1}/{args.repeats}: {ratio:.2f}")
            best[kind] = max(best.get(kind, 0.0), ratio)
    emit(
        NAME,
        figures={
            "rtf_with_encoders": round(best["with"], 2),
            "encoders_cost": round(1.0 - best["with"] / best["without"], 3),
            "harness_alone_with_encoders": round(best["alone_with"], 2),
            "harness_alone_encoders_cost": round(1.0 - best["alone_with"] / best["alone_without"], 3),
            "speed_m_s": round(speed, 3),
        },
        target={"encoders_cost": "<= 0.2"},
        baseline={
            "rtf_without_encoders": round(best["without"], 2),
            "harness_alone_without_encoders": round(best["alone_without"], 2),
        },
        notes=(
            f"lockstep, 5 ms periods, {args.seconds:g} s simulated per run, best of {args.repeats};"
            f" rab_style driven with o {pwm} {pwm}; harness alone: AVR s per wall s, no ROS, no simulator"
        ),
    )


if __name__ == "__main__":
    main()
