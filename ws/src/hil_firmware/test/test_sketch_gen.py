"""The bridge-board sketch generator: golden output, handler templates, errors that name their cause."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hil_common.errors import HilError
from hil_devices.core.devices import load_device_set
from hil_devices.core.handler_template import HandlerTemplate, load_templates, needs_of
from hil_devices.core.library import load_device_library
from hil_devices.core.wiring import autowire, load_wiring
from hil_firmware.core.sketch_gen import generate_sketch
from hil_firmware.sketch_tool import main

HERE = Path(__file__).resolve().parent
CONFIG = Path(__file__).resolve().parents[2] / "hil_devices" / "config"
GOLDEN = HERE / "golden"
LIBRARY = load_device_library([CONFIG / "devices"])
TEMPLATES = load_templates([CONFIG / "handlers"])
DEMO = load_device_set(CONFIG / "demo_robot_devices.yaml", LIBRARY)


def check_golden(name: str, text: str) -> None:
    """Compare with the golden file; HIL_UPDATE_GOLDEN=1 rewrites it (review the diff)."""
    path = GOLDEN / name
    if os.environ.get("HIL_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed: review, then HIL_UPDATE_GOLDEN=1 pytest {__file__}"


def test_demo_wiring_is_the_golden_one() -> None:
    check_golden("demo_wiring.yaml", autowire(needs_of(DEMO, TEMPLATES)).to_yaml(header="demo robot"))


def test_demo_sketch_is_the_golden_one() -> None:
    wiring = load_wiring(GOLDEN / "demo_wiring.yaml")
    text = generate_sketch(DEMO, wiring, TEMPLATES, name="demo_bridge", source=" from demo")
    check_golden("demo_bridge.ino", text)


def test_checked_sketch_differs_only_in_its_mode() -> None:
    wiring = load_wiring(GOLDEN / "demo_wiring.yaml")
    checked = generate_sketch(DEMO, wiring, TEMPLATES, name="demo_bridge", checked=True, source=" from demo")
    plain = (GOLDEN / "demo_bridge.ino").read_text()
    assert checked == plain.replace("#define HIL_CHECKED 0", "#define HIL_CHECKED 1").replace(
        "plain frames", "checked frames"
    )


def test_sketch_has_the_parts_of_the_design() -> None:
    text = generate_sketch(DEMO, autowire(needs_of(DEMO, TEMPLATES)), TEMPLATES)
    for part in (
        "_READ() ((PIN",  # fast pin macros
        "static const uint8_t input_ids[INPUT_COUNT]",
        "ISR(TIMER0_COMPB_vect)",  # the 5 ms send flag
        "void setup()",
        "void loop()",
        "hil_frame_feed(&decoder",
        "hil_frame_encode(&encoder",
        "Wire.begin(0x1E)",  # the compass handler
    ):
        assert part in text, part
    assert "pulseIn" not in text and "delay(" not in text


def test_sketch_keeps_the_frame_size_in_16_bits() -> None:
    # hil_frame_encode returns up to 769 bytes; an 8-bit size sent an empty frame for 85
    # signals (84 checked).
    text = generate_sketch(DEMO, autowire(needs_of(DEMO, TEMPLATES)), TEMPLATES)
    assert "    uint16_t size;\n    " in text
    assert "uint8_t size" not in text


def test_two_handlers_on_one_port_share_one_interrupt_vector(tmp_path: Path) -> None:
    entries = [("front", "hc_sr04"), ("back", "hc_sr04"), ("led", "led")]
    (tmp_path / "set.yaml").write_text(
        "devices:\n" + "".join(f"  - {{name: {n}, device: {d}}}\n" for n, d in entries)
    )
    devices = load_device_set(tmp_path / "set.yaml", LIBRARY)
    needs = needs_of(devices, TEMPLATES)
    wiring = autowire(needs, fixed={"front.trigger": 8, "back.trigger": 9})  # both on port B
    text = generate_sketch(devices, wiring, TEMPLATES)
    assert text.count("ISR(PCINT0_vect)") == 1
    assert "/* front.trigger */" in text and "/* back.trigger */" in text
    assert "front_echoing" in text and "back_echoing" in text  # %name% made unique


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("##BOGUS##\n", "unknown section ##BOGUS##"),
        ("int x;\n##SETUP##\n", "text before the first section"),
        ("##PINS##\ntrigger\n", "expected `name CAPABILITY INPUT|OUTPUT`"),
        ("##PINS##\ntrigger FAST INPUT\n", "capability 'FAST'"),
        ("##PINS##\ntrigger PCINT INPUT\n##PCINT echo##\nx();\n", "names no pin"),
    ],
)
def test_bad_templates_are_refused_naming_the_line(template: str, message: str) -> None:
    with pytest.raises(HilError, match=message):
        HandlerTemplate.parse(template, name="broken")


def test_placeholder_that_resolves_to_nothing_is_an_error() -> None:
    broken = HandlerTemplate.parse(
        "##PINS##\ntrigger PCINT INPUT\necho DIGITAL OUTPUT\n##SETUP##\n%speed.VALUE% = 1;\n", name="hc_sr04"
    )
    templates = {**TEMPLATES, "hc_sr04": broken}
    with pytest.raises(HilError, match=r"ultrasonic: template uses %speed.VALUE%"):
        generate_sketch(DEMO, autowire(needs_of(DEMO, templates)), templates)


def test_missing_handler_template_is_named() -> None:
    templates = {k: v for k, v in TEMPLATES.items() if k != "hmc5883l"}
    with pytest.raises(HilError, match="compass: no handler template 'hmc5883l'"):
        needs_of(DEMO, templates)


def test_command_line_generates_a_sketch_and_its_wiring(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo_bridge"
    assert main(["generate", str(CONFIG / "demo_robot_devices.yaml"), "-o", str(out)]) == 0
    assert (out / "demo_bridge.ino").is_file() and (out / "wiring.yaml").is_file()
    assert "sketch:" in capsys.readouterr().out
    assert (
        main(["generate", str(CONFIG / "demo_robot_devices.yaml"), "--wiring", str(tmp_path / "none.yaml")])
        == 2
    )
    assert "none.yaml: cannot read wiring" in capsys.readouterr().err
