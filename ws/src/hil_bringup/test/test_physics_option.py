"""The ``physics`` option everywhere: graph, launch argument, hil_sim_runner, report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hil_bringup.core.graph import PHYSICS, GraphOptions, describe, launch_arguments
from hil_bringup.errors import HilBringupError
from hil_bringup.hil_sim_runner import parse
from hil_sim.core.physics import BACKENDS

PACKAGE = Path(__file__).resolve().parent.parent


def test_the_graph_knows_the_simulators_backends() -> None:
    assert PHYSICS == BACKENDS


@pytest.mark.parametrize("physics", PHYSICS)
def test_the_physics_option_reaches_the_simulator(physics: str) -> None:
    nodes, _ = describe(GraphOptions(physics=physics))
    assert next(n for n in nodes if n.name == "sim").parameters["physics"] == physics
    assert parse(["--physics", physics]).physics == physics


def test_an_unknown_backend_is_refused_naming_the_choices() -> None:
    with pytest.raises(HilBringupError, match=r"physics = 'ode' is not one of native, mujoco"):
        GraphOptions(physics="ode")
    with pytest.raises(SystemExit):
        parse(["--physics", "ode"])


def test_the_launch_files_take_physics_with_its_choices() -> None:
    default, _, choices = launch_arguments()["physics"]
    assert (default, choices) == ("native", ["native", "mujoco"])


@pytest.mark.ros
def test_a_mujoco_run_says_so_in_its_metrics_and_picture(tmp_path: Path) -> None:
    report = tmp_path / "report"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "hil_bringup.hil_sim_runner",
            *("--headless", "--rtf", "0", "--duration", "15", "--physics", "mujoco"),
            *("--report-dir", str(report)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    metrics = json.loads((report / "metrics.json").read_text())
    assert metrics["physics"] == "mujoco"
    assert metrics["boards_down"] >= 1  # the first trip after the scan topples a board within 15 s
    assert (report / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
