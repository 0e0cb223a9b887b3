"""hil_scenario: the demo suite passes in lockstep; failures, faults and bad files are reported."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hil_bringup.core.scenario import load_scenario
from hil_bringup.scenario_runner import run_files

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def hil_scenario(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hil_bringup.scenario_runner", *args],
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
