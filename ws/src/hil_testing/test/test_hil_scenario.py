"""hil_scenario: the demo suite passes in lockstep; failures, faults and bad files are reported."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hil_common.core.shutdown import ShutdownSignals
from hil_testing.core.checks import BoardsDown, Judged, Observation
from hil_testing.core.junit import CaseResult, SuiteResult
from hil_testing.core.scenario import load_scenario
from hil_testing.hil_scenario import exit_status, judgements, run_files, run_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def hil_scenario(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hil_testing.hil_scenario", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.ros
def test_the_demo_suite_passes_and_writes_junit_and_a_report_per_scenario(tmp_path: Path) -> None:
    result = hil_scenario("run", str(SCENARIOS), "--out", str(tmp_path))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    names = sorted(p.stem for p in SCENARIOS.glob("*.yaml"))
    for name in names:
        assert f"PASS {name} (" in result.stdout
        assert (tmp_path / name / "report.png").is_file()
        assert (tmp_path / name / "metrics.json").is_file()
    assert "FAIL" not in result.stdout
    root = ET.parse(tmp_path / "junit.xml").getroot()
    assert sorted(s.get("name") for s in root.findall("testsuite")) == names  # type: ignore[type-var]
    assert root.get("failures") == "0"
    assert root.get("errors") == "0"
    assert int(root.get("tests", "0")) >= 5 * len(names) // 2


SCENARIO = """
description: a link that goes dead for 2 s, and an assertion that cannot hold
world: empty
duration: 5
timeline:
  - {at: 0.0, cmd_vel: {linear: 0.15}}
  - {at: 1.0, fault: {link: command, drop: 1.0, for: 2.0}}
assertions:
  - {failsafe: {reason: mcu, between: [2.4, 2.6]}}
  - {state: {field: v, min: -0.005, max: 0.005, during: [2.9, 3.0]}}
  - {state: {field: v, min: 0.1, max: 0.2, during: [4.0, 5.0]}}
  - {inside: {x: [3, 4], y: [0, 1], at: 4.0}}
