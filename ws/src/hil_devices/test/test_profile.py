"""Robot profiles: the shipped robots load, the demo derives today's demo robot, ties and mounts."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from hil_bridge.core.defaults import signal_layout, telemetry_schema
from hil_bridge.core.signal_protocol import profile_layout
from hil_common.core.config_file import load_yaml
from hil_common.errors import HilError
from hil_devices.core.defaults import device_library
from hil_devices.core.handler_template import handler_dirs, load_templates, needs_of
from hil_devices.core.profile import (
    PROFILE_FILE,
    device_instances,
    load_profile,
    mcu_pins,
    model_devices,
    profile_path,
    shipped_robots,
)
from hil_devices.core.profile import telemetry_schema as profile_telemetry
from hil_devices.core.wiring import autowire
from hil_firmware.core.sketch_gen import profile_sketch_inputs

SRC = Path(__file__).resolve().parents[2]
ROBOTS = SRC / "hil_robots" / "robots"
FIRMWARE = SRC.parents[1] / "firmware"
SHIPPED = sorted(p.parent.name for p in ROBOTS.glob(f"*/{PROFILE_FILE}"))


def test_the_four_example_robots_ship() -> None:
    assert set(SHIPPED) >= {"demo", "rab_style", "line_follower", "sonar_servo_avoider"}
    assert set(shipped_robots()) >= set(SHIPPED)  # installed (or the source tree's)


@pytest.mark.parametrize("robot", SHIPPED)
def test_every_shipped_profile_loads_without_warnings(robot: str) -> None:
    profile = load_profile(ROBOTS / robot)
    assert profile.name == robot
    assert profile.warnings == ()
    assert profile.firmware.sketch is not None and profile.firmware.sketch.is_dir()
    assert (ROBOTS / robot / "README.md").is_file()
    assert list((ROBOTS / robot / "scenarios").glob("*.yaml"))


def test_a_profile_is_found_by_file_folder_or_shipped_name() -> None:
    by_file = profile_path(ROBOTS / "demo" / PROFILE_FILE)
    assert profile_path(ROBOTS / "demo") == by_file
    assert profile_path("demo").resolve() == by_file.resolve()


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ("no_such_robot", ["robot 'no_such_robot'", "nor a shipped robot", "demo", "rab_style"]),
        ("/nowhere/robot.yaml", ["/nowhere/robot.yaml: no such file or folder"]),
    ],
)
def test_an_unknown_robot_is_named_with_the_shipped_ones(given: str, words: list[str]) -> None:
    with pytest.raises(HilError) as error:
        profile_path(given)
    for word in words:
        assert word in str(error.value)


def test_a_folder_without_a_profile_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HilError, match=f"{tmp_path}: no robot.yaml in this folder"):
        load_profile(tmp_path)


def test_the_demo_profile_derives_todays_device_set_signal_ids_and_pins() -> None:
    profile = load_profile("demo")
    today = signal_layout()  # config/demo_robot_devices.yaml over the library
    layout = profile_layout(profile)
    assert [(s.id, s.device, s.spec) for s in layout.slots] == [(s.id, s.device, s.spec) for s in today.slots]
    assert [(d.name, d.config.name) for d in layout.devices] == [
        (d.name, d.config.name) for d in today.devices
    ]
    wiring = load_yaml(FIRMWARE / "robot_mcu" / "wiring.yaml", what="wiring")
    assert profile.board == wiring["board"]
    assert mcu_pins(profile) == {key: str(pin).upper() for key, pin in wiring["pins"].items()}
    assert profile_telemetry(profile).lists == telemetry_schema().lists
    assert profile.command.baud == 38400  # robot_mcu's HIL_BAUD, robot_control's baud
    assert profile.firmware.sketch == (FIRMWARE / "robot_mcu").resolve()


def test_the_demo_bridge_board_is_wired_as_hil_sketch_generate_wires_it() -> None:
    profile = load_profile("demo")
    templates = load_templates(handler_dirs())
    devices, wiring = profile_sketch_inputs(profile, templates)
    assert wiring == autowire(needs_of(signal_layout().devices, templates))
    assert [d.name for d in devices] == [d.name for d in signal_layout().devices]


def test_a_tied_pin_leaves_its_signal_off_the_link_and_holds_its_level() -> None:
    profile = load_profile("rab_style")
    motor = profile.device("motor_left")
    assert motor.ties == {"ena": "high"}
    assert [s.name for s in motor.instance().config.signals] == ["a", "b"]
    assert mcu_pins(profile)["motor_left.a"] == "10"
    assert "motor_left.enable" not in mcu_pins(profile)
    model = {device.name: device for device in model_devices(profile)}
    assert model["motor_left"].ties == {"enable": 1024.0}
    assert model["motor_left"].inputs == ("a", "b")
    assert (model["motor_left"].kind, model["motor_left"].role, model["motor_left"].wheel) == (
        "l298n",
        "driver",
        "left",
    )
    assert model["encoder_right"].params["direction"] == -1
    assert [d.name for d in device_instances(profile)] == [d.name for d in profile.devices]


def test_the_simulator_sees_poses_mounts_and_resolved_parameters() -> None:
    model = {device.name: device for device in model_devices(load_profile("sonar_servo_avoider"))}
    front = model["sonar_front"]
    assert front.mount == "pan" and model["pan"].role == "joint"
    assert (front.kind, front.params["beam"], front.params["cone_deg"]) == ("ranger", "ultrasonic", 30.0)
    assert math.isclose(model["sonar_left"].pose.yaw, math.radians(45), abs_tol=1e-4)
    assert front.outputs == ("distance",) and front.inputs == ()
    demo = {device.name: device for device in model_devices(load_profile("demo"))}
    assert demo["ir"].params["distance_cm"][0] == 15  # the type's data table comes along
    assert "driver" not in demo["motor_left"].params  # a table entry that is no parameter of its kind
    assert demo["bumper_left"].params["to_deg"] == 75


def test_a_profile_takes_its_own_device_library(tmp_path: Path) -> None:
    library = device_library()
    narrowed = {name: config for name, config in library.items() if name != "hc_sr04"}
    with pytest.raises(HilError, match=r"devices\[5\]\.type: unknown device type 'hc_sr04'"):
        load_profile("demo", library=narrowed)
