"""Scenario files: reading them (errors name the field), the timeline, the checks, JUnit XML."""

from __future__ import annotations

import math
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hil_common.errors import HilError
from hil_testing.core.checks import (
    BoardsDown,
    Bounded,
    Check,
    FailsafeTrips,
    GotoCheck,
    Inside,
    Judged,
    LedShows,
    NoFailsafe,
    Observation,
    Region,
    RttBelow,
    SerialExpect,
    SerialForbid,
    SerialText,
    TaskDone,
    ToneHeard,
    Verdict,
    compile_pattern,
)
from hil_testing.core.goto import GotoGoal, GotoResult
from hil_testing.core.junit import CaseResult, SuiteResult, junit_xml, write_junit
from hil_testing.core.scenario import (
    CmdVel,
    EndCmdVel,
    EndFault,
    Fault,
    Goto,
    SerialSend,
    SetDevice,
    StationCommand,
    Timeline,
    load_scenario,
    resolve_world,
)

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
ROBOTS = Path(__file__).resolve().parents[2] / "hil_robots" / "robots"
MINIMAL = "duration: 5\nassertions:\n  - {no_failsafe: {}}\n"
REST = MINIMAL.split("\n", 1)[1]
ASSERT = "duration: 5\nassertions:\n  - "
#: The header of an AVR program as avr-gcc links it (32-bit, little endian, ET_EXEC, EM_AVR).
AVR_ELF = (
    b"\x7fELF\x01\x01\x01" + bytes(9) + (2).to_bytes(2, "little") + (83).to_bytes(2, "little") + bytes(100)
)


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def obs(t: float, **fields: Any) -> Observation:
    values: dict[str, Any] = {
        "x": 0.0,
        "y": 0.0,
        "yaw": 0.0,
        "v": 0.0,
        "w": 0.0,
        "boards_down": 0,
        "boards": 6,
    }
    values.update(fields)
    return Observation(t=t, **values)


# --- the shipped suite --------------------------------------------------------------------------


def test_the_demo_suite_has_at_least_five_scenarios_with_the_firmware_among_them() -> None:
    scenarios = [load_scenario(path) for path in sorted(SCENARIOS.glob("*.yaml"))]
    assert len(scenarios) >= 5
    assert len({s.name for s in scenarios}) == len(scenarios)
    assert any(s.mcu == "simavr" for s in scenarios)
    assert any(s.fault_proxies and s.checked for s in scenarios)


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_shipped_scenario_reads_and_makes_its_checks(path: Path) -> None:
    scenario = load_scenario(path)
    assert scenario.name == path.stem
    assert scenario.description
    checks = scenario.checks()
    assert len(checks) == len(scenario.assertions)
    assert all(check.label for check in checks)


def test_the_readme_example_scenario_reads(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[4] / "README.md").read_text()
    start = readme.index("description: teleop, then silence")
    scenario = load_scenario(write(tmp_path, readme[start : readme.index("```", start)]))
    assert scenario.checked and scenario.fault_proxies
    assert len(scenario.checks()) == 7
    assert len(scenario.events) == 4


# --- reading ------------------------------------------------------------------------------------


def test_minimal_scenario_takes_the_defaults(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, MINIMAL, "minimal.yaml"))
    assert scenario.name == "minimal"
    assert (scenario.mcu, scenario.behaviour, scenario.world, scenario.start) == (
        "virtual",
        "manual",
        "",
        None,
    )
    assert not scenario.fault_proxies


