"""What users set on a robot's devices: buttons, analog inputs, IR remote presses, sensor overrides.

The simulation core (:meth:`Simulation.setting`, ``set_device``, ``let_go``), the
requests a simulator takes at its period's start (:mod:`hil_sim.core.user_inputs`),
and the ``hil/set/<device>`` topics of the sim node (:mod:`hil_sim.sim_inputs`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from rclpy.parameter import Parameter
from std_msgs.msg import Float64, UInt32

from hil_sim.core.build import build_simulation
from hil_sim.core.robot_model import DeviceSpec, Mount, RobotModel
from hil_sim.core.simulation import Simulation
from hil_sim.core.user_inputs import Request, UserInputs
from hil_sim.core.world import WorldConfig
from hil_sim.errors import HilSimError
from hil_sim.sim_inputs import message_value, nec_press
from hil_sim.sim_node import SimNode
from support.ros_probe import RosProbe

GADGETS = RobotModel(
    "gadgets",
    devices=(
        DeviceSpec("motor_left", "l298n", wheel="left"),
        DeviceSpec("motor_right", "l298n", wheel="right"),
        DeviceSpec("start", "button"),
        DeviceSpec("mode", "analog_input", params={"rest_v": 5.0}),
        DeviceSpec("remote", "ir_remote"),
        DeviceSpec("bumper", "bumper", Mount(0.08, 0.0, 0.04)),
        DeviceSpec("sonar", "ranger", Mount(0.09, 0.0, 0.07)),
        DeviceSpec("imu", "imu"),
        DeviceSpec("buzzer", "buzzer"),
        DeviceSpec("strip", "rgb_leds", params={"leds": 4}),
    ),
)
ARENA = WorldConfig(width=4.0, height=4.0)


@pytest.fixture
def sim() -> Simulation:
    return build_simulation(ARENA, models=GADGETS, robots=2)


def given(sim: Simulation, robot: int = 0) -> dict[str, float]:
    return {f"{d}.{s}": v for d, s, v in sim.signals(robot)}


def test_a_user_presses_buttons_turns_knobs_and_sends_ir_keys_the_mcu_reads_them(sim: Simulation) -> None:
    assert given(sim)["start.pressed"] == 0.0 and given(sim)["mode.voltage"] == 5.0  # at rest
    sim.set_device(0, sim.setting(0, "start", 1))
    sim.set_device(0, sim.setting(0, "mode", 1.25))
    assert given(sim)["start.pressed"] == 1.0 and given(sim)["mode.voltage"] == 1.25
    assert given(sim, 1)["start.pressed"] == 0.0  # the other robot's user did nothing
    for press in range(3):
        sim.set_device(0, sim.setting(0, "remote", {"address": 0, "command": 0x45 + press}))
    assert (given(sim)["remote.address"], given(sim)["remote.command"], given(sim)["remote.sends"]) == (
        0.0,
        0x47,
        3.0,
    )
    sim.let_go(0, sim.setting(0, "start", 1))
    sim.let_go(0, sim.setting(0, "mode", 0.0))
    sim.let_go(0, sim.setting(0, "remote", {"address": 0, "command": 0}))
    assert given(sim)["start.pressed"] == 0.0 and given(sim)["mode.voltage"] == 5.0  # back to rest
    assert given(sim)["remote.sends"] == 3.0  # presses are events: nothing to let go of


def test_a_sensor_override_replaces_what_the_mcu_reads_until_let_go(sim: Simulation) -> None:
    override = sim.setting(0, "sonar", 12.5)
    sim.set_device(0, override)
    sim.step(40)
    simulated = sim.output("sonar.distance")  # the simulated sensors are unchanged
    assert simulated[0] > 100.0 and given(sim)["sonar.distance"] == 12.5
    assert given(sim, 1)["sonar.distance"] == simulated[1]
    bumper = sim.setting(0, "bumper", 1)
    sim.set_device(0, bumper)
    assert given(sim)["bumper.pressed"] == 1.0
    sim.let_go(0, override)
    sim.let_go(0, bumper)
    assert given(sim)["sonar.distance"] == simulated[0] and given(sim)["bumper.pressed"] == 0.0
    sim.set_device(0, sim.setting(0, "imu", 0.5, signal="gz"))
    assert given(sim)["imu.gz"] == 0.5


def test_what_a_robot_offers_to_set_users_first(sim: Simulation) -> None:
    devices, _ = sim.devices_of(0)
    assert devices.users() == ["start", "mode", "remote"]
    assert list(devices.settable())[:3] == ["start", "mode", "remote"]
    assert "buzzer" not in devices.settable() and "strip" not in devices.settable()  # outputs only


@pytest.mark.parametrize(
    ("device", "value", "signal", "words"),
    [
        ("nothing", 1, "", "no device 'nothing' to set (settable: start, mode, remote"),
        ("buzzer", 1, "", "nothing the MCU reads from 'buzzer'"),
        ("start", 0.5, "", "pressed (1) or released (0)"),
        ("start", {"pressed": 1}, "", "pressed (1) or released (0)"),
        ("start", 1, "pressed", "set it as a whole, without a signal"),
        ("mode", 5.5, "", "takes 0..5 V, got 5.5"),
        ("mode", math.nan, "", "is not a finite number"),
        ("remote", 69, "", "{address: 0..255, command: 0..255}"),
        ("remote", {"address": 0, "command": 256}, "", "command = 256 is not a byte"),
        ("remote", {"address": 0}, "", "{address: 0..255, command: 0..255}"),
        ("imu", 1.0, "", "name the signal to override (one of ax, ay"),
        ("sonar", 1.0, "echo", "no signal 'echo' to the MCU (it gives distance)"),
        ("sonar", {"distance": 1.0}, "", "an override is one number"),
        ("sonar", True, "", "is not a finite number"),
    ],
)
def test_a_setting_a_device_does_not_take_is_refused_naming_it(
    sim: Simulation, device: str, value: Any, signal: str, words: str
) -> None:
    with pytest.raises(HilSimError) as caught:
        sim.setting(0, device, value, signal=signal)
    assert words in str(caught.value)


def test_requests_wait_for_the_period_start_and_timed_ones_are_let_go_unless_taken_over(
    sim: Simulation,
) -> None:
    inputs = UserInputs()
    press = sim.setting(0, "start", 1)
    inputs.request(Request(0, press, seconds=0.1))
    assert given(sim)["start.pressed"] == 0.0  # not before the period starts
    inputs.apply(sim)
    assert given(sim)["start.pressed"] == 1.0
    sim.step(95)
    inputs.apply(sim)
    assert given(sim)["start.pressed"] == 1.0  # 0.095 s
    sim.step(5)
    inputs.apply(sim)
    assert given(sim)["start.pressed"] == 0.0  # let go at 0.1 s
    inputs.request(Request(0, press, seconds=0.1))
    inputs.apply(sim)
    inputs.request(Request(0, press))  # held from now on: the timed one no longer lets go
    sim.step(50)
    inputs.apply(sim)
    sim.step(100)
    inputs.apply(sim)
    assert given(sim)["start.pressed"] == 1.0 and inputs.applied == 3


@pytest.mark.parametrize(
    ("kind", "data", "value"),
    [
        ("button", 1.0, 1.0),
        ("analog_input", 2.5, 2.5),
        ("ir_remote", 0x0045, {"address": 0.0, "command": 69.0}),
        ("ir_remote", 0xFF16, {"address": 255.0, "command": 22.0}),
    ],
)
def test_a_set_topics_message_is_the_value_of_its_kind(kind: str, data: float, value: Any) -> None:
    message = (UInt32 if kind == "ir_remote" else Float64)(data=data)
    assert message_value(kind, message) == value


def test_an_ir_code_beyond_16_bits_is_refused() -> None:
    with pytest.raises(HilSimError, match=r"address << 8 \| command"):
        nec_press(0x10000)


@pytest.fixture
def probe() -> Iterator[RosProbe]:
    probe = RosProbe("user_inputs_test")
    yield probe
    probe.close()


def test_the_sim_node_takes_set_topics_at_its_period_start_and_drops_what_does_not_fit(
    probe: RosProbe,
) -> None:
    SimNode.models = GADGETS
    try:
        node = SimNode(context=probe.context, parameter_overrides=[Parameter("rtf", value=0.0)])
    finally:
        SimNode.models = None
    try:
        topics = sorted(s.topic_name for s in node.set_topics.subscriptions)
        assert topics == ["/hil/set/mode", "/hil/set/remote", "/hil/set/start"]
        start = probe.publisher(Float64, "hil/set/start")
        remote = probe.publisher(UInt32, "hil/set/remote")
        probe.wait_for(
            lambda: start.get_subscription_count() and remote.get_subscription_count(), timeout=20.0
        )
        probe.executor.add_node(node)
        start.publish(Float64(data=1.0))
        remote.publish(UInt32(data=0x0118))
        start.publish(Float64(data=0.5))  # not a button's: dropped

        def values() -> dict[str, float]:
            return {f"{d}.{s}": v for d, s, v in node.sim.signals(0)}

        def taken() -> bool:
            node.advance_to(node.sim.time + node.period)  # a period: what came is taken at its start
            return values()["start.pressed"] == 1.0 and values()["remote.sends"] == 1.0

        probe.wait_for(taken, timeout=20.0, what="the button pressed and the key sent")
        assert (values()["remote.address"], values()["remote.command"]) == (1.0, 0x18)
        probe.wait_for(lambda: node.set_topics.refused == 1, timeout=20.0, what="0.5 refused")
        assert values()["start.pressed"] == 1.0
    finally:
        node.destroy_node()
