"""Device configs and device sets: the shipped library, and errors that name the fault."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from hil_common.errors import HilError
from hil_devices.core.devices import Direction, PinMode, SignalType, assign_signal_ids, load_device_set
from hil_devices.core.library import load_device_config, load_device_library
from hil_devices.errors import HilDevicesError

CONFIG = Path(__file__).resolve().parents[1] / "config"
LIBRARY = load_device_library([CONFIG / "devices"])
VALID: dict[str, Any] = {
    "name": "bumper",
    "signals": [
        {"name": "pressed", "direction": "OUTPUT", "type": "INTEGER", "min": 0, "max": 1, "mode": "DIGITAL"}
    ],
}


def test_device_library_ships_every_device_of_the_design() -> None:
    assert set(LIBRARY) == {
        "led",
        "dc_motor",
        "limit_switch",
        "hc_sr04",
        "sharp_ir",
        "photoresistor",
        "magnetometer",
        "quadrature_encoder",
        "single_channel_encoder",
        "servo",
        "buzzer",
        "ws2812",
        "mpu6050",
        "ir_receiver_nec",
        "push_button",
        "l298n",
        "tb6612fng",
        "drv8833",
        "l9110s",
        "pwm_dir_driver",
        "cr_servo_wheel",
        "line_sensor_analog",
        "line_sensor_digital",
        "analog_input",
    }


def test_dc_motor_has_enable_pwm_and_direction_pins_and_a_driver_table() -> None:
    motor = LIBRARY["dc_motor"]
    enable = motor.signal("enable")
    assert (enable.mode, enable.min, enable.max, enable.direction) == (PinMode.PWM, 0, 1024, Direction.INPUT)
    assert {motor.signal(p).mode for p in ("a", "b")} == {PinMode.DIGITAL}
    assert motor.table["when_enable_is_0"] == "coast"
    assert set(motor.table["by_a_b"].values()) == {"forward", "back", "brake"}


def test_hc_sr04_reports_distance_up_to_200_cm_through_a_handler() -> None:
    sensor = LIBRARY["hc_sr04"]
    distance = sensor.signal("distance")
    assert (distance.type, distance.min, distance.max, distance.unit) == (SignalType.FLOAT, 0, 200, "cm")
    assert sensor.handler is not None
    assert sensor.handler.pins == ("trigger", "echo")


FLOAT = {"name": "level", "direction": "INPUT", "type": "FLOAT", "min": 0.0, "max": 5.0, "mode": "ANALOG"}


def test_demo_robot_device_set_loads() -> None:
    devices = load_device_set(CONFIG / "demo_robot_devices.yaml", LIBRARY)
    assert [d.name for d in devices][:2] == ["motor_left", "motor_right"]
    assert sum(d.config.name == "photoresistor" for d in devices) == 4


def broken(path: list[Any], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(VALID)
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (broken(["name"], "2x"), "field 'name': '2x' is not an identifier"),
        (broken(["signals"], []), "device bumper: field 'signals'"),
        (broken(["colour"], "red"), "device bumper: unknown field(s) ['colour']"),
        (
            broken(["signals", 0, "direction"], "IN"),
            "signal 0 (pressed): field 'direction': 'IN' is not one of",
        ),
        (broken(["signals", 0, "type"], "BOOL"), "signal 0 (pressed): field 'type'"),
        (broken(["signals", 0, "mode"], "SPI"), "signal 0 (pressed): field 'mode'"),
        (
            broken(["signals", 0, "min"], "zero"),
            "signal 0 (pressed): field 'min': 'zero' is not a finite number",
        ),
        (broken(["signals", 0, "max"], 0), "signal 0 (pressed): field 'max': 0 must be greater than min"),
        (broken(["signals", 0, "max"], 0.5), "signal 0 (pressed): field 'max': 0.5 is not an integer"),
        (broken(["signals", 0, "max"], 40000), "span 40000 exceeds 32767"),
        (
            broken(["signals", 0], {**FLOAT, "min": -1.5e308, "max": 1.5e308}),
            "signal 0 (level): field 'max': the span max - min overflows",
        ),
        (broken(["signals", 0, "default"], 3), "signal 0 (pressed): field 'default': 3 outside [0, 1]"),
        (broken(["signals", 0, "mode"], KeyError), "signal 0: missing field 'mode'"),
        (broken(["signals", 0, "pin"], 3), "signal 0: unknown field(s) ['pin']"),
        (broken(["handler"], {"pins": ["a"]}), "field 'handler'"),
        (broken(["handler"], {"template": "t", "pins": ["1a"]}), "field 'handler.pins'"),
        (broken(["pins"], []), "field 'pins': expected a non-empty list"),
        (
            broken(["pins"], [{"name": "pressed", "mcu": "in", "needs": "digital"}]),
            "pins[0] (pressed): field 'mcu'",
        ),
        (
            broken(["pins"], [{"name": "pressed", "mcu": "input", "needs": "spi"}]),
            "field 'needs': 'spi' is not one of",
        ),
        (
            broken(["pins"], [{"name": "p", "mcu": "input", "needs": "digital", "pin": 3}]),
            "unknown field(s) ['pin']",
        ),
        (
            broken(["pins"], [{"name": "p", "mcu": "input", "needs": "digital", "signal": "x"}]),
            "has no signal 'x'",
        ),
        (broken(["pins"], [{"name": "p", "mcu": "input", "needs": "digital"}] * 2), "'p' is used twice"),
        (
            broken(["params"], {"hold": {"default": 2, "min": 0, "max": 1}}),
            "params.hold.default: 2 is outside 0..1",
        ),
        (broken(["params"], {"hold": {"default": 0, "min": 0}}), "params.hold: missing field 'max'"),
        (broken(["params"], {"side": {"choices": []}}), "params.side: field 'choices'"),
        (
            broken(["params"], {"side": {"choices": ["l"], "default": "r"}}),
            "params.side.default: 'r' is not one of l",
        ),
        (
            broken(["params"], {"hold": {"default": 0, "min": 0, "max": 1, "step": 1}}),
            "unknown field(s) ['step']",
        ),
        (broken(["model"], {"role": "driver"}), "field 'model': expected {kind, ...}"),
        (broken(["model"], {"kind": "bumper", "role": "wheel"}), "field 'model.role': 'wheel' is not one of"),
        (
            broken(["model"], {"kind": "l298n", "role": "driver"}),
            "a driver (model.role) needs the parameter 'wheel'",
        ),
        (broken(["model"], {"kind": "sonar"}), "field 'model.kind': 'sonar' is not a model kind"),
        (broken(["model"], {"kind": "bumper", "rays": 5}), "field 'model.rays': not a parameter of model"),
        (broken(["model"], {"kind": "bumper", "hold_s": 99}), "field 'model.hold_s': 99 is outside 0..10 s"),
        (
            {**broken(["model"], {"kind": "bumper"}), "params": {"hold_s": {"default": 1, "max": 2}}},
            "params.hold_s: a parameter of model kind bumper is declared in models.json",
        ),
        (
            {**broken(["model"], {"kind": "bumper"}), "params": {"hold_s": {"default": 11}}},
            "params.hold_s.default: 11 is outside 0..10 s",
        ),
        (
            {**broken(["model"], {"kind": "bumper", "hold_s": 1}), "params": {"hold_s": {}}},
            "params.hold_s: fixed in model, so a profile cannot set it",
        ),
        (broken(["coupling"], {"kind": "echo", "pins": []}), "field 'coupling': expected {kind"),
    ],
)
def test_invalid_config_error_names_file_device_signal_and_field(
    tmp_path: Path, data: dict[str, Any], expected: str
) -> None:
    path = tmp_path / "bumper.json"
    path.write_text(json.dumps(data))
    with pytest.raises(HilError) as info:
        load_device_config(path)
    assert str(path) in str(info.value)
    assert expected in str(info.value)


def test_duplicate_signal_names_are_refused(tmp_path: Path) -> None:
    data = copy.deepcopy(VALID)
    data["signals"].append(dict(data["signals"][0]))
    (tmp_path / "d.json").write_text(json.dumps(data))
    with pytest.raises(HilError, match=r"duplicate signal name\(s\) \['pressed'\]"):
        load_device_config(tmp_path / "d.json")


def test_json_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "d.json").write_text('{"name": "x",\n  "signals": [}\n')
    with pytest.raises(HilError, match=r"d\.json: line 2 column 15: invalid JSON"):
        load_device_config(tmp_path / "d.json")


def test_missing_config_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(HilError, match=r"nope\.json: cannot read device config"):
        load_device_config(tmp_path / "nope.json")


def test_two_configs_with_one_name_are_refused(tmp_path: Path) -> None:
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_text(json.dumps(VALID))
    with pytest.raises(HilError, match=r"device bumper is already defined in .*a\.json"):
        load_device_library([tmp_path])


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("devices: []\n", "expected 'devices:' with a non-empty list"),
        (
            "devices:\n  - {name: m, device: warp_drive}\n",
            "devices[0] (m): field 'device': unknown device 'warp_drive'",
        ),
        ("devices:\n  - {name: m, device: led, pin: 3}\n", "devices[0]: expected exactly the fields"),
        ("devices:\n  - {name: 1m, device: led}\n", "devices[0]: field 'name': '1m'"),
        (
            "devices:\n  - {name: m, device: led}\n  - {name: m, device: led}\n",
            "devices[1]: field 'name': 'm' is used twice",
        ),
        ("devices: [\n", "invalid YAML"),
        (
            "devices:\n  - {name: m, device: led, ids: {dim: 3}}\n",
            "devices[0] (m): field 'ids': device led has no",
        ),
        ("devices:\n  - {name: m, device: led, ids: {active: 255}}\n", "ids.active: field 'id': 255 (0xFF)"),
        ("devices:\n  - {name: m, device: led, ids: [3]}\n", "field 'ids': expected {signal: id}"),
        (
            "devices:\n  - {name: m, device: led, ids: {active: 9}}\n"
            "  - {name: n, device: led, ids: {active: 9}}\n",
            "signal n.active: id 9 is already m.active's",
        ),
    ],
)
def test_invalid_device_set_error_names_file_and_entry(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(content)
    with pytest.raises(HilDevicesError) as info:
        load_device_set(path, LIBRARY)
    assert str(path) in str(info.value)
    assert expected in str(info.value)


def test_device_set_entries_may_fix_signal_ids(tmp_path: Path) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(
        "devices:\n  - {name: m, device: led}\n  - {name: b, device: limit_switch, ids: {pressed: 0}}\n"
    )
    devices = load_device_set(path, LIBRARY)
    assert devices[1].ids == {"pressed": 0}
    assert assign_signal_ids(devices) == [1, 0]


def test_config_signals_may_fix_their_id(tmp_path: Path) -> None:
    data = copy.deepcopy(VALID)
    data["signals"][0]["id"] = 254
    path = tmp_path / "bumper.json"
    path.write_text(json.dumps(data))
    assert load_device_config(path).signal("pressed").id == 254
    data["signals"][0]["id"] = True
    path.write_text(json.dumps(data))
    with pytest.raises(HilError, match=r"signal 0 \(pressed\): field 'id': True is not an integer"):
        load_device_config(path)


def test_a_handler_may_bring_its_own_template_file(tmp_path: Path) -> None:
    data = {**copy.deepcopy(VALID), "handler": {"template": "mine", "pins": ["pin"], "file": "mine.tmpl"}}
    path = tmp_path / "bumper.json"
    path.write_text(json.dumps(data))
    with pytest.raises(HilError, match=r"bumper.json: device bumper: field 'handler.file': cannot read"):
        load_device_config(path)
    (tmp_path / "mine.tmpl").write_text("##PINS##\npin DIGITAL OUTPUT\n")
    handler = load_device_config(path).handler
    assert handler is not None
    assert (handler.template, handler.text, handler.file) == (
        "mine",
        "##PINS##\npin DIGITAL OUTPUT\n",
        str(tmp_path / "mine.tmpl"),
    )


def test_profile_sections_describe_pins_params_and_model(tmp_path: Path) -> None:
    data = {
        **VALID,
        "pins": [{"name": "contact", "mcu": "input", "needs": "interrupt", "signal": "pressed"}],
        "params": {
            "hold_s": {"default": 0.2},  # the bumper kind's (models.json), with a default of its own
            "to_deg": {},  # the kind's, with its default
            "side": {"choices": ["left", "right"], "description": "which side"},
        },
        "model": {"kind": "bumper", "from_deg": -75},
        "coupling": {"kind": "push_button"},
    }
    path = tmp_path / "bumper.json"
    path.write_text(json.dumps(data))
    config = load_device_config(path)
    assert config.pin_of_signal("pressed") == config.pin("contact")
    assert (config.params["hold_s"].default, config.params["hold_s"].max) == (0.2, 10)
    assert (config.params["to_deg"].default, config.params["to_deg"].unit) == (75, "deg")
    assert config.params["side"].default is None and config.params["side"].choices == ("left", "right")
    assert config.model is not None and (config.model.kind, dict(config.model.data)) == (
        "bumper",
        {"from_deg": -75},
    )
    assert config.coupling == "push_button"


def test_every_library_device_declares_its_pins() -> None:
    for config in LIBRARY.values():
        assert config.pins, config.name
        served = set(config.handler.pins) if config.handler else set()
        assert {p.name for p in config.pins if not p.signal} == served, config.name
