"""hil_robot new/check/show: every shipped robot passes and copies; bad input exits 2 naming why."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hil_bringup.robot_tool import main as hil_robot
from hil_devices.core.profile import shipped_robots

ROBOTS = Path(__file__).resolve().parents[2] / "hil_robots" / "robots"

#: A valid profile touching every check: drivers on both wheels, a sonar on a servo, an
#: encoder, two I2C parts sharing the bus pins.
BASE = """\
name: test_bot
board: uno
firmware: {sketch: sketch}
serial:
  - {uart: 0, baud: 57600, role: command}
brain: none
body: {wheel_radius: 0.033, track: 0.14, mass: 0.8, footprint: {radius: 0.09}}
devices:
  - {name: motor_left, type: l298n, pins: {ena: 5, in1: 7, in2: 8}, params: {wheel: left}}
  - {name: motor_right, type: l298n, pins: {ena: 6, in1: 12, in2: 13}, params: {wheel: right}}
  - {name: pan, type: servo, pins: {signal: 9}, pose: {x: 0.05, y: 0.0, z: 0.07}}
  - {name: sonar, type: hc_sr04, pins: {trigger: 2, echo: 4}, pose: {x: 0.08, y: 0.0, z: 0.08}, mount: pan}
  - {name: encoder_left, type: quadrature_encoder, pins: {a: A0, b: A1}, params: {wheel: left}}
  - {name: compass, type: magnetometer, pins: {sda: A4, scl: A5}}
  - {name: imu, type: mpu6050, pins: {sda: A4, scl: A5}}
