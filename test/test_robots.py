"""The shipped robots: each sketch builds, each scenario is read, each robot runs its own firmware.

Every shipped profile runs in lockstep: the simulator with its model, its sketch built
and running in simavr, its pins moving the simulated robot, its own program on its
command UART (the runner's serial port, brain none). rab_style also runs in real time
(rtf 1) with a plain pyserial program on the pty the runner prints.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import serial

from conftest import Spawn
from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner
from hil_devices.core.profile import load_profile
from hil_firmware.sketch_tool import main as hil_sketch
from hil_sim.core.world import Pose
from hil_testing.core.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent
ROBOTS = ROOT / "ws" / "src" / "hil_robots" / "robots"
#: Sketches of the project's own robots (robot_mcu builds in firmware/test).
OWN_SKETCHES = ["rab_style", "line_follower", "sonar_servo_avoider"]


@pytest.mark.parametrize("board", ["uno", "nano"])
@pytest.mark.parametrize("robot", OWN_SKETCHES)
def test_each_robot_sketch_builds_with_hil_sketch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], robot: str, board: str
) -> None:
    profile = load_profile(ROBOTS / robot)
    sketch = profile.firmware.sketch
    assert sketch is not None and sketch.is_relative_to(ROBOTS / robot)  # its own folder, not shared
    options = [f"--libraries={folder}" for folder in profile.firmware.libraries]
    options += ["--strict"] if profile.firmware.strict else []
    assert hil_sketch(["build", str(sketch), "--board", board, "--out", str(tmp_path), *options]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"{robot}: flash \d+ of \d+ bytes", out)


@pytest.mark.parametrize(
    "scenario",
    sorted(ROBOTS.glob("*/scenarios/*.yaml")),
    ids=lambda path: f"{path.parents[1].name}/{path.name}",
)
def test_each_robot_scenario_passes_hil_scenario_check(scenario: Path) -> None:
    view = load_scenario(scenario).view
    assert view is not None and view.profile.name == scenario.parents[1].name  # its own robot


@pytest.mark.ros
@pytest.mark.parametrize("robot", sorted(p.name for p in ROBOTS.iterdir() if (p / "robot.yaml").is_file()))
def test_each_robot_runs_its_scenarios_in_lockstep(tmp_path: Path, robot: str) -> None:
    folder = ROBOTS / robot / "scenarios"
    assert sorted(folder.glob("*.yaml")), f"robot {robot} ships no scenario in {folder}"
    result = subprocess.run(
        [sys.executable, "-m", "hil_testing.hil_scenario", "run", str(folder), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    for scenario in (ROBOTS / robot / "scenarios").glob("*.yaml"):
        assert f"PASS {scenario.stem} (" in result.stdout


# --- each shipped robot on its own firmware, in lockstep ------------------------------------


def run_for(runner: GraphRunner, seconds: float, *, each: Callable[[], None] | None = None) -> None:
    """Step the lockstep run ``seconds`` of simulated time, calling ``each`` after every period."""
    end = runner.sim.sim.time + seconds
    while runner.sim.sim.time < end - 1e-9:
        runner.step()
        if each is not None:
            each()


def ask(runner: GraphRunner, line: bytes, *, within: float = 0.2) -> str:
    """Send a command line to the firmware; its answer (the lines it sent within ``within`` s)."""
    port = runner.serial
    assert port is not None
    port.read()  # what came before is not the answer
    port.write(line)
    run_for(runner, within)
    return port.read().decode("ascii", errors="replace")


@pytest.fixture
def lockstep() -> Iterator[Callable[..., GraphRunner]]:
    """A lockstep runner of a shipped robot on its firmware in simavr (stopped at teardown)."""
    runners: list[GraphRunner] = []

    def make(robot: str, **options: Any) -> GraphRunner:
        runner = GraphRunner(GraphOptions(robot=robot, mcu="simavr", rtf=0.0, **options))
        runners.append(runner)
        runner.start()
        return runner

    yield make
    for runner in runners:
        runner.stop()


def shipped() -> list[str]:
    return sorted(p.name for p in ROBOTS.iterdir() if (p / "robot.yaml").is_file())


def test_every_shipped_robot_has_a_lockstep_run_here() -> None:
    runs = {
        "demo": "test_each_robot_runs_its_scenarios_in_lockstep",
        **{r: f"test_{r}" for r in OWN_SKETCHES},
    }
    assert set(runs) == set(shipped())
    assert all(name in globals() or name.startswith("test_each") for name in runs.values())


@pytest.mark.ros
def test_rab_style(lockstep: Callable[..., GraphRunner]) -> None:
    """o drives both wheels, e counts follow them (12 CPR x4 on a 1:48 gearbox), o L R turns it."""
    runner = lockstep("rab_style", world="empty")
    sim = runner.sim.sim
    assert runner.serial is not None and runner.serial.baud == 57600
    assert runner.options.brain_of(0) == "none" and not runner.loops
    run_for(runner, 0.3)
    assert ask(runner, b"o 100 100\r") == "OK\r\n"
    run_for(runner, 1.0)
    assert sim.v[0] > 0.1 and abs(sim.w[0]) < 0.1
    counts_per_rad = 12 * 4 * 48 / (2 * math.pi)
    left, right = (int(word) for word in ask(runner, b"e\r", within=0.02).split())
    for count, angle in zip((left, right), sim.wheel_angle[0], strict=True):  # the right one mounted mirrored
        assert count == pytest.approx(angle * counts_per_rad, rel=0.03, abs=20)
    assert ask(runner, b"o -100 100\r") == "OK\r\n"
    run_for(runner, 1.0)
    assert sim.w[0] > 1.0 and abs(sim.v[0]) < 0.05  # on the spot, to the left
    assert "Invalid Command" in ask(runner, b"x\r")


@pytest.mark.ros
def test_a_lockstep_run_on_the_firmwares_own_protocol_repeats_exactly(
    lockstep: Callable[..., GraphRunner],
) -> None:
    """The serial port's bytes reach the firmware, and its answers come back, in the same periods."""

    def session() -> tuple[list[tuple[float, bytes]], tuple[float, ...]]:
        runner = lockstep("rab_style", world="empty")
        port, sim = runner.serial, runner.sim.sim
        assert port is not None
        heard: list[tuple[float, bytes]] = []
        script = {0.3: b"o 80 120\r", 0.8: b"e\r", 1.0: b"m 20 -10\r", 1.6: b"e\r"}
        for step in range(400):
            due = script.get(round(step * 0.005, 3))
            if due is not None:
                port.write(due)
            runner.step()
            data = port.read()
            if data:
                heard.append((round(sim.time, 3), data))
        pose = (float(sim.x[0]), float(sim.y[0]), float(sim.yaw[0]))
        runner.stop()
        return heard, pose

    first, second = session(), session()
    assert first == second
    heard, pose = first
    assert heard[0][1] == b"OK\r\n" and len(heard) >= 4 and pose[0] > 0.01


