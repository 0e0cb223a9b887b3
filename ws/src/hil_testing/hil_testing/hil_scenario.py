"""``hil_scenario``: run HIL scenario files in lockstep, judge their assertions, write JUnit XML.

    hil_scenario run ws/src/hil_testing/scenarios/          # every *.yaml in the folder
    hil_scenario run a.yaml b.yaml --out /tmp/scenarios --junit /tmp/junit.xml
    hil_scenario check a.yaml                               # only read and check the files

Each scenario (format: :mod:`hil_testing.core.scenario`) runs in its own graph in
lockstep (:class:`hil_testing.session.HilSession`), so a run repeats exactly for the
same file: the timeline's inputs reach the control loop where it takes operator
input, at their simulated times. The run ends at the scenario's ``duration``, or
earlier once every assertion's verdict is settled (an assertion over the whole run
settles early only by failing), the timeline is through and no goto runs. Per
scenario it prints PASS/FAIL/ERROR per assertion with the simulated span its verdict
covers, and writes the run report of ``hil_sim_runner`` (``report.png`` and
``metrics.json``, with the scenario's verdicts added; with ``trace_pins`` the pin trace
``pins.vcd``) to ``<out>/<scenario>/``; then
the JUnit XML of all of them (default ``<out>/junit.xml``). An assertion the run
did not reach the end of (it could not start, failed, or was stopped) is an ERROR,
never a pass. Exit status: 0 if every assertion passed, 1 if any failed or is an
error, or a scenario was skipped (SIGINT/SIGTERM stop the run in progress and skip
the rest: an interrupted test run is no pass), 2 if a file is not a valid scenario
(``check`` finds what a run would refuse; nothing runs then).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hil_bringup.core.done import all_boards_down, light_reached
from hil_common.core.kinematics import wrap_angle
from hil_common.core.leftovers import remove_dead_dds_segments
from hil_common.core.param_spec import validate_all
from hil_common.core.shutdown import ShutdownSignals, shutdown_signals
from hil_common.errors import HilError
from hil_testing.core.checks import (
    Check,
    GotoCheck,
    Judged,
    LedShows,
    Observation,
    SerialExpect,
    SerialForbid,
    ToneHeard,
)
from hil_testing.core.junit import CaseResult, SuiteResult, write_junit
from hil_testing.core.scenario import (
    Action,
    CmdVel,
    EndCmdVel,
    EndFault,
    Fault,
    Goto,
    Scenario,
    SerialSend,
    SetDevice,
    StationCommand,
    Timeline,
    goto_label,
    graph_options,
    load_scenario,
)
from hil_testing.errors import HilTestingError

if TYPE_CHECKING:
    from hil_bringup.core.report import Judgement
    from hil_sim.core.simulation import Simulation
    from hil_testing.core.goto import GotoRun
    from hil_testing.session import HilSession, SessionSerial

#: Simulated seconds between trajectory samples of the run report (as hil_sim_runner).
SAMPLE_PERIOD = 0.05
#: Bytes of each UART's transcript a scenario's report keeps (the first ones).
TRANSCRIPT_LIMIT = 1 << 20
#: Errors of a graph that cannot be built or run (bad world, firmware, port).
RUN_ERRORS = (HilError,)
LINKS = ("command", "signal")
__all__ = ["ScenarioRun", "check_graph", "graph_options", "main", "run_files", "run_scenario"]


def scenario_files(paths: Sequence[str]) -> list[Path]:
    """The scenario files named: files as given, folders as their ``*.yaml`` (sorted).

    Raises:
        HilTestingError: a path that does not exist, or a folder without scenarios.
    """
    files: list[Path] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            found = sorted(path.glob("*.yaml"))
            if not found:
                raise HilTestingError(f"{path}: no *.yaml scenario files in this folder")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise HilTestingError(f"{path}: no such scenario file or folder")
    return files


def check_graph(scenario: Scenario) -> None:
    """Refuse what the scenario's nodes would refuse as they start.

    Each node of the graph (:func:`hil_bringup.core.graph.describe`) gets its parameters
    checked against its declared ranges (``PARAMETERS``) with the validation the node
    runs when it starts (a ``seed`` beyond the simulator's range, say), and the
    simulator's world is built as the ``sim`` node builds it (an MJCF world without
    physics ``mujoco``, an MJCF file MuJoCo refuses).

    Raises:
        HilTestingError: naming the scenario file, the node and the parameter.
    """
    from hil_bringup.core.graph import describe  # noqa: PLC0415 - the graph's modules load late
    from hil_sim.sim_node import simulation  # noqa: PLC0415

    nodes, _ = describe(graph_options(scenario))
    for spec in nodes:
        module = importlib.import_module(spec.module.split(":")[0])
        try:
            values = validate_all(getattr(module, "PARAMETERS", ()), spec.parameters, node=spec.key)
        except HilError as exc:  # names the node
            raise HilTestingError(f"{scenario.path}: {exc}") from None
        if spec.name == "sim":
            try:
                simulation(values)
            except HilError as exc:
                raise HilTestingError(f"{scenario.path}: {spec.key}: {exc}") from None


def observe(
    session: HilSession,
    *,
    final: bool = False,
    serial: dict[int, str] | None = None,
    reads: tuple[str, ...] = (),
) -> Observation:
    """The run now, as the checks see it (with the serial text of the period and the values read)."""
    sim = session.sim
    chain = session.runner.chains[0]
    loop = chain.loop.loop if chain.loop is not None else None  # brain none: no loop
    rtt = None
    if loop is not None:
        mcu = loop.mcu
        rtt = {"mcu": {"last": mcu.rtt_last * 1e3}}
        if final:
            rtt["mcu"].update(
                p50=mcu.rtt_percentile(50) * 1e3, p99=mcu.rtt_percentile(99) * 1e3, max=mcu.rtt_max * 1e3
            )
    return Observation(
        t=sim.time,
        x=float(sim.x[0]),
        y=float(sim.y[0]),
        yaw=wrap_angle(float(sim.yaw[0])),
        v=float(sim.v[0]),
        w=float(sim.w[0]),
        boards_down=sim.geometry.boards_down,
        boards=len(sim.world.boards),
        failsafes=frozenset(loop.failsafes.active) if loop is not None else frozenset(),
        telemetry=session.telemetry,
        tasks={"boards": all_boards_down(sim), "light": light_reached(sim)},
        rtt_ms=rtt,
        serial=serial or {},
        values={name: read_value(sim, name) for name in reads},
    )


def read_value(sim: Simulation, name: str) -> float:
    """Robot 0's value ``input:<device>.<signal>`` (a pin as taken) or ``output:<device>.<column>``."""
    source, _, what = name.partition(":")
    values = sim.input(what) if source == "input" else sim.output(what)
    return float(values[0])


