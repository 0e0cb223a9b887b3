"""Thesis-format device configs and .hlr handlers load unchanged, beside our own format."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from hil_bridge.core.signal_protocol import SignalLayout
from hil_common.errors import HilError
from hil_devices.core.devices import DeviceConfig, load_device_set
from hil_devices.core.handler_template import HandlerTemplate, load_templates, needs_of
from hil_devices.core.library import load_device_config, load_device_library
from hil_devices.core.thesis_format import ThesisPin, is_thesis_config, load_thesis_device, translate_hlr
from hil_devices.core.wiring import Capability, Wiring, autowire
from hil_firmware.core.sketch_gen import generate_sketch
from hil_firmware.sketch_tool import main

CONFIG = Path(__file__).resolve().parents[2] / "hil_devices" / "config"
EXAMPLES = CONFIG / "thesis_examples"
LIBRARY = load_device_library([CONFIG / "devices", EXAMPLES])
TEMPLATES = load_templates([CONFIG / "handlers"])
PINS = (ThesisPin("trigger", Capability.PCINT, True), ThesisPin("echo", Capability.DIGITAL, False))


def thesis_copy(tmp_path: Path) -> Path:
    """The example in a folder of its own, to be edited by a test."""
    folder = tmp_path / "thesis"
    shutil.copytree(EXAMPLES, folder)
    return folder / "hc_sr04.json"


def edit_json(path: Path, change: dict[str, object]) -> None:
    data = json.loads(path.read_text())
    data.update(change)
    path.write_text(json.dumps(data))


# --- the shipped example ------------------------------------------------------------------------


def test_thesis_example_is_recognised_by_its_handler_and_loaded_with_its_hlr() -> None:
    config = LIBRARY["HC_SR04"]  # "HC-SR04" made an identifier
    assert is_thesis_config(json.loads((EXAMPLES / "hc_sr04.json").read_text()))
    assert not is_thesis_config(json.loads((CONFIG / "devices" / "hc_sr04.json").read_text()))
    assert config.handler is not None
    assert config.handler.template == "hc_sr04"  # the name our simulator's models use
    assert config.handler.pins == ("trigger", "echo")
    assert config.handler.file == str(EXAMPLES / "hc_sr04.hlr")
    assert config == load_device_config(EXAMPLES / "hc_sr04.json")


def test_thesis_hc_sr04_has_the_signal_of_ours_with_its_explicit_id() -> None:
    ours, thesis = LIBRARY["hc_sr04"].signal("distance"), LIBRARY["HC_SR04"].signal("distance")
    assert thesis.id == 20
    assert replace(thesis, id=None) == replace(ours, description="")


def test_thesis_device_set_gets_the_explicit_id_and_the_lowest_free_ones() -> None:
    devices = load_device_set(EXAMPLES / "thesis_devices.yaml", LIBRARY)
    layout = SignalLayout(devices)
    assert [(s.key, s.id) for s in layout.slots] == [
        (("sonar", "distance"), 20),
        (("led", "active"), 0),
        (("bumper", "pressed"), 1),
    ]


def test_hlr_becomes_a_template_of_ours_with_pins_from_the_json() -> None:
    text = LIBRARY["HC_SR04"].handler.text  # type: ignore[union-attr]
    template = HandlerTemplate.parse(text, name="hc_sr04")
    assert [(p.key, p.capability, p.reads) for p in template.pins] == [
        ("trigger", Capability.PCINT, True),
        ("echo", Capability.DIGITAL, False),
    ]
    assert "%trigger.PCMSK% |= _BV(%trigger.PCINT%);" in template.sections["SETUP"]
    assert "PCICR |= _BV(%trigger.PCINTE%);" in template.sections["SETUP"]
    assert "pinMode(%echo.NUMBER%, OUTPUT);" in template.sections["SETUP"]
    assert "digitalRead(%trigger.NUMBER%)" in template.pcint["trigger"]  # %pin%: the interrupt pin
    assert "%distance% * 58.2" in template.sections["LOOP"]  # a signal: its value's variable


def test_generated_sketch_resolves_the_thesis_placeholders_from_the_wiring() -> None:
    devices = load_device_set(EXAMPLES / "thesis_devices.yaml", LIBRARY)
    wiring = Wiring("uno", {"sonar.trigger": 4, "sonar.echo": 7, "led.active": 8, "bumper.pressed": 12})
    text = generate_sketch(devices, wiring, TEMPLATES)
    for part in (
        "static const uint8_t output_ids[OUTPUT_COUNT] = {20, 1};",
        "PCMSK2 |= _BV(PCINT20);",  # pin 4 is PD4
        "PCICR |= _BV(PCIE2);",
        "ISR(PCINT2_vect)",
        "if (digitalRead(4) == LOW && sonar_state == 0) {",
        "#define sonar_WAIT_US 5000UL",
        "sonar_width = (unsigned long)(sonar_distance * 58.2 + 0.5);",
    ):
        assert part in text, part
    assert "%" not in text.replace("% 13", "")


def test_thesis_and_library_hc_sr04_share_a_link_without_their_templates_mixing(tmp_path: Path) -> None:
    (tmp_path / "set.yaml").write_text(
        "devices:\n  - {name: front, device: hc_sr04}\n  - {name: back, device: HC_SR04}\n"
    )
    devices = load_device_set(tmp_path / "set.yaml", LIBRARY)
    assert [s.id for s in SignalLayout(devices).slots] == [0, 20]
    text = generate_sketch(devices, autowire(needs_of(devices, TEMPLATES)), TEMPLATES)
    assert "back_WAIT_US" in text and "front_WAIT_US" not in text  # the thesis handler for the thesis device
    assert "front_echo_width" in text and "back_echo_width" not in text  # ours for ours


# --- tolerance and errors ------------------------------------------------------------------------


def test_enumerations_are_case_insensitive_and_unknown_fields_are_reported(tmp_path: Path) -> None:
    path = thesis_copy(tmp_path)
    data = json.loads(path.read_text())
    data["signals"][0].update(direction="output", type="double", mode="pcint", color="red")
    data["handler"]["pins"][0].update(mode="pcint", direction="input")
    data["author"] = "thesis"
    path.write_text(json.dumps(data))
    device = load_thesis_device(path)
    assert device.config.signals == LIBRARY["HC_SR04"].signals
    assert device.ignored == ("author", "signals[0].color")


def test_without_file_the_hlr_named_after_the_handler_is_used(tmp_path: Path) -> None:
    path = thesis_copy(tmp_path)
    data = json.loads(path.read_text())
    del data["handler"]["file"]
    path.write_text(json.dumps(data))
    handler = load_thesis_device(path).config.handler
    assert handler is not None
    assert handler.file == str(path.parent / "hc_sr04.hlr")
    assert handler.text == LIBRARY["HC_SR04"].handler.text  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"handler": {"name": "hc_sr04", "file": "missing.hlr", "pins": []}},
            r"handler: field 'file': cannot read",
        ),
        (
            {"handler": {"name": "x", "pins": [{"name": "a", "mode": "FAST", "direction": "INPUT"}]}},
            r"handler.pins\[0\] \(a\): field 'mode': 'FAST'",
        ),
        (
            {"handler": {"name": "x", "pins": [{"name": "a", "mode": "PCINT", "direction": "UP"}]}},
            r"handler.pins\[0\] \(a\): field 'direction': 'UP'",
        ),
        ({"handler": {"name": "x", "pins": ["a"]}}, r"handler.pins\[0\]: expected \{name, mode, direction\}"),
        ({"name": None}, r"field 'name': None"),
        (
            {
                "signals": [
                    {
                        "name": "d",
                        "direction": "OUTPUT",
                        "type": "FLOAT",
                        "min": 0,
                        "max": 1,
                        "mode": "DIGITAL",
                        "id": 255,
                    }
                ]
            },
            r"signal 0 \(d\): field 'id': 255 \(0xFF\) is the frame's start byte",
        ),
        (
            {
                "signals": [
                    {
                        "name": "d",
                        "direction": "OUTPUT",
                        "type": "FLOAT",
                        "min": 0,
                        "max": 1,
                        "mode": "DIGITAL",
                        "id": 3,
                    },
                    {
                        "name": "e",
                        "direction": "OUTPUT",
                        "type": "FLOAT",
                        "min": 0,
                        "max": 1,
                        "mode": "DIGITAL",
                        "id": 3,
                    },
                ]
            },
            r"signal e: id 3 is already d's",
        ),
    ],
)
def test_bad_thesis_configs_are_refused_naming_the_file_and_element(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    path = thesis_copy(tmp_path)
    edit_json(path, change)
    with pytest.raises(HilError, match=message) as info:
        load_device_config(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("hlr", "message"),
    [
        ("##SETUP##\nx();\n##TEARDOWN##\n", r"x.hlr, line 3: unknown section ##TEARDOWN##"),
        ("##LOOP##\nf(%pin%);\n", r"x.hlr, line 2: %pin% outside an interrupt section"),
        ("##PCINT echo2##\n", r"x.hlr, line 1: ##PCINT echo2## names no pin"),
        ("##SETUP trigger##\n", r"x.hlr, line 1: section ##SETUP trigger## takes no pin"),
    ],
)
def test_bad_hlr_files_are_refused_naming_the_file_and_line(hlr: str, message: str) -> None:
    with pytest.raises(HilError, match=message):
        translate_hlr(hlr, PINS, name="hc_sr04", source="/some/x.hlr")


def test_hlr_sections_and_placeholders_in_every_form() -> None:
    hlr = "\n".join(
        [
            "text before the first section is dropped",
            " ## interrupt ## ",  # case and spaces tolerated; the PCINT pin
            "if (digitalRead(%pin%)) %count%++;",
            "##SETUP##",
            "%echoDDR% |= _BV(%echoBIT%); %triggerPCMSK% |= _BV(%triggerPCINT%); "
            "PCICR |= _BV(%triggerPCIE%);",
            "%echo.PORT% = %distance%;",  # ours pass unchanged
            "##PCINT echo##",
            "%pinPORT% = 0;",
        ]
    )
    text = translate_hlr(hlr, PINS, name="hc_sr04", source="x.hlr")
    template = HandlerTemplate.parse(text, name="x")
    assert template.pcint == {
        "trigger": "if (digitalRead(%trigger.NUMBER%)) %count%++;",
        "echo": "%echo.PORT% = 0;",
    }
    assert template.sections["SETUP"] == (
        "%echo.DDR% |= _BV(%echo.BIT%); %trigger.PCMSK% |= _BV(%trigger.PCINT%); "
        "PCICR |= _BV(%trigger.PCINTE%);\n%echo.PORT% = %distance%;"
    )


def test_a_handler_with_two_pcint_pins_must_name_the_pin_of_its_interrupt_section() -> None:
    pins = (ThesisPin("a", Capability.PCINT, True), ThesisPin("b", Capability.PCINT, True))
    with pytest.raises(HilError, match=r"PCINT pins \['a', 'b'\]: name one, as in ##PCINT a##"):
        translate_hlr("##PCINT##\nx();\n", pins, name="two", source="two.hlr")


def test_a_handler_without_hlr_uses_the_library_template_of_its_name(tmp_path: Path) -> None:
    path = thesis_copy(tmp_path)
    (path.parent / "hc_sr04.hlr").unlink()
    data = json.loads(path.read_text())
    del data["handler"]["file"]
    path.write_text(json.dumps(data))
    config = load_device_config(path)
    assert config.handler is not None and config.handler.text == ""
    devices = load_device_set(EXAMPLES / "thesis_devices.yaml", {**LIBRARY, "HC_SR04": config})
    assert "sonar_echo_width" in generate_sketch(devices, autowire(needs_of(devices, TEMPLATES)), TEMPLATES)


# --- hil_sketch import and generate ----------------------------------------------------------------


def test_import_writes_our_format_which_loads_to_the_same_device(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["import", str(EXAMPLES / "hc_sr04.json"), "-o", str(tmp_path / "ours")]) == 0
    assert "HC_SR04.json + HC_SR04.tmpl" in capsys.readouterr().out
    native = load_device_config(tmp_path / "ours" / "HC_SR04.json")
    thesis: DeviceConfig = LIBRARY["HC_SR04"]
    assert not is_thesis_config(json.loads((tmp_path / "ours" / "HC_SR04.json").read_text()))
    assert replace(native, source="", handler=None) == replace(thesis, source="", handler=None)
    assert native.handler is not None and thesis.handler is not None
    assert (native.handler.template, native.handler.pins, native.handler.text) == (
        thesis.handler.template,
        thesis.handler.pins,
        thesis.handler.text,
    )


def test_generate_takes_thesis_configs_with_devices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "thesis_bridge"
    args = ["generate", str(EXAMPLES / "thesis_devices.yaml"), "--devices", str(EXAMPLES), "-o", str(out)]
    assert main(args) == 0
    assert "sonar_WAIT_US" in (out / "thesis_bridge.ino").read_text()
    assert "sonar.trigger" in capsys.readouterr().out


def test_import_of_a_broken_config_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = thesis_copy(tmp_path)
    edit_json(path, {"handler": {"name": "hc_sr04", "file": "gone.hlr", "pins": []}})
    assert main(["import", str(path), "-o", str(tmp_path / "out")]) == 2
    assert f"{path}: device HC_SR04: handler: field 'file': cannot read" in capsys.readouterr().err
