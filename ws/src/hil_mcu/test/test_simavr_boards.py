"""The harness's boards: its C pin tables agree with hil_devices.core.boards, its options."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from hil_devices.core.boards import BOARDS
from hil_mcu.core.simavr import UART_PINS, harness
from support.sketch_rig import SketchRig, device


def harness_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(harness()), *args], capture_output=True, text=True, timeout=30, check=False)


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_harness_pin_table_agrees_with_the_python_board_table(name: str) -> None:
    result = harness_run("--list-pins", "--board", name)
    assert result.returncode == 0, result.stderr
    table = json.loads(result.stdout)
    spec = BOARDS[name]
    assert (table["board"], table["mcu"]) == (name, spec.mcu)
    assert [(p["pin"], p["port"], p["bit"], p["pwm"]) for p in table["pins"]] == [
        (n, pin.port, pin.bit, pin.pwm) for n, pin in sorted(spec.pins.items())
    ]
    assert (table["first_analog"], table["analog_pins"]) == (spec.first_analog, spec.pins_analog)
    assert table["adc_channels"] >= spec.analog_inputs
    assert table["uarts"] == len(UART_PINS[name])  # the hardware UARTs simavr_mcu may put on ptys
    assert [tuple(pins) for pins in table["uart_pins"]] == [spec.uarts[n] for n in sorted(spec.uarts)]
    assert table["boot_delay_s"] == {"atmega328p": 1.375, "atmega2560": 1.0}[spec.mcu]  # optiboot, stk500v2


def test_harness_takes_the_board_from_the_mcu() -> None:
    assert json.loads(harness_run("--list-pins", "--mcu", "atmega2560").stdout)["board"] == "mega2560"
    assert json.loads(harness_run("--list-pins").stdout)["mcu"] == "atmega328p"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--board", "mega"), "--board mega: expected one of uno, nano, mega2560"),
        (("--mcu", "atmega168"), "--mcu atmega168: no board of the harness has it"),
        (("--mcu", "atmega2560", "--board", "uno"), "--mcu atmega2560: the uno is an atmega328p"),
    ],
)
def test_harness_refuses_an_unknown_board_or_mcu(args: tuple[str, ...], message: str) -> None:
    result = harness_run("--list-pins", *args)
    assert result.returncode == 2
    assert message in result.stderr


PROBE = device(
    "pwm_probe",
    [{"name": "duty", "direction": "INPUT", "type": "INTEGER", "min": 0, "max": 25500, "mode": "PWM"}],
)


def test_simavr_warnings_are_counted_and_each_distinct_one_reported_once() -> None:
    # analogWrite on pin 9 writes OCR1A in the phase-correct mode simavr 1.6 does not
    # run: simavr warns at every write.
    rig = SketchRig("pwm_sweep", board="uno", devices=[("pwm", PROBE)], pins={"pwm.duty": "9"})
    try:
        for value in (10, 20, 30):
            rig.command_line(f"a 9 {value}")
        deadline = time.monotonic() + 10.0
        while rig.stats()["simavr_warnings"] < 3 and time.monotonic() < deadline:
            time.sleep(0.05)  # read by a background thread
        stats = rig.stats()
        assert stats["simavr_warnings"] == 3
        assert "UNSUPPORTED" in stats["simavr_last_warning"]
        assert rig.warnings == [stats["simavr_last_warning"]]
    finally:
        rig.close()
