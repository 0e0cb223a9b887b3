"""The pytest plugin: the README's example runs as users run it; marker options are checked."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hil_common.errors import HilError
from hil_testing.pytest_plugin import session_options
from hil_testing.session import HilSession

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "firmware_regression.py"
REPO = Path(__file__).resolve().parents[4]


@pytest.mark.ros
def test_the_example_regression_tests_pass_with_the_plugin_enabled() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "hil_testing.pytest_plugin",
            "-p",
            "no:cacheprovider",
            "-q",
            str(EXAMPLE),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "4 passed" in result.stdout


def test_without_the_plugin_the_example_has_no_hil_fixture() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=REPO,
    )
    assert result.returncode != 0
    assert "'hil' not found" in result.stdout or "'hil' not found" in result.stderr


def test_marker_options_become_graph_options_in_lockstep(tmp_path: Path) -> None:
    options, start = session_options(
        {"mcu": "simavr", "world": "empty", "checked": True, "faults": True, "start": (0.5, 0.0, 1.0)},
        base=tmp_path,
    )
    assert (options.rtf, options.mcu, options.checked, options.behaviour) == (0.0, "simavr", True, "manual")
    assert options.world.endswith("empty.yaml")
    assert (options.faults, options.fault_drop, options.fault_corrupt) == (True, 0.0, 0.0)
    assert (start.x, start.y, start.yaw) == (0.5, 0.0, 1.0)


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ({"speed": 3}, "unknown option(s) ['speed']"),
        ({"rtf": 1.0}, "unknown option(s) ['rtf']"),
        ({"start": (1.0,)}, "start = (1.0,) is not (x, y, yaw)"),
        ({"world": "moon"}, "'moon' is not a world of hil_sim"),
        ({"robot": "moon"}, "robot = robot 'moon': no such file or folder, nor a shipped robot"),
        (
            {"robot": "demo", "brain": "thinking"},
            "brain = 'thinking' is not one of profile, control_loop, none",
        ),
    ],
)
def test_a_bad_marker_option_is_named(marker: dict[str, object], message: str, tmp_path: Path) -> None:
    with pytest.raises(HilError) as info:
        session_options(marker, base=tmp_path)
    assert message in str(info.value)


def test_a_markers_robot_folder_is_relative_to_the_test_file(tmp_path: Path) -> None:
    shutil.copytree(REPO / "ws" / "src" / "hil_robots" / "robots" / "rab_style", tmp_path / "mine")
    options, _ = session_options({"robot": "mine"}, base=tmp_path)
    assert options.robot == str((tmp_path / "mine" / "robot.yaml").resolve())
    assert options.brain_of(0) == "none"


@pytest.mark.ros
def test_a_session_on_a_robot_with_brain_none_has_its_serial_port(tmp_path: Path) -> None:
    options, _ = session_options({"robot": "rab_style", "mcu": "simavr", "world": "empty"}, base=tmp_path)
    with HilSession(options) as hil:
        assert hil.serial is not None and hil.serial.baud == 57600
        hil.run(0.2)
        hil.serial.write(b"o 120 120\r")
        hil.run(1.0)
        assert hil.serial.read() == b"OK\r\n" and hil.sim.v[0] > 0.1


@pytest.mark.ros
def test_serial_read_until_steps_the_run_until_the_firmware_answers(tmp_path: Path) -> None:
    options, _ = session_options({"robot": "rab_style", "mcu": "simavr", "world": "empty"}, base=tmp_path)
    with HilSession(options) as hil:
        assert hil.serial is not None
        hil.serial.write("o 150 150\r")  # text: one byte a character
        assert hil.serial.read_until(r"^OK$", timeout=0.5).group(0) == "OK"
        start = hil.time
        hil.run(1.0)
        hil.serial.write(b"e\r")
        counts = hil.serial.read_until(r"^(\d+) (\d+)$", timeout=0.5)
        assert 0.0 < hil.time - start - 1.0 <= 0.1  # stepped only until the answer came
        assert int(counts.group(1)) > 2000 and int(counts.group(2)) > 2000  # the wheels turned
        assert hil.serial.read() == b"\r\n"  # taken up to the match's end: its line end is left
        with pytest.raises(HilError, match=r"read_until: /never/ not sent within 0.2 s .* on UART 0"):
            hil.serial.read_until("never", timeout=0.2)


@pytest.mark.ros
def test_a_write_after_run_reaches_the_firmware_as_if_each_period_was_stepped_in_turn(tmp_path: Path) -> None:
    """``run()`` steps ahead, all but its last period: what is written after it is not late."""
    options, _ = session_options({"robot": "rab_style", "mcu": "simavr", "world": "empty"}, base=tmp_path)
    seen = []
    for ahead in (True, False):
        with HilSession(options) as hil:
            assert hil.serial is not None

            def run(seconds: float, hil: HilSession = hil, ahead: bool = ahead) -> None:
                if ahead:
                    hil.run(seconds)
                    return
                end = hil.time + seconds
                while hil.time < end - 1e-9:
                    hil.advance()

            for text in (b"o 150 150\r", b"e\r", b"o 0 0\r", b"e\r"):
                hil.serial.write(text)
                run(0.5)
            seen.append((hil.serial.read(), float(hil.sim.x[0]), float(hil.sim.yaw[0])))
    assert seen[0] == seen[1] and seen[0][0].count(b"OK") == 2, seen


@pytest.mark.ros
def test_inject_fault_on_a_run_without_fault_proxies_says_how_to_get_them(tmp_path: Path) -> None:
    options, _ = session_options({"world": "empty"}, base=tmp_path)
    with HilSession(options) as hil:
        with pytest.raises(HilError, match=r"faults=True"):
            hil.inject_fault("command", drop=0.1)
        with pytest.raises(HilError, match="link = 'radio'"):
            hil.inject_fault("radio")
        hil.run(0.1)
        assert hil.time == pytest.approx(0.1)