class ScenarioRun:
    """One scenario's run: the session, its timeline's inputs, its checks, its run log."""

    def __init__(self, scenario: Scenario, session: HilSession, *, ahead: bool = True) -> None:
        """``ahead``: step ahead between the timeline's actions (:meth:`run`)."""
        from hil_bringup.core.report import RunLog  # noqa: PLC0415 - the graph's modules load late

        self.scenario = scenario
        self.session = session
        self.ahead = ahead
        self.checks = scenario.checks()
        self.gotos = {
            index: GotoCheck(
                label=goto_label(event.goal, event.at),
                at=event.at,
                until=event.at + event.goal.timeout + event.goal.settle,
                goal=(event.goal.x, event.goal.y),
                tolerance=event.goal.tolerance,
            )
            for index, event in enumerate(scenario.events)
            if isinstance(event, Goto)
        }
        self.judged = [Judged(check, scenario.duration) for check in self.all_checks]
        self.log = RunLog(session.sim.world)
        self.timeline = Timeline(scenario.events)
        #: Which timeline event owns the cmd_vel source, and each link's fault, now.
        self.twist_owner: int | None = None
        self.fault_owner: dict[str, int | None] = dict.fromkeys(LINKS)
        self.running: dict[int, GotoRun] = {}
        self.stopped = False
        self._next_sample = 0.0
        #: Robot 0's UARTs the scenario writes or reads, and every byte each received (bounded).
        self.serials: dict[int, SessionSerial] = {uart: session.serial_port(uart) for uart in scenario.uarts}
        self.transcripts: dict[int, bytearray] = {uart: bytearray() for uart in self.serials}
        self.transcript_cut = False
        #: The values the checks read each period.
        self.reads = tuple(sorted({name for check in self.checks for name in getattr(check, "reads", ())}))
        # Inputs due at a loop frame's time reach that frame (the hook runs where the loop
        # takes input); the rest, e.g. a fault between frames, in the period they fall in.
        session.input_hooks.append(self.due)

    @property
    def all_checks(self) -> list[Check]:
        """The assertions' checks, then the timeline gotos'."""
        return [*self.checks, *self.gotos.values()]

    def run(self, signals: ShutdownSignals | None) -> list[CaseResult]:
        """Step until the duration, or until every verdict is settled; the verdicts.

        Verdicts of checks the run did not see to the end of their windows are errors.
        """
        session, scenario = self.session, self.scenario
        while True:
            self.due(session.time)
            self.observe_period()
            if session.time >= scenario.duration - 1e-9:
                break
            if self.timeline.through and not self.running and all(j.decided() for j in self.judged):
                break
            if signals is not None and signals.requested:
                self.stopped = True
                break
            session.advance(ahead=self.ahead and self._nothing_due_by(session.runner.sim.period_end))
        return self.verdicts(failure=f"stopped by a signal at {session.time:.2f} s" if self.stopped else "")

    def verdicts(self, *, failure: str = "") -> list[CaseResult]:
        """Every check's verdict on the run so far; ``failure``: why the run ended (errors name it)."""
        final = observe(self.session, final=True)
        cases = []
        for judged in self.judged:
            verdict = judged.verdict(final)
            detail = f"{failure}; {verdict.detail}" if failure and verdict.error else verdict.detail
            cases.append(CaseResult(judged.check.label, verdict.passed, detail, verdict.error, verdict.span))
        return cases

    def observe_period(self) -> None:
        """Collect finished gotos; hand the checks this period's observation; sample the log."""
        text = {}
        for uart, port in self.serials.items():
            data = port.read()
            if data:
                text[uart] = data.decode("latin-1")
                kept = self.transcripts[uart]
                room = TRANSCRIPT_LIMIT - len(kept)
                self.transcript_cut |= len(data) > room
                kept += data[: max(room, 0)]
        obs = observe(self.session, serial=text, reads=self.reads)
        for index, goto in list(self.running.items()):
            if goto.finished:
                self.gotos[index].result = goto.result()
                del self.running[index]
        for judged in self.judged:
            judged.observe(obs)
        sim = self.session.sim
        self.log.note_boards(obs.t, sim.geometry.standing)  # every period: the checks see every fall
        if obs.t >= self._next_sample:
            self._next_sample = obs.t + SAMPLE_PERIOD
            self.log.sample(obs.t, obs.x, obs.y, bool(sim.led[0] > 0.5), sim.geometry.standing)
            self.log.sample_others(obs.t, sim.x, sim.y)  # a scenario of several robots draws them all

    def apply_to_robot(self, action: SerialSend | SetDevice) -> None:
        """Write to robot 0's UART, or set one of its devices."""
        if isinstance(action, SerialSend):
            self.serials[action.uart].write(action.data)
        else:
            self.session.set(action.device, action.value, for_=action.seconds, signal=action.signal)

    def events(self) -> dict[str, list[dict[str, Any]]]:
        """What each check saw happen (serial matches, tones, LED colours), by its label, for the metrics."""
        return {
            check.label: [
                {"start_s": round(e.start, 4), "end_s": round(e.end, 4), "text": e.text}
                for e in check.events()
            ]
            for check in self.checks
            if isinstance(check, (SerialExpect, SerialForbid, ToneHeard, LedShows))
        }

    def write_transcripts(self, folder: Path) -> list[Path]:
        """Each UART's transcript as ``serial_uart<N>.log`` (the bytes as received); their paths."""
        paths = []
        for uart, data in self.transcripts.items():
            path = folder / f"serial_uart{uart}.log"
            path.write_bytes(bytes(data))
            paths.append(path)
        return paths

    def _nothing_due_by(self, end: float) -> bool:
        """Whether no timeline action falls due by ``end`` (the period's end) and the run goes on.

        Then the firmwares in simavr may begin the next period during this one
        (``GraphRunner.step(ahead=True)``): nothing reaches them between the two.
        """
        return self.timeline.next_at > end + 1e-9 and end < self.scenario.duration - 1e-9

    def due(self, now: float) -> None:
        """Carry out the timeline's actions due by ``now``."""
        for index, action in self.timeline.due(now):
            self.apply(index, action)

    def apply(self, index: int, action: Action) -> None:
        """Carry out one timeline action (of the event at ``index``)."""
        session = self.session
        if isinstance(action, CmdVel):
            session.hold_cmd_vel(action.linear, action.angular)
            self.twist_owner = index
        elif isinstance(action, EndCmdVel):
            if self.twist_owner == action.owner:
                session.release_cmd_vel()
                self.twist_owner = None
        elif isinstance(action, StationCommand):
            session.command(action.text)
        elif isinstance(action, (SerialSend, SetDevice)):
            self.apply_to_robot(action)
        elif isinstance(action, Goto):
            self.running[index] = session.start_goto(action.goal)
            self.gotos[index].started = True
            self.twist_owner = index
        elif isinstance(action, Fault):
            faults = {"duplicate": action.duplicate, "delay": action.delay}
            session.inject_fault(action.link, drop=action.drop, corrupt=action.corrupt, **faults)
            for link in LINKS:
                if action.link in ("both", link):
                    self.fault_owner[link] = index
        elif isinstance(action, EndFault):
            drop, corrupt = self.scenario.faults or (0.0, 0.0)
            for link in LINKS:
                if action.link in ("both", link) and self.fault_owner[link] == action.owner:
                    session.inject_fault(link, drop=drop, corrupt=corrupt)  # the run's own faults again
                    self.fault_owner[link] = None


