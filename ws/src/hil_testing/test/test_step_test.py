"""The step test's core: the first-order fit, the motor model's expectation, the step's schedule."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_sim.core.motor import MotorBank
from hil_sim.core.robot_model import demo_robot
from hil_testing.core.step_test import (
    StepPlan,
    StepRun,
    fit_first_order,
    model_expectation,
    write_step_report,
)
from hil_testing.errors import HilTestingError
from robot_control.core.kinematics import DriveGeometry, twist_to_commands


def first_order(t: np.ndarray, *, gain: float, tau: float, dead: float, command: float) -> np.ndarray:
    after = np.clip(t - dead, 0.0, None)
    return gain * command * (1.0 - np.exp(-after / tau))


@settings(max_examples=40, deadline=None)
@given(
    case=st.fixed_dictionaries(
        {
            "gain": st.floats(0.01, 1.0),
            "tau": st.floats(0.03, 0.5),
            "dead": st.floats(0.0, 0.1),
            "command": st.sampled_from([-200, -60, 40, 150, 255]),
            "period": st.sampled_from([0.005, 0.01, 0.02]),
            "noise": st.floats(0.0, 0.02),
            "seed": st.integers(0, 2**16),
        }
    )
)
def test_fit_recovers_gain_tau_and_dead_time_from_noisy_samples(case: dict[str, float]) -> None:
    gain, tau, dead, command, period = (case[k] for k in ("gain", "tau", "dead", "command", "period"))
    rng = np.random.default_rng(int(case["seed"]))
    t = np.arange(-0.2, dead + 8 * tau, period)
    final = gain * command
    y = first_order(t, gain=gain, tau=tau, dead=dead, command=command)
    y += rng.normal(0, case["noise"] * abs(final), t.size)
    fit = fit_first_order(t, y, command=command)
    assert fit.gain == pytest.approx(gain, rel=0.04)  # at most 2.7 % in 20000 cases of 1.5-2 % noise
    # Noise of 2 % of the final value on a handful of samples per tau: a few per cent, or
    # up to a sample period with under 3 samples per tau (20000 such cases: at most half a
    # period beyond 8 %, a quarter in 1 of 1500).
    assert fit.tau == pytest.approx(tau, rel=0.08, abs=period)
    assert fit.dead_time == pytest.approx(dead, abs=max(0.15 * tau, period / 2))


def test_fit_subtracts_the_level_before_the_step() -> None:
    t = np.arange(0.0, 1.0, 0.01)
    y = 3.0 + first_order(t, gain=0.05, tau=0.1, dead=0.02, command=100)
    fit = fit_first_order(t, y, command=100, offset=3.0)
    assert fit.gain == pytest.approx(0.05, rel=1e-3)
    assert fit.offset == 3.0
    assert fit.predict(np.array([10.0]), 100)[0] == pytest.approx(8.0, rel=1e-3)


@pytest.mark.parametrize(
    ("times", "values", "command", "message"),
    [
        ([0.0, 0.1, 0.2], [0.0, 1.0, 2.0], 100, "3 samples after the step"),
        (list(np.arange(0, 1, 0.01)), [0.0] * 100, 100, "no response"),
        (list(np.arange(0, 1, 0.01)), list(np.arange(0, 1, 0.01)), 0, "command = 0"),
        ([0.0, 0.1], [0.0], 100, "2 times but 1 values"),
    ],
)
def test_fit_refuses_what_it_cannot_fit_naming_why(
    times: list[float], values: list[float], command: int, message: str
) -> None:
    with pytest.raises(HilTestingError, match=message):
        fit_first_order(times, values, command=command)


@pytest.mark.parametrize("command", [60, 150, -255])
def test_model_expectation_is_what_the_motor_bank_does_from_rest(command: int) -> None:
    robot = demo_robot()
    bank = MotorBank(robot.motor, (1,), load_inertia=robot.load_inertia, dt=0.001)
    voltage = np.full(1, command / 255 * robot.motor.supply_voltage)
    t, speed = [], []
    for k in range(1500):
        bank.step(voltage, np.ones(1, dtype=bool))
        t.append((k + 1) * 0.001)
        speed.append(float(bank.speed[0]) / robot.motor.gear_ratio)
    expected = model_expectation(command)
    fit = fit_first_order(t, speed, command=command)
    assert fit.gain == pytest.approx(expected.gain, rel=0.005)
    assert fit.tau == pytest.approx(expected.tau, rel=0.01)
    assert expected.steady_speed == pytest.approx(speed[-1], rel=0.002)


def test_model_expectation_refuses_a_command_out_of_range() -> None:
    with pytest.raises(HilTestingError, match="command = 300"):
        model_expectation(300)


@settings(max_examples=60, deadline=None)
@given(left=st.integers(-255, 255), right=st.integers(-255, 255))
def test_step_twist_is_what_the_control_loop_turns_into_the_commands(left: int, right: int) -> None:
    if left == 0 and right == 0:
        return
    geometry = DriveGeometry()
    plan = StepPlan(left=left, right=right, geometry=geometry)
    assert twist_to_commands(*plan.twist, geometry) == (left, right)


def test_step_run_commands_zero_while_settling_then_the_step_then_zero() -> None:
    plan = StepPlan(left=100, right=100, settle=0.5, duration=1.0)
    run = StepRun(plan)
    commanded = {}
    for k in range(200):
        t = 10.0 + k * 0.01  # sample stamps need not start at 0
        commanded[round(t - 10.0, 2)] = run.sample(t, 0.0, 0.0)
    assert commanded[0.0] == (0.0, 0.0)
    assert commanded[0.49] == (0.0, 0.0)
    assert commanded[0.5] == pytest.approx(plan.twist)
    assert commanded[1.49] == pytest.approx(plan.twist)
    assert commanded[1.5] == (0.0, 0.0)
    assert run.finished


def test_step_run_keeps_the_motor_commands_the_mcu_reported_during_the_step() -> None:
    run = StepRun(StepPlan(left=120, right=80, settle=0.2, duration=0.5))
    run.sample(0.0, 0.0, 0.0)
    run.telemetry(0.1, {"right": 0.0, "left": 0.0})
    run.telemetry(0.4, {"right": 80.0, "left": 120.0})
    run.telemetry(0.9, {"right": 0.0, "left": 0.0})  # after the step
    assert run.mcu_command == (120.0, 80.0)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"left": 0, "right": 0}, "both 0"),
        ({"left": 300}, "left = 300"),
        ({"duration": 0.0}, "duration = 0.0"),
        ({"settle": math.nan}, "settle = nan"),
    ],
)
def test_step_plan_names_the_bad_field(options: dict[str, float], message: str) -> None:
    with pytest.raises(HilTestingError, match=message):
        StepPlan(**options)  # type: ignore[arg-type]


def simulated_run(plan: StepPlan, *, gain_scale: float = 1.0) -> StepRun:
    """A step run fed with the motor model's own response (scaled to play a wrong robot)."""
    run = StepRun(plan)
    expected = model_expectation(plan.left)
    t = 0.0
    while not run.finished:
        after = t - plan.settle
        speed = (
            0.0 if after < 0 else gain_scale * expected.steady_speed * (1 - math.exp(-after / expected.tau))
        )
        run.sample(t, speed, speed)
        t += 0.02
    return run


def test_step_result_passes_when_the_robot_answers_as_the_model_says(tmp_path: Path) -> None:
    result = simulated_run(StepPlan(left=150, right=150)).result(tolerance=0.05)
    assert result.passed
    assert set(result.wheels) == {"left", "right"}
    data_path, picture_path = write_step_report(result, tmp_path / "step")
    data = json.loads(data_path.read_text())
    assert data["passed"] is True
    assert data["wheels"]["left"]["model"]["tau"] == pytest.approx(result.wheels["left"].model.tau)
    assert len(data["samples"]["t_s"]) == len(result.times)
    assert picture_path.stat().st_size > 10_000


def test_step_result_fails_when_the_gain_is_off_by_more_than_the_tolerance() -> None:
    result = simulated_run(StepPlan(left=150, right=150), gain_scale=0.7).result(tolerance=0.2)
    assert not result.passed
    assert result.wheels["left"].gain_error == pytest.approx(-0.3, abs=0.01)


def test_step_result_before_the_end_says_it_is_not_finished() -> None:
    run = StepRun(StepPlan())
    run.sample(0.0, 0.0, 0.0)
    with pytest.raises(HilTestingError, match="not finished"):
        run.result()
