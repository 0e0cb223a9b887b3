"""``hil_sketch build``: a sketchbook's sketch builds; warnings, errors and sizes reach the user."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hil_firmware.sketch_tool import main

SKETCHES = Path(__file__).resolve().parents[2] / "hil_bridge" / "test" / "sketches"
LIBRARIES = Path(__file__).resolve().parents[4] / "firmware" / "libraries"

BLINK = "void setup() { pinMode(13, OUTPUT); }\nvoid loop() { digitalWrite(13, millis() / 500 % 2); }\n"
WARNINGS = (SKETCHES / "warnings" / "warnings.ino").read_text()


def ram(size: int) -> str:
    """A sketch whose static RAM is about ``size`` bytes."""
    loop = f"void loop() {{ buffer[millis() % {size}] = 1; }}\n"
    return f"volatile char buffer[{size}];\nvoid setup() {{}}\n{loop}"


def test_a_sketch_in_a_sketchbook_builds_with_the_sketchbooks_libraries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the IDE: <sketchbook>/libraries without --libraries; the build goes beside it."""
    shutil.copytree(SKETCHES / "peripherals", tmp_path / "peripherals")
    (tmp_path / "libraries").symlink_to(LIBRARIES)
    assert main(["build", str(tmp_path / "peripherals"), "--board", "mega2560"]) == 0
    out = capsys.readouterr().out
    assert f"elf: {tmp_path / 'build' / 'peripherals' / 'peripherals.ino.elf'}" in out
    assert (tmp_path / "build" / "peripherals" / "peripherals.ino.hex").is_file()
    assert "of 253952 bytes" in out


@pytest.mark.parametrize(
    ("files", "options", "status", "words"),
    [
        ({"blink.ino": BLINK, "drive.ino": "void drive() {\n  x = 1;\n}\n"}, [], 2,
         ["hil_sketch:", "drive.ino:2"]),
        ({"blink.ino": WARNINGS}, [], 0, ["blink.ino:7", "warning: unused variable"]),
        ({"blink.ino": WARNINGS}, ["--strict"], 2, ["hil_sketch:", "strict", "blink.ino:7"]),
        ({"blink.ino": ram(2100)}, [], 2, ["more static RAM than the nano's 2048 bytes"]),
        ({"blink.ino": ram(1700)}, [], 0, ["static RAM", "little room"]),
        ({"blink.ino": ram(1700)}, ["--strict"], 2, ["static RAM", "75% of 2048"]),
        ({"blink.ino": BLINK}, ["--board", "mega"], 2, ["invalid choice: 'mega'"]),
    ],
)  # fmt: skip
def test_build_reports_to_the_user(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    *,
    files: dict[str, str],
    options: list[str],
    status: int,
    words: list[str],
) -> None:
    folder = tmp_path / "blink"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    try:
        code = main(["build", str(folder), "--out", str(tmp_path / "out"), *options])
    except SystemExit as exit_:  # argparse
        code = int(exit_.code or 0)
    assert code == status
    err = capsys.readouterr().err
    for word in words:
        assert word in err