def run_scenario(
    scenario: Scenario,
    *,
    report_dir: Path | None = None,
    signals: ShutdownSignals | None = None,
    ahead: bool = True,
) -> SuiteResult:
    """Run one scenario in lockstep; its assertions' verdicts (and the run report in ``report_dir``).

    ``ahead``: the firmwares in simavr step ahead between the timeline's actions
    (:class:`ScenarioRun`); the verdicts are the same without it.
    """
    from hil_bringup.core.report import write_report  # noqa: PLC0415 - the graph's modules load late
    from hil_bringup.hil_sim_runner import (  # noqa: PLC0415 - the run report's figures
        Status,
        _metrics,
        _pin_traces,
        _trace_in,
    )
    from hil_sim.core.world import Pose  # noqa: PLC0415
    from hil_testing.session import HilSession  # noqa: PLC0415

    started = time.monotonic()
    try:
        options = graph_options(scenario)
        if report_dir is not None:  # a pin trace without a file goes beside the report
            options = _trace_in(options, report_dir / scenario.name)
        session = HilSession(options, start=Pose(*scenario.start) if scenario.start else None)
    except RUN_ERRORS as exc:
        cases = [CaseResult("the run starts", False, str(exc), error=True)]
        cases += [
            CaseResult(label, False, "not judged: the run did not start", error=True)
            for label in labels(scenario)
        ]
        return SuiteResult(
            scenario.name,
            time.monotonic() - started,
            cases,
            properties={"file": str(scenario.path), "simulated_s": "0.000"},
        )
    status = Status(session.runner)
    run = ScenarioRun(scenario, session, ahead=ahead)
    try:
        cases = run.run(signals)
        run.log.metrics.update(_metrics(status.snapshot(), session.runner, session.runner.options))
    except RUN_ERRORS as exc:
        failure = f"the run failed at {session.time:.2f} s: {exc}"
        cases = [CaseResult("the run completes", False, failure, error=True), *run.verdicts(failure=failure)]
    finally:
        simulated = session.time
        session.stop()
    traces = _pin_traces(session.runner, run.log)
    wall = time.monotonic() - started
    out = ""
    if report_dir is not None:
        happened = run.events()
        run.log.metrics["scenario"] = {
            "file": str(scenario.path),
            "passed": all(c.passed for c in cases),
            "stopped": run.stopped,
            "wall_s": round(wall, 3),
            "simulated_s": round(simulated, 3),
            "assertions": [
                {
                    "name": c.name,
                    "verdict": c.verdict,
                    "passed": c.passed,
                    "detail": c.detail,
                    "span_s": None if c.span is None else [round(t, 3) for t in c.span],
                    **({"events": happened[c.name]} if happened.get(c.name) else {}),
                }
                for c in cases
            ],
        }
        run.log.judgements = judgements(cases, run.judged)
        passed = sum(c.passed for c in cases)
        verdict = "PASS" if passed == len(cases) else "FAIL"
        run.log.heading = f"scenario {scenario.name}: {verdict}, {passed} of {len(cases)} assertions passed"
        if scenario.description:
            run.log.heading += f"\n{scenario.description}"
        run.log.duration = scenario.duration
        metrics_path, picture_path = write_report(run.log, report_dir / scenario.name)
        serial_files = run.write_transcripts(report_dir / scenario.name)
        out = "\n".join(
            [
                f"metrics: {metrics_path}",
                f"picture: {picture_path}",
                *(f"pins: {t['file']}" for t in traces),
                *(f"serial: {path}" for path in serial_files),
            ]
        )
    properties = {"file": str(scenario.path), "simulated_s": f"{simulated:.3f}"}
    return SuiteResult(scenario.name, wall, cases, system_out=out, properties=properties)


