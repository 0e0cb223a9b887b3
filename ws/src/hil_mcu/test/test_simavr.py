"""hil_mcu.core.simavr: robot wiring, the harness's coupling file, builds, and the harness's errors."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from hil_bridge.core.defaults import signal_layout
from hil_bridge.core.lockstep_io import read_rest
from hil_bridge.core.pty_link import PtyPair
from hil_bridge.core.signal_protocol import SignalLayout
from hil_devices.core.devices import DeviceInstance, device_from_mapping
from hil_devices.core.library import load_device_library
from hil_devices.core.profile import load_profile
from hil_mcu.core import simavr
from hil_mcu.core.simavr import (
    FirmwareOptions,
    RobotWiring,
    SimavrProcess,
    SoftUartSpec,
    build_firmware,
    check_firmware,
    check_serial_pins,
    coupling_text,
    cycles,
    firmware_dir,
    harness,
    load_robot_wiring,
    parse_defines,
    profile_coupling,
    profile_wiring,
    serial_links,
)
from hil_mcu.errors import HilMcuError

DEMO_COUPLING = """\
# hil_simavr coupling, written by hil_mcu.core.simavr
period_us 5000
in 0 0 1024 pwm 5
in 1 0 1 level 7
in 2 0 1 level 8
in 3 0 1024 pwm 6
in 4 0 1 level 11
in 5 0 1 level 12
in 6 0 1 level 13
out 7 int 0 1 0 level 2
out 8 int 0 1 0 level 3
out 9 float 0 200 200 echo 4 9
out 10 float 0 5 0.45 adc 0 1000.0
out 11 int 0 1023 0 adc 1 4.887585532746823
out 12 int 0 1023 0 adc 2 4.887585532746823
out 13 int 0 1023 0 adc 3 4.887585532746823
out 14 int 0 1023 0 adc 6 4.887585532746823
out 15 float 0 360 0 hmc5883l 0x1e
"""


def write_wiring(tmp_path: Path, changes: dict[str, str | None], board: str = "nano") -> Path:
    pins = dict(load_robot_wiring().pins)
    for key, pin in changes.items():
        if pin is None:
            pins.pop(key)
        else:
            pins[key] = pin
    path = tmp_path / "wiring.yaml"
    path.write_text(f"board: {board}\npins:\n" + "".join(f"  {k}: {v}\n" for k, v in pins.items()))
    return path


def test_demo_robot_coupling_lists_every_signal_in_frame_order() -> None:
    assert coupling_text(signal_layout(), load_robot_wiring()) == DEMO_COUPLING


def test_the_demo_profile_couples_exactly_the_demo_robots_pins() -> None:
    profile = load_profile("demo")
    assert profile_coupling(profile) == DEMO_COUPLING
    assert dict(profile_wiring(profile).pins) == dict(load_robot_wiring().pins)


@pytest.mark.parametrize(
    ("pin", "line"),
    [
        ("9", "in 1 0 1024 pwm 9"),  # a timer pin: the duty of analogWrite, or of a level
        ("8", "in 1 0 1024 level 8"),  # no timer: a level, 0 or 1024
    ],
)
def test_an_input_that_takes_levels_or_pwm_is_measured_as_its_pin_allows(pin: str, line: str) -> None:
    l298n = DeviceInstance("motor", LIBRARY["l298n"])
    wiring = RobotWiring("uno", {"motor.enable": "5", "motor.a": pin, "motor.b": "7"}, "robot.yaml")
    assert coupling_text(SignalLayout([l298n]), wiring).splitlines()[3] == line


def test_an_enable_that_needs_pwm_on_a_plain_pin_is_refused() -> None:
    l298n = DeviceInstance("motor", LIBRARY["l298n"])
    wiring = RobotWiring("uno", {"motor.enable": "4", "motor.a": "8", "motor.b": "7"}, "robot.yaml")
    with pytest.raises(HilMcuError, match=r"robot.yaml: pins.motor.enable: pin 4 has no PWM on the uno"):
        coupling_text(SignalLayout([l298n]), wiring)


def test_robot_wiring_matches_the_pins_of_the_firmware() -> None:
    pins_h = (firmware_dir() / "robot_mcu" / "pins.h").read_text()
    defines = dict(re.findall(r"#define (PIN_\w+) (A?\d+)", pins_h))
    names = {
        "motor_left.enable": "PIN_MOTOR_LEFT_ENABLE",
        "motor_left.a": "PIN_MOTOR_LEFT_A",
        "motor_left.b": "PIN_MOTOR_LEFT_B",
        "motor_right.enable": "PIN_MOTOR_RIGHT_ENABLE",
        "motor_right.a": "PIN_MOTOR_RIGHT_A",
        "motor_right.b": "PIN_MOTOR_RIGHT_B",
        "led.active": "PIN_LED",
        "bumper_left.pressed": "PIN_BUMPER_LEFT",
        "bumper_right.pressed": "PIN_BUMPER_RIGHT",
        "ultrasonic.trigger": "PIN_ULTRASONIC_TRIGGER",
        "ultrasonic.echo": "PIN_ULTRASONIC_ECHO",
        "ir.voltage": "PIN_IR",
        **{f"light_{i}.reading": f"PIN_LIGHT_{i}" for i in range(4)},
    }
    wiring = load_robot_wiring()
    assert {key: defines[name] for key, name in names.items()} == {k: wiring.pins[k] for k in names}
    assert (wiring.pins["compass.sda"], wiring.pins["compass.scl"]) == ("A4", "A5")


@pytest.mark.parametrize(
    ("changes", "board", "message"),
    [
        ({"motor_left.enable": "4"}, "nano", r"pins.motor_left.enable: pin 4 has no PWM"),
        ({"ir.voltage": "7"}, "nano", r"pins.ir.voltage: '7' is not an analog input"),
        (
            {"light_3.reading": "A6"},
            "uno",
            r"pins.light_3.reading: 'A6' is not an analog input of the uno.*Nano",
        ),
        (
            {"motor_left.enable": "14"},
            "mega2560",
            r"pins.motor_left.enable: pin 14 has no PWM on the mega2560",
        ),
        ({"ir.voltage": "A16"}, "mega2560", r"pins.ir.voltage: 'A16' is not an analog input of the mega2560"),
        ({"led.active": "70"}, "mega2560", r"pins.led.active: '70' is not a pin of the mega2560"),
        ({"compass.sda": "A4"}, "mega2560", r"pins.compass.sda must be 20 \(TWI\)"),
        ({"ultrasonic.echo": None}, "nano", r"no pin for ultrasonic.echo"),
        ({"compass.sda": "A3"}, "nano", r"pins.compass.sda must be A4 \(TWI\)"),
        ({"led.active": "1"}, "nano", r"pins.led.active: pin '1' is the serial link"),
    ],
)
def test_wiring_errors_name_the_file_and_key(
    tmp_path: Path, changes: dict[str, str | None], board: str, message: str
) -> None:
    with pytest.raises(HilMcuError, match=message):
        coupling_text(signal_layout(), load_robot_wiring(write_wiring(tmp_path, changes, board)))


LIBRARY = load_device_library([Path(__file__).resolve().parents[2] / "hil_devices" / "config" / "devices"])
# library device, wiring (handler pin -> pin), params, the coupling lines of its signals
PIN_DEVICES = [
    ("quadrature_encoder", {"a": "2", "b": "3"}, {}, ["out 0 float -32768 32767 0 quadrature 2 3"]),
    ("single_channel_encoder", {"signal": "2"}, {}, ["out 0 float -32768 32767 0 pulses 2"]),
    ("servo", {"signal": "9"}, {}, ["in 0 0 3000 servo 9"]),
    ("buzzer", {"signal": "8"}, {}, ["in 0 0 20000 tone 8"]),
    (
        "mpu6050",
        {"sda": "A4", "scl": "A5"},
        {"ad0": 1},
        [
            "out 0 float -32.768 32.767 0 mpu6050 0x69 ax",
            "out 1 float -32.768 32.767 0 mpu6050 0x69 ay",
            "out 2 float -32.768 32.767 9.80665 mpu6050 0x69 az",
            "out 3 float -8.192 8.19175 0 mpu6050 0x69 gx",
            "out 4 float -8.192 8.19175 0 mpu6050 0x69 gy",
            "out 5 float -8.192 8.19175 0 mpu6050 0x69 gz",
            "out 6 float -40 85 25 mpu6050 0x69 temp",
        ],
    ),
    (
        "ir_receiver_nec",
        {"out": "11"},
        {},
        [
            "out 0 int 0 255 0 nec 11 address",
            "out 1 int 0 255 0 nec 11 command",
            "out 2 int 0 255 0 nec 11 sends",
        ],
    ),
    ("push_button", {"contact": "4"}, {}, ["out 0 int 0 1 0 button 4 1500 4"]),
    ("push_button", {"contact": "4"}, {"bounce_us": 0, "bounces": 2}, ["out 0 int 0 1 0 button 4 0 2"]),
]


def one_device(kind: str, pins: dict[str, str], board: str = "uno") -> tuple[SignalLayout, RobotWiring]:
    layout = SignalLayout([DeviceInstance("dev", LIBRARY[kind])])
    return layout, RobotWiring(board, {f"dev.{k}": v for k, v in pins.items()}, "wiring.yaml")


@pytest.mark.parametrize(("kind", "pins", "params", "lines"), PIN_DEVICES)
def test_pin_level_devices_get_their_kinds_pins_and_parameters(
    kind: str, pins: dict[str, str], params: dict[str, float], lines: list[str]
) -> None:
    layout, wiring = one_device(kind, pins)
    assert coupling_text(layout, wiring, params={"dev": params}).splitlines()[2:] == lines


def test_ws2812_signals_name_their_led_and_colour() -> None:
    layout, wiring = one_device("ws2812", {"din": "6"})
    lines = coupling_text(layout, wiring).splitlines()[2:]
    assert len(lines) == 24
    assert lines[:3] == ["in 0 0 255 ws2812 6 0 r", "in 1 0 255 ws2812 6 0 g", "in 2 0 255 ws2812 6 0 b"]
    assert lines[-1] == "in 23 0 255 ws2812 6 7 b"


def test_every_library_device_with_a_handler_has_a_harness_kind() -> None:
    for name, config in LIBRARY.items():
        if config.handler is not None:
            assert config.handler.template in simavr.HANDLER_KINDS, name


def device_with(template: str, signal: dict[str, object]) -> DeviceInstance:
    data = {"name": "x", "signals": [signal], "handler": {"template": template, "pins": ["signal"]}}
    return DeviceInstance("dev", device_from_mapping(data, source="x.json"))


BUTTON_SIGNAL = {
    "name": "pressed",
    "direction": "OUTPUT",
    "type": "INTEGER",
    "min": 0,
    "max": 1,
    "mode": "DIGITAL",
}


@pytest.mark.parametrize(
    ("devices", "pins", "params", "message"),
    [
        (
            [DeviceInstance("dev", LIBRARY["push_button"])],
            {"dev.contact": "4"},
            {"dev": {"bounce_us": 200_000}},
            r"dev: parameter 'bounce_us': 200000(\.0)? is above the maximum 100000",
        ),
        (
            [DeviceInstance("dev", LIBRARY["push_button"])],
            {"dev.contact": "4"},
            {"dev": {"bounces": -1}},
            r"dev: parameter 'bounces': -1(\.0)? is below the minimum 0",
        ),
        (
            [DeviceInstance("dev", LIBRARY["push_button"])],
            {"dev.contact": "4"},
            {"dev": {"chatter": 3}},
            r"dev: device push_button has no parameter 'chatter' \(it has: bounce_us, bounces\)",
        ),
        (
            [DeviceInstance("dev", LIBRARY["push_button"])],
            {"dev.contact": "4"},
            {"other": {"bounces": 1}},
            r"parameters for other: no such device in the set",
        ),
        (
            [DeviceInstance("dev", LIBRARY["mpu6050"])],
            {"dev.sda": "A4", "dev.scl": "A5"},
            {"dev": {"ad0": 2}},
            r"dev: parameter 'ad0': 2(\.0)? is above the maximum 1",
        ),
        (
            [DeviceInstance("dev", LIBRARY["mpu6050"])],
            {"dev.sda": "A3", "dev.scl": "A5"},
            {},
            r"wiring.yaml: pins.dev.sda must be A4 \(TWI\)",
        ),
        (
            [DeviceInstance("dev", LIBRARY["quadrature_encoder"])],
            {"dev.a": "2"},
            {},
            r"wiring.yaml: no pin for dev.b",
        ),
        (
            [device_with("servo", {**BUTTON_SIGNAL, "direction": "OUTPUT"})],
            {"dev.signal": "9"},
            {},
            r"dev.pressed: handler servo serves INPUT signals, this one is OUTPUT",
        ),
        (
            [device_with("stepper", BUTTON_SIGNAL)],
            {"dev.signal": "9"},
            {},
            r"dev: the simavr harness has no model of handler 'stepper' \(it models: buzzer, hc_sr04",
        ),
        (
            [device_with("ws2812", {**BUTTON_SIGNAL, "direction": "INPUT"})],
            {"dev.din": "6"},
            {},
            r"dev.pressed: a ws2812 signal is named led<index>_r, _g or _b",
        ),
    ],
)
def test_device_coupling_errors_name_the_device_and_what_is_wrong(
    devices: list[DeviceInstance], pins: dict[str, str], params: dict[str, dict[str, float]], message: str
) -> None:
    with pytest.raises(HilMcuError, match=message):
        coupling_text(SignalLayout(devices), RobotWiring("uno", pins, "wiring.yaml"), params=params)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("pins: [1, 2]", "expected a mapping"),
        ("board: mega\npins: {}", "board 'mega'"),
        ("board: nano\npins: {}\nextra: 1", r"unknown keys \['extra'\]"),
    ],
)
def test_malformed_wiring_files_are_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "wiring.yaml"
    path.write_text(text)
    with pytest.raises(HilMcuError, match=message):
        load_robot_wiring(path)


def test_defines_parse_integers_and_text_and_refuse_junk() -> None:
    assert parse_defines(["MCU_WATCHDOG_MS=0", "NAME=abc", "NEG=-5"]) == {
        "MCU_WATCHDOG_MS": 0,
        "NAME": "abc",
        "NEG": -5,
    }
    for bad in ("NOVALUE", "1X=2", "=3"):
        with pytest.raises(HilMcuError, match=re.escape(repr(bad))):
            parse_defines([bad])
    with pytest.raises(HilMcuError, match="board 'mega'"):
        FirmwareOptions(board="mega")


def test_firmware_builds_are_cached_by_sources_and_options(tmp_path: Path) -> None:
    plain = build_firmware(FirmwareOptions(), build_root=tmp_path)
    assert build_firmware(FirmwareOptions(), build_root=tmp_path) == plain
    checked = build_firmware(FirmwareOptions(checked=True), build_root=tmp_path)
    fault = build_firmware(FirmwareOptions(defines={"MCU_WATCHDOG_MS": 0}), build_root=tmp_path)
    assert len({plain, checked, fault}) == 3
    assert all(p.read_bytes()[:4] == b"\x7fELF" for p in (plain, checked, fault))


def test_cycles_count_the_16_mhz_clock() -> None:
    assert cycles(0.005) == 80_000
    assert cycles(1.0) == 16_000_000


def run_harness(*args: str) -> subprocess.CompletedProcess[str]:
    with PtyPair() as command:
        return subprocess.run(
            [str(harness()), "--command-fd", str(command.master_fd), *args],
            capture_output=True,
            text=True,
            timeout=30,
            pass_fds=(command.master_fd,),
            check=False,
        )


@pytest.mark.parametrize(
    ("coupling", "message"),
    [
        ("in 0 0 1024 pwm 4\n", r"coupling.txt:1: pwm needs a timer output pin"),
        ("period_us 5000\nout 1 int 0 1 0 level 25\n", r"coupling.txt:2: level needs a digital pin"),
        ("out 1 long 0 1 0 level 2\n", r"coupling.txt:1: type long is neither int nor float"),
        ("in 0 5 5 level 2\n", r"coupling.txt:1: max 5 must exceed min 5"),
        ("up 1 0 1 level 2\n", r"coupling.txt:1: direction up is neither in nor out"),
        ("out 1 float 0 9 0 adc 9 1000\n", r"coupling.txt:1: adc needs a channel 0..7"),
        ("out 1 float 0 100 0 quadrature 2\n", r"coupling.txt:1: quadrature needs two pins, A and B"),
        ("out 1 float 0 100 0 quadrature 2 3\n", r"quadrature needs a float signal -32768 32767"),
        ("out 1 float -32768 32767 0 pulses 99\n", r"coupling.txt:1: pulses needs its pin, 0..19"),
        ("in 1 0 3000 servo\n", r"coupling.txt:1: servo needs its pin, 0..19"),
        ("out 1 float 0 3000 0 servo 9\n", r"coupling.txt:1: kind servo does not fit an out signal"),
        (
            "in 1 0 255 ws2812 6 0 w\n",
            r"coupling.txt:1: ws2812 needs its pin \(0..19\), an LED 0..84 and r, g or b",
        ),
        ("out 1 float -40 40 0 mpu6050 0x1e ax\n", r"mpu6050 needs its address \(0x68 or 0x69\)"),
        ("out 1 float -40 40 0 mpu6050 0x68 accel\n", r"mpu6050 needs its address .* ax, ay, az, gx"),
        ("out 1 int 0 255 0 nec 11 code\n", r"nec needs its pin \(0..19\) and address, command or sends"),
        (
            "out 1 int 0 1 0 button 4 1500\n",
            r"button needs its pin \(0..19\), bounce_us 0..100000 and bounces",
        ),
    ],
)
def test_harness_refuses_a_bad_coupling_file_naming_the_line(
    tmp_path: Path, coupling: str, message: str
) -> None:
    path = tmp_path / "coupling.txt"
    path.write_text(coupling)
    with PtyPair() as signal:
        result = subprocess.run(
            [
                str(harness()),
                "--firmware",
                str(tmp_path / "none.elf"),
                "--command-fd",
                str(signal.master_fd),
                "--signal-fd",
                str(signal.master_fd),
                "--coupling",
                str(path),
            ],
            capture_output=True,
            text=True,
            timeout=30,
            pass_fds=(signal.master_fd,),
            check=False,
        )
    assert result.returncode == 2
    assert re.search(message, result.stderr), result.stderr
    assert result.stdout == ""


def test_harness_refuses_a_missing_firmware(tmp_path: Path) -> None:
    result = run_harness("--firmware", str(tmp_path / "missing.elf"), "--lockstep")
    assert result.returncode == 2
    assert "missing.elf: not a readable AVR ELF file" in result.stderr


def elf_header(*, bits: int = 1, order: int = 1, kind: int = 2, machine: int = 83) -> bytes:
    """The first 20 bytes of an ELF file (e_ident, e_type, e_machine), little endian."""
    return (
        b"\x7fELF"
        + bytes([bits, order, 1])
        + bytes(9)
        + kind.to_bytes(2, "little")
        + machine.to_bytes(2, "little")
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        (b"", "not an ELF file (it begins b'')"),
        (b"#!/bin/sh\necho not a firmware\n", "not an ELF file (it begins b'#!/b')"),
        (elf_header(bits=2, machine=62), "an ELF for machine 62 (x86-64), not AVR (83)"),
        (elf_header(machine=40), "an ELF for machine 40 (ARM), not AVR (83)"),
        (elf_header(machine=1234), "an ELF for machine 1234 (not AVR), not AVR (83)"),
        (elf_header(bits=2), "not a 32-bit little-endian ELF, as avr-gcc makes"),
        (elf_header(kind=1), "an ELF object, not a linked program (link it with avr-gcc)"),
    ],
    ids=["missing", "empty", "script", "x86-64", "arm", "unknown-machine", "64-bit", "object"],
)
def test_a_firmware_that_is_not_an_avr_program_is_refused(
    tmp_path: Path, content: bytes | None, expected: str
) -> None:
    elf = tmp_path / "robot.elf"
    if content is not None:
        elf.write_bytes(content)
    with pytest.raises(HilMcuError) as info:
        check_firmware(elf)
    assert str(info.value) == f"firmware {elf}: {expected}"


def test_an_avr_program_passes_the_firmware_check(tmp_path: Path) -> None:
    elf = tmp_path / "robot.elf"
    elf.write_bytes(elf_header() + bytes(100))
    assert check_firmware(str(elf)) == elf


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--uart", "x"), r"--uart x: expected N:FD \(UART number, pty master descriptor\)"),
        (("--uart", "0:FD", "--uart", "0:FD"), "--uart 0: given twice"),
        (("--board", "mega2560", "--uart", "4:FD"), r"--uart 4:\d+: the mega2560 has UART 0..3"),
        (("--uart", "1:FD"), r"--uart 1:\d+: the uno has UART 0$"),
        (("--softuart", "10:11"), "--softuart 10:11: expected RX:TX:BAUD:FD"),
        (("--softuart", "10:10:9600:FD"), "RX and TX must be two different pins, each a digital pin 0..19"),
        (("--softuart", "10:20:9600:FD"), "RX and TX must be two different pins, each a digital pin 0..19"),
        (("--softuart", "10:11:100:FD"), "baud 100 outside 300..250000"),
        (
            ("--softuart", "10:11:9600:FD", "--softuart", "11:12:9600:FD"),
            "pin 11 is already another soft UART's",
        ),
        (("--boot-delay", "11"), r"--boot-delay 11: outside 0..10 s"),
        (("--boot-delay", "soon"), "--boot-delay: not a number: soon"),
        (("--reset-on-open", "999"), "--reset-on-open 999: not an open descriptor"),
    ],
)
def test_harness_refuses_bad_serial_options_naming_them(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    with PtyPair() as pty:
        result = subprocess.run(
            [
                str(harness()),
                "--firmware",
                str(tmp_path / "none.elf"),
                *(arg.replace("FD", str(pty.master_fd)) for arg in args),
                *([] if any(a.startswith("--uart") for a in args) else ["--uart", f"0:{pty.master_fd}"]),
            ],
            capture_output=True,
            text=True,
            timeout=30,
            pass_fds=(pty.master_fd,),
            check=False,
        )
    assert result.returncode == 2
    assert re.search(message, result.stderr, re.MULTILINE), result.stderr


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"uarts": {}}, r"the harness needs a UART on a pty \(uarts or command_fd\)"),
        ({"uarts": {0: 5}, "command_fd": 5}, r"UART 0 given twice \(command_fd and uarts\)"),
        ({"command_fd": 5, "boot_delay": 12.0}, r"boot_delay 12.0 s is outside 0..10"),
    ],
)
def test_simavr_process_refuses_bad_uarts_before_starting(options: dict[str, object], message: str) -> None:
    with pytest.raises(HilMcuError, match=message):
        SimavrProcess(Path("x.elf"), signal_fd=5, coupling="", **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("board", "links", "pins", "message"),
    [
        ("mega2560", {"uart_ports": ["1:bt"]}, {"dev.x": "18"}, r"UART1: pin 18 is dev.x in wiring.yaml"),
        ("mega2560", {"command_uart": 2}, {"dev.x": "16"}, r"UART2: pin 16 is dev.x in wiring.yaml"),
        (
            "uno",
            {"soft_uart_ports": ["10:11:9600:bt"]},
            {"dev.x": "11"},
            r"soft_uart_ports\[0\]: pin 11 is dev.x",
        ),
        ("uno", {"command_uart": 1}, {}, r"command_uart 1: the uno has UART 0"),
        ("uno", {"uart_ports": ["0:bt"]}, {}, r"'0:bt': UART 0 is the command link \(command_port\)"),
        ("mega2560", {"uart_ports": ["1:a", "1:b"]}, {}, r"'1:b': UART 1 is listed twice"),
        (
            "uno",
            {"soft_uart_ports": ["2:3:9600:a", "3:4:9600:b"]},
            {},
            r"'3:4:9600:b': RX and TX must be two pins",
        ),
    ],
)
def test_serial_links_are_checked_against_the_board_and_the_wiring(
    board: str, links: dict[str, object], pins: dict[str, str], message: str
) -> None:
    with pytest.raises(HilMcuError, match=message):
        check_serial_pins(serial_links(board, **links), RobotWiring(board, pins, "wiring.yaml"))  # type: ignore[arg-type]


def test_serial_links_on_free_pins_pass() -> None:
    links = serial_links(
        "mega2560", command_uart=1, uart_ports=["2:gps", "3:lidar"], soft_uart_ports=["A8:A9:9600:bt"]
    )
    check_serial_pins(links, RobotWiring("mega2560", {"dev.x": "2"}, "wiring.yaml"))
    assert (links.command_uart, dict(links.uarts)) == (1, {2: "gps", 3: "lidar"})
    assert links.soft_uarts == (SoftUartSpec(62, 63, 9600, "bt"),)


def test_harness_refuses_missing_arguments() -> None:
    result = run_harness("--lockstep")
    assert result.returncode == 2
    assert "--firmware and a --uart (or --command-fd) are required" in result.stderr


def test_dead_harness_is_reported_with_its_exit_status(tmp_path: Path) -> None:
    with PtyPair() as command, PtyPair() as signal:
        process = SimavrProcess(
            tmp_path / "missing.elf",
            command_fd=command.master_fd,
            signal_fd=signal.master_fd,
            coupling=DEMO_COUPLING,
            lockstep=True,
        )
        try:
            with pytest.raises(HilMcuError, match=r"(?s)exit status 2.*not a readable AVR ELF"):
                process.run_to(cycles(0.01))
        finally:
            process.stop()


def lockstep_harness(command: PtyPair, signal: PtyPair) -> SimavrProcess:
    """The demo firmware's harness in lockstep on these two ptys (the demo coupling)."""
    return SimavrProcess(
        build_firmware(FirmwareOptions()),
        command_fd=command.master_fd,
        signal_fd=signal.master_fd,
        coupling=DEMO_COUPLING,
        lockstep=True,
    )


