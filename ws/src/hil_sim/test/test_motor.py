"""The DC motor model against the analytic linear system; brake and coast; several models' motors."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_sim.core.motor import MotorBank, MotorGroups, MotorParams, motor_banks
from hil_sim.core.robot_model import demo_robot
from hil_sim.errors import HilSimError

Array = npt.NDArray[np.float64]

ROBOT = demo_robot()
MOTOR = ROBOT.motor
LOAD = ROBOT.load_inertia
DT = 1.0e-3  # the default 1 kHz physics rate


def bank(count: int = 1, *, params: MotorParams = MOTOR, load: float = LOAD) -> MotorBank:
    return MotorBank(params, (count,), load_inertia=load, dt=DT)


def run(motors: MotorBank, voltage: Array, closed: npt.NDArray[np.bool_], steps: int) -> Array:
    """Step ``steps`` times; the speeds after each step, shape (motors, steps)."""
    speeds = np.empty((len(motors.speed), steps))
    for k in range(steps):
        motors.step(voltage, closed)
        speeds[:, k] = motors.speed
    return speeds


def analytic_speed(params: MotorParams, load: float, voltage: float, t: Array) -> Array:
    """Shaft speed from rest of the linear system, Coulomb friction a constant torque while moving.

    ``d/dt [i, w] = A [i, w] + u`` with ``u = [V/L, -Tc sign(V) / J]``, solved with the
    eigen-decomposition of ``A``: ``x(t) = x_ss + E exp(lambda t) E^-1 (x0 - x_ss)``.
    """
    inertia = params.rotor_inertia + load
    system = np.array(
        [
            [-params.resistance / params.inductance, -params.ke / params.inductance],
            [params.kt / inertia, -params.viscous / inertia],
        ]
    )
    forcing = np.array([voltage / params.inductance, -math.copysign(params.coulomb, voltage) / inertia])
    steady = -np.linalg.solve(system, forcing)
    poles, vectors = np.linalg.eig(system)
    assert np.allclose(np.sort_complex(poles), np.sort_complex(np.array(params.poles(load))), rtol=1e-12)
    weights = np.linalg.solve(vectors, -steady)  # x0 = 0
    speed = steady[1] + (vectors[1] * weights * np.exp(np.outer(t, poles))).sum(axis=1)
    assert np.allclose(speed.imag, 0.0, atol=1e-9 * abs(steady[1]))
    return np.asarray(speed.real, dtype=float)


def rise_time(t: Array, speed: Array, final: float, fraction: float = 1 - math.exp(-1)) -> float:
    """First time |speed| reaches ``fraction`` of |final|, linearly interpolated."""
    level = fraction * abs(final)
    k = int(np.argmax(np.abs(speed) >= level))
    assert k > 0, "the level is reached in the first sample: sample finer"
    before, after = abs(speed[k - 1]), abs(speed[k])
    return float(t[k - 1] + (level - before) / (after - before) * (t[k] - t[k - 1]))


# --- steady state and step response ------------------------------------------------------


@pytest.mark.parametrize("voltage", [6.0, 4.5, 3.0, 1.0, -2.0, -6.0])
def test_steady_speed_matches_the_analytic_value(voltage: float) -> None:
    motors = bank()
    speeds = run(motors, np.array([voltage]), np.array([True]), 4000)  # ~37 time constants
    expected = math.copysign(MOTOR.steady_speed(abs(voltage), LOAD), voltage)
    assert abs(speeds[0, -1] - expected) <= 1e-9 * abs(expected)
    # and the current is the one that balances friction: Kt i = b w + Tc
    torque = MOTOR.kt * motors.current[0]
    assert torque == pytest.approx(MOTOR.viscous * expected + math.copysign(MOTOR.coulomb, voltage), rel=1e-9)


def test_steady_speed_is_zero_below_the_friction_voltage() -> None:
    stall = MOTOR.coulomb * MOTOR.resistance / MOTOR.kt
    assert MOTOR.steady_speed(0.9 * stall) == 0.0
    motors = bank()
    speeds = run(motors, np.array([0.9 * stall]), np.array([True]), 500)
    assert np.all(speeds == 0.0)


def test_steady_speed_does_not_depend_on_the_load_inertia() -> None:
    assert MOTOR.steady_speed(6.0, 0.0) == MOTOR.steady_speed(6.0, 1e-3)
    light, heavy = bank(load=0.0), bank(load=4 * LOAD)
    fast = run(light, np.array([6.0]), np.array([True]), 4000)[0, -1]
    slow = run(heavy, np.array([6.0]), np.array([True]), 8000)[0, -1]
    assert fast == pytest.approx(MOTOR.steady_speed(6.0), rel=1e-9)
    assert slow == pytest.approx(MOTOR.steady_speed(6.0), rel=1e-9)


def test_poles_are_the_eigenvalues_of_the_electrical_mechanical_system() -> None:
    first, second = MOTOR.poles(LOAD)
    inertia = MOTOR.rotor_inertia + LOAD
    # trace and determinant of A
    assert (first + second).real == pytest.approx(
        -MOTOR.resistance / MOTOR.inductance - MOTOR.viscous / inertia, rel=1e-12
    )
    assert (first * second).real == pytest.approx(
        (MOTOR.resistance * MOTOR.viscous + MOTOR.ke * MOTOR.kt) / (MOTOR.inductance * inertia), rel=1e-12
    )
    # the demo motor: a fast electrical pole (~0.3 ms) and a slow mechanical one (~0.1 s)
    slow = max(first.real, second.real)
    assert 0.05 < -1 / slow < 0.2


@pytest.mark.parametrize("voltage", [6.0, 3.0, 1.0, -4.5])
def test_step_response_time_constant_matches_the_linear_second_order_system(voltage: float) -> None:
    steps = 1500
    t = np.arange(1, steps + 1) * DT
    simulated = run(bank(), np.array([voltage]), np.array([True]), steps)[0]
    fine_t = np.linspace(0.0, steps * DT, 150_001)
    analytic = analytic_speed(MOTOR, LOAD, voltage, fine_t)
    final = math.copysign(MOTOR.steady_speed(abs(voltage), LOAD), voltage)
    assert analytic[-1] == pytest.approx(final, rel=1e-6)
    t63_sim = rise_time(t, simulated, final)
    t63_analytic = rise_time(fine_t, analytic, final)
    assert t63_sim == pytest.approx(t63_analytic, rel=0.05)
    assert t63_sim == pytest.approx(t63_analytic, rel=0.01)  # in fact much closer
    # and the whole curve, not just one point
    on_grid = analytic_speed(MOTOR, LOAD, voltage, t)
    assert np.max(np.abs(simulated - on_grid)) <= 0.01 * abs(final)


@pytest.mark.parametrize("load_factor", [0.0, 1.0, 10.0])
def test_step_response_tracks_the_load_inertia(load_factor: float) -> None:
    load = load_factor * LOAD
    steps = 3000
    t = np.arange(1, steps + 1) * DT
    simulated = run(bank(load=load), np.array([6.0]), np.array([True]), steps)[0]
    analytic = analytic_speed(MOTOR, load, 6.0, t)
    final = MOTOR.steady_speed(6.0)
    assert rise_time(t, simulated, final) == pytest.approx(rise_time(t, analytic, final), rel=0.05)


# --- brake and coast ---------------------------------------------------------------------


def steps_to_stop(closed: bool) -> int:
    """Physics steps from full speed until the shaft stands still at 0 V: bridge ``closed`` (brake) or not."""
    motors = bank()
    run(motors, np.array([MOTOR.supply_voltage]), np.array([True]), 3000)
    assert motors.speed[0] == pytest.approx(MOTOR.steady_speed(6.0), rel=1e-6)
    voltage, shut = np.zeros(1), np.array([closed])
    for k in range(1, 20_000):
        motors.step(voltage, shut)
        assert motors.speed[0] >= 0.0  # never driven backwards
        if motors.speed[0] == 0.0:
            # friction holds it once stopped
            run(motors, voltage, shut, 100)
            assert motors.speed[0] == 0.0
            return k
    raise AssertionError(f"{'brake' if closed else 'coast'} did not stop the motor in 20 s")


def test_brake_stops_the_motor_faster_than_coast() -> None:
    brake, coast = steps_to_stop(True), steps_to_stop(False)
    assert brake * 5 < coast
    # coast: friction alone, J dw/dt = -b w - Tc, from w0 stops after (J/b) ln(1 + b w0 / Tc)
    inertia = MOTOR.rotor_inertia + LOAD
    w0 = MOTOR.steady_speed(6.0)
    t_coast = inertia / MOTOR.viscous * math.log1p(MOTOR.viscous * w0 / MOTOR.coulomb)
    assert coast * DT == pytest.approx(t_coast, rel=0.01)


def test_coasting_draws_no_current() -> None:
    motors = bank()
    run(motors, np.array([6.0]), np.array([True]), 500)
    assert motors.current[0] > 0.0
    run(motors, np.array([6.0]), np.array([False]), 1)
    assert motors.current[0] == 0.0
    assert motors.torque()[0] == 0.0


# --- robots of several models ----------------------------------------------------------------


def test_motor_groups_step_each_robots_motors_with_its_own_parameters() -> None:
    strong = MotorParams(supply_voltage=12.0, gear_ratio=30.0)
    rows = [np.array([0, 2]), np.array([1])]
    groups = motor_banks([(rows[0], MOTOR, LOAD), (rows[1], strong, 0.0)], 3, dt=DT)
    assert isinstance(groups, MotorGroups)
    alone = [MotorBank(MOTOR, (2, 2), load_inertia=LOAD, dt=DT), MotorBank(strong, (1, 2), dt=DT)]
    voltage = np.array([[6.0, 3.0], [12.0, -12.0], [-6.0, 0.0]])
    closed = np.array([[True, True], [True, True], [True, False]])
    speeds, exact = groups.advance(voltage, closed, 25)
    for bank_alone, members in zip(alone, rows, strict=True):
        expected, expected_exact = bank_alone.advance(voltage[members], closed[members], 25)
        np.testing.assert_array_equal(speeds[members], expected)
        np.testing.assert_array_equal(exact[members], expected_exact)
        np.testing.assert_array_equal(groups.speed[members], bank_alone.speed)
    groups.step(voltage, closed, np.array([1, 2]))
    alone[1].step(voltage[[1]], closed[[1]])
    alone[0].step(voltage[[0, 2]], closed[[0, 2]], np.array([1]))
    np.testing.assert_array_equal(groups.speed[[1]], alone[1].speed)
    np.testing.assert_array_equal(groups.speed[[2]], alone[0].speed[[1]])
    assert isinstance(motor_banks([(np.arange(3), MOTOR, LOAD)], 3, dt=DT), MotorBank)


# --- closed form over k steps ------------------------------------------------------------


def pair(speed0: Array, current0: Array) -> tuple[MotorBank, MotorBank]:
    one, other = bank(len(speed0)), bank(len(speed0))
    for motors in (one, other):
        motors.speed, motors.current = speed0.copy(), current0.copy()
    return one, other


def test_advance_equals_step_by_step_for_motors_that_keep_their_direction() -> None:
    #                  accel   brake  coast  start  back   reverse-but-not-yet  brake-at-rest  coast-at-rest
    speed0 = np.array([500.0, 500.0, 500.0, 0.0, -300.0, 800.0, 0.0, 0.0])
    current0 = np.array([1.0, 0.5, 0.0, 0.0, -0.2, 1.5, 0.0, 0.0])
    voltage = np.array([6.0, 0.0, 0.0, 6.0, -3.0, -6.0, 0.0, 0.0])
    closed = np.array([True, True, False, True, True, True, True, False])
    steps = 40
    fast, slow = pair(speed0, current0)
    trajectory, invalid = fast.advance(voltage, closed, steps)
    expected = run(slow, voltage, closed, steps)
    assert trajectory.shape == (8, steps)
    assert not invalid.any()
    assert np.allclose(trajectory, expected, rtol=1e-9, atol=1e-12)
    assert np.allclose(fast.speed, slow.speed, rtol=1e-9, atol=1e-12)
    assert np.allclose(fast.current, slow.current, rtol=1e-9, atol=1e-12)


def test_advance_is_the_closed_form_over_long_blocks() -> None:
    speed0, current0 = np.array([0.0, 900.0]), np.array([0.0, 1.0])
    voltage, closed = np.array([6.0, 2.0]), np.array([True, True])
    fast, slow = pair(speed0, current0)
    for block in (7, 1, 300, 20):  # growing and reusing the precomputed powers
        trajectory, invalid = fast.advance(voltage, closed, block)
        expected = run(slow, voltage, closed, block)
        assert not invalid.any()
        assert np.allclose(trajectory, expected, rtol=1e-9, atol=0.0)
    assert np.allclose(fast.speed, slow.speed, rtol=1e-9, atol=0.0)


@pytest.mark.parametrize(
    ("speed", "current", "voltage", "closed", "why"),
    [
        (800.0, 1.5, -6.0, True, "reversed at full voltage: crosses zero"),
        (60.0, 0.0, 0.0, True, "braked to a stop within the block"),
        (30.0, 0.0, 0.0, False, "coasts to a stop within the block"),
        (0.0, 0.0, 0.1, True, "at rest, the drive cannot overcome friction"),
        (-0.5, 0.0, 0.0, False, "creeping backwards, friction stops it"),
    ],
)
def test_advance_reports_motors_that_cross_zero_or_are_held(
    speed: float, current: float, voltage: float, closed: bool, why: str
) -> None:
    # motor 0 is the case, motor 1 an ordinary one that stays valid
    speed0, current0 = np.array([speed, 400.0]), np.array([current, 0.5])
    volts, shut = np.array([voltage, 6.0]), np.array([closed, True])
    fast, slow = pair(speed0, current0)
    _, invalid = fast.advance(volts, shut, 200)
    assert invalid.tolist() == [True, False], why
    # the state of the reported motor is left untouched ...
    assert fast.speed[0] == speed
    assert fast.current[0] == current
    # ... and stepping it one by one it does reach zero (or stay held there)
    expected = run(slow, volts, shut, 200)
    assert np.any(expected[0] == 0.0) or np.any(np.sign(expected[0]) != np.sign(speed))
    assert fast.speed[1] == pytest.approx(slow.speed[1], rel=1e-9)


@settings(deadline=None, derandomize=True, max_examples=150)
@given(
    speed=st.floats(-1000.0, 1000.0),
    current=st.floats(-2.0, 2.0),
    voltage=st.floats(-6.0, 6.0),
    closed=st.booleans(),
    steps=st.integers(1, 120),
)
def test_advance_agrees_with_step_wherever_it_claims_validity(
    speed: float, current: float, voltage: float, closed: bool, steps: int
) -> None:
    fast, slow = pair(np.array([speed]), np.array([current if closed else 0.0]))
    trajectory, invalid = fast.advance(np.array([voltage]), np.array([closed]), steps)
    expected = run(slow, np.array([voltage]), np.array([closed]), steps)
    scale = max(abs(speed), float(np.max(np.abs(expected))), 1e-3)
    if invalid[0]:
        assert fast.speed[0] == speed
        # stepping it exactly, its speed does reach zero or change sign at some point
        signs = np.sign(np.concatenate([[speed], expected[0]]))
        assert np.any(signs == 0.0) or np.any(signs != signs[0])
    else:
        assert np.allclose(trajectory[0], expected[0], rtol=1e-9, atol=1e-9 * scale)
        assert fast.speed[0] == pytest.approx(slow.speed[0], rel=1e-9, abs=1e-9 * scale)


# --- parameter validation ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("resistance", 0.0),
        ("resistance", -3.0),
        ("inductance", 0.0),
        ("ke", math.nan),
        ("kt", -0.0057),
        ("rotor_inertia", 0.0),
        ("gear_ratio", math.inf),
        ("supply_voltage", -6.0),
        ("viscous", -1e-7),
        ("viscous", math.nan),
        ("coulomb", -5e-4),
        ("coulomb", math.inf),
    ],
)
def test_invalid_motor_params_raise_naming_the_field(name: str, value: float) -> None:
    with pytest.raises(HilSimError, match=rf"motor: {name} = "):
        MotorParams(**{name: value})


@pytest.mark.parametrize("name", ["viscous", "coulomb"])
def test_frictionless_motor_is_allowed(name: str) -> None:
    params = MotorParams(**{name: 0.0})
    assert params.steady_speed(6.0) > MOTOR.steady_speed(6.0)


@pytest.mark.parametrize("dt", [0.0, -1e-3, math.nan, math.inf])
def test_motor_bank_rejects_a_bad_step(dt: float) -> None:
    with pytest.raises(HilSimError, match="dt"):
        MotorBank(MOTOR, (1,), dt=dt)