def judgements(cases: Sequence[CaseResult], judged: Sequence[Judged]) -> list[Judgement]:
    """The verdicts for the run's picture, each check's with the signals it read.

    The last ``len(judged)`` cases are the checks' verdicts, in order; cases before
    them (the run starts, the run completes) have no signals.
    """
    from hil_bringup.core.report import Judgement  # noqa: PLC0415 - the graph's modules load late

    series = [[] for _ in cases[: len(cases) - len(judged)]] + [j.check.series() for j in judged]
    return [
        Judgement(case.name, case.verdict, case.detail, case.span, signals)
        for case, signals in zip(cases, series, strict=True)
    ]


def labels(scenario: Scenario) -> list[str]:
    """The names of a scenario's cases: its assertions', then its gotos'."""
    gotos = [goto_label(e.goal, e.at) for e in scenario.events if isinstance(e, Goto)]
    return [check.label for check in scenario.checks()] + gotos


def print_result(suite: SuiteResult, scenario: Scenario) -> None:
    """PASS/FAIL/ERROR per assertion, with the simulated span each verdict covers."""
    print(
        f"{suite.verdict} {scenario.name} ({scenario.path}, {suite.wall_time:.1f} s wall, "
        f"{suite.properties.get('simulated_s', '?')} of {scenario.duration:g} s simulated)"
    )
    for case in suite.cases:
        print(f"  {case.verdict:5} {case.name}: {case.text}")
    if suite.system_out:
        for line in suite.system_out.splitlines():
            print(f"  {line}")
    sys.stdout.flush()


