"""``hil_sim_runner`` (``make sim``): the whole HIL loop in one process, with a live status.

Starts the graph of ``sim.launch.py`` (virtual MCU, signal bridge, simulator, control
loop, robot description) from the same description and parameter files, in this
process. The robot runs the ``boards`` demo by default. A live status (rich) shows
simulated time, RTF, pose, boards down, link round trips and loop jitter; Ctrl-C stops
cleanly (threads joined, ptys closed, their links removed). At the end the run's
folder holds ``report.png`` (arena, boards standing or fallen, trajectory, LED events)
and ``metrics.json``; the last lines printed name both, and the pin trace
(``--mcu simavr --trace-pins ...``: ``pins.vcd``, the firmware's pins timed in AVR cycles)
when there is one. SIGTERM ends it like Ctrl-C, and
a second signal changes nothing: the handlers only note the request, and go in before
the graph's modules are imported. A killed run's pty folder and shared-memory files
are removed by the next run.

    hil_sim_runner                          # real time, until Ctrl-C
    hil_sim_runner --headless --duration 120 --rtf 0
    make sim ARGS="--headless --duration 60 --rtf 0 --record /tmp/run1"
    make sim ARGS="--headless --rtf 0 --until-done"   # until the task is done
    make sim ARGS="--mcu simavr --rtf 0 --duration 5 --trace-pins motor_left,ultrasonic"
    hil_sim_runner --live                   # watch it: Foxglove app or Lichtblick, ws://localhost:8765

With ``--live`` the run serves its scene and every topic over the Foxglove WebSocket
protocol (the ``live_view`` node; the address is printed).

With ``--until-done`` the run ends once the behaviour's task (boards: all down; light:
robot 0 within the light's reference distance) has been done for a settle second;
``metrics.json`` records ``done`` and ``done_at_s``.

A part of the run that dies (a node's thread, the firmware harness of ``--mcu
simavr``) ends the run at once, in real time and in lockstep: the message names it,
the report is written as after any run (``metrics.json`` has it as ``failure``), and
the exit status is 1.

Exit status: 0, or with ``--until-done`` 1 if ``--duration`` ran out before the task
was done; 1 if a part of the run died; 2 on a bad configuration.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from hil_bringup.core.done import (
    GATHER_RADIUS,
    TASK_TEXT,
    DonePredicate,
    DoneWatch,
    swarm_gathered,
    task_done,
)
from hil_bringup.core.graph import GraphOptions, user_ports, your_program
from hil_bringup.core.options import add_arguments, from_namespace
from hil_bringup.errors import HilBringupError
from hil_common.core.arg_types import finite, integer
from hil_common.core.kinematics import wrap_angle
from hil_common.core.leftovers import remove_dead_dds_segments
from hil_common.core.shutdown import ShutdownSignals, ignore_further_stop_signals, shutdown_signals
from hil_common.errors import HilError
from hil_mcu.core.pin_trace import TRACE_FILE, trace_summary

if TYPE_CHECKING:
    from hil_bringup.core.report import RunLog
    from hil_bringup.graph_runner import GraphRunner
    from robot_control.core.heartbeat import LinkHealth

#: Simulated seconds between trajectory samples of the report.
SAMPLE_PERIOD = 0.05
#: Why a run ended.
Ending = Literal["done", "duration", "boards", "stopped", "failed"]
#: Wall seconds between looks at whether a part of the run has died.
FAILURE_CHECK_PERIOD_S = 0.1
#: The loop's figures of a robot 0 without one (brain none).
NO_LOOP: dict[str, Any] = {
    "mode": "brain none (your program)",
    "held_by": "-",
    "mcu_link": None,
    "mcu_rtt_ms": None,
    "station": "-",
    "jitter_p99_us": None,
    "frames": 0,
}


def build_parser() -> argparse.ArgumentParser:
    """The command line: its own options and the run options (GraphOptions)."""
    parser = argparse.ArgumentParser(
        prog="hil_sim_runner", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--duration",
        type=finite(minimum=0.0),
        default=0.0,
        help="simulated seconds to run (0: until Ctrl-C)",
    )
    parser.add_argument("--headless", action="store_true", help="no live status, progress lines only")
    # The run's options (GraphOptions), as declared there; --fault-drop and --fault-corrupt
    # imply --faults when given, so they start unset.
    add_arguments(parser, GraphOptions, unset=("fault_drop", "fault_corrupt"))
    parser.add_argument(
        "--until-boards-down", type=integer(minimum=0), default=0, help="stop once this many boards are down"
    )
    parser.add_argument(
        "--until-done",
        action="store_true",
        help="stop once the behaviour's task is done (boards: all down; light: robot 0 at the light),"
        " after a settle second; exit 1 if --duration runs out first",
    )
    parser.add_argument(
        "--report-dir", default="", help="folder for report.png and metrics.json (default: runs/<time>)"
    )
    return parser


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The parsed command line (exit 2 naming a bad option)."""
    return build_parser().parse_args(argv)


