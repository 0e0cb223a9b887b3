"""Generated bridge-board sketches build for the ATmega328P: the demo robot's and one for every device."""

from __future__ import annotations

from pathlib import Path

import pytest

from hil_devices.core.devices import load_device_set
from hil_devices.core.handler_template import load_templates, needs_of
from hil_devices.core.library import load_device_library
from hil_devices.core.wiring import autowire
from hil_firmware.core.avr_build import build_sketch
from hil_firmware.core.sketch_gen import generate_sketch, write_sketch
from support.firmware_host import FIRMWARE, ROOT

CONFIG = ROOT / "ws" / "src" / "hil_devices" / "config"
LIBRARY = load_device_library([CONFIG / "devices"])
TEMPLATES = load_templates([CONFIG / "handlers"])


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bridge")


def generate_and_build(set_file: Path, folder: Path, *, checked: bool = False) -> None:
    devices = load_device_set(set_file, LIBRARY)
    wiring = autowire(needs_of(devices, TEMPLATES))
    sketch = folder / "sketch" / folder.name
    write_sketch(sketch, generate_sketch(devices, wiring, TEMPLATES, name=folder.name, checked=checked))
    result = build_sketch(sketch, folder / "build", libraries=[FIRMWARE / "libraries"], strict=True)
    result.size.check(flash_margin=0.1, ram_margin=0.25)


@pytest.mark.parametrize("checked", [False, True])
def test_demo_robot_bridge_board_builds(build_dir: Path, checked: bool) -> None:
    generate_and_build(
        CONFIG / "demo_robot_devices.yaml", build_dir / f"demo_{int(checked)}", checked=checked
    )


@pytest.mark.parametrize("device", sorted(LIBRARY))
def test_a_bridge_board_for_each_single_device_builds(build_dir: Path, device: str) -> None:
    set_file = build_dir / f"{device}.yaml"
    set_file.write_text(f"devices:\n  - {{name: {device}_0, device: {device}}}\n")
    generate_and_build(set_file, build_dir / f"only_{device}")


def test_thesis_example_bridge_board_builds(build_dir: Path) -> None:
    """The thesis-format HC-SR04 (JSON + .hlr, loaded unchanged) beside devices of ours."""
    examples = CONFIG / "thesis_examples"
    library = load_device_library([CONFIG / "devices", examples])
    devices = load_device_set(examples / "thesis_devices.yaml", library)
    wiring = autowire(needs_of(devices, TEMPLATES))
    sketch = build_dir / "thesis" / "sketch" / "thesis_bridge"
    write_sketch(sketch, generate_sketch(devices, wiring, TEMPLATES, name="thesis_bridge"))
    result = build_sketch(
        sketch, build_dir / "thesis" / "build", libraries=[FIRMWARE / "libraries"], strict=True
    )
    result.size.check(flash_margin=0.1, ram_margin=0.25)
