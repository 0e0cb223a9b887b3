"""hil_sim_runner refuses bad options and bad files before it runs: exit 2, a message, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hil_bringup import hil_sim_runner
from support.unsafe_folders import OTHER_UID, needs_root


def run_runner(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "hil_bringup.hil_sim_runner",
            "--headless",
            "--rtf",
            "0",
            "--duration",
            "1",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        ("--duration", "nan", "argument --duration: 'nan' is not a finite number at least 0"),
        ("--duration", "-5", "argument --duration: '-5' must be at least 0"),
        ("--duration", "inf", "argument --duration: 'inf' is not a finite number"),
        ("--rtf", "nan", "argument --rtf: rtf = nan: expected a finite number"),
        ("--rtf", "-1", "argument --rtf: rtf = -1.0 is below its minimum 0"),
        ("--robots", "0", "argument --robots: robots = 0 is below its minimum 1"),
        ("--until-boards-down", "-1", "argument --until-boards-down: '-1' must be at least 0"),
    ],
)
def test_bad_number_exits_2_naming_the_option(
    capsys: pytest.CaptureFixture[str], option: str, value: str, expected: str
) -> None:
    with pytest.raises(SystemExit) as info:
        hil_sim_runner.parse([option, value])
    assert info.value.code == 2
    assert expected in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(
            b"arena: {width: 4.0}\nlight: {x: 1\xe9}\n",
            "not UTF-8 text: byte 0xe9 at offset 32 (line 2)",
            id="utf8",
        ),
        pytest.param(b"1: 2\nfoo: 3\n", "key 1 is not text", id="integer-key"),
        pytest.param(
            b"boards: {ring: {count: 30000000, radius: 1.0}}\n",
            "boards.ring.count: 30000000 boards",
            id="ring",
        ),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, "nested more than", id="deep"),
    ],
)
def test_bad_world_file_exits_2_with_the_message_and_no_traceback(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    world = tmp_path / "bad.yaml"
    world.write_bytes(content)
    result = run_runner("--world", str(world), "--report-dir", str(tmp_path / "report"))
    assert result.returncode == 2, result.stderr[-2000:]
    assert f"hil_sim_runner: {world}: " in result.stderr
    assert expected in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("folder", ["/proc/nope", "/proc/nope/deeper", "FILE/inside"])
def test_unwritable_report_folder_exits_2_before_the_run(tmp_path: Path, folder: str) -> None:
    (tmp_path / "FILE").write_text("a file, not a folder\n")
    folder = folder.replace("FILE", str(tmp_path / "FILE"))
    result = run_runner("--report-dir", folder)
    assert result.returncode == 2, result.stderr[-2000:]
    assert f"hil_sim_runner: report folder {folder}: cannot write there" in result.stderr
    assert "started" not in result.stdout, "the run went ahead with a folder it cannot write"
    assert "Traceback" not in result.stderr


def test_report_folder_is_made_before_the_run(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "b"
    hil_sim_runner.check_report_folder(folder)
    assert folder.is_dir() and not any(folder.iterdir())


def _open_to_all(folder: Path) -> str:
    folder.mkdir()
    folder.chmod(0o777)
    return f"folder {folder} is writable by its group and others (mode 0777)"


def _theirs(folder: Path) -> str:
    folder.mkdir()
    os.chown(folder, OTHER_UID, -1)
    return f"folder {folder} is owned by uid {OTHER_UID}, not by you"


def _symlink(folder: Path) -> str:
    (folder.parent / "lure").mkdir(mode=0o700)
    folder.symlink_to(folder.parent / "lure")
    return f"folder {folder} is a symlink (to {folder.parent / 'lure'})"


@pytest.mark.parametrize(
    "plant",
    [
        pytest.param(_open_to_all, id="world-writable"),
        pytest.param(_theirs, id="owned-by-another-user", marks=needs_root),
        pytest.param(_symlink, id="symlink"),
    ],
)
def test_a_runtime_folder_another_user_could_change_exits_2_naming_it(
    tmp_path: Path, plant: Callable[[Path], str]
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    temp.chmod(0o1777)  # as /tmp
    words = plant(temp / f"hil-{os.geteuid()}")
    result = subprocess.run(
        [sys.executable, "-m", "hil_bringup.hil_sim_runner", "--headless", "--rtf", "0", "--duration", "1"],
        env={**os.environ, "TMPDIR": str(temp), "XDG_RUNTIME_DIR": ""},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 2
    assert f"hil_sim_runner: {words}" in result.stderr
    assert "Traceback" not in result.stderr


#: A robot option, what to put where (file name -> content, in the test's folder), the words.
BAD_ROBOTS = [
    pytest.param(
        ["--robot", "nope"],
        {},
        "robot = robot 'nope': no such file or folder, nor a shipped robot (shipped: bluetooth_car, demo,",
        id="unknown-name",
    ),
    pytest.param(
        ["--robot", "DIR/empty"], {"empty/notes.txt": "x"}, "no robot.yaml in this folder", id="no-profile"
    ),
    pytest.param(
        ["--robot", "DIR/bad"],
        {"bad/robot.yaml": "name: bad\nboard: leonardo\n"},
        "bad/robot.yaml: board: 'leonardo' is not one of uno, nano, mega2560",
        id="bad-field",
    ),
    pytest.param(
        ["--robot", "demo,DIR/nothing_here"],
        {},
        "nothing_here: no such file or folder",
        id="second-of-two",
    ),
    pytest.param(
        ["--uart-link", "DIR/uart", "--robots", "2", "--hil-robots", "2"],
        {},
        "uart_link is for one HIL robot (hil_robots = 2)",
        id="uart-link-for-two",
    ),
]


@pytest.mark.parametrize(("args", "files", "expected"), BAD_ROBOTS)
def test_a_bad_robot_exits_2_naming_it(
    tmp_path: Path, args: list[str], files: dict[str, str], expected: str
) -> None:
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    result = run_runner(
        *(arg.replace("DIR", str(tmp_path)) for arg in args), "--report-dir", str(tmp_path / "r")
    )
    assert result.returncode == 2, result.stderr[-2000:]
    assert expected in result.stderr
    assert "Traceback" not in result.stderr and "started" not in result.stdout


def test_brain_takes_control_loop_or_none(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        hil_sim_runner.parse(["--brain", "thinking"])
    assert info.value.code == 2
    assert "brain = 'thinking' is not one of profile, control_loop, none" in capsys.readouterr().err
