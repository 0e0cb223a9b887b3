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
from hil_devices.core.robot_copy import copy_robot
from hil_firmware.sketch_tool import main as hil_sketch
from hil_mcu.simavr_mcu_node import SimavrMcuNode
from hil_sim.core.world import Pose
from hil_testing.core.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent
ROBOTS = ROOT / "ws" / "src" / "hil_robots" / "robots"
#: Sketches of the project's own robots (robot_mcu builds in firmware/test).
OWN_SKETCHES = [
    "rab_style",
    "line_follower",
    "sonar_servo_avoider",
    "mega_pwm_dir_pid",
    "bluetooth_car",
    "edu_robot",
]
#: The boards each sketch builds for (the profile's first).
SKETCH_BOARDS = {"mega_pwm_dir_pid": ["mega2560"], "edu_robot": ["nano", "uno"]}


@pytest.mark.parametrize(
    ("robot", "board"),
    [(robot, board) for robot in OWN_SKETCHES for board in SKETCH_BOARDS.get(robot, ["uno", "nano"])],
)
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


@pytest.mark.ros
def test_a_robot_made_with_hil_robot_new_builds_its_renamed_sketch_and_passes_its_scenario(
    tmp_path: Path,
) -> None:
    made = copy_robot("rab_style", tmp_path / "my_base")
    scenarios, out = str(made.folder / "scenarios"), str(tmp_path / "out")
    result = subprocess.run(
        [sys.executable, "-m", "hil_testing.hil_scenario", "run", scenarios, "--out", out],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "PASS commands (" in result.stdout
    # The firmware in simavr was the copy's own sketch, built under its new name.
    assert sorted((made.folder / "firmware" / "build").rglob("my_base*.elf"))


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
        "status_panel": "test_each_robot_runs_its_scenarios_in_lockstep",
        **{r: f"test_{r}" for r in OWN_SKETCHES},
    }
    assert set(runs) == set(shipped())
    assert all(name in globals() or name.startswith("test_each") for name in runs.values())


def test_each_sketch_builds_first_for_its_profiles_board() -> None:
    assert all(SKETCH_BOARDS.get(r, ["uno"])[0] == load_profile(ROBOTS / r).board for r in OWN_SKETCHES)


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


MEGA_COUNTS_PER_RAD = 11 * 34 / (2 * math.pi)  # one channel of an 11-pulse motor encoder, 1:34


@pytest.mark.ros
def test_mega_pwm_dir_pid(lockstep: Callable[..., GraphRunner]) -> None:
    """Serial1 at 57600 drives it (V: PID speeds, P: raw PWM on PWM+DIR drivers); E counts follow
    the wheels either way (single-channel encoders counting the commanded direction); the boot
    banner is on Serial, the USB UART's own pty."""
    runner = lockstep("mega_pwm_dir_pid", world="empty")
    sim = runner.sim.sim
    port = runner.serial
    assert port is not None and port.baud == 57600  # the profile's command UART: Serial1
    usb = runner.serial_ports()[0]  # Serial: UART 0 on its own pty (uart0), a serial monitor's
    assert port is runner.serial_ports()[1] and usb.path == runner.options.links(0).uarts[0]
    run_for(runner, 0.3)
    assert usb.read() == b"mega_pwm_dir_pid ready: commands on Serial1 at 57600\r\n"
    assert port.read() == b""  # nothing on Serial1 before the host speaks

    def counts() -> tuple[int, int]:
        answer = ask(runner, b"E\n", within=0.01)
        assert re.fullmatch(r"E -?\d+ -?\d+\r\n", answer), answer
        left, right = (int(word) for word in answer.split()[1:])
        for count, angle in zip((left, right), sim.wheel_angle[0], strict=True):
            # the pulses of a signal frame come in the next one: 30 counts is 50 ms at full speed
            assert count == pytest.approx(angle * MEGA_COUNTS_PER_RAD, rel=0.03, abs=30)
        return left, right

    assert ask(runner, b"V 300 300\n") == "OK\r\n"
    run_for(runner, 1.5)
    held = 300 / MEGA_COUNTS_PER_RAD * 0.033  # m/s at 300 counts a second
    assert sim.v[0] == pytest.approx(held, rel=0.15) and abs(sim.w[0]) < 0.1
    ahead = counts()
    assert min(ahead) > 300
    assert ask(runner, b"V -200 200\n") == "OK\r\n"
    run_for(runner, 1.5)
    assert sim.w[0] > 1.0 and abs(sim.v[0]) < 0.03  # on the spot, to the left
    left, right = counts()
    assert left < ahead[0] - 150 and right > ahead[1] + 150  # the left one counts down
    assert ask(runner, b"P 0 0\n") == "OK\r\n"
    run_for(runner, 0.5)
    assert abs(sim.v[0]) < 0.01 and abs(sim.w[0]) < 0.05  # PWM 0: the drivers brake
    assert ask(runner, b"P 120 -120\n") == "OK\r\n"
    run_for(runner, 0.5)
    assert sim.w[0] < -1.0
    counts()
    run_for(runner, 2.0)  # no command for 2 s: it stops by itself
    assert abs(sim.w[0]) < 0.05
    assert ask(runner, b"X\n") == "ERR\r\n"
    assert usb.read().endswith(b"unknown command: X\r\n")  # and why, on Serial