def distance_to_oval(x: float, y: float) -> float:
    """How far (m) a point is from the line world's tape: two 1.2 m straights, two 0.5 m half circles."""
    if -0.6 <= x <= 0.6:
        return min(abs(y - 0.5), abs(y + 0.5))
    centre = 0.6 if x > 0 else -0.6
    return abs(math.hypot(x - centre, y) - 0.5)


@pytest.mark.ros
def test_line_follower(lockstep: Callable[..., GraphRunner]) -> None:
    """Its three line sensors keep it on the line world's oval, round the first bend and beyond."""
    runner = lockstep("line_follower", world="line")
    sim = runner.sim.sim
    worst, track = 0.0, []

    def watch() -> None:
        nonlocal worst
        worst = max(worst, distance_to_oval(float(sim.x[0]), float(sim.y[0])))
        track.append((float(sim.x[0]), float(sim.y[0])))

    run_for(runner, 7.0, each=watch)
    assert worst < 0.05  # never off the tape by more than about its sensors' spread
    assert max(x for x, _ in track) > 1.0 and track[-1][1] > 0.4  # round the right bend, on the top straight
    assert track[-1][0] < 0.3  # heading back left along it
    text = runner.serial.read().decode() if runner.serial else ""
    assert text.startswith("line_follower ready") and "L C R: 0 1 0 -> ahead" in text