def test_full_scenario_reads_every_field(tmp_path: Path) -> None:
    (tmp_path / "fw.elf").write_bytes(AVR_ELF)
    text = """
name: everything
description: all fields
world: demo
start: {x: 0.5, y: -0.5, yaw: 1.0}
mcu: simavr
physics: mujoco
firmware: fw.elf
behaviour: boards
checked: true
seed: 3
faults: {drop: 0.001, corrupt: 0.002}
duration: 30
timeline:
  - {at: 0.0, cmd_vel: {linear: 0.2, for: 1.0}}
  - {at: 2.0, command: STOP}
  - {at: 3.0, goto: {x: 1.0, y: 0.0, timeout: 5}}
  - {at: 4.0, fault: {link: command, drop: 0.1, for: 2}}
assertions:
  - {boards_down: {count: 2, by: 30}}
  - {task_done: {task: light, by: 30}}
  - {inside: {x: [0, 1], y: [-1, 1], at: 3}}
  - {inside: {center: [0, 0], radius: 1, during: [0, 3]}}
  - {no_failsafe: {reasons: [mcu], during: [0, 10]}}
  - {failsafe: {reason: cmd_vel, between: [1, 2]}}
  - {rtt_below: {link: mcu, max_ms: 40, statistic: p99}}
  - {telemetry: {list: TL2, field: heading_deg, min: 0, max: 360}}
  - {state: {field: v, max: 0.5}}
"""
    scenario = load_scenario(write(tmp_path, text))
    assert scenario.world.endswith("demo.yaml")
    assert scenario.physics == "mujoco"
    assert scenario.start == (0.5, -0.5, 1.0)
    assert scenario.firmware == str(tmp_path / "fw.elf")
    assert scenario.faults == (0.001, 0.002)
    assert scenario.fault_proxies
    assert scenario.events == (
        CmdVel(0.0, 0.2, 0.0, 1.0),
        StationCommand(2.0, "STOP"),
        Goto(3.0, GotoGoal(1.0, 0.0, 0.0, timeout=5.0)),
        Fault(4.0, "command", drop=0.1, seconds=2.0),
    )
    assert len(scenario.checks()) == 9


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("assertions: [{no_failsafe: {}}]\n", "duration: missing"),
        ("duration: 5\n", "assertions: expected a non-empty list"),
        ("duration: 5\nspeed: 3\n" + MINIMAL.split("\n", 1)[1], "unknown field(s) speed"),
        ("duration: 5\nmcu: arduino\n" + MINIMAL.split("\n", 1)[1], "mcu: 'arduino' is not one of"),
        ("duration: 5\nworld: moon\n" + MINIMAL.split("\n", 1)[1], "world: 'moon' is not a world of hil_sim"),
        ("duration: 5\nworld: moon.yaml\n" + MINIMAL.split("\n", 1)[1], "world: no file"),
        ("duration: 5\nfirmware: x.elf\n" + MINIMAL.split("\n", 1)[1], "firmware: is for mcu: simavr"),
        (
            "duration: 5\nfaults: {drop: 2}\n" + MINIMAL.split("\n", 1)[1],
            "faults.drop: 2.0 is not a probability",
        ),
        ("duration: 5\nstart: {x: fast}\n" + MINIMAL.split("\n", 1)[1], "start.x: expected a finite number"),
        (
            "duration: 5\ntimeline:\n  - {at: 1, cmd_vel: {linear: fast}}\n" + MINIMAL.split("\n", 1)[1],
            "timeline[0].cmd_vel.linear: expected a finite number, got 'fast'",
        ),
        (
            "duration: 5\ntimeline:\n  - {at: 1, cmd_vel: {}, command: GO}\n" + MINIMAL.split("\n", 1)[1],
            "timeline[0]: expected exactly one of",
        ),
        (
            "duration: 5\ntimeline:\n  - {at: 9, command: GO}\n" + MINIMAL.split("\n", 1)[1],
            "timeline[0].at = 9 is after the duration 5",
        ),
        (
            "duration: 5\ntimeline:\n  - {at: 1, goto: {x: 1, y: 0, timeout: -1}}\n"
            + MINIMAL.split("\n", 1)[1],
            "timeline[0].goto: goto: timeout = -1.0",
        ),
        (
            "duration: 5\ntimeline:\n  - {at: 1, fault: {link: radio}}\n" + MINIMAL.split("\n", 1)[1],
            "timeline[0].fault.link: 'radio' is not one of",
        ),
        (
            "duration: 5\ntimeline:\n  - {at: 1, goto: {x: 1, y: 0, timeout: 5}}\n"
            + MINIMAL.split("\n", 1)[1],
            "timeline[0].goto: at 1 s + timeout 5 s + settle 0.3 s ends after the duration 5 s",
        ),
        ("duration: 5\nassertions:\n  - {boards_down: {by: 9}}\n", "assertions[0].boards_down: looks at 9 s"),
        ("duration: 5\nassertions:\n  - {inside: {x: [1, 0], y: [0, 1], at: 1}}\n", "assertions[0].inside.x"),
        (
            "duration: 5\nassertions:\n  - {inside: {x: [0, 1], y: [0, 1]}}\n",
            "give exactly one of at, during, by",
        ),
        ("duration: 5\nassertions:\n  - {state: {field: speed, max: 1}}\n", "assertions[0].state.field"),
        ("duration: 5\nassertions:\n  - {state: {field: v}}\n", "give min, max or both"),
        (
            "duration: 5\nassertions:\n  - {no_failsafe: {reasons: [radio]}}\n",
            "assertions[0].no_failsafe.reasons",
        ),
        ("duration: 5\nassertions:\n  - {failsafe: {reason: mcu}}\n", "failsafe.between: missing"),
        ("duration: 5\nassertions:\n  - {rtt_below: {link: station, max_ms: 1}}\n", "rtt_below.link"),
        (
            "duration: 5\nassertions:\n  - {teleport: {}}\n",
            "assertions[0]: expected exactly one of boards_down",
        ),
        ("- just a list\n", "expected a mapping"),
    ],
)
def test_a_bad_scenario_is_refused_naming_the_file_and_the_field(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(HilError) as info:
        load_scenario(path)
    assert str(path) in str(info.value)
    assert message in str(info.value)


# fmt: off
#: (file text, words after "<file>: ") of files a run would refuse, or judge only vacuously.
UNRUNNABLE = [
    # YAML as users write it (issue 21, item 11)
    ("", "empty file, expected a mapping"),
    ("duration: 5\nduration: 6\n" + REST, "line 2: duplicate key 'duration' (first on line 1)"),
    ("duration: 1e300\n" + REST, "duration: 1e+300 is above 86400"),
    ("duration: 1e-9\n" + REST, "duration: 1e-09 is below 0.1"),
    # what the run would refuse (item 7)
    ("world: empty\nstart: {x: 50, y: 0}\n" + MINIMAL, "start: (50, 0) is outside the 10 m x 10 m"),
    ("world: demo\nstart: {x: 1.3, y: -1.2}\n" + MINIMAL, "start: (1.3, -1.2) is within 0.1 m of box 0"),
    ("start: {x: 0.6, y: 0.0}\n" + MINIMAL, "start: (0.6, 0) is within 0.1 m of board 0 at (0.6, 0)"),
    ("start: {yaw: 1e300}\n" + MINIMAL, "start: yaw 1e+300 is outside -6.283..6.283 rad"),
    ("mcu: simavr\nfirmware: s.yaml\n" + MINIMAL, "firmware: firmware {dir}/s.yaml: not an ELF file"),
    ("robot: nope\n" + MINIMAL, "robot: robot 'nope': no such file or folder, nor a shipped robot (shipped:"),
    ("robot: demo,mine\n" + MINIMAL, "robot: robot 'mine': no such file or folder"),
    ("robot: .\n" + MINIMAL, "robot: {dir}: no robot.yaml in this folder"),
    ("brain: thinking\n" + MINIMAL, "brain: 'thinking' is not one of profile, control_loop, none"),
    # assertions the run could only fail, or pass vacuously (item 9)
    (ASSERT + "{telemetry: {list: TL9, field: x, min: 0}}\n", "assertions[0].telemetry.list: 'TL9' is not a"),
    (ASSERT + "{telemetry: {list: TL2, field: v, min: 0}}\n", "assertions[0].telemetry.field: 'v' is not a"),
    (ASSERT + "{boards_down: {count: 100, by: 5}}\n", "assertions[0].boards_down.count: 100 boards, but the"),
    ("world: empty\n" + ASSERT + "{boards_down: {by: 5}}\n", "assertions[0].boards_down.count: missing, and"),
]
# fmt: on


@pytest.mark.parametrize(("text", "message"), UNRUNNABLE)
def test_a_scenario_a_run_would_refuse_is_refused_when_read(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(HilError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}: {message.format(dir=tmp_path)}")


def test_telemetry_assertions_name_the_known_lists_and_fields(tmp_path: Path) -> None:
    for text, known in (("TL9, field: x", "(known: TL1, TL2)"), ("TL1, field: v", "(known: right, left)")):
        with pytest.raises(HilError, match=re.escape(known)):
            load_scenario(write(tmp_path, ASSERT + f"{{telemetry: {{list: {text}, min: 0}}}}\n"))


def test_a_scenarios_robot_folder_is_relative_to_the_file(tmp_path: Path) -> None:
    robot = tmp_path / "robots" / "mine"
    shutil.copytree(ROBOTS / "line_follower", robot)
    scenario = load_scenario(write(tmp_path, "robot: robots/mine\n" + MINIMAL))
    assert scenario.run["robot"] == str((robot / "robot.yaml").resolve())
    assert (
        load_scenario(write(tmp_path, "robot: demo,rab_style\n" + MINIMAL)).run["robot"] == "demo,rab_style"
    )


def test_world_names_and_paths_resolve(tmp_path: Path) -> None:
    assert resolve_world("", base=tmp_path, source="x") == ""
    assert resolve_world("demo", base=tmp_path, source="x").endswith("worlds/demo.yaml")
    (tmp_path / "mine.yaml").write_text("arena: {width: 2, height: 2}\n")
    assert resolve_world("mine.yaml", base=tmp_path, source="x") == str(tmp_path / "mine.yaml")


# --- steps for firmware on its own protocol, and for the devices a user sets ---------------------

#: A robot with every device a user sets or checks (a Nano: A7), brain none: the scenario owns UART 0.
GADGETS = """\
name: gadgets
board: nano
firmware: {sketch: fw}
serial: [{uart: 0, baud: 9600, role: command}]
brain: none
body: {wheel_radius: 0.033, track: 0.14, mass: 0.8, footprint: {radius: 0.09}, height: 0.06}
devices:
  - {name: motor_left, type: l298n, pins: {ena: 5, in1: 7, in2: 8}, params: {wheel: left}}
  - {name: motor_right, type: l298n, pins: {ena: 6, in1: 9, in2: 10}, params: {wheel: right}}
  - {name: start, type: push_button, pins: {contact: 2}}
  - {name: mode, type: analog_input, pins: {out: A7}}
  - {name: remote, type: ir_receiver_nec, pins: {out: 3}}
  - {name: bumper, type: limit_switch, pins: {pressed: 12}, pose: {x: 0.08, y: 0.0, z: 0.04}}
  - {name: buzzer, type: buzzer, pins: {signal: 4}}
  - {name: strip, type: ws2812, pins: {din: 11}}
"""
GADGET = "robot: gadgets\nworld: empty\nduration: 5\n"
STEP = GADGET + "assertions: [{no_failsafe: {}}]\ntimeline:\n  - "
CHECK = GADGET + "assertions:\n  - "
RAB = "robot: rab_style\nmcu: simavr\nworld: empty\nduration: 5\n"


@pytest.fixture
def gadgets(tmp_path: Path) -> Path:
    """The gadgets robot's folder beside the scenario files (``robot: gadgets``)."""
    folder = tmp_path / "gadgets"
    (folder / "fw").mkdir(parents=True)
    (folder / "fw" / "fw.ino").write_text("void setup() {}\nvoid loop() {}\n")
    (folder / "robot.yaml").write_text(GADGETS)
    return folder


def test_serial_and_set_steps_and_robot_assertions_read(tmp_path: Path, gadgets: Path) -> None:
    text = GADGET + (
        "timeline:\n"
        "  - {at: 0.5, set: {device: start, value: 1, for: 0.2}}\n"
        "  - {at: 1, set: {device: mode, value: 1.2}}\n"
        "  - {at: 1.5, set: {device: remote, value: {address: 0, command: 69}}}\n"
        "  - {at: 1.8, set: {device: bumper, value: 1, for: 0.2}}\n"
        '  - {at: 2, serial: {send: "o 100 100\\r"}}\n'
        "assertions:\n"
        "  - {serial: {expect: '^OK$', by: 2.5}}\n"
        "  - {serial: {forbid: Invalid, during: [2, 5]}}\n"
        "  - {pin: {name: motor_left.enable, min: 0, max: 255, during: [1, 2]}}\n"
        "  - {pin: {name: motor_left.ena, min: 0, max: 255, during: [1, 2]}}\n"
        "  - {sensor: {device: bumper, signal: pressed, max: 0, during: [0, 1]}}\n"
        "  - {tone: {device: buzzer, frequency: [400, 500], duration: [0.1, 0.3]}}\n"
        "  - {led: {device: strip, index: 1, colour: [255, 0, 0], tolerance: 2, by: 3}}\n"
    )
    scenario = load_scenario(write(tmp_path, text))
    assert scenario.events == (
        SetDevice(0.5, "start", 1.0, 0.2),
        SetDevice(1.0, "mode", 1.2),
        SetDevice(1.5, "remote", {"address": 0.0, "command": 69.0}),
        SetDevice(1.8, "bumper", 1.0, 0.2, "pressed"),
        SerialSend(2.0, b"o 100 100\r", 0),
    )
    checks = scenario.checks()
    assert [c.label for c in checks] == [
        "serial shows /^OK$/ by 2.5 s",
        "serial never shows /Invalid/ during [2, 5] s",
        "pin motor_left.enable in [0, 255] during [1, 2] s",
        "pin motor_left.ena in [0, 255] during [1, 2] s",
        "sensor bumper.pressed in [-inf, 0] during [0, 1] s",
        "buzzer sounds 400..500 Hz for 0.1..0.3 s over the run",
        "strip[1] shows (255, 0, 0) +-2 by 3 s",
    ]
    assert checks[2].reads == checks[3].reads == ("input:motor_left.enable",)  # type: ignore[attr-defined]
    assert scenario.uarts == (0,)


# fmt: off
#: (scenario text, words after "<file>: "): a bad step or robot assertion names its field.
BAD_STEPS = [
    (RAB + "timeline: [{at: 1, serial: {send: ''}}]\n" + REST, "timeline[0].serial.send: empty"),
    (RAB + "timeline: [{at: 1, serial: {sned: e}}]\n" + REST, "timeline[0].serial: unknown field(s) sned"),
    (RAB + "timeline: [{at: 1, serial: {send: e, uart: 3}}]\n" + REST,
     "timeline[0].serial.uart: 3 is not a UART of robot rab_style (its UARTs: 0 (command))"),
    (RAB + "timeline: [{at: 1, serial: {send: '€'}}]\n" + REST,
     "timeline[0].serial.send: one byte a character"),
    ("timeline: [{at: 1, serial: {send: e}}]\n" + MINIMAL,
     "timeline[0].serial.uart: UART 0 is the command UART, which the control loop owns"),
    (RAB + "timeline: [{at: 1, serial: e}]\n" + REST, "timeline[0].serial: expected a mapping"),
    (RAB + "timeline: [{at: 9, serial: {send: e}}]\n" + REST, "timeline[0].at = 9 is after the duration 5"),
    (STEP + "{at: 1, set: {device: nope, value: 1}}\n",
     "timeline[0].set.device: robot gadgets has no device 'nope' (its devices: motor_left"),
    (STEP + "{at: 1, set: {device: start, valu: 1}}\n", "timeline[0].set: unknown field(s) valu"),
    (STEP + "{at: 1, set: {device: start}}\n", "timeline[0].set.value: missing"),
    (STEP + "{at: 1, set: {device: start, value: 1, for: 0}}\n", "timeline[0].set.for: 0.0: a hold lasts"),
    (STEP + "{at: 1, set: {device: start, value: 1, for: -1}}\n", "timeline[0].set.for: -1 is below 0"),
    (STEP + "{at: 1, set: {device: start, value: on}}\n", "timeline[0].set.value:"),
    (STEP + "{at: 1, set: {device: bumper, value: 7}}\n",
     "timeline[0].set.value: 7 is outside bumper.pressed"),
    (STEP + "{at: 1, set: {device: bumper, value: 1, signal: x}}\n", "timeline[0].set.signal:"),
    (STEP + "{at: 1, set: {device: remote, value: {address: 0, command: 1}, for: 1}}\n",
     "timeline[0].set.for: an IR remote's press is an event"),
    (STEP + "{at: 1, set: {device: buzzer, value: 1}}\n", "timeline[0].set.value:"),
    (RAB + "assertions: [{serial: {expect: '(', by: 1}}]\n",
     "assertions[0].serial.expect: not a regular expression"),
    (RAB + "assertions: [{serial: {expect: '', by: 1}}]\n", "assertions[0].serial.expect: empty pattern"),
    (RAB + "assertions: [{serial: {expect: OK}}]\n", "assertions[0].serial: give by or during (got none)"),
    (RAB + "assertions: [{serial: {expect: OK, by: 9}}]\n", "assertions[0].serial: looks at 9 s, after the"),
    (RAB + "assertions: [{serial: {expect: OK, forbid: x, by: 1}}]\n",
     "assertions[0].serial: expected exactly one of expect, forbid"),
    (RAB + "assertions: [{serial: {forbid: x, by: 1}}]\n", "assertions[0].serial: unknown field(s) by"),
    (RAB + "assertions: [{pin: {name: motor_left.enable, max: 1}}]\n",
     "assertions[0].pin.name: 'motor_left.enable' is tied in the profile"),
    (RAB + "assertions: [{pin: {name: motor_left.in1}}]\n", "assertions[0].pin: give min, max or both"),
    (CHECK + "{pin: {name: motor_left.speed, max: 1}}\n",
     "assertions[0].pin.name: 'motor_left.speed': not a signal the MCU drives on the link (those: motor_l"),
    (CHECK + "{pin: {name: wheel, max: 1}}\n",
     "assertions[0].pin.name: 'wheel' is not <device>.<signal or pin>"),
    (CHECK + "{sensor: {device: sonar, signal: distance, min: 0}}\n",
     "assertions[0].sensor.device: robot gadgets has no device 'sonar'"),
    (CHECK + "{sensor: {device: bumper, signal: bogus, min: 0}}\n",
     "assertions[0].sensor.signal: 'bogus' is not an output of bumper"),
    (CHECK + "{tone: {device: bumper, frequency: [1, 2]}}\n",
     "assertions[0].tone.device: bumper is a bumper, not a buzzer"),
    (CHECK + "{tone: {device: buzzer}}\n", "assertions[0].tone.frequency: expected [low, high] Hz"),
    (CHECK + "{led: {device: strip, index: 8, colour: [0, 0, 0], by: 1}}\n",
     "assertions[0].led.index: 8: strip has LEDs 0..7"),
    (CHECK + "{led: {device: strip, colour: [0, 0, 256], by: 1}}\n",
     "assertions[0].led.colour: expected [r, g, b], each 0..255"),
    (CHECK + "{led: {device: strip, colour: [0, 0, 0]}}\n", "assertions[0].led: give during or by"),
]
# fmt: on


@pytest.mark.parametrize(("text", "message"), BAD_STEPS)
def test_a_bad_step_or_robot_assertion_is_refused_naming_the_file_and_the_field(
    tmp_path: Path, gadgets: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(HilError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}: {message}"), str(info.value)


def serial_obs(t: float, text: str = "", **values: float) -> Observation:
    return obs(t, serial={0: text} if text else {}, values=values)


def test_serial_text_makes_line_ends_newlines_across_arrivals() -> None:
    text = SerialText()
    for chunk in ("OK\r", "\n12 ", "34\r", "ready\r\n"):
        text.add(chunk)
    assert text.text == "OK\n12 34\nready\n"
    found = text.search(compile_pattern(r"^\d+ \d+$"))  # it came in two pieces
    assert found is not None and found.group(0) == "12 34"


def test_serial_expect_matches_across_periods_in_its_window_only() -> None:
    check = SerialExpect(label="e", pattern=compile_pattern(r"^12 34$"), uart=0, during=(1.0, 2.0))
    check.observe(serial_obs(0.5, "12 34\r\n"))  # before the window: not taken
    check.observe(serial_obs(1.0, "12 "))
    assert not check.decided()
    check.observe(serial_obs(1.1, "34\r\n"))
    assert check.decided() and check.verdict(serial_obs(1.1)).passed
    assert check.verdict(serial_obs(1.1)).detail == "'12 34' at 1.100 s"
    late = SerialExpect(label="e", pattern=compile_pattern("OK"), uart=0, during=(0.0, 1.0))
    late.observe(serial_obs(0.5, "no\r\n"))
    late.observe(serial_obs(1.5, "OK\r\n"))
    assert late.decided() and late.verdict(serial_obs(1.5)) == Verdict(
        False, "no match; the last text: 'no\\n'"
    )


def test_serial_forbid_fails_at_the_forbidden_text_and_passes_without_it() -> None:
    check = SerialForbid(label="f", pattern=compile_pattern("Invalid"), uart=0, during=None)
    check.observe(serial_obs(0.5, "OK\r\n"))
    assert not check.decided()
    check.observe(serial_obs(0.6, "Invalid Command\r\n"))
    assert check.decided() and check.verdict(serial_obs(0.6)) == Verdict(False, "'Invalid' at 0.600 s")
    quiet = SerialForbid(label="f", pattern=compile_pattern("Invalid"), uart=0, during=(0.0, 1.0))
    quiet.observe(serial_obs(1.5, "Invalid\r\n"))  # after its window
    assert quiet.decided() and quiet.verdict(serial_obs(1.5)).passed


def buzzing(check: Check, frequencies: list[tuple[float, float]]) -> None:
    for t, hz in frequencies:
        check.observe(obs(t, values={"input:buzzer.frequency": hz}))


def test_a_tone_is_judged_by_its_frequency_and_duration_and_reported() -> None:
    tones = [(0.0, 0.0), (0.5, 440.0), (0.6, 442.0), (0.7, 440.0), (0.8, 0.0), (1.0, 1000.0), (1.5, 0.0)]
    check = ToneHeard(label="t", read="input:buzzer.frequency", frequency=(430, 450), duration=(0.25, 0.35))
    buzzing(check, tones)
    assert check.decided() and check.verdict(obs(1.5)) == Verdict(True, "440 Hz from 0.500 s for 0.300 s")
    assert [e.text for e in check.events()] == ["440 Hz", "1000 Hz"]
    assert check.series()[0].unit == "Hz" and list(check.series()[0].values) == [t[1] for t in tones]
    short = ToneHeard(label="t", read="input:buzzer.frequency", frequency=(900, 1100), duration=(1.0, 2.0))
    buzzing(short, tones)
    assert not short.verdict(obs(1.5)).passed
    assert (
        short.verdict(obs(1.5)).detail == "tones: 440 Hz at 0.50 s for 0.300 s, 1000 Hz at 1.00 s for 0.500 s"
    )


def test_an_led_colour_is_judged_by_a_deadline_or_throughout_a_window() -> None:
    channels = ("input:strip.led1_r", "input:strip.led1_g", "input:strip.led1_b")

    def shown(t: float, rgb: tuple[float, float, float]) -> Observation:
        return obs(t, values=dict(zip(channels, rgb, strict=True)))

    by = LedShows(label="l", channels=channels, colour=(255.0, 0.0, 0.0), tolerance=2.0, by=1.0)
    by.observe(shown(0.5, (0, 0, 0)))
    assert not by.decided()
    by.observe(shown(0.9, (254, 1, 0)))
    assert by.decided() and by.verdict(shown(0.9, (0, 0, 0))) == Verdict(True, "at 0.900 s")
    during = LedShows(label="l", channels=channels, colour=(0.0, 0.0, 255.0), during=(1.0, 2.0))
    during.observe(shown(1.0, (0, 0, 255)))
    during.observe(shown(1.5, (0, 10, 255)))
    assert during.decided() and during.verdict(shown(1.5, (0, 0, 0))) == Verdict(
        False, "(0, 10, 255) at 1.500 s"
    )
    assert [(e.start, e.text) for e in during.events()] == [(1.0, "(0, 0, 255)"), (1.5, "(0, 10, 255)")]


def test_a_pin_or_sensor_assertion_bounds_the_value_it_reads() -> None:
    check = Bounded(label="p", minimum=0, maximum=100, during=(1.0, 2.0), read="input:motor_left.enable")
    for t, duty in ((0.5, 255.0), (1.0, 80.0), (1.5, 120.0)):
        check.observe(obs(t, values={"input:motor_left.enable": duty}))
    assert check.verdict(obs(1.5)) == Verdict(False, "120 at 1.50 s")
    assert check.series()[0].name == "input:motor_left.enable"


# --- the timeline -------------------------------------------------------------------------------


def test_timeline_hands_out_actions_in_time_order_with_segment_ends() -> None:
    events = [
        Fault(1.0, "both", drop=0.1, seconds=2.0),
        CmdVel(0.0, 0.2, 0.0, 1.0),
        CmdVel(1.0, 0.1, 0.0),
        StationCommand(0.5, "STOP"),
    ]
    timeline = Timeline(events)
    assert timeline.due(0.0) == [(1, events[1])]
    assert timeline.due(0.7) == [(3, events[3])]
    # At 1.0 the first segment's end comes before the next segment and the fault begin.
    assert timeline.due(1.0) == [(1, EndCmdVel(1.0, 1)), (0, events[0]), (2, events[2])]
    assert timeline.through  # only the fault's end is left
    assert timeline.due(5.0) == [(0, EndFault(3.0, "both", 0))]
    assert timeline.due(6.0) == []


# --- the checks ---------------------------------------------------------------------------------


def test_boards_down_passes_at_the_first_moment_and_fails_past_its_deadline() -> None:
    check = BoardsDown(label="all", by=10.0)
    check.observe(obs(1.0, boards_down=5))
    assert not check.decided()
    check.observe(obs(2.0, boards_down=6))
    assert check.decided()
    assert check.verdict(obs(3.0)).detail == "at 2.00 s"
    late = BoardsDown(label="two", by=1.0, count=2)
    late.observe(obs(1.5, boards_down=3))
    assert late.decided()
    verdict = late.verdict(obs(1.5))
    assert not verdict.passed
    assert "0 of 6 down" in verdict.detail


def test_inside_at_a_moment_during_a_window_and_by_a_deadline() -> None:
    box = Region(x=(0.0, 1.0), y=(-0.1, 0.1))
    at = Inside(label="at", region=box, at=2.0)
    during = Inside(label="during", region=box, during=(1.0, 2.0))
    by = Inside(label="by", region=Region(center=(1.0, 0.0), radius=0.2), by=3.0)
    for t, x in ((0.5, -1.0), (1.0, 0.2), (1.5, 0.5), (2.0, 0.9), (2.5, 1.2)):
        for check in (at, during, by):
            check.observe(obs(t, x=x))
    assert at.verdict(obs(2.5)).passed
    assert during.verdict(obs(2.5)).passed
    assert by.verdict(obs(2.5)).passed
    left = Inside(label="left", region=box, during=(0.0, 2.0))
    left.observe(obs(0.5, y=0.5))
    assert left.decided()
    assert "left it" in left.verdict(obs(0.5)).detail


def test_bounded_telemetry_needs_samples_and_names_the_first_value_out_of_bounds() -> None:
    check = Bounded(
        label="h", minimum=0.0, maximum=360.0, during=(1.0, 3.0), telemetry=("TL2", "heading_deg")
    )
    check.observe(obs(0.5, telemetry={"TL2": {"heading_deg": 400.0}}))  # before the window
    check.observe(obs(1.5))  # no telemetry yet
    assert not check.verdict(obs(1.5)).passed
    check.observe(obs(2.0, telemetry={"TL2": {"heading_deg": 10.0}}))
    assert check.verdict(obs(2.0)).passed
    check.observe(obs(2.5, telemetry={"TL2": {"heading_deg": -1.0}}))
    verdict = check.verdict(obs(2.5))
    assert not verdict.passed
    assert verdict.detail == "-1 at 2.50 s"


def test_failsafe_trip_must_begin_inside_its_window() -> None:
    check = FailsafeTrips(label="f", reason="cmd_vel", between=(2.0, 2.1))
    check.observe(obs(1.0, failsafes=frozenset({"cmd_vel"})))  # an earlier trip
    check.observe(obs(1.5))
    check.observe(obs(2.05, failsafes=frozenset({"cmd_vel"})))
    assert check.decided()
    assert check.verdict(obs(2.05)).detail == "tripped at 2.05 s"
    never = FailsafeTrips(label="n", reason="mcu", between=(0.0, 1.0))
    never.observe(obs(1.5))
    assert never.decided()
    assert never.verdict(obs(1.5)).detail == "trips at: never s"


def test_no_failsafe_over_the_run_is_about_the_whole_duration_and_settles_early_only_by_failing() -> None:
    check = NoFailsafe(label="n", reasons=("mcu",), during=None)
    assert check.window(20.0) == (0.0, 20.0)
    check.observe(obs(1.0, failsafes=frozenset({"cmd_vel"})))
    assert not check.decided()
    assert check.verdict(obs(1.0)).passed
    check.observe(obs(2.0, failsafes=frozenset({"mcu"})))
    assert check.decided()
    assert check.verdict(obs(2.0)).detail == "mcu failsafe at 2.00 s"


def no_mcu_failsafe() -> Check:
    return NoFailsafe(label="n", reasons=("mcu",), during=None)


def boards_by_10() -> Check:
    return BoardsDown(label="b", by=10.0)


def inside_at_4() -> Check:
    return Inside(label="i", region=Region(x=(-1.0, 1.0), y=(-1.0, 1.0)), at=4.0)


def rtt() -> Check:
    return RttBelow(label="r", link="mcu", max_ms=40.0, statistic="max")


def goto_1_to_4() -> Check:
    return GotoCheck(label="g", at=1.0, until=4.0)


MCU = frozenset({"mcu"})
EVERY_HALF_SECOND = [(t / 2, None, 0) for t in range(41)]

# fmt: off
#: (check, observations (t, failsafes, boards down), run duration, (verdict, span, words in the detail))
JUDGED = [
    # The example: a check over the run, and the run ended at 0 s of 20: an error, never a pass.
    (no_mcu_failsafe, [(0.0, None, 0)], 20.0, ("ERROR", (0.0, 0.0), "ended at 0.00 s, it needs [0, 20] s")),
    (no_mcu_failsafe, EVERY_HALF_SECOND, 20.0, ("PASS", (0.0, 20.0), "none")),
    (no_mcu_failsafe, [(1.0, None, 0), (2.0, MCU, 0)], 20.0, ("FAIL", (0.0, 2.0), "mcu failsafe at 2.00 s")),
    (boards_by_10, [(1.0, None, 5), (2.0, None, 6)], 20.0, ("PASS", (0.0, 2.0), "at 2.00 s")),
    (boards_by_10, [(5.0, None, 5)], 20.0, ("ERROR", (0.0, 5.0), "it needs [0, 10] s")),
    (boards_by_10, [(9.0, None, 0), (10.5, None, 0)], 20.0, ("FAIL", (0.0, 10.0), "not by 10 s")),
    (inside_at_4, [(3.0, None, 0)], 5.0, ("ERROR", None, "it needs [4, 4] s")),
    (inside_at_4, [(4.0, None, 0)], 5.0, ("PASS", (4.0, 4.0), "at 4.00 s")),
    (rtt, [(3.0, None, 0)], 5.0, ("ERROR", (0.0, 3.0), "it needs [0, 5] s")),
    (rtt, [(5.0, None, 0)], 5.0, ("PASS", (0.0, 5.0), "max 30.00 ms")),
    (goto_1_to_4, [(2.0, None, 0)], 5.0, ("ERROR", (1.0, 2.0), "the run ended at 2.00 s, it needs [1, 4] s")),
    (no_mcu_failsafe, [], 5.0, ("ERROR", None, "not judged: no observation, it needs [0, 5] s")),
]
# fmt: on


@pytest.mark.parametrize(("make", "seen", "duration", "expected"), JUDGED)
def test_a_verdict_covers_its_span_and_is_an_error_when_the_run_fell_short_of_it(
    make: Callable[[], Check],
    seen: list[tuple[float, frozenset[str] | None, int]],
    duration: float,
    expected: tuple[str, tuple[float, float] | None, str],
) -> None:
    verdict, span, words = expected
    judged = Judged(make(), duration)
    for t, failsafes, down in seen:
        judged.observe(obs(t, failsafes=failsafes or frozenset(), boards_down=down))
    final = obs(seen[-1][0] if seen else 0.0, rtt_ms={"mcu": {"max": 30.0}})
    result = judged.verdict(final)
    assert ("PASS" if result.passed else "ERROR" if result.error else "FAIL") == verdict, result
    assert result.span == span
    assert words in result.detail


def test_rtt_below_reads_the_final_observation() -> None:
    check = RttBelow(label="r", link="mcu", max_ms=40.0, statistic="max")
    assert not check.verdict(obs(1.0)).passed
    assert check.verdict(obs(1.0, rtt_ms={"mcu": {"max": 33.3}})).passed
    assert not check.verdict(obs(1.0, rtt_ms={"mcu": {"max": 41.0}})).passed


def test_goto_check_is_decided_by_the_goto_result() -> None:
    check = GotoCheck(label="g")
    assert check.verdict(obs(1.0)).detail.startswith("not started")
    check.result = GotoResult(GotoGoal(1.0, 0.0), True, 3.0, 0.02, 0.01, [(0.0, 0.0, 0.0, 0.0)], 1.0)
    assert check.decided()
    assert check.verdict(obs(4.0)).passed


def task_light_by_5() -> Check:
    return TaskDone(label="t", by=5.0, task="light")


def telemetry_heading() -> Check:
    return Bounded(label="h", minimum=0.0, maximum=360.0, during=None, telemetry=("TL2", "heading_deg"))


def speed_during_1_2() -> Check:
    return Bounded(label="v", minimum=-0.1, maximum=0.1, during=(1.0, 2.0), state="v")


def near_the_light_by_5() -> Check:
    return Inside(label="c", region=Region(center=(1.0, 0.0), radius=0.2), by=5.0)


def cmd_vel_trips() -> Check:
    return FailsafeTrips(label="f", reason="cmd_vel", between=(0.0, 5.0))


def goto_to_1_0() -> Check:
    return GotoCheck(label="g", at=0.0, until=5.0, goal=(1.0, 0.0), tolerance=0.03)


#: The observations (t, x, v, failsafes, boards down, heading, latest round trip) every check below sees.
SEEN = [
    (0.0, 0.0, 0.0, frozenset(), 0, None, None),
    (1.0, 0.5, 0.05, frozenset({"cmd_vel"}), 2, 90.0, 33.3),
    (2.0, 0.9, 0.2, frozenset({"cmd_vel", "mcu"}), 2, 180.0, 33.3),
    (3.0, 1.0, 0.0, frozenset(), 6, 270.0, 30.0),
]

# fmt: off
#: (check, [(series name, unit, low, high, step, values)]): each check reports what it read, with its
#: bounds; a step signal keeps its changes and its last value held to the latest time.
SERIES = [
    (boards_by_10, [("boards down", "", 6, None, True, [0, 2, 6])]),
    (task_light_by_5, [("task light done", "", 1.0, None, True, [0.0, 0.0])]),
    (inside_at_4, [("robot 0 x", "m", -1.0, 1.0, False, [0.0, 0.5, 0.9, 1.0]),
                   ("robot 0 y", "m", -1.0, 1.0, False, [0.0, 0.0, 0.0, 0.0])]),
    (near_the_light_by_5, [("robot 0 distance to (1, 0)", "m", None, 0.2, False, [1.0, 0.5, 0.1, 0.0])]),
    (telemetry_heading, [("TL2.heading_deg", "", 0.0, 360.0, False, [90.0, 180.0, 270.0])]),
    (speed_during_1_2, [("robot 0 v", "", -0.1, 0.1, False, [0.0, 0.05, 0.2, 0.0])]),
    (no_mcu_failsafe, [("mcu failsafe holding", "", None, 0.0, True, [0.0, 1.0, 0.0])]),
    (cmd_vel_trips, [("cmd_vel failsafe holding", "", None, None, True, [0.0, 1.0, 0.0])]),
    (rtt, [("mcu round trip", "ms", None, 40.0, True, [33.3, 30.0])]),
    (goto_to_1_0, [("robot 0 distance to (1, 0)", "m", None, 0.03, False, [1.0, 0.5, 0.1, 0.0])]),
]
# fmt: on


@pytest.mark.parametrize(("make", "expected"), SERIES)
def test_every_check_reports_the_signals_it_read_with_its_bounds(
    make: Callable[[], Check], expected: list[tuple[str, str, float | None, float | None, bool, list[float]]]
) -> None:
    check = make()
    for t, x, v, failsafes, down, heading, rtt_ms in SEEN:
        check.observe(
            obs(
                t,
                x=x,
                v=v,
                failsafes=failsafes,
                boards_down=down,
                telemetry={} if heading is None else {"TL2": {"heading_deg": heading}},
                rtt_ms=None if rtt_ms is None else {"mcu": {"last": rtt_ms}},
            )
        )
    series = check.series()
    assert [(s.name, s.unit, s.low, s.high, s.step) for s in series] == [e[:5] for e in expected]
    for one, (*_, values) in zip(series, expected, strict=True):
        assert list(one.values) == pytest.approx(values, abs=1e-9), one.name
        assert one.t[-1] == 3.0  # to the latest observation
        assert list(one.t) == sorted(one.t)


# --- JUnit XML ----------------------------------------------------------------------------------


def test_junit_xml_counts_failures_and_errors_per_suite(tmp_path: Path) -> None:
    suites = [
        SuiteResult(
            "a",
            1.5,
            [
                CaseResult("one", True, "fine", span=(0.0, 20.0)),
                CaseResult("two", False, "at 2 s", span=(0.0, 2.0)),
            ],
            "out",
        ),
        SuiteResult("b", 0.5, [CaseResult("the run starts", False, "no firmware", error=True)]),
    ]
    path = write_junit(suites, tmp_path / "deep" / "junit.xml")
    root = ET.parse(path).getroot()
    assert (root.tag, root.get("tests"), root.get("failures"), root.get("errors")) == (
        "testsuites",
        "3",
        "1",
        "1",
    )
    a, b = root.findall("testsuite")
    assert (a.get("name"), a.get("tests"), a.get("failures"), a.get("time")) == ("a", "2", "1", "1.500")
    failure = a.find("testcase[@name='two']/failure")
    assert failure is not None and failure.get("message") == "at 2 s ([0.000, 2.000] s simulated)"
    assert a.find("testcase[@name='one']/system-out").text == "fine ([0.000, 20.000] s simulated)"  # type: ignore[union-attr]
    assert a.find("testcase[@name='one']/properties/property[@name='span_s']").get("value") == "0.000 20.000"  # type: ignore[union-attr]
    assert a.find("system-out").text == "out"  # type: ignore[union-attr]
    error = b.find("testcase/error")
    assert error is not None and error.get("message") == "no firmware (nothing simulated)"
    assert not math.isnan(float(root.get("time", "nan")))
    assert junit_xml([]).startswith('<?xml version="1.0" encoding="UTF-8"?>')
