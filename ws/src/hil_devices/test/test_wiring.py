"""Bridge-board wiring: pins parsed and checked by what each signal needs, autowire by scarcity."""

from __future__ import annotations

from pathlib import Path

import pytest

from hil_common.errors import HilError
from hil_devices.core.devices import load_device_set
from hil_devices.core.handler_template import load_templates, needs_of
from hil_devices.core.library import load_device_library
from hil_devices.core.wiring import (
    PINS,
    Capability,
    PinNeed,
    Wiring,
    autowire,
    check_wiring,
    load_wiring,
    parse_pin,
)
from hil_devices.errors import HilDevicesError

CONFIG = Path(__file__).resolve().parents[1] / "config"
LIBRARY = load_device_library([CONFIG / "devices"])
TEMPLATES = load_templates([CONFIG / "handlers"])
DEMO = needs_of(load_device_set(CONFIG / "demo_robot_devices.yaml", LIBRARY), TEMPLATES)


def device_set(tmp_path: Path, *devices: tuple[str, str]) -> list[PinNeed]:
    path = tmp_path / "devices.yaml"
    path.write_text("devices:\n" + "".join(f"  - {{name: {n}, device: {d}}}\n" for n, d in devices))
    return needs_of(load_device_set(path, LIBRARY), TEMPLATES)


@pytest.mark.parametrize(("text", "pin"), [(4, 4), ("4", 4), ("D13", 13), ("A0", 14), ("a5", 19)])
def test_pins_parse_as_arduino_numbers(text: object, pin: int) -> None:
    assert parse_pin(text) == pin


@pytest.mark.parametrize(
    ("text", "message"),
    [(0, "serial link"), ("1", "serial link"), ("A6", "not a pin"), ("x", "not a pin"), (20, "not a pin")],
)
def test_bad_pins_are_refused_by_name(text: object, message: str) -> None:
    with pytest.raises(HilDevicesError, match=message):
        parse_pin(text, key="pins.led.active")


def test_demo_robot_autowires_onto_all_18_pins_with_scarce_pins_where_needed() -> None:
    wiring = autowire(DEMO)
    assert sorted(wiring.pins.values()) == list(range(2, 20))
    by_capability: dict[Capability, list[int]] = {}
    for need in DEMO:
        by_capability.setdefault(need.capability, []).append(wiring.pins[need.key])
    assert set(by_capability[Capability.PWM]) <= {3, 5, 6, 9, 10, 11}
    assert wiring.pins["compass.sda"] == 18 and wiring.pins["compass.scl"] == 19
    assert autowire(DEMO) == wiring  # the same every time
    check_wiring(DEMO, wiring)


def test_autowire_keeps_the_pins_it_is_given() -> None:
    wiring = autowire(DEMO, fixed={"led.active": 13, "ir.voltage": 3})
    assert wiring.pins["led.active"] == 13 and wiring.pins["ir.voltage"] == 3


def test_autowire_running_out_of_pwm_pins_names_the_signal_and_the_holders(tmp_path: Path) -> None:
    needs = device_set(tmp_path, *[(f"light_{i}", "photoresistor") for i in range(7)])
    with pytest.raises(
        HilDevicesError, match=r"no free pin for light_\d\.reading, which needs PWM.*3 \(light_"
    ):
        autowire(needs)


def test_autowire_running_out_of_pins_altogether(tmp_path: Path) -> None:
    needs = device_set(tmp_path, *[(f"led_{i}", "led") for i in range(19)])
    with pytest.raises(HilDevicesError, match=r"no free pin for led_18\.active.*0 pin\(s\) left"):
        autowire(needs)


def test_check_wiring_names_the_key_at_fault() -> None:
    good = dict(autowire(DEMO).pins)
    with pytest.raises(HilDevicesError, match=r"nonsense\.signal is not a signal"):
        check_wiring(DEMO, Wiring("nano", {**good, "nonsense.signal": 2}))
    with pytest.raises(HilDevicesError, match=r"ir\.voltage: pin 4 cannot do PWM"):
        check_wiring(DEMO, Wiring("nano", {**good, "ir.voltage": 4, "motor_left.enable": 5}))
    with pytest.raises(HilDevicesError, match="already"):
        check_wiring(DEMO, Wiring("nano", {**good, "led.active": good["motor_left.a"]}))
    incomplete = {k: v for k, v in good.items() if k != "led.active"}
    with pytest.raises(HilDevicesError, match=r"not wired: led\.active"):
        check_wiring(DEMO, Wiring("nano", incomplete))


def test_wiring_file_round_trips_and_bad_files_are_named(tmp_path: Path) -> None:
    wiring = autowire(DEMO)
    path = tmp_path / "wiring.yaml"
    path.write_text(wiring.to_yaml(header="test"))
    assert load_wiring(path) == wiring
    path.write_text("board: mega\npins: {}\n")
    with pytest.raises(HilDevicesError, match=r"wiring.yaml: board 'mega'"):
        load_wiring(path)
    path.write_text("pins:\n  led.active: 1\n")
    with pytest.raises(HilDevicesError, match=r"pins.led.active: pin 1 is the serial link"):
        load_wiring(path)


def test_interrupt_output_without_handler_cannot_be_wired(tmp_path: Path) -> None:
    config = tmp_path / "devices"
    config.mkdir()
    (config / "pulser.json").write_text(
        '{"name": "pulser", "signals": [{"name": "rate", "direction": "OUTPUT", "type": "INTEGER",'
        ' "min": 0, "max": 10, "mode": "INTERRUPT"}]}'
    )
    library = load_device_library([config])
    (tmp_path / "set.yaml").write_text("devices:\n  - {name: p, device: pulser}\n")
    with pytest.raises(HilError, match=r"p\.rate: an INTERRUPT OUTPUT signal needs a handler"):
        needs_of(load_device_set(tmp_path / "set.yaml", library), TEMPLATES)


def test_every_pin_knows_its_port_and_pin_change_group() -> None:
    assert (PINS[2].port, PINS[2].bit, PINS[2].pcint, PINS[2].pcint_group) == ("D", 2, 18, 2)
    assert (PINS[9].port, PINS[9].bit, PINS[9].pcint, PINS[9].pcint_group) == ("B", 1, 1, 0)
    assert (PINS[17].name, PINS[17].port, PINS[17].bit, PINS[17].pcint_group) == ("A3", "C", 3, 1)