def test_lockstep_harness_reaches_the_cycle_asked_and_reports_it(tmp_path: Path) -> None:
    with PtyPair() as command, PtyPair() as signal:
        process = lockstep_harness(command, signal)
        try:
            process.run_to(cycles(0.2))
            stats = process.stats()
            assert stats["cycle"] == process.cycle >= cycles(0.2)
            assert stats["frames_sent"] == 40  # every 5 ms of AVR time
            assert stats["uart0_tx"] > 0  # the first telemetry round
        finally:
            process.stop()
        assert not process.running


def test_two_harnesses_run_their_steps_side_by_side_and_one_step_at_a_time_each() -> None:
    with PtyPair() as a, PtyPair() as b, PtyPair() as signal_a, PtyPair() as signal_b:
        processes = [lockstep_harness(command, signal) for command, signal in ((a, signal_a), (b, signal_b))]
        try:
            assert all(process in simavr._LOCKSTEP_HARNESSES for process in processes)  # no spin on 2 cores
            for step in range(1, 11):
                for process in processes:
                    process.start_run(cycles(step * 0.005))
                if step == 1:
                    for request in (processes[0].stats, lambda: processes[0].start_run(cycles(1.0))):
                        with pytest.raises(HilMcuError, match="'run 80000' is still under way"):
                            request()
                for process in processes:
                    process.finish_run()
                assert [process.cycle >= cycles(step * 0.005) for process in processes] == [True, True]
            processes[0].finish_run()  # none under way: returns at once
        finally:
            for process in processes:
                process.stop()
        assert not set(processes) & set(simavr._LOCKSTEP_HARNESSES)


def test_lockstep_answers_count_the_signal_links_bytes_and_every_one_reaches_the_reader() -> None:
    """The signal link's counts in each "ok": a lockstep reader waits for what the kernel still holds."""
    with PtyPair() as command, PtyPair() as signal:
        process = lockstep_harness(command, signal)
        reader = signal.user_end()
        try:
            received = 0
            for step in range(1, 21):
                process.run_to(cycles(step * 0.005))
                taken, written = process.link_bytes["signal"]
                received += len(read_rest(reader, written - received, timeout=5.0))
                assert received == written > 0  # a frame every step, all of it there to read
            assert taken == 0  # nothing was written to the harness
            assert "radio" not in process.link_bytes  # it has none
            assert process.stats()["frames_sent"] == 20
        finally:
            os.close(reader)
            process.stop()