"""


@pytest.mark.ros
def test_a_fault_in_the_timeline_trips_the_mcu_failsafe_and_a_failed_assertion_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "dead_link.yaml"
    path.write_text(SCENARIO)
    (suite,) = run_files([load_scenario(path)], out=tmp_path / "out", junit=tmp_path / "junit.xml")
    assert [case.passed for case in suite.cases] == [True, True, True, False], suite.cases
    failed = suite.cases[3]
    assert failed.detail.startswith("at (")
    out = capsys.readouterr().out
    assert "FAIL dead_link (" in out
    assert f"  FAIL  {failed.name}: {failed.detail}" in out
    root = ET.parse(tmp_path / "junit.xml").getroot()
    assert root.get("failures") == "1"
    assert (tmp_path / "out" / "dead_link" / "metrics.json").is_file()


def test_a_bad_scenario_file_exits_2_before_anything_runs(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("duration: 1\nassertions: [{no_failsafe: {}}]\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("duration: 1\nassertions: [{state: {field: speed, max: 1}}]\n")
    result = hil_scenario("run", str(good), str(bad), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert f"{bad}: assertions[0].state.field: 'speed' is not one of" in result.stderr
    assert not (tmp_path / "out").exists()


def test_check_reads_the_files_without_running_them() -> None:
    result = hil_scenario("check", str(SCENARIOS))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("ok ") == len(list(SCENARIOS.glob("*.yaml")))


#: The issue's example (issue 21, item 1): only a check over the whole run (then {reasons}).
WHOLE_RUN = """
world: empty
duration: 20
timeline: [{{at: 0.0, cmd_vel: {{linear: 0.2, angular: 0.0, for: 1.0}}}}]
assertions: [{{no_failsafe: {reasons}}}]
"""


@pytest.mark.ros
@pytest.mark.parametrize(
    ("reasons", "expected"),
    [
        # Any failsafe: cmd_vel goes silent at 1 s, so the cmd_vel failsafe trips 0.5 s later.
        ("{}", ("FAIL", 1.5, "FAIL  no cmd_vel/mcu/station failsafe over the run: cmd_vel failsafe at 1.5")),
        # The MCU's failsafe never trips: the whole 20 s are simulated, and judged.
        ("{reasons: [mcu]}", ("PASS", 20.0, "none ([0.000, 20.000] s simulated)")),
    ],
    ids=["the-issues-example", "mcu-only"],
)
def test_a_check_over_the_whole_run_is_judged_over_the_whole_duration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reasons: str, expected: tuple[str, float, str]
) -> None:
    verdict, simulated, words = expected
    path = tmp_path / "whole_run.yaml"
    path.write_text(WHOLE_RUN.format(reasons=reasons))
    (suite,) = run_files([load_scenario(path)], out=tmp_path / "out", junit=tmp_path / "junit.xml")
    assert float(suite.properties["simulated_s"]) == pytest.approx(simulated, abs=0.1)
    (case,) = suite.cases
    assert case.verdict == verdict, case
    assert case.span is not None and case.span[1] == pytest.approx(simulated, abs=0.1)
    out = capsys.readouterr().out
    assert f"{verdict} whole_run (" in out and " of 20 s simulated)" in out
    assert words in out
    metrics = json.loads((tmp_path / "out" / "whole_run" / "metrics.json").read_text())
    assert metrics["scenario"]["assertions"][0]["verdict"] == verdict
    assert metrics["scenario"]["assertions"][0]["span_s"] == [0.0, pytest.approx(simulated, abs=0.1)]
    span = ET.parse(tmp_path / "junit.xml").getroot().find(".//testcase/properties/property[@name='span_s']")
    assert span is not None and span.get("value", "").startswith("0.000 ")


SPIN = """
world: empty
duration: 6
timeline: [{at: 0.0, cmd_vel: {linear: 0.0, angular: 2.5}}]
assertions: [{state: {field: yaw, min: -3.1416, max: 3.1416}}]
"""


@pytest.mark.ros
def test_yaw_reads_wrapped_in_assertions_and_in_the_metrics(tmp_path: Path) -> None:
    path = tmp_path / "spin.yaml"
    path.write_text(SPIN)
    (suite,) = run_files([load_scenario(path)], out=tmp_path / "out", junit=None)
    assert suite.passed, suite.cases  # several turns, each read in (-pi, pi]
    metrics = json.loads((tmp_path / "out" / "spin" / "metrics.json").read_text())
    assert -math.pi <= metrics["final_pose"][2] <= math.pi


TRACED = """
world: empty
duration: 1
mcu: simavr
trace_pins: motor_left.enable, uart0.tx
timeline: [{at: 0.0, cmd_vel: {linear: 0.1}}]
assertions: [{state: {field: v, min: -1.0, max: 1.0}}]
"""


@pytest.mark.ros
def test_a_scenarios_pin_trace_goes_beside_its_report(tmp_path: Path) -> None:
    path = tmp_path / "traced.yaml"
    path.write_text(TRACED)
    (suite,) = run_files([load_scenario(path)], out=tmp_path / "out", junit=None)
    assert suite.passed, suite.cases
    trace = tmp_path / "out" / "traced" / "pins.vcd"
    assert f"pins: {trace}" in suite.system_out
    assert trace.read_bytes().startswith(b"$version hil_simavr pin trace $end")
    metrics = json.loads((tmp_path / "out" / "traced" / "metrics.json").read_text())
    assert metrics["pin_traces"][0]["pins"] == {"motor_left.enable": 5, "uart0.tx": 1}


class StopAfter(ShutdownSignals):
    """A stop request that arrives at the ``reads``-th look (one per lockstep period)."""

    def __init__(self, reads: int) -> None:
        self.reads = reads
        super().__init__()

    @property  # type: ignore[override]
    def requested(self) -> bool:
        self.reads -= 1
        return self.reads < 0

    @requested.setter
    def requested(self, value: bool) -> None:
        pass


@pytest.mark.ros
def test_a_stopped_run_is_an_error_never_a_pass(tmp_path: Path) -> None:
    path = tmp_path / "whole_run.yaml"
    path.write_text(WHOLE_RUN.format(reasons="{reasons: [mcu]}"))
    signals = StopAfter(200)  # about 1 s of the 20 (5 ms periods)
    try:
        (suite,) = run_files([load_scenario(path)], out=None, junit=None, signals=signals)
    finally:
        signals.close()
    (case,) = suite.cases
    assert case.error and not case.passed, case
    assert case.detail.startswith("stopped by a signal at ")
    assert "it needs [0, 20] s" in case.detail
    assert suite.verdict == "ERROR"
    assert exit_status([suite], planned=1) == 1


PASSED = SuiteResult("a", 1.0, [CaseResult("one", True, span=(0.0, 1.0))])
FAILED = SuiteResult("b", 1.0, [CaseResult("one", False, span=(0.0, 1.0))])
ERROR = SuiteResult("c", 1.0, [CaseResult("one", False, error=True)])


@pytest.mark.parametrize(
    ("results", "planned", "status"),
    [
        ([PASSED], 1, 0),
        ([PASSED, FAILED], 2, 1),
        ([PASSED, ERROR], 2, 1),
        ([PASSED], 2, 1),  # interrupted: the second did not run
        ([], 1, 1),
    ],
    ids=["passed", "failed", "error", "skipped", "none-ran"],
)
def test_exit_status_is_0_only_when_every_planned_assertion_passed(
    results: list[SuiteResult], planned: int, status: int
) -> None:
    assert exit_status(results, planned=planned) == status


GOOD = "duration: 5\nassertions: [{no_failsafe: {}}]\n"
ONE = "duration: 5\nassertions: "  # and the one assertion
RAB = "robot: rab_style\nmcu: simavr\nworld: empty\n"
BAD_WORLD = {"w.yaml": "arena: {width: 1e300}\n"}
NOT_AN_ELF = {"fw.elf": "#!/bin/sh\n"}
MJCF = {
    "w.yaml": "mjcf: a.xml\n",
    "a.xml": "<mujoco><worldbody><geom type='plane' size='5 5 .1'/></worldbody></mujoco>",
}

# fmt: off
#: (s.yaml, other files, exit status of `hil_scenario check s.yaml`, words in its output; {dir}: the folder)
CHECKED = [
    (GOOD, {}, 0, "ok s ({dir}/s.yaml): 0 events, 1 assertions"),
    ("", {}, 2, "{dir}/s.yaml: empty file, expected a mapping"),
    (GOOD + "duration: 3\n", {}, 2, "{dir}/s.yaml: line 3: duplicate key 'duration' (first on line 1)"),
    ("duration: 1e300\n" + GOOD[12:], {}, 2, "{dir}/s.yaml: duration: 1e+300 is above 86400"),
    ("world: w.yaml\n" + GOOD, BAD_WORLD, 2, "s.yaml: world: {dir}/w.yaml: arena.width: 1e+300 is"),
    ("world: empty\nstart: {x: 4.95, y: 0}\n" + GOOD, {}, 2, "s.yaml: start: (4.95, 0) is within 0.1 m of"),
    ("mcu: simavr\nfirmware: fw.elf\n" + GOOD, NOT_AN_ELF, 2, "s.yaml: firmware: firmware {dir}/fw.elf: not"),
    (ONE + "[{telemetry: {list: TL9, field: x, min: 0}}]\n", {}, 2, "s.yaml: assertions[0].telemetry.list:"),
    ("world: empty\n" + ONE + "[{boards_down: {count: 9, by: 5}}]\n", {}, 2, "boards_down.count: 9 boards"),
    ("seed: 3000000000\n" + GOOD, {}, 2, "s.yaml: seed: 3000000000 is above its maximum 2147483647"),
    ("world: w.yaml\n" + GOOD, MJCF, 2, "s.yaml: sim: MJCF world {dir}/a.xml: only physics 'mujoco' reads"),
    # the steps for firmware on its own protocol (issue 23, item 4)
    (RAB + "timeline: [{at: 1, serial: {sned: e}}]\n" + GOOD, {}, 2, "s.yaml: timeline[0].serial: unknown"),
    (RAB + "timeline: [{at: 1, set: {device: x, value: 1}}]\n" + GOOD, {}, 2, "timeline[0].set.device:"),
    (RAB + ONE + "[{serial: {expect: '(', by: 1}}]\n", {}, 2, "s.yaml: assertions[0].serial.expect: not a"),
    (RAB + ONE + "[{pin: {name: motor_left.x, max: 1}}]\n", {}, 2, "s.yaml: assertions[0].pin.name: 'motor_"),
]
# fmt: on


@pytest.mark.parametrize(("scenario", "others", "status", "words"), CHECKED)
def test_check_refuses_what_a_run_would_naming_the_file_and_the_field(
    tmp_path: Path, scenario: str, others: dict[str, str], status: int, words: str
) -> None:
    for name, text in {"s.yaml": scenario, **others}.items():
        (tmp_path / name).write_text(text)
    result = hil_scenario("check", str(tmp_path / "s.yaml"))
    assert result.returncode == status, result.stdout + result.stderr
    assert words.format(dir=tmp_path) in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


ONE_BOARD_WORLD = """
arena: {width: 4.0, height: 4.0}
start: {x: 0.0, y: 0.0, yaw: 0.0}
boards:
  push_threshold: 0.05
  items: [{x: 0.45, y: 0.0, yaw: 3.1416, width: 0.1, thickness: 0.02, height: 0.3}]
