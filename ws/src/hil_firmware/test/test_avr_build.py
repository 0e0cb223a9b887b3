"""Sketches build as the Arduino IDE builds them: tabs, prototypes, libraries, boards, warnings."""

from __future__ import annotations

from pathlib import Path

import pytest

from hil_common.errors import HilError
from hil_devices.core.boards import BOARDS
from hil_devices.core.sketch_files import sketch_folder
from hil_firmware.core.avr_build import BuildResult, SizeReport, build_sketch, diagnostics, elf_size

SKETCHES = Path(__file__).resolve().parents[2] / "hil_bridge" / "test" / "sketches"
#: The project's own library folder (Servo is there).
LIBRARIES = Path(__file__).resolve().parents[4] / "firmware" / "libraries"
#: The AVR architecture of each board's MCU in the ELF header's e_flags (EF_AVR_MACH).
AVR_MACH = {"uno": 5, "nano": 5, "mega2560": 6}


EMPTY = "void setup() {}\nvoid loop() {}\n"


def sketch(folder: Path, code: str, name: str = "blink") -> Path:
    path = folder / name
    path.mkdir(parents=True)
    (path / f"{name}.ino").write_text(code)
    return path


def avr_mach(elf: Path) -> int:
    return int.from_bytes(elf.read_bytes()[36:40], "little") & 0x7F


