"""The simulator's end of the MCU link: pins in, the silence rule, signals out."""

from __future__ import annotations

import pytest

from hil_sim.core.build import build_simulation
from hil_sim.core.mcu_port import McuPort
from hil_sim.core.simulation import Simulation
from hil_sim.core.world import WorldConfig

FORWARD = [
    (f"motor_{side}", name, value)
    for side in ("left", "right")
    for name, value in (("enable", 1024.0), ("a", 1.0), ("b", 0.0))
]


def port(robots: int = 1, *, now: float | None = 0.0) -> tuple[McuPort, Simulation]:
    sim = build_simulation(WorldConfig(width=10.0, height=10.0), robots=robots, spacing=1.0)
    return McuPort(sim, robots, pin_timeout=0.1, now=now), sim


def test_pins_count_from_the_next_flush_and_unknown_names_come_back() -> None:
    mcu, sim = port()
    unknown, back = mcu.take(
        0, [*FORWARD, ("motor_left", "pwm", 1.0), ("servo", "pulse_us", 1500.0)], now=0.0
    )
    assert unknown == ["motor_left.pwm", "servo.pulse_us"] and not back
    assert not sim.driving(0)  # not yet: pins count from a period's start
    mcu.flush()
    assert sim.driving(0)
    assert sim.input("motor_left.enable")[0] == 1024.0
    assert mcu.received == [1]


def test_a_silent_mcu_lets_the_motors_coast_once_and_pins_bring_them_back() -> None:
    mcu, sim = port()
    mcu.take(0, FORWARD, now=0.0)
    mcu.flush()
    sim.step(200)
    assert mcu.check_silence(0.05) == []
    assert mcu.check_silence(0.2) == [0]
    assert mcu.check_silence(0.3) == []  # reported once
    assert mcu.coasting == [True]
    speed = float(sim.v[0])
    sim.step(200)
    assert 0 < sim.v[0] < speed  # coasting: friction alone slows it
    _, back = mcu.take(0, FORWARD, now=0.4)
    assert back and mcu.coasting == [False]
    mcu.flush()
    sim.step(500)
    assert sim.v[0] > speed


def test_a_silent_mcu_whose_motors_are_off_is_left_alone() -> None:
    mcu, _ = port(now=None)
    assert mcu.check_silence(10.0) == []
    assert mcu.coasting == [False]


def test_each_robot_has_its_own_silence() -> None:
    mcu, _ = port(2)
    for robot in (0, 1):
        mcu.take(robot, FORWARD, now=0.0)
    mcu.flush()
    mcu.take(1, FORWARD, now=0.15)
    assert mcu.check_silence(0.2) == [0]


def test_outputs_are_the_robots_signals_as_of_now() -> None:
    mcu, sim = port()
    assert mcu.outputs(0) == sim.signals(0)
    assert [d for d, _, _ in mcu.outputs(0)][:3] == ["bumper_left", "bumper_right", "ultrasonic"]


@pytest.mark.parametrize("timeout", [0.05, 0.5])
def test_the_timeout_is_the_ports(timeout: float) -> None:
    sim = build_simulation(WorldConfig())
    mcu = McuPort(sim, 1, pin_timeout=timeout, now=0.0)
    mcu.take(0, FORWARD, now=0.0)
    mcu.flush()
    assert mcu.check_silence(timeout * 0.9) == []
    assert mcu.check_silence(timeout * 1.1) == [0]
