"""hil_devices.core.boards: the pin tables, as the installed Arduino AVR core's variants have them."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hil_devices.core.boards import BOARDS, board
from hil_devices.errors import HilDevicesError
from hil_firmware.core.avr_build import DEBIAN_ARDUINO_AVR


def variant_tables(name: str, tmp_path: Path) -> dict[str, object]:
    """The variant's pin arrays and macros, from avr-g++'s preprocessor (ARDUINO_MAIN)."""
    spec = BOARDS[name]
    source = tmp_path / "variant.cpp"
    source.write_text("#define ARDUINO_MAIN\n#include <Arduino.h>\n")
    command = [
        "avr-g++", f"-mmcu={spec.mcu}", "-DF_CPU=16000000L", "-E", "-dD", "-w",
        "-I", str(DEBIAN_ARDUINO_AVR / "cores" / "arduino"),
        "-I", str(DEBIAN_ARDUINO_AVR / "variants" / spec.variant),
        str(source),
    ]  # fmt: skip
    text = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    macros = dict(re.findall(r"^#define (\w+) \(?(\d+)\)?$", text, flags=re.MULTILINE))

    def array(symbol: str) -> list[int]:
        body = re.search(rf"{symbol}\[\] = \{{(.*?)\}};", text, flags=re.DOTALL)
        assert body is not None, symbol
        entries = [re.sub(r"^#.*$", "", line) for line in body.group(1).splitlines()]
        values = " ".join(entries).replace("UL", "").split(",")
        return [eval(v, {"__builtins__": {}}) for v in values if v.strip()]  # "(1 << (3))", "4"

    return {
        "macros": macros,
        "port": array("digital_pin_to_port_PGM"),
        "mask": array("digital_pin_to_bit_mask_PGM"),
        "timer": array("digital_pin_to_timer_PGM"),
    }


@pytest.mark.skipif(
    shutil.which("avr-g++") is None or not (DEBIAN_ARDUINO_AVR / "cores").is_dir(),
    reason="needs avr-g++ and Debian's arduino-core-avr",
)
@pytest.mark.parametrize("name", sorted(BOARDS))
def test_pin_table_is_the_arduino_cores_variant(name: str, tmp_path: Path) -> None:
    spec = BOARDS[name]
    tables = variant_tables(name, tmp_path)
    macros = tables["macros"]
    assert isinstance(macros, dict)
    ports = {int(macros[f"P{letter}"]): letter for letter in "ABCDEFGHJKL" if f"P{letter}" in macros}
    timers = {int(v): k.removeprefix("TIMER") for k, v in macros.items() if re.fullmatch(r"TIMER\d[A-D]?", k)}
    timers[0] = None  # NOT_ON_TIMER
    variant = [
        (ports[port], mask.bit_length() - 1, timers[timer])
        for port, mask, timer in zip(tables["port"], tables["mask"], tables["timer"], strict=True)  # type: ignore[call-overload]
    ]
    ours = [(pin.port, pin.bit, pin.pwm) for _, pin in sorted(spec.pins.items())]
    assert ours == variant
    assert int(macros["PIN_A0"]) == spec.first_analog
    assert int(macros["NUM_ANALOG_INPUTS"]) == spec.analog_inputs
    assert (int(macros["PIN_WIRE_SDA"]), int(macros["PIN_WIRE_SCL"])) == (spec.sda, spec.scl)


@pytest.mark.parametrize(
    ("name", "value", "pin"),
    [
        ("uno", "A0", 14),
        ("nano", "a5", 19),
        ("uno", "D13", 13),
        ("mega2560", "A15", 69),
        ("mega2560", 46, 46),
    ],
)
def test_pins_parse_by_number_and_name(name: str, value: object, pin: int) -> None:
    assert BOARDS[name].parse_pin(value) == pin


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("uno", "1", "pin '1' is the serial link"),
        ("uno", "20", "'20' is not a pin of the uno"),
        ("nano", "A6", "A6 of the nano is an analog input only"),
        ("uno", "A6", "'A6' is not a pin of the uno"),
        ("mega2560", "70", "'70' is not a pin of the mega2560"),
        ("mega2560", True, "True is not a pin"),
    ],
)
def test_bad_pins_are_refused_naming_the_key(name: str, value: object, message: str) -> None:
    with pytest.raises(HilDevicesError, match=f"pins.x: {re.escape(message)}"):
        BOARDS[name].parse_pin(value, key="pins.x")


def test_analog_inputs_and_pwm_pins_per_board() -> None:
    assert BOARDS["uno"].pwm_pins == BOARDS["nano"].pwm_pins == (3, 5, 6, 9, 10, 11)
    assert BOARDS["mega2560"].pwm_pins == (*range(2, 14), 44, 45, 46)
    assert BOARDS["nano"].parse_analog("A7") == 7
    assert BOARDS["mega2560"].parse_analog("A15") == 15
    with pytest.raises(
        HilDevicesError, match=r"'A6' is not an analog input of the uno \(A0..A5\); A6 exists on the Nano"
    ):
        BOARDS["uno"].parse_analog("A6")
    assert (BOARDS["mega2560"].flash_bytes, BOARDS["mega2560"].ram_bytes) == (253952, 8192)
    with pytest.raises(HilDevicesError, match=r"board 'mega': expected one of \['mega2560', 'nano', 'uno'\]"):
        board("mega")