@pytest.mark.ros
def test_bluetooth_car(lockstep: Callable[..., GraphRunner]) -> None:
    """Letters over its SoftwareSerial Bluetooth link drive it by the L298's IN levels alone
    (ENA/ENB tied high: full speed); backing up, it beeps with tone() at 2 kHz, half the time."""
    runner = lockstep("bluetooth_car", world="empty")
    sim, usb = runner.sim.sim, runner.serial
    assert usb is not None
    with serial.Serial(runner.options.links(0).soft_uarts[0], 9600, timeout=0) as bluetooth:  # the phone

        def send(letter: bytes, seconds: float) -> list[float]:
            """The letter, then ``seconds`` of driving; the buzzer pin's frequency each period."""
            tones: list[float] = []
            bluetooth.write(letter)
            run_for(runner, seconds, each=lambda: tones.append(float(sim.input("buzzer.frequency")[0])))
            return tones

        run_for(runner, 0.3)
        banner, mcu = usb.read(), runner.chains[0].mcu
        assert isinstance(mcu, SimavrMcuNode) and mcu.process is not None
        assert banner == b"bluetooth_car ready\r\n", mcu.process.stats()  # its resets and opens
        assert max(send(b"F", 1.0)) == 0.0
        assert sim.v[0] > 0.5 and abs(sim.w[0]) < 0.05  # full speed ahead
        send(b"L", 0.8)
        assert sim.w[0] > 5.0 and abs(sim.v[0]) < 0.05  # a spin to the left
        send(b"R", 0.8)
        assert sim.w[0] < -5.0
        beeps = send(b"B", 2.0)
        assert sim.v[0] < -0.5 and abs(sim.w[0]) < 0.05
        sounding = [f for f in beeps if f > 0]
        assert sounding and all(f == pytest.approx(2000, rel=0.01) for f in sounding)
        assert 0.3 < len(sounding) / len(beeps) < 0.7  # 250 ms of every 500
        assert max(send(b"S", 0.5)[20:]) == 0.0  # silent once it stops
        assert abs(sim.v[0]) < 0.01 and abs(sim.w[0]) < 0.05
        send(b"x?\n", 0.3)  # not a command: ignored
        assert abs(sim.v[0]) < 0.01
    assert usb.read().decode().split("\r\n")[:-1] == [f"command {c}" for c in "FLRBS"]


#: The bootloader's wait after a reset on the UNO and the Nano (the harness's board table).
NANO_BOOT_DELAY = 1.375


@pytest.mark.ros
def test_edu_robot(lockstep: Callable[..., GraphRunner]) -> None:
    """Its two line sensors keep it on the line world's oval; a program that opens its port
    late resets it (DTR) and reads its boot banner, printed after the bootloader's wait; a
    press of the A7 mode button (analogRead) stops it, LED blinking, and another sets it off."""
    runner = lockstep("edu_robot", world="line")
    sim, port = runner.sim.sim, runner.serial
    assert port is not None and port.baud == 9600
    worst = 0.0

    def watch() -> None:
        nonlocal worst
        worst = max(worst, distance_to_oval(float(sim.x[0]), float(sim.y[0])))

    run_for(runner, 2.0, each=watch)
    assert port.read().decode().startswith("edu_robot v1 ready: A7 switches modes\r\nmode: line\r\n")
    assert sim.x[0] > 0.3 and sim.led[0] > 0.5  # along the line, its LED on
    with serial.Serial(port.path, 9600, timeout=0):  # a program opens the port, 2 s after power-on
        opened, text, stood = sim.time, "", 0.0
        while "ready" not in text:
            assert sim.time < opened + 3.0, text
            runner.step()
            text += port.read().decode()
            if opened + 0.3 < sim.time < opened + 1.3:  # in the bootloader: pins are inputs
                stood = max(stood, abs(float(sim.v[0])), float(sim.led[0]))
        assert NANO_BOOT_DELAY <= sim.time - opened <= NANO_BOOT_DELAY + 0.05
        run_for(runner, 0.1)  # 9600 baud: a ms a byte
        text += port.read().decode()
        assert text.startswith("edu_robot v1 ready: A7 switches modes\r\nmode: line\r\n")  # nothing before it
        assert stood < 0.02  # the drivers braked and the LED was off while it was reset
        run_for(runner, 4.0, each=watch)
    assert worst < 0.03  # its sensors straddle the 19 mm tape
    assert sim.y[0] > -0.3  # the sketch started again and took the bend
    assert "line L R: 1 0" in port.read().decode()
    leds: list[float] = []
    runner.sim.set_device(0, "mode_button", 5.0, seconds=0.1)  # a press: A7 at 5 V for 0.1 s
    run_for(runner, 1.0, each=lambda: leds.append(float(sim.led[0])))
    assert port.read() == b"mode: stand\r\n" and abs(sim.v[0]) < 0.01
    assert 0.3 < sum(leds[-100:]) / 100 < 0.7  # blinking
    runner.sim.set_device(0, "mode_button", 5.0, seconds=0.1)
    run_for(runner, 1.0)
    assert port.read().startswith(b"mode: line\r\n") and sim.v[0] > 0.15


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