"""

ONE_BOARD = """
description: drive into the one board; only boards_down, so the run ends as it falls
world: one_board.yaml
duration: 10
timeline:
  - {at: 0.0, cmd_vel: {linear: 0.3}}
assertions:
  - {boards_down: {by: 10}}
"""


@pytest.mark.ros
def test_a_board_falling_as_the_run_ends_is_in_the_report(tmp_path: Path) -> None:
    (tmp_path / "one_board.yaml").write_text(ONE_BOARD_WORLD)
    path = tmp_path / "knock.yaml"
    path.write_text(ONE_BOARD)
    (suite,) = run_files([load_scenario(path)], out=tmp_path / "out", junit=None)
    (case,) = suite.cases
    assert case.passed, case
    fell_at = float(case.detail.removeprefix("at ").removesuffix(" s"))
    assert float(suite.properties["simulated_s"]) < 9.0  # the run ended once the board was down
    metrics = json.loads((tmp_path / "out" / "knock" / "metrics.json").read_text())
    assert metrics["boards_down"] == 1
    # The report counts the board the run was judged on, at the moment it fell.
    assert list(metrics["board_fall_times_s"]) == ["0"]
    assert metrics["board_fall_times_s"]["0"] == pytest.approx(fell_at, abs=0.006)


def test_a_scenarios_picture_gets_each_verdict_with_the_signals_its_check_read() -> None:
    check = BoardsDown(label="all boards down by 10 s", by=10.0)
    check.observe(Observation(t=1.0, x=0.0, y=0.0, yaw=0.0, v=0.0, w=0.0, boards_down=6, boards=6))
    cases = [
        CaseResult("the run completes", False, "the run failed at 1.00 s", error=True),
        CaseResult("all boards down by 10 s", True, "at 1.00 s", span=(0.0, 1.0)),
    ]
    first, second = judgements(cases, [Judged(check, 10.0)])
    assert (first.label, first.verdict, list(first.series)) == ("the run completes", "ERROR", [])
    assert (second.label, second.verdict, second.span) == ("all boards down by 10 s", "PASS", (0.0, 1.0))
    assert [s.name for s in second.series] == ["boards down"]


RAB_COMMANDS = Path(__file__).resolve().parents[2] / "hil_robots" / "robots" / "rab_style" / "scenarios"


@pytest.mark.ros
def test_a_serial_scenario_run_twice_in_lockstep_gives_the_same_verdicts_times_and_text(
    tmp_path: Path,
) -> None:
    """Serial steps and assertions are deterministic in lockstep (issue 23, item 4)."""
    text = (RAB_COMMANDS / "commands.yaml").read_text()
    text += (
        "  - {pin: {name: motor_left.in1, min: 590, max: 610, during: [1, 2]}}\n"  # o 150: 150/255 of 1024
    )
    for name in ("first", "second"):
        (tmp_path / f"{name}.yaml").write_text(
            text.replace("robot: rab_style", f"name: {name}\nrobot: rab_style")
        )
    result = hil_scenario(
        "run", str(tmp_path / "first.yaml"), str(tmp_path / "second.yaml"), "--out", str(tmp_path / "out")
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    cases: dict[str, list[str]] = {"first": [], "second": []}
    current = ""
    for line in result.stdout.splitlines():
        if line.startswith(("PASS ", "FAIL ", "ERROR ")):
            current = line.split()[1]
        elif line.startswith("  ") and current in cases and " s simulated)" in line:
            cases[current].append(line)
    assert len(cases["first"]) == 10 and cases["first"] == cases["second"]
    assert any("'5982 5984' at 2.005 s" in line for line in cases["first"])
    metrics = json.loads((tmp_path / "out" / "first" / "metrics.json").read_text())
    counts = next(a for a in metrics["scenario"]["assertions"] if "during [2, 2.05]" in a["name"])
    assert counts["events"] == [{"start_s": 2.005, "end_s": 2.005, "text": "5982 5984"}]  # what matched, when
    transcripts = [(tmp_path / "out" / name / "serial_uart0.log").read_bytes() for name in cases]
    assert transcripts[0] == transcripts[1] and transcripts[0].startswith(b"OK\r\n")


STATUS_PANEL = Path(__file__).resolve().parents[2] / "hil_robots" / "robots" / "status_panel"


#: rab_style's own protocol over its UART: commands sent between periods, answers checked.
RAB_SHORT = """\
robot: rab_style
world: empty
mcu: simavr
duration: 2.2
timeline:
  - {at: 0.5, serial: {send: "o 150 150\\r"}}
  - {at: 2.0, serial: {send: "e\\r"}}