@pytest.fixture(scope="module")
def three_tabs(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    return build_sketch(SKETCHES / "three_tabs", tmp_path_factory.mktemp("tabs"), board="uno", strict=True)


def test_tabs_calling_each_other_undeclared_build_in_the_ides_order(three_tabs: BuildResult) -> None:
    """Each tab uses functions of the others, and variables of the tabs before it."""
    assert three_tabs.hex.read_text().startswith(":")
    assert avr_mach(three_tabs.elf) == AVR_MACH["uno"]
    assert 0 < three_tabs.size.flash < 4000
    assert three_tabs.size == elf_size(three_tabs.elf, board="uno")
    assert three_tabs.libraries == ()


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_standard_libraries_and_our_servo_build_for_every_board(tmp_path: Path, board: str) -> None:
    result = build_sketch(
        SKETCHES / "peripherals", tmp_path / "out", libraries=[LIBRARIES], board=board, strict=True
    )
    assert set(result.libraries) == {"EEPROM", "SPI", "Servo", "SoftwareSerial", "Wire"}
    assert avr_mach(result.elf) == AVR_MACH[board]
    assert result.size.flash_max == BOARDS[board].flash_bytes
    assert result.size.ram_max == BOARDS[board].ram_bytes
    result.size.check()


def test_warnings_are_shown_but_do_not_stop_the_build(tmp_path: Path) -> None:
    result = build_sketch(SKETCHES / "warnings", tmp_path / "out")
    assert result.hex.is_file()
    warned = {(d.file.name, d.line) for d in diagnostics(result.warnings) if d.kind == "warning"}
    assert {("warnings.ino", 7), ("warnings.ino", 12), ("warnings.ino", 17)} <= warned


def test_strict_makes_warnings_in_the_sketch_errors_every_time(tmp_path: Path) -> None:
    """A second strict build of unchanged sources fails too (nothing half-checked is reused)."""
    for _ in range(2):
        with pytest.raises(HilError, match=r"strict(.|\n)*warnings\.ino:7:.*unused"):
            build_sketch(SKETCHES / "warnings", tmp_path / "out", strict=True)


def test_strict_covers_the_given_library_folders(tmp_path: Path) -> None:
    library = tmp_path / "libraries" / "Twice" / "src"
    library.mkdir(parents=True)
    (library.parent / "library.properties").write_text(
        "name=Twice\nversion=1.0.0\nauthor=me\nmaintainer=me\nsentence=x\nparagraph=x\n"
        "category=Other\nurl=https://example.invalid\narchitectures=*\n"
    )
    (library / "Twice.h").write_text("#pragma once\nint twice(int x, int unused);\n")
    (library / "Twice.cpp").write_text('#include "Twice.h"\nint twice(int x, int unused) { return 2 * x; }\n')
    code = "#include <Twice.h>\nvoid setup() { Serial.begin(9600); Serial.println(twice(21, 0)); }\n"
    code += "void loop() {}\n"
    folder = sketch(tmp_path, code)
    result = build_sketch(folder, tmp_path / "out", libraries=[tmp_path / "libraries"])
    assert result.libraries == ("Twice",)
    with pytest.raises(HilError, match=r"Twice\.cpp:2:.*unused"):
        build_sketch(folder, tmp_path / "out", libraries=[tmp_path / "libraries"], strict=True)


def test_defines_reach_the_sketch_and_the_core(tmp_path: Path) -> None:
    """The core's serial receive buffer follows a define: no core built without it is reused."""
    code = '#if BLINK_MS != 250 || !defined(LABEL)\n#error "BLINK_MS and LABEL expected"\n#endif\n'
    code += (
        "void setup() { Serial.begin(9600); }\nvoid loop() { Serial.println(millis()); delay(BLINK_MS); }\n"
    )
    folder = sketch(tmp_path, code)
    defines: dict[str, str | int] = {"BLINK_MS": 250, "LABEL": "left wheel"}
    plain = build_sketch(folder, tmp_path / "plain", defines=defines)
    bigger = build_sketch(folder, tmp_path / "bigger", defines={**defines, "SERIAL_RX_BUFFER_SIZE": 256})
    assert bigger.size.ram - plain.size.ram == 256 - 64


@pytest.mark.parametrize(
    ("files", "options", "words"),
    [
        ({"blink.ino": EMPTY, "drive.ino": "void drive() {\n  x = 1;\n}\n"},
         {}, ["drive.ino:2", "x"]),
        ({"blink.ino": "#include <NoSuchThing.h>\nvoid setup() {}\nvoid loop() {}\n"},
         {"libraries": ["lib"]}, ["NoSuchThing.h", "lib", "--libraries"]),
        ({"blink.ino": "#include <Thing.h>\nvoid setup() {}\nvoid loop() {}\n", "lib/Thing/src/Thing.h": ""},
         {"libraries": ["blink/lib"]}, ["Thing.h", "library.properties"]),
        ({"notes.txt": "no sketch here\n"}, {}, ["no .ino file"]),
        ({"main.ino": EMPTY}, {}, ["no blink.ino", "main tab after its folder"]),
        ({"blink.ino": EMPTY}, {"board": "mega"}, ["board 'mega'", "mega2560"]),
        ({"blink.ino": EMPTY}, {"defines": {"NAME": '"x"'}}, ["define NAME"]),
        ({"blink.ino": EMPTY}, {"libraries": ["nowhere"]}, ["nowhere", "no such folder"]),
        ({"blink.ino": EMPTY}, {"out": "blink/build"}, ["inside the sketch folder"]),
    ],
)  # fmt: skip
def test_bad_sketches_and_options_are_refused_naming_the_cause(
    tmp_path: Path, files: dict[str, str], options: dict[str, object], words: list[str]
) -> None:
    folder = tmp_path / "blink"
    folder.mkdir()
    (tmp_path / "lib").mkdir()
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    kwargs = dict(options)
    out = tmp_path / str(kwargs.pop("out", "out"))
    if "libraries" in kwargs:
        kwargs["libraries"] = [tmp_path / str(p) for p in kwargs["libraries"]]  # type: ignore[attr-defined]
    with pytest.raises(HilError) as error:
        build_sketch(folder, out, **kwargs)  # type: ignore[arg-type]
    for word in words:
        assert word in str(error.value)


def test_without_a_writable_cache_the_core_builds_in_the_build_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "not_a_folder").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not_a_folder"))
    result = build_sketch(sketch(tmp_path, EMPTY), tmp_path / "out")
    assert result.hex.is_file()
    assert (tmp_path / "out" / "core" / "core.a").is_file()


def test_a_main_ino_stands_for_its_sketch_folder() -> None:
    folder = SKETCHES / "three_tabs"
    assert sketch_folder(folder / "three_tabs.ino") == (folder, folder / "three_tabs.ino")


@pytest.mark.parametrize(
    ("size", "message"),
    [
        (SizeReport(flash=31000, ram=100), "flash 31000"),
        (SizeReport(flash=1000, ram=1700), "static RAM 1700"),
    ],
)
def test_size_check_names_what_is_over(size: SizeReport, message: str) -> None:
    with pytest.raises(HilError, match=message):
        size.check()
