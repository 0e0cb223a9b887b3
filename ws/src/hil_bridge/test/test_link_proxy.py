"""``hil_link_proxy`` refuses bad options and a path it must not replace, before it starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hil_bridge import link_proxy
from support.unsafe_folders import MAIN_KINDS, Make, snapshot


def proxy_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "hil_bridge.link_proxy", *args]


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        ("--report", "0", "argument --report: '0' must be greater than 0"),
        ("--report", "-1", "argument --report: '-1' must be greater than 0"),
        ("--report", "nan", "argument --report: 'nan' is not a finite number greater than 0"),
        ("--report", "inf", "argument --report: 'inf' is not a finite number greater than 0"),
        ("--report", "soon", "argument --report: 'soon' is not a number"),
        ("--delay-ms", "-1", "argument --delay-ms: '-1' must be at least 0"),
        ("--delay-ms", "nan", "argument --delay-ms: 'nan' is not a finite number at least 0"),
        ("--baud", "0", "argument --baud: '0' must be at least 1"),
        ("--upstream-baud", "-9600", "argument --upstream-baud: '-9600' must be at least 1"),
    ],
)
def test_bad_number_exits_2_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, expected: str
) -> None:
    argv = ["--upstream", str(tmp_path / "up"), "--link", str(tmp_path / "faulty"), option, value]
    with pytest.raises(SystemExit) as info:
        link_proxy.main(argv)
    assert info.value.code == 2
    assert expected in capsys.readouterr().err
    assert not (tmp_path / "faulty").exists()


def test_a_bad_probability_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--upstream", str(tmp_path / "up"), "--link", str(tmp_path / "faulty"), "--drop", "nan"]
    assert link_proxy.main(argv) == 2
    assert "drop = nan is not a probability in [0, 1]" in capsys.readouterr().err


def test_link_at_the_upstream_path_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        link_proxy.main(["--upstream", str(tmp_path / "port"), "--link", str(tmp_path / "." / "port")])
    assert info.value.code == 2
    assert "--link and --upstream are the same path" in capsys.readouterr().err


@pytest.mark.parametrize("report", ["0", "nan"])
def test_report_period_zero_or_nan_exits_2_at_once_instead_of_spinning(tmp_path: Path, report: str) -> None:
    result = subprocess.run(
        proxy_command(
            "--upstream", str(tmp_path / "up"), "--link", str(tmp_path / "faulty"), "--report", report
        ),
        capture_output=True,
        text=True,
        timeout=60,  # generous: an interpreter start; a spinning proxy never ends
        check=False,
    )
    assert result.returncode == 2
    assert "argument --report" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_link_naming_a_users_file_exits_2_and_keeps_the_file(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    result = subprocess.run(
        proxy_command("--upstream", str(tmp_path / "up"), "--link", str(notes)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert f"hil_link_proxy: cannot create pty link {notes}: it exists and is a regular file" in result.stderr
    assert "Traceback" not in result.stderr
    assert notes.read_text() == "my notes\n"


@pytest.mark.parametrize("make", MAIN_KINDS)
def test_link_in_a_folder_another_user_could_change_exits_2_naming_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Make
) -> None:
    folder, words = make(tmp_path)
    before = snapshot(tmp_path)
    assert link_proxy.main(["--upstream", "/dev/null", "--link", str(folder / "faulty")]) == 2
    err = capsys.readouterr().err
    assert f"hil_link_proxy: cannot create pty link {folder / 'faulty'}: folder " in err
    for word in words:
        assert word in err
    assert snapshot(tmp_path) == before