assertions:
  - {serial: {expect: "^OK$", by: 0.52}}
  - {serial: {expect: "^[0-9]+ [0-9]+$", during: [2.0, 2.05]}}
  - {state: {field: v, min: 0.3, max: 0.45, during: [1.0, 2.0]}}
"""


@pytest.mark.ros
def test_a_scenario_on_a_firmware_judges_the_same_stepped_ahead_or_in_turn(tmp_path: Path) -> None:
    """Commands written to the UART between periods, answers read: stepping ahead alters nothing."""
    (tmp_path / "short.yaml").write_text(RAB_SHORT)
    scenario = load_scenario(tmp_path / "short.yaml")
    cases, transcripts = [], []
    for ahead in (False, True):
        run = run_scenario(scenario, report_dir=tmp_path / str(ahead), ahead=ahead)
        # Each verdict with the simulated span it covers: stepping ahead judges no other span.
        cases.append([(case.name, case.passed, case.detail, case.span) for case in run.cases])
        transcripts.append((tmp_path / str(ahead) / "short" / "serial_uart0.log").read_bytes())
    assert cases[0] == cases[1], cases
    assert all(passed and span is not None for _, passed, _, span in cases[0]), cases
    assert cases[0][-1][3] == pytest.approx((1.0, 2.0)), cases  # the state check, over its whole window
    assert transcripts[0] == transcripts[1] and transcripts[0].startswith(b"OK\r\n")


@pytest.mark.ros
def test_user_inputs_and_outputs_and_core_edges_pass_in_lockstep_on_a_firmware(tmp_path: Path) -> None:
    """Issue 27, items 5-7, from scenario files on the status_panel sketch in simavr.

    panel.yaml: a knob on A7, a bouncing button and an NEC key set from the timeline;
    the prints, the tone() and the WS2812 colours asserted. motor_pins.yaml:
    analogWrite outside 0..255, a pin switched PWM <-> digital, both L298 inputs high.
    """
    result = hil_scenario("run", str(STATUS_PANEL / "scenarios"), "--out", str(tmp_path))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "PASS panel (" in result.stdout and "PASS motor_pins (" in result.stdout
    metrics = json.loads((tmp_path / "panel" / "metrics.json").read_text())
    events = {a["name"]: a.get("events") for a in metrics["scenario"]["assertions"]}
    tone = next(e for name, e in events.items() if name.startswith("buzzer sounds"))
    assert tone is not None and [t["text"] for t in tone] == ["880 Hz"]
    assert round(tone[0]["end_s"] - tone[0]["start_s"], 3) == 0.1  # tone(8, 880, 100)
    colours = next(e for name, e in events.items() if name.startswith("strip[0] shows (255, 0, 0)"))
    assert colours is not None and colours[-1]["text"] == "(255, 0, 0)"
