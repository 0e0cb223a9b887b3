"""The avr-gcc sketch builder: strict flags for our code, clear errors, size reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from hil_bridge.core.avr_build import SizeReport, build_sketch, elf_size
from hil_bridge.errors import HilBridgeError


def sketch(folder: Path, code: str, name: str = "blink") -> Path:
    path = folder / name
    path.mkdir(parents=True)
    (path / f"{name}.ino").write_text(code)
    return path


BLINK = "void setup() { pinMode(13, OUTPUT); }\nvoid loop() { digitalWrite(13, millis() / 500 % 2); }\n"


def test_a_minimal_sketch_links_and_reports_its_size(tmp_path: Path) -> None:
    result = build_sketch(sketch(tmp_path, BLINK), tmp_path / "out", board="uno")
    assert result.hex.is_file()
    assert 0 < result.size.flash < 2000
    assert result.size == elf_size(result.elf)
    assert "flash" in str(result.size) and "RAM" in str(result.size)


def test_a_sketch_builds_for_the_mega2560_against_its_memory(tmp_path: Path) -> None:
    code = "void setup() { pinMode(46, OUTPUT); analogWrite(46, 10); }\nvoid loop() {}\n"
    result = build_sketch(sketch(tmp_path, code), tmp_path / "out", board="mega2560")
    assert (result.size.flash_max, result.size.ram_max) == (256 * 1024 - 8 * 1024, 8192)
    header = result.elf.read_bytes()
    assert header[18] == 83  # e_machine EM_AVR
    assert int.from_bytes(header[36:40], "little") & 0x7F == 6  # e_flags: avr6, the ATmega2560's family


def test_warnings_in_our_code_are_errors_naming_the_file(tmp_path: Path) -> None:
    code = "void setup() { int unused = 1; }\nvoid loop() {}\n"
    with pytest.raises(HilBridgeError, match=r"blink\.ino.*unused"):
        build_sketch(sketch(tmp_path, code), tmp_path / "out")


def test_a_folder_without_ino_is_not_a_sketch(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(HilBridgeError, match=r"no \.ino"):
        build_sketch(tmp_path / "empty", tmp_path / "out")


def test_unknown_board_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HilBridgeError, match="board 'mega'"):
        build_sketch(sketch(tmp_path, BLINK), tmp_path / "out", board="mega")


def test_libraries_are_found_in_the_given_folders_and_compiled(tmp_path: Path) -> None:
    library = tmp_path / "libraries" / "twice" / "src"
    library.mkdir(parents=True)
    (library / "twice.h").write_text(
        '#pragma once\n#ifdef __cplusplus\nextern "C"\n#endif\nint twice(int x);\n'
    )
    (library / "twice.c").write_text('#include "twice.h"\nint twice(int x) { return 2 * x; }\n')
    code = "#include <twice.h>\nvoid setup() { Serial.begin(9600); Serial.println(twice(21)); }\n"
    code += "void loop() {}\n"
    result = build_sketch(sketch(tmp_path, code), tmp_path / "out", libraries=[tmp_path / "libraries"])
    assert result.libraries == ("twice",)


@pytest.mark.parametrize(
    ("size", "message"),
    [
        (SizeReport(flash=31000, ram=100), "flash 31000"),
        (SizeReport(flash=1000, ram=1700), "static RAM 1700"),
    ],
)
def test_size_check_names_what_is_over(size: SizeReport, message: str) -> None:
    with pytest.raises(HilBridgeError, match=message):
        size.check()
