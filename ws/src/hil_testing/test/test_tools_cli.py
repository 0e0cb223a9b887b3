"""hil_step and hil_goto as a user runs them: console scripts against a live graph in real time."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EMPTY_WORLD = str(Path(__file__).resolve().parents[2] / "hil_sim" / "worlds" / "empty.yaml")


def tool(name: str) -> str:
    path = shutil.which(name)
    assert path is not None, f"{name} is not installed (make bootstrap)"
    return path


@pytest.mark.ros
def test_step_then_goto_against_the_real_time_runner_write_their_reports(
    spawn: object, tmp_path: Path
) -> None:
    spawn(  # type: ignore[operator]
        [
            sys.executable,
            "-m",
            "hil_bringup.hil_sim_runner",
            "--headless",
            "--behaviour",
            "",
            "--world",
            EMPTY_WORLD,
            "--report-dir",
            str(tmp_path / "run"),
        ],
        name="sim_runner",
    )
    step = subprocess.run(
        [tool("hil_step"), "--settle", "0.5", "--duration", "1.0", "--output-dir", str(tmp_path / "step")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert step.returncode == 0, step.stdout + step.stderr[-3000:]
    assert f"json: {tmp_path / 'step' / 'step.json'}" in step.stdout
    data = json.loads((tmp_path / "step" / "step.json").read_text())
    assert data["passed"] is True
    assert (tmp_path / "step" / "step.png").stat().st_size > 10_000
    goto = subprocess.run(
        [
            tool("hil_goto"),
            "--x",
            "0.3",
            "--y",
            "0.2",
            "--yaw",
            "1.0",
            "--output-dir",
            str(tmp_path / "goto"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert goto.returncode == 0, goto.stdout + goto.stderr[-3000:]
    assert "hil_goto: reached" in goto.stdout
    result = json.loads((tmp_path / "goto" / "goto.json").read_text())
    assert result["reached"] is True
    assert result["position_error_m"] < 0.06


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("hil_step", ["--left", "300"], "step: left = 300 must be an integer within +-255"),
        ("hil_goto", ["--tolerance", "0"], "parameter 'tolerance'"),
    ],
)
def test_a_bad_option_exits_2_naming_it(name: str, args: list[str], message: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [tool(name), *args, "--output-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stderr[-2000:]
    assert message in result.stderr


@pytest.mark.ros
def test_a_tool_without_a_graph_gives_up_after_its_wait_and_says_why(tmp_path: Path) -> None:
    result = subprocess.run(
        [tool("hil_goto"), "--wait", "1.0", "--output-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "no /odom for" in result.stderr
