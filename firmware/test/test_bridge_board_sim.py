"""Generated bridge boards run in simavr and answer an HC-SR04 ping (bridge_probe.c).

The thesis-format HC-SR04 (JSON + .hlr loaded unchanged) answers as the thesis
describes: the echo rises 5 ms after the trigger's falling edge and lasts distance x
58.2 us; our hc_sr04 template answers 450 us after it, as the module and the simavr
harness do (DESIGN.md "Firmware in the loop"; the template says why). The distance
comes in a frame whose signals are not in the layout's order and carry an explicit
id, so this also runs the C decoder's any-order path on the AVR.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hil_bridge.core.signal_protocol import FrameEncoder, SignalLayout
from hil_devices.core.devices import load_device_set
from hil_devices.core.handler_template import load_templates
from hil_devices.core.library import load_device_library
from hil_devices.core.wiring import Wiring
from hil_firmware.core.avr_build import build_sketch
from hil_firmware.core.sketch_gen import generate_sketch, write_sketch
from support.firmware_host import FIRMWARE, ROOT, SIMAVR_INCLUDE, simavr_probe

CONFIG = ROOT / "ws" / "src" / "hil_devices" / "config"
EXAMPLES = CONFIG / "thesis_examples"
LIBRARY = load_device_library([CONFIG / "devices", EXAMPLES])
TEMPLATES = load_templates([CONFIG / "handlers"])
PROBE_SOURCE = FIRMWARE / "test" / "bridge_probe.c"
TRIGGER, ECHO = 4, 7
#: 58.2 us per cm; the echo's edges are set by the sketch's loop, a few us late each.
US_PER_CM = 58.2
SLACK_US = 40.0

pytestmark = pytest.mark.skipif(
    not (SIMAVR_INCLUDE / "sim_avr.h").is_file(), reason="libsimavr-dev is not installed"
)


@pytest.fixture(scope="module")
def probe() -> Path:
    """bridge_probe, built by the host compiler (cached by its source)."""
    return simavr_probe(PROBE_SOURCE)


def pings(probe: Path, tmp_path: Path, device: str, distance: float) -> list[tuple[float, float]]:
    """Build the bridge board of ``device`` (+ a bumper) and ping it before and after a frame."""
    (tmp_path / "set.yaml").write_text(
        f"devices:\n  - {{name: sonar, device: {device}}}\n  - {{name: bumper, device: limit_switch}}\n"
    )
    devices = load_device_set(tmp_path / "set.yaml", LIBRARY)
    wiring = Wiring("uno", {"sonar.trigger": TRIGGER, "sonar.echo": ECHO, "bumper.pressed": 12})
    sketch = tmp_path / "bridge"
    write_sketch(sketch, generate_sketch(devices, wiring, TEMPLATES, name="bridge"))
    elf = build_sketch(sketch, tmp_path / "build", libraries=[FIRMWARE / "libraries"], strict=True).elf
    outputs = SignalLayout(devices).outputs
    # The simulator's frame, its signals in the reverse of the layout's order.
    frame = FrameEncoder(outputs[::-1]).encode([1.0, distance])
    result = subprocess.run(
        [str(probe), str(elf), str(TRIGGER), str(ECHO), frame.hex()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [(float(line.split()[1]), float(line.split()[2])) for line in result.stdout.splitlines()]


def test_thesis_hc_sr04_echoes_distance_times_58_2_us_after_a_5_ms_wait(probe: Path, tmp_path: Path) -> None:
    before, *after = pings(probe, tmp_path, "HC_SR04", 100.0)
    assert 5000.0 <= before[0] <= 5000.0 + SLACK_US
    assert before[1] == pytest.approx(200 * US_PER_CM, abs=SLACK_US)  # the default until a frame came
    for rise, width in after:
        assert 5000.0 <= rise <= 5000.0 + SLACK_US
        assert width == pytest.approx(100 * US_PER_CM, abs=SLACK_US)


def test_our_hc_sr04_echoes_450_us_after_the_trigger_falling_edge(probe: Path, tmp_path: Path) -> None:
    before, *after = pings(probe, tmp_path, "hc_sr04", 37.5)
    assert before[1] == pytest.approx(200 * US_PER_CM, abs=SLACK_US)
    for rise, _ in [before, *after]:
        assert 450.0 <= rise <= 450.0 + SLACK_US
    for _, width in after:
        assert width == pytest.approx(37.5 * US_PER_CM, abs=SLACK_US)
