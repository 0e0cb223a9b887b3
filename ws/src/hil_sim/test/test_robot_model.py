"""Robot models: the demo robot, the checks (a table of bad models), the generated URDF."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from hil_common.errors import HilError
from hil_sim.core.build import build_simulation
from hil_sim.core.device_set import DeviceSet
from hil_sim.core.devices import check_model
from hil_sim.core.mujoco_physics import MujocoPhysics
from hil_sim.core.robot_model import Body, DeviceSpec, Mount, RobotModel, demo_robot
from hil_sim.core.robot_urdf import robot_urdf
from hil_sim.core.world import WorldConfig
from hil_sim.errors import HilSimError

DRIVERS = (
    DeviceSpec("motor_left", "l298n", wheel="left"),
    DeviceSpec("motor_right", "l298n", wheel="right"),
)


def test_the_demo_robot_has_the_devices_of_its_signal_link_in_order() -> None:
    devices = DeviceSet(demo_robot(), 1)
    assert [f"{d}.{s}" for d, s in devices.inputs] == [
        "motor_left.enable",
        "motor_left.a",
        "motor_left.b",
        "motor_right.enable",
        "motor_right.a",
        "motor_right.b",
        "led.active",
    ]
    assert [f"{slot.device}.{slot.signal}" for slot in devices.outputs] == [
        "bumper_left.pressed",
        "bumper_right.pressed",
        "ultrasonic.distance",
        "ir.voltage",
        "light_0.reading",
        "light_1.reading",
        "light_2.reading",
        "light_3.reading",
        "compass.heading",
    ]
    # Per sample: IR 2 + four cells 3 each uniforms; sonar 1 + compass 3 normals.
    assert (devices.uniforms, devices.normals) == (14, 4)


def test_the_demo_robot_is_its_profile_over_the_library_given() -> None:
    with pytest.raises(
        HilError, match=r"robots/demo/robot.yaml: devices\[0\]\.type: unknown device type 'dc_motor'"
    ):
        demo_robot({})


#: A change to a good robot, and words its error must hold.
BAD_MODELS: list[tuple[dict[str, Any], str]] = [
    ({"devices": (DRIVERS[0],)}, "robot bad: the right wheel has no motor driver"),
    (
        {"devices": (*DRIVERS, DeviceSpec("motor_x", "l298n", wheel="left"))},
        "devices[2] (motor_x): wheel: left is already driven by motor_left",
    ),
    (
        {"devices": (*DRIVERS, DeviceSpec("x", "sonar"))},
        "devices[2] (x): kind: 'sonar' is not a device model kind (kinds: analog_input, bumper, button",
    ),
    ({"devices": (*DRIVERS, DeviceSpec("motor_left", "led"))}, "devices[2]: name 'motor_left' is used twice"),
    ({"devices": (*DRIVERS, DeviceSpec("2nd", "led"))}, "name '2nd' must be an identifier"),
    (
        {"devices": (*DRIVERS, DeviceSpec("e", "encoder"))},
        "devices[2] (e): wheel: '' is not one of left, right",
    ),
    (
        {"devices": (*DRIVERS, DeviceSpec("s", "ranger", wheel="left"))},
        "devices[2] (s): wheel: a ranger belongs to no wheel",
    ),
    (
        {"devices": (*DRIVERS, DeviceSpec("s", "ranger", Mount(servo="pan")))},
        "mount.servo: 'pan' is not a servo of this robot",
    ),
    ({"devices": (*DRIVERS, DeviceSpec("s", "ranger", Mount(x=math.nan)))}, "devices[2] (s): mount: (nan"),
    (
        {"devices": (*DRIVERS, DeviceSpec("s", "ranger", params={"cone_deg": 400}))},
        "devices[2] (s): params.cone_deg: 400 is outside 0..180 deg",
    ),
    (
        {"devices": (*DRIVERS, DeviceSpec("s", "ranger", params={"beam": "laser"}))},
        "params.beam: 'laser' is not one of ultrasonic, ir",
    ),
    (
        {"devices": (*DRIVERS, DeviceSpec("s", "ranger", params={"range": 3}))},
        "params.range: not a parameter of kind ranger (allowed: beam",
    ),
    (
        {"devices": (*DRIVERS, DeviceSpec("s", "ranger", params={"rays": "5"}))},
        "params.rays: '5' is not a finite number",
    ),
    ({"devices": (*DRIVERS, DeviceSpec("l", "light"))}, "params.angle_deg: missing"),
    (
        {"devices": (*DRIVERS, DeviceSpec("l", "light", params={"angle_deg": [1]}))},
        "params.angle_deg: expected a list of at least two numbers",
    ),
    (
        {"devices": (DeviceSpec("motor_left", "l298n", wheel="left", ties={"pwm": 1}), DRIVERS[1])},
        "ties.pwm: not an input of kind l298n (inputs: enable, a, b)",
    ),
    (
        {"devices": (*DRIVERS, DeviceSpec("p", "servo"), DeviceSpec("q", "servo", Mount(servo="p")))},
        "a servo rides on the body, not on another servo",
    ),
    ({"body": "wheel_radius=-1"}, "robot body: wheel_radius = -1.0 must be a positive number"),
    ({"body": "clearance=0.2"}, "robot body: clearance = 0.2 must be >= 0 and below height"),
    ({"body": "mass=0.1"}, "robot body: mass = 0.1 must exceed the wheels' and the caster's"),
]


@pytest.mark.parametrize(("change", "words"), BAD_MODELS)
def test_a_bad_robot_model_is_refused_naming_the_device_and_field(change: dict[str, Any], words: str) -> None:
    arguments: dict[str, Any] = {"devices": DRIVERS}
    body = change.pop("body", None)
    arguments.update(change)
    with pytest.raises(HilSimError) as info:
        if body is not None:
            key, value = body.split("=")
            arguments["body"] = Body(**{key: float(value)})
        check_model(RobotModel("bad", **arguments))
    assert words in str(info.value)


def test_the_ir_ranger_needs_its_table() -> None:
    model = RobotModel("r", devices=(*DRIVERS, DeviceSpec("ir", "ranger", params={"beam": "ir"})))
    with pytest.raises(HilSimError, match=r"device ir: params\.distance_cm: an IR ranger needs its table"):
        DeviceSet(model, 1)


PAN_TILT = RobotModel(
    "pan",
    devices=(
        *DRIVERS,
        DeviceSpec("pan", "servo", Mount(0.06, 0.0, 0.08, 0.0), {"range_deg": 120}),
        DeviceSpec("sonar", "ranger", Mount(0.09, 0.0, 0.09, 0.0, servo="pan")),
        DeviceSpec("bumper", "bumper", Mount(0.09, 0.0, 0.04)),
    ),
)


def test_the_urdf_has_a_frame_per_placed_device_and_a_joint_per_servo() -> None:
    root = ET.fromstring(robot_urdf(PAN_TILT))
    links = {link.get("name") for link in root.iter("link")}
    assert {
        "base_link",
        "left_wheel",
        "right_wheel",
        "caster",
        "pan_link",
        "sonar_link",
        "bumper_link",
    } == links
    joints = {joint.get("name"): joint for joint in root.iter("joint")}
    pan = joints["pan_joint"]
    assert pan.get("type") == "revolute"
    limit = pan.find("limit")
    assert limit is not None and float(limit.get("upper", "0")) == pytest.approx(math.radians(60), abs=1e-5)
    sonar = joints["sonar_joint"]
    parent, origin = sonar.find("parent"), sonar.find("origin")
    assert parent is not None and parent.get("link") == "pan_link"
    assert origin is not None and origin.get("xyz") == "0.03 0 0.01"  # relative to the servo's horn
    fixed = ET.fromstring(robot_urdf(PAN_TILT, servo_joints=False))
    assert {j.get("type") for j in fixed.iter("joint") if j.get("name") == "pan_joint"} == {"fixed"}


def test_the_urdf_is_a_robot_mujoco_builds_with_the_models_mass() -> None:
    model = RobotModel("heavy", body=Body(mass=1.5, wheel_radius=0.04), devices=PAN_TILT.devices)
    sim = build_simulation(WorldConfig(), models=model, physics="mujoco")
    assert isinstance(sim.physics, MujocoPhysics)
    physics = sim.physics
    assert physics.model.body_subtreemass[physics._base[0]] == pytest.approx(1.5)