def run_files(
    scenarios: Sequence[Scenario],
    *,
    out: Path | None,
    junit: Path | None,
    signals: ShutdownSignals | None = None,
) -> list[SuiteResult]:
    """Run the scenarios one after the other, print and write their results."""
    results = []
    for scenario in scenarios:
        if signals is not None and signals.requested:
            break
        suite = run_scenario(scenario, report_dir=out, signals=signals)
        print_result(suite, scenario)
        results.append(suite)
    if junit is not None:
        write_junit(results, junit)
    return results


def summary(results: Sequence[SuiteResult], *, planned: int, interrupted: bool = False) -> str:
    """The last line: scenarios, assertions passed, failed and errors, scenarios not run."""
    cases = [c for s in results for c in s.cases]
    counts = {verdict: sum(1 for c in cases if c.verdict == verdict) for verdict in ("PASS", "FAIL", "ERROR")}
    return (
        f"hil_scenario: {len(results)} scenario(s), {len(cases)} assertion(s): {counts['PASS']} passed, "
        f"{counts['FAIL']} failed, {counts['ERROR']} error(s)"
        + (f"; interrupted, {planned - len(results)} scenario(s) not run" if interrupted else "")
    )


def exit_status(results: Sequence[SuiteResult], *, planned: int) -> int:
    """0 if every planned scenario ran and every assertion passed, else 1 (an error or a skip too)."""
    return 0 if len(results) == planned and all(s.passed for s in results) else 1


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="hil_scenario", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run scenarios and judge their assertions")
    run.add_argument("files", nargs="+", help="scenario files, or folders of them")
    run.add_argument("--out", default="", help="folder of the run reports (default: runs/scenarios-<time>)")
    run.add_argument("--junit", default="", help="JUnit XML file (default: <out>/junit.xml)")
    run.add_argument("--no-report", action="store_true", help="no report.png/metrics.json per scenario")
    check = commands.add_parser("check", help="only read and check the scenario files")
    check.add_argument("files", nargs="+", help="scenario files, or folders of them")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run or check scenarios; see the module's text for the exit status."""
    signals = shutdown_signals()
    remove_dead_dds_segments()
    args = parse(argv)
    try:
        scenarios = [load_scenario(path) for path in scenario_files(args.files)]
        for scenario in scenarios:
            check_graph(scenario)
        names = [s.name for s in scenarios]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise HilTestingError(
                f"scenario name(s) used twice: {', '.join(twice)} (their reports would clash)"
            )
    except HilError as exc:
        print(f"hil_scenario: {exc}", file=sys.stderr)
        return 2
    if args.command == "check":
        for scenario in scenarios:
            print(
                f"ok {scenario.name} ({scenario.path}): "
                f"{len(scenario.events)} events, {len(scenario.assertions)} assertions"
            )
        return 0
    out = Path(args.out or Path("runs") / f"scenarios-{datetime.now():%Y%m%d-%H%M%S}")
    junit = Path(args.junit) if args.junit else out / "junit.xml"
    try:
        from hil_bringup.hil_sim_runner import check_report_folder  # noqa: PLC0415

        check_report_folder(out)
        check_report_folder(junit.parent)
    except HilError as exc:
        print(f"hil_scenario: {exc}", file=sys.stderr)
        return 2
    results = run_files(scenarios, out=None if args.no_report else out, junit=junit, signals=signals)
    print(summary(results, planned=len(scenarios), interrupted=signals.requested))
    print(f"junit: {junit}", flush=True)
    return exit_status(results, planned=len(scenarios))


if __name__ == "__main__":
    sys.exit(main())