class Status:
    """What the live display and the report show, read from the running nodes."""

    def __init__(self, runner: GraphRunner) -> None:
        self.runner = runner
        self.wall_start = time.monotonic()

    def snapshot(self) -> dict[str, Any]:
        """The figures of the run right now (robot 0's loop's: none with brain none)."""
        runner = self.runner
        sim = runner.sim.sim
        wall = time.monotonic() - self.wall_start
        figures: dict[str, Any] = {
            "sim_time": sim.time,
            "wall_time": wall,
            "rtf": sim.time / wall if wall > 0 else 0.0,
            # The physics keeps yaw unwound (turns add up); the pose reads in (-pi, pi].
            "pose": (float(sim.x[0]), float(sim.y[0]), wrap_angle(float(sim.yaw[0]))),
            "boards_down": sim.geometry.boards_down,
            "boards": len(sim.world.boards),
        }
        node = runner.chains[0].loop
        if node is None:
            return {**figures, **NO_LOOP}
        loop = node.loop
        now = node.clock()
        mcu, station = loop.mcu.health(now), loop.station_link.health(now)
        timing = node.stats.summary()
        return {
            **figures,
            "mode": loop.mode + (f" ({loop.behaviour.name})" if loop.behaviour else ""),
            "held_by": ", ".join(loop.holding_reasons) or "-",
            "mcu_link": link_state(mcu),
            "mcu_rtt_ms": mcu.rtt_last * 1e3,
            "station": link_state(station, alive="ok", lost="lost"),
            "jitter_p99_us": timing.jitter_p99 * 1e6,
            "frames": loop.frames,
        }


def link_state(health: LinkHealth, *, alive: str = "alive", lost: str = "LOST") -> str:
    """A link as the status shows it: ``never heard`` until something arrives, then ``alive`` or ``lost``."""
    if health.since_last_heard < 0:
        return "never heard"
    return alive if health.alive else lost


def render(status: dict[str, Any]) -> Any:
    """The live status as a rich table."""
    from rich.table import Table  # noqa: PLC0415 - only for the live display

    table = Table(title="HIL simulation", show_header=False, min_width=56)
    x, y, yaw = status["pose"]
    rows = [
        (
            "sim time",
            f"{status['sim_time']:8.2f} s   (wall {status['wall_time']:.1f} s, RTF {status['rtf']:.2f})",
        ),
        ("robot 0", f"x {x:+.3f} m  y {y:+.3f} m  yaw {yaw:+.2f} rad"),
        ("control", f"{status['mode']}, motors held by: {status['held_by']}"),
    ]
    if status["boards"]:  # a world without boards has none to count
        rows.insert(2, ("boards down", f"{status['boards_down']} of {status['boards']}"))
    if status["mcu_link"] is not None:
        rtt = f", HBB round trip {status['mcu_rtt_ms']:.2f} ms" if status["mcu_link"] == "alive" else ""
        rows += [
            ("MCU link", status["mcu_link"] + rtt),
            ("station link", status["station"]),
            ("loop", f"{status['frames']} frames, jitter p99 {status['jitter_p99_us']:.0f} us"),
        ]
    for name, value in rows:
        table.add_row(name, value)
    return table