@pytest.mark.ros
def test_sonar_servo_avoider(lockstep: Callable[..., GraphRunner]) -> None:
    """Driving at a wall, it sees it with its sonars and turns away before touching it."""
    runner = lockstep("sonar_servo_avoider", world="empty")
    sim = runner.sim.sim
    sim.teleport(0, Pose(3.8, 0.0, 0.0))  # the arena's wall at x = 5, 1.2 m ahead
    closest, turned = 10.0, 0.0

    def watch() -> None:
        nonlocal closest, turned
        closest = min(closest, 5.0 - float(sim.x[0]))
        turned = max(turned, abs(float(sim.yaw[0])))

    run_for(runner, 6.0, each=watch)
    assert turned > math.radians(60)  # turned away
    assert 0.1 < closest < 0.9  # it drove up to the wall, and not into it
    assert float(sim.x[0]) < 5.0 - 0.15
    text = runner.serial.read().decode() if runner.serial else ""
    assert "sonar_servo_avoider ready" in text and "turn" in text


# --- rab_style in real time, a plain program on the printed pty -----------------------------


@pytest.mark.ros
def test_rab_style_at_rtf_1_with_a_program_on_the_printed_pty(tmp_path: Path, spawn: Spawn) -> None:
    """hil_sim_runner prints the firmware's pty; pyserial opens it (DTR resets the UNO), drives, reads e."""
    report = tmp_path / "report"
    command = [sys.executable, "-m", "hil_bringup.hil_sim_runner", "--headless", "--robot", "rab_style"]
    command += [
        "--mcu",
        "simavr",
        "--rtf",
        "1",
        "--world",
        "empty",
        "--duration",
        "12",
        "--report-dir",
        str(report),
    ]
    runner = spawn(command, name="runner")
    log = tmp_path / "runner.log"
    found = wait_for(lambda: re.search(r"your program: open (\S+) \((\d+) baud\)", log.read_text()), 60.0)
    assert found is not None, log.read_text()[-3000:]
    path, baud = found.group(1), int(found.group(2))
    assert baud == 57600
    with serial.Serial(path, baud, timeout=0.1) as port:  # the open resets it: the bootloader waits 1.375 s

        def answer(line: bytes, expect: str, within: float = 5.0) -> str:
            def asked() -> str | None:
                port.write(line)
                text = port.read(256).decode("ascii", errors="replace")
                return text if re.search(expect, text) else None

            got = wait_for(asked, within)
            assert got is not None, f"no {expect!r} to {line!r}"
            return got

        answer(b"o 120 120\r", r"OK")
        time.sleep(1.0)
        counts = answer(b"e\r", r"^\d+ \d+", within=2.0)
        left, right = (int(w) for w in counts.split()[:2])
        assert left > 500 and right > 500  # the wheels turned (48 x 48 counts a wheel turn)
        answer(b"o 0 0\r", r"OK")
    assert runner.wait(timeout=60) == 0, log.read_text()[-3000:]
    metrics = json.loads((report / "metrics.json").read_text())
    assert metrics["final_pose"][0] > 0.1 and metrics["brain"] == ["none"]


def wait_for(what: Callable[[], Any], seconds: float) -> Any:
    """``what()`` once it is true (polled), or None after ``seconds`` of wall time."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = what()
        if value:
            return value
        time.sleep(0.05)
    return None
