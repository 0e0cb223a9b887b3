"""robot_mcu builds for the ATmega328P (Nano and UNO, plain and checked) and fits with room to spare."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hil_firmware.core.avr_build import BuildResult, build_sketch
from support.firmware_host import FIRMWARE

SKETCH = FIRMWARE / "robot_mcu"
LIBRARIES = [FIRMWARE / "libraries"]


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("avr")


def build(build_dir: Path, name: str, **options: object) -> BuildResult:
    return build_sketch(SKETCH, build_dir / name, libraries=LIBRARIES, strict=True, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("nano_plain", {"board": "nano"}),
        ("nano_checked", {"board": "nano", "defines": {"HIL_CHECKED": 1}}),
        ("uno_plain", {"board": "uno"}),
        ("nano_no_compass", {"board": "nano", "defines": {"HAS_COMPASS": 0}}),
    ],
)
def test_robot_mcu_builds_and_fits_flash_and_ram(
    build_dir: Path, name: str, options: dict[str, object]
) -> None:
    result = build(build_dir, name, **options)
    result.size.check(flash_margin=0.1, ram_margin=0.25)
    assert result.hex.read_text().startswith(":")
    assert "hil_protocol" in result.libraries


def test_leaving_the_compass_out_saves_flash_and_ram(build_dir: Path) -> None:
    with_compass = build(build_dir, "size_compass")
    without = build(build_dir, "size_no_compass", defines={"HAS_COMPASS": 0})
    assert "Wire" in with_compass.libraries
    assert without.size.flash < with_compass.size.flash
    assert without.size.ram < with_compass.size.ram


def test_loop_never_blocks_on_delay_or_pulsein() -> None:
    code = "\n".join(p.read_text() for p in SKETCH.iterdir() if p.suffix in (".ino", ".c", ".h"))
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", code, flags=re.DOTALL)  # comments may name them
    assert re.search(r"\bdelay\s*\(", code) is None
    assert re.search(r"\bpulseIn(Long)?\s*\(", code) is None