def check_report_folder(folder: Path) -> None:
    """Make ``folder`` (and its parents) and check a file can be written in it.

    Raises:
        HilBringupError: naming the folder and why not.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise HilBringupError(f"report folder {folder}: cannot write there: {exc.strerror or exc}") from exc


def graph_options(args: argparse.Namespace) -> GraphOptions:
    """The run's options from the command line (:func:`parse`).

    Raises:
        HilBringupError: an option the runner cannot run (``--mcu serial``) or a bad combination.
    """
    given = from_namespace(GraphOptions, args)
    if given["mcu"] == "serial":
        raise HilBringupError("--mcu serial: real boards run with hardware.launch.py, not hil_sim_runner")
    faults = args.faults or args.fault_drop is not None or args.fault_corrupt is not None
    return GraphOptions(**{**given, "faults": faults})


def run(
    args: argparse.Namespace, *, done: DonePredicate | None = None, signals: ShutdownSignals | None = None
) -> int:
    """Run the graph until the duration, the boards, the task or Ctrl-C; write the report.

    Args:
        args: the parsed options (:func:`parse`).
        done: the task's done predicate; None: the behaviour's (:func:`task_done`).
        signals: what ends the run early; None: nothing (main() passes the process's
            SIGINT/SIGTERM, installed before the graph's modules were imported).

    Raises:
        HilBringupError: ``--until-done`` with a behaviour that has no task, or a
            report folder that cannot be written (checked before the run).
    """
    if args.until_done and done is None and args.behaviour == "manual":
        raise HilBringupError("--until-done needs a behaviour with a task (boards or light); MANUAL has none")
    if done is None and args.behaviour != "manual":
        done = task_done(args.behaviour)
        if args.behaviour == "swarm":
            done = partial(swarm_gathered, robots=args.hil_robots)  # the robots that have a loop
    watch = DoneWatch(done) if done is not None else None
    folder = Path(args.report_dir or Path("runs") / datetime.now().strftime("%Y%m%d-%H%M%S"))
    options = _trace_in(graph_options(args), folder)
    check_report_folder(folder)  # now: a run's results are lost if the folder fails at the end
    # Imported only now, after main() installed the signal handlers: rclpy, the nodes
    # and numpy take a second or more to import under load.
    from hil_bringup.core.link_faults import fault_summary  # noqa: PLC0415
    from hil_bringup.core.report import RunLog, write_report  # noqa: PLC0415
    from hil_bringup.graph_runner import GraphRunner  # noqa: PLC0415
    from hil_bringup.link_report import link_fault_report  # noqa: PLC0415

    signals = signals if signals is not None else ShutdownSignals()  # never installed
    started = time.monotonic()
    runner = GraphRunner(options)
    status = Status(runner)
    log = RunLog(runner.sim.sim.world)
    _print_started(runner, time.monotonic() - started)
    ending: Ending = "stopped"
    try:
        if not signals.requested:  # a signal while the graph was being built: no run
            _start(runner)
            ending = _drive(runner, args, status, log, signals, watch=watch)
    finally:
        # The handlers stay in place: a late signal must not kill the process while
        # it stops or writes the report.
        snapshot = status.snapshot()
        log.metrics.update(_metrics(snapshot, runner, options))
        log.metrics.update(_swarm_metrics(runner, options, log))
        link_faults = link_fault_report(runner)
        if link_faults is not None:
            log.metrics["link_faults"] = link_faults
        failure = runner.failure()
        log.metrics["failure"] = failure
        runner.stop()  # the harnesses have written their pin traces once stopped
        traces = _pin_traces(runner, log)
    if failure is not None:
        print(
            f"hil_sim_runner: {failure}; the run stopped at {snapshot['sim_time']:.1f} s simulated",
            file=sys.stderr,
            flush=True,
        )
    judge_task(log, args, watch, end=snapshot["sim_time"])
    metrics_path, picture_path = write_report(log, folder)
    print(
        f"hil_sim_runner: {boards_text(snapshot)}{snapshot['sim_time']:.1f} s simulated "
        f"({snapshot['wall_time']:.1f} s wall)"
    )
    if watch is not None:
        print(
            f"hil_sim_runner: task done at {watch.done_at:.1f} s simulated"
            if watch.done_at is not None
            else "hil_sim_runner: task not done"
        )
    if link_faults is not None:
        print(f"hil_sim_runner: link faults: {fault_summary(link_faults)}")
    _print_paths(metrics_path, picture_path, traces)
    if failure is not None:
        return 1
    return 1 if args.until_done and ending == "duration" and not (watch and watch.done) else 0


def boards_text(snapshot: dict[str, Any]) -> str:
    """``6 of 6 boards down in ``, or nothing in a world without boards."""
    return f"{snapshot['boards_down']} of {snapshot['boards']} boards down in " if snapshot["boards"] else ""


def judge_task(log: RunLog, args: argparse.Namespace, watch: DoneWatch | None, *, end: float) -> None:
    """The picture's heading and the task's verdict (done or not, what it read), with a task."""
    from hil_bringup.core.report import task_judgement  # noqa: PLC0415 - the graph's modules load late

    behaviour = args.behaviour or "manual"
    log.heading = f"{behaviour} run, {end:.1f} s simulated"
    log.metrics["done"] = watch.done if watch is not None else None
    log.metrics["done_at_s"] = None if watch is None or watch.done_at is None else round(watch.done_at, 3)
    if watch is None:
        return
    task = behaviour if behaviour in TASK_TEXT else "done"  # a caller's own predicate
    judgement = task_judgement(log, task, done_at=watch.done_at, end=end, robots=args.hil_robots)
    log.judgements.append(judgement)
    log.metrics["task"] = task
    log.heading = f"{judgement.label}: {judgement.verdict} {judgement.detail}"


def _start(runner: GraphRunner) -> None:
    """Start the run; say what its hold on the CPUs' wake-up latency got, when it asked for one."""
    runner.start()
    if runner.cpu_latency is not None:
        print(f"hil_sim_runner: {runner.cpu_latency.describe()} (cpu_latency)", flush=True)


def _print_started(runner: GraphRunner, seconds: float) -> None:
    """How long the start took, how the run goes, the live view, with brain none your program's pty."""
    options = runner.options
    pace = "lockstep, as fast as possible" if runner.lockstep else f"rtf {options.rtf:g}"
    print(f"hil_sim_runner: started in {seconds:.2f} s ({pace})", flush=True)
    if runner.live_url is not None:
        print(
            f"hil_sim_runner: live view on {runner.live_url} "
            "(Foxglove app or Lichtblick: open a Foxglove WebSocket connection)",
            flush=True,
        )
    ports = user_ports(options)
    for robot, path, baud in ports:
        print(your_program(path, baud, robot=robot if len(ports) > 1 else None), flush=True)


def _drive(
    runner: GraphRunner,
    args: argparse.Namespace,
    status: Status,
    log: RunLog,
    signals: ShutdownSignals,
    *,
    watch: DoneWatch | None,
) -> Ending:
    sim_node = runner.sim
    sim = sim_node.sim
    next_sample = 0.0
    next_print = time.monotonic()
    live = None
    if not args.headless:
        from rich.live import Live  # noqa: PLC0415 - only for the live display

        live = Live(render(status.snapshot()), refresh_per_second=4)
        live.start()
    ending: Ending | None = None
    next_check = time.monotonic()
    try:
        while ending is None and not signals.requested:
            check = time.monotonic() >= next_check
            next_check = time.monotonic() + FAILURE_CHECK_PERIOD_S if check else next_check
            if not _advance(runner, signals, check_failure=check):
                return "failed"  # a part of the run died; run() reports it
            with sim_node.lock:
                t = sim.time
                log.note_boards(t, sim.geometry.standing)
                if t >= next_sample:
                    next_sample = t + SAMPLE_PERIOD
                    log.sample(
                        t, float(sim.x[0]), float(sim.y[0]), bool(sim.led[0] > 0.5), sim.geometry.standing
                    )
                    log.sample_others(t, sim.x, sim.y)
                down = sim.geometry.boards_down
                settled = watch is not None and watch.update(t, sim)
            ending = _ending(args, t, down, settled=settled)
            if ending is None and time.monotonic() >= next_print:
                next_print = time.monotonic() + (0.25 if live else 5.0)
                snapshot = status.snapshot()
                if live is not None:
                    live.update(render(snapshot))
                else:
                    mcu = snapshot["mcu_link"] or "your program's"
                    boards = f"boards down {snapshot['boards_down']}/{snapshot['boards']}  "
                    print(
                        f"  t {snapshot['sim_time']:7.1f} s  RTF {snapshot['rtf']:5.2f}  "
                        f"{boards if snapshot['boards'] else ''}MCU {mcu}",
                        flush=True,
                    )
    finally:
        with sim_node.lock:  # the last moment too, whatever ended the run
            log.sample(
                sim.time, float(sim.x[0]), float(sim.y[0]), bool(sim.led[0] > 0.5), sim.geometry.standing
            )
            log.sample_others(sim.time, sim.x, sim.y)
        if live is not None:
            live.stop()
    return ending or "stopped"


def _advance(runner: GraphRunner, signals: ShutdownSignals, *, check_failure: bool) -> bool:
    """One lockstep period, or a short wait in real time; False once a part of the run has died."""
    if runner.lockstep:
        try:
            runner.step(ahead=True)  # between two periods the run is only looked at
        except HilError:
            if runner.failure() is None:
                raise
            return False
    else:
        signals.wait(0.02)
    return not check_failure or runner.failure() is None


def _ending(args: argparse.Namespace, t: float, down: int, *, settled: bool) -> Ending | None:
    """Why the run ends at simulated time ``t``, if it does."""
    if args.until_done and settled:
        return "done"
    if args.duration and t >= args.duration:
        return "duration"
    if args.until_boards_down and down >= args.until_boards_down:
        return "boards"
    return None


def _trace_in(options: GraphOptions, folder: Path) -> GraphOptions:
    """A pin trace (``trace_pins``) without a ``trace_file`` goes to the report folder."""
    if options.trace_pins and not options.trace_file:
        return replace(options, trace_file=str(folder / TRACE_FILE))
    return options


def _pin_traces(runner: GraphRunner, log: RunLog) -> list[dict[str, Any]]:
    """Each HIL robot's pin trace (``trace_pins``): file, pins, size, when cut; in the metrics too."""
    traces = []
    for chain in runner.chains:
        trace = getattr(chain.mcu, "trace", None)
        if trace is not None:
            traces.append({"robot": chain.robot, **trace_summary(trace)})
    if traces:
        log.metrics["pin_traces"] = traces
    return traces


def _print_paths(metrics: Path, picture: Path, traces: list[dict[str, Any]]) -> None:
    """The last lines: the report's files, each pin trace's (and its cut, if it was)."""
    print(f"metrics: {metrics}")
    print(f"picture: {picture}", flush=True)
    for trace in traces:
        cut = trace["cut_at_s"]
        note = "" if cut is None else f" (cut at its size limit, at {cut:.1f} s: --trace-limit-mb)"
        print(f"pins: {trace['file']}{note}", flush=True)


def _swarm_metrics(runner: GraphRunner, options: GraphOptions, log: RunLog) -> dict[str, Any]:
    """Arrival times at the light (swarm) and the radio's counters (radio)."""
    metrics: dict[str, Any] = {}
    if options.behaviour == "swarm":
        light = runner.sim.sim.world.light
        arrivals = log.first_within(GATHER_RADIUS, light.x, light.y)
        metrics["arrival_times_s"] = {
            str(robot): None if t is None else round(t, 3)
            for robot, t in arrivals.items()
            if robot < options.hil_robots
        }
    if runner.sim.radio is not None:
        metrics["radio"] = {**runner.sim.radio.stats()["total"], "module_errors": runner.sim.radio_errors}  # type: ignore[dict-item]
    return metrics


def _metrics(snapshot: dict[str, Any], runner: GraphRunner, options: GraphOptions) -> dict[str, Any]:
    metrics: dict[str, Any] = {
        "boards_down": snapshot["boards_down"],
        "boards": snapshot["boards"],
        "sim_duration_s": round(snapshot["sim_time"], 3),
        "wall_duration_s": round(snapshot["wall_time"], 3),
        "rtf": round(snapshot["rtf"], 3),
        "mode": "lockstep" if runner.lockstep else f"real time, rtf {options.rtf:g}",
        "cpu_latency": "not asked" if runner.cpu_latency is None else runner.cpu_latency.describe(),
        "physics": runner.sim.sim.backend,
        "seed": options.seed,
        "robots": options.robots,
        "hil_robots": options.hil_robots,
        "final_pose": [round(v, 4) for v in snapshot["pose"]],
        "robot": options.robot,
        "brain": [options.brain_of(robot) for robot in range(options.hil_robots)],
        "loop_frames": snapshot["frames"],
    }
    node = runner.chains[0].loop
    if node is None:
        return metrics
    loop = node.loop
    metrics["loop_jitter_p99_us"] = None if runner.lockstep else round(snapshot["jitter_p99_us"], 1)
    metrics["mcu_rtt_ms"] = {
        "last": round(loop.mcu.rtt_last * 1e3, 3),
        "p50": round(loop.mcu.rtt_percentile(50) * 1e3, 3),
        "p99": round(loop.mcu.rtt_percentile(99) * 1e3, 3),
        "max": round(loop.mcu.rtt_max * 1e3, 3),
    }
    # Every failsafe the loop has: with a clock_timeout (a real-time run on /clock) also `clock`.
    metrics["failsafe_events"] = {name: loop.failsafes.trips(name) for name in loop.failsafes.names}
    metrics["mcu_errors"] = sum(loop.mcu_errors.values())
    metrics["lines_dropped"] = loop.decoder.stats.dropped_total
    return metrics


def main(argv: list[str] | None = None) -> int:
    """Run the simulation; exit 2 on a bad configuration (SIGINT/SIGTERM: a normal end)."""
    signals = shutdown_signals()
    remove_dead_dds_segments()
    args = parse(argv)
    try:
        return run(args, signals=signals)
    except HilError as exc:
        print(f"hil_sim_runner: {exc}", file=sys.stderr)
        return 2
    finally:
        ignore_further_stop_signals()


if __name__ == "__main__":
    sys.exit(main())