"""
#: A SoftwareSerial link on pins 10 and 11 (free in BASE).
SOFT = {"brain: none": "brain: none\nsoft_serial: [{rx: 10, tx: 11, baud: 9600}]"}
MEGA = {
    "board: uno": "board: mega2560",
    "{sda: A4, scl: A5}}": "{sda: 20, scl: 21}}",
    "role: command}": "role: command}\n  - {uart: 1, baud: 9600, role: aux}",
}


@pytest.mark.parametrize(
    ("edits", "code", "words"),
    [
        ({}, 0, ["ok: ", "robot test_bot on a uno, 7 devices"]),
        (
            {"board: uno": "board: leonardo"},
            2,
            ["robot.yaml: board: 'leonardo' is not one of uno, nano, mega2560"],
        ),
        (
            {"type: l298n, pins: {ena: 5": "type: l293d, pins: {ena: 5"},
            2,
            ["devices[0].type: unknown device type 'l293d'", "the library's types: ", "hc_sr04", "l298n"],
        ),
        ({"echo: 4": "echo: 7"}, 2, ["devices[3].pins.echo: pin 7 is taken by devices[0] (motor_left.in1)"]),
        (
            {"ena: 5": "ena: 4"},
            2,
            ["devices[0].pins.ena: pin 4 has no PWM on the uno; the PWM pins: 3, 5, 6, 9, 10, 11"],
        ),
        ({"signal: 9": "signal: 20"}, 2, ["devices[2].pins.signal: 20 is not a pin of the uno"]),
        ({"signal: 9": "signal: 1"}, 2, ["devices[2].pins.signal: pin 1 is the serial link"]),
        (
            {"{ena: 5, in1: 7, in2: 8}": "{ena: 5, in1: 7}"},
            2,
            ["devices[0].pins.in2: missing", "wired (or tied)"],
        ),
        (
            {"trigger: 2, echo: 4": "trig: 2, echo: 4"},
            2,
            ["devices[3].pins.trig: device type hc_sr04 has no pin 'trig'", "its pins: trigger, echo"],
        ),
        (
            {"{ena: 5, in1: 7, in2: 8}": "{in1: 7, in2: 8}, tie: {enb: high}"},
            2,
            ["devices[0].tie.enb: device type l298n has no pin 'enb' (its pins: ena, in1, in2)"],
        ),
        (
            {"{ena: 5, in1: 7, in2: 8}": "{in1: 7, in2: 8}, tie: {ena: 5}"},
            2,
            ["devices[0].tie.ena: 5 is not one of high, low"],
        ),
        (
            {"{ena: 5, in1: 7, in2: 8}": "{ena: 5, in1: 7, in2: 8}, tie: {ena: high}"},
            2,
            ["devices[0].pins.ena: is tied (tie:) and wired"],
        ),
        (
            {"echo: 4}": "echo: 4}, tie: {echo: high}"},
            2,
            ["devices[3].tie.echo: only a pin the MCU would drive"],
        ),
        (
            {"{wheel: right}": "{wheel: left}"},
            2,
            [
                "devices: the left wheel needs exactly one driver",
                "devices[0] (motor_left), devices[1] (motor_right)",
            ],
        ),
        (
            {"params: {wheel: right}": "params: {}"},
            2,
            ["devices[1].params.wheel: missing", "one of left, right"],
        ),
        (
            {"{wheel: right}": "{wheel: middle}"},
            2,
            ["devices[1].params.wheel: 'middle' is not one of left, right"],
        ),
        (
            {"b: A1}, params: {wheel: left}": "b: A1}, params: {wheel: left, counts_per_rev: 0}"},
            2,
            ["devices[4].params.counts_per_rev: 0 is outside 1..100000"],
        ),
        (
            {"b: A1}, params: {wheel: left}": "b: A1}, params: {wheel: left, cpr: 5}"},
            2,
            [
                "devices[4].params.cpr: device type quadrature_encoder has no parameter 'cpr'",
                "counts_per_rev",
            ],
        ),
        (
            {"mount: pan": "mount: motor_left"},
            2,
            ["devices[3].mount: 'motor_left' is not a servo of this robot (servos: pan)"],
        ),
        (
            {"pose: {x: 0.08,": "pose: {x: 0.5,"},
            2,
            [
                "devices[3].pose.x: (0.5, 0) is 0.5 m from the body's centre",
                "footprint's radius + 0.2 m (0.29 m)",
            ],
        ),
        ({"pose: {x: 0.08,": "pose: {x: .nan,"}, 2, ["devices[3].pose.x: expected a finite number"]),
        ({"z: 0.08}, mount": "z: -0.1}, mount"}, 2, ["devices[3].pose.z: -0.1 m is outside 0..0.26 m"]),
        ({"baud: 57600": "baud: 57601"}, 2, ["serial[0].baud: 57601 is not a usual baud rate"]),
        ({"uart: 0": "uart: 1"}, 2, ["serial[0].uart: 1 is not a UART of the uno (0)"]),
        ({"role: command": "role: aux"}, 2, ["serial: expected exactly one UART with role command, found 0"]),
        (SOFT, 0, ["ok: "]),
        (
            {**SOFT, "tx: 11": "tx: 9"},
            2,
            ["devices[2].pins.signal: pin 9 is taken by soft_serial[0] (tx)"],
        ),
        ({**SOFT, "tx: 11": "tx: 10"}, 2, ["soft_serial[0].tx: pin 10 is taken"]),
        ({**SOFT, "rx: 10": "rx: 1"}, 2, ["soft_serial[0].rx: pin 1 is the serial"]),
        ({**SOFT, ", tx: 11": ""}, 2, ["soft_serial[0].tx: missing"]),
        (
            {**SOFT, "baud: 9600}]": "baud: 230400}]"},
            2,
            ["soft_serial[0].baud: 230400 is not a usual SoftwareSerial baud rate (300, ", ", 115200)"],
        ),
        (
            {**MEGA, **SOFT, "rx: 10": "rx: 19"},
            2,
            ["soft_serial[0].rx: pin 19 is taken by serial UART 1"],
        ),
        (
            {"sda: A4, scl: A5}}\n  - {name: imu": "sda: A3, scl: A5}}\n  - {name: imu"},
            2,
            ["devices[5].pins.sda: pin A3 is not the uno's SDA (A4)"],
        ),
        ({"name: imu": "name: compass"}, 2, ["devices[6].name: 'compass' is used twice"]),
        (
            {"{sketch: sketch}": "{sketch: nowhere}"},
            2,
            ["firmware.sketch: ", "nowhere: no such sketch folder"],
        ),
        ({"{sketch: sketch}": "{elf: sketch/sketch.ino}"}, 2, ["firmware.elf: firmware ", "not an ELF file"]),
        (
            {"{sketch: sketch}": "{sketch: sketch, elf: x.elf}"},
            2,
            ["firmware.sketch: give exactly one of sketch"],
        ),
        ({"brain: none": "brain: ros"}, 2, ["robot.yaml: brain: 'ros' is not one of control_loop, none"]),
        (
            {"brain: none": "brain: none\ntelemetry: {TL1: [left]}"},
            2,
            ["telemetry: telemetry lists are the control loop's"],
        ),
        (
            {"brain: none": "brain: control_loop\ntelemetry: {TL1: [2x]}"},
            2,
            ["robot.yaml: telemetry: TL1: field 0 ('2x') is not an identifier"],
        ),
        (
            {"brain: none": "brain: none\nwheels: 4"},
            2,
            ["top level: unknown field(s) wheels (known: name, description"],
        ),
        ({"body: {wheel_radius: 0.033, ": "body: {"}, 2, ["body.wheel_radius: missing"]),
        ({"mass: 0.8,": "mass: -0.8,"}, 2, ["body.mass: -0.8 must be above 0"]),
        (
            {"mass: 0.8,": "mass: 0.8, motor: {resistence: 3},"},
            2,
            ["body.motor.resistence: not a motor parameter (known: resistance"],
        ),
        (
            {"mass: 0.8,": "mass: 0.8, motor: {resistance: -3},"},
            2,
            ["body.motor: resistance = -3.0 must be a positive number"],
        ),
        (MEGA, 0, ["ok: ", "on a mega2560"]),
        (
            {**MEGA, "signal: 9": "signal: 18"},
            2,
            ["devices[2].pins.signal: pin 18 is taken by serial UART 1"],
        ),
        (
            {**MEGA, "a: A0, b: A1": "a: 22, b: 23"},
            0,
            [
                "warning: ",
                "pins.a: pin 22 has no interrupt on the mega2560",
                "fine if the sketch polls it",
                "ok: ",
            ],
        ),
    ],
)
def test_hil_robot_check_exits_2_naming_the_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edits: dict[str, str], code: int, words: list[str]
) -> None:
    text = BASE
    for old, new in edits.items():
        assert old in text, old
        text = text.replace(old, new)
    (tmp_path / "sketch").mkdir()
    (tmp_path / "sketch" / "sketch.ino").write_text("void setup() {}\nvoid loop() {}\n")
    (tmp_path / "robot.yaml").write_text(text)
    assert hil_robot(["check", str(tmp_path)]) == code
    out, err = capsys.readouterr()
    message = out + err
    if code:
        assert message.startswith(f"hil_robot: {tmp_path / 'robot.yaml'}: ")
        assert "Traceback" not in message
    for word in words:
        assert word in message


@pytest.mark.parametrize("robot", sorted(p.name for p in ROBOTS.iterdir() if (p / "robot.yaml").is_file()))
def test_every_shipped_robot_checks_and_shows(robot: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert hil_robot(["check", robot]) == 0
    assert f"robot {robot} on a" in capsys.readouterr().out
    assert hil_robot(["show", str(ROBOTS / robot)]) == 0
    shown = capsys.readouterr().out
    for part in ("pins (MCU pin", "signal link (id", "simulator (device", "simavr coupling:", "bridge board"):
        assert part in shown


def test_show_prints_a_tied_pin_and_the_level_coupling_of_a_plain_pin(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert hil_robot(["show", "rab_style"]) == 0
    assert "high  motor_left.ena (tied)" in capsys.readouterr().out
    assert hil_robot(["show", "line_follower"]) == 0
    shown = capsys.readouterr().out
    assert "in 1 0 1024 level 8" in shown  # IN1 on a pin without a timer: its level
    assert "in 5 0 1024 pwm 11" in shown  # IN4 on a timer pin: its duty


def test_show_prints_the_serial_links(capsys: pytest.CaptureFixture[str]) -> None:
    assert hil_robot(["show", "bluetooth_car"]) == 0
    shown = capsys.readouterr().out
    assert "command UART 0 at 9600 baud, auto reset: on" in shown
    assert "SoftwareSerial RX 2 TX 3 at 9600 baud" in shown
    assert hil_robot(["show", "mega_pwm_dir_pid"]) == 0
    shown = capsys.readouterr().out
    assert "command UART 1 at 57600 baud, auto reset: off" in shown
    assert "UART 0 at 115200 baud (aux, a pty of its own)" in shown


def test_an_unknown_robot_exits_2_listing_the_shipped_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert hil_robot(["check", "atlantis"]) == 2
    err = capsys.readouterr().err
    assert "hil_robot: robot 'atlantis': no such file or folder, nor a shipped robot (shipped: " in err
    assert "demo" in err


def test_list_prints_every_shipped_robot_with_its_board(capsys: pytest.CaptureFixture[str]) -> None:
    assert hil_robot(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == shipped_robots()
    assert any(line.split()[:2] == ["mega_pwm_dir_pid", "mega2560"] for line in lines)


def test_list_into_a_reader_that_leaves_early_exits_0_without_a_traceback() -> None:
    result = subprocess.run(
        f"{sys.executable} -m hil_bringup.robot_tool list | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.stdout.split()[0] == shipped_robots()[0]
    assert "Traceback" not in result.stderr, result.stderr


def test_new_makes_a_robot_folder_that_checks_and_says_what_is_in_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert hil_robot(["new", str(tmp_path / "my_car"), "--from", "bluetooth_car"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"made {tmp_path / 'my_car'} from bluetooth_car: robot my_car on a uno, ")
    assert "firmware/my_car/" in out and "my_car.ino" in out
    assert f"hil_robot check {tmp_path / 'my_car'}" in out
    assert hil_robot(["check", str(tmp_path / "my_car")]) == 0
    assert "robot my_car on a uno" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["new", "{tmp}/taken", "--from", "demo"], "hil_robot: {tmp}/taken: already exists"),
        (["new", "{tmp}/my-car", "--from", "demo"], "'my-car' is not a robot name"),
        (["new", "{tmp}/my_car", "--from", "atlantis"], "robot 'atlantis': no such file or folder"),
    ],
)
def test_new_that_cannot_be_made_exits_2_naming_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    (tmp_path / "taken").mkdir()
    assert hil_robot([arg.format(tmp=tmp_path) for arg in args]) == 2
    err = capsys.readouterr().err
    assert message.format(tmp=tmp_path) in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
