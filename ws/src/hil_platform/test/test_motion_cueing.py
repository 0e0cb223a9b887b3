"""Motion cueing: the washout filter's channels, its limits, and the acceleration estimator."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_platform.core.motion_cueing import GRAVITY, AccelerationEstimator, CueingConfig, MotionCueing
from hil_platform.core.motion_platform import (
    Command,
    ErrorCode,
    PlatformGeometry,
    PlatformState,
    PlatformStateMachine,
    Reply,
    actuator_lengths,
    pack,
    split_status,
    unpack,
)
from hil_platform.errors import HilPlatformError

GEOMETRY = PlatformGeometry()
CONFIG = CueingConfig()
ROLL, PITCH, HEAVE, SURGE, YAW, LATERAL = range(6)
ZERO = (0.0, 0.0, 0.0)


def run(cueing: MotionCueing, seconds: float, acceleration=ZERO, angular_velocity=ZERO) -> list:
    return [cueing.step(acceleration, angular_velocity) for _ in range(round(seconds / CONFIG.period))]


def started_platform() -> PlatformStateMachine:
    machine = PlatformStateMachine(GEOMETRY)
    for command in (Command.ENGAGE, Command.START):
        machine.handle(pack(command))
    return machine


def test_step_acceleration_gives_an_onset_that_washes_back_to_neutral() -> None:
    cueing = MotionCueing(GEOMETRY)
    cues = run(cueing, 20.0, acceleration=(1.0, 0.0, 0.0))
    onset = [c.acceleration[0] for c in cues]
    surge = [c.pose[SURGE] for c in cues]
    # The platform's acceleration starts near the scaled step (Tustin averages the
    # first sample) and is at its largest there...
    assert 0.8 * CONFIG.translation_scale <= onset[0] <= CONFIG.translation_scale
    assert max(onset) == onset[0]
    # ...it moves forward, then returns to neutral.
    assert max(surge) > 0.002
    assert min(surge) > -1e-6
    assert abs(surge[-1]) < 1e-6
    assert abs(onset[-1]) < 1e-6
    assert not any(c.limited for c in cues)


def test_sustained_acceleration_turns_into_tilt_within_the_rate_limit() -> None:
    cueing = MotionCueing(GEOMETRY)
    cues = run(cueing, 10.0, acceleration=(0.5, 0.0, 0.0))
    pitch = np.array([0.0] + [c.pose[PITCH] for c in cues])
    steps = np.abs(np.diff(pitch))
    assert steps.max() <= CONFIG.tilt_rate_limit * CONFIG.period * (1 + 1e-6)
    # Forward acceleration tilts the nose up (negative pitch, REP-103) until gravity
    # gives the sustained acceleration.
    want = -math.asin(CONFIG.tilt_scale * 0.5 / GRAVITY)
    assert pitch[-1] == pytest.approx(want, rel=1e-4)
    assert abs(cues[-1].pose[ROLL]) < 1e-9
    # It takes at least as long as the rate limit allows.
    reached = int(np.argmax(pitch <= 0.99 * want))
    assert reached * CONFIG.period >= 0.99 * abs(want) / CONFIG.tilt_rate_limit


def test_lateral_acceleration_rolls_towards_the_felt_side() -> None:
    cueing = MotionCueing(GEOMETRY)
    cues = run(cueing, 10.0, acceleration=(0.0, 0.8, 0.0))
    assert cues[-1].pose[ROLL] == pytest.approx(math.asin(0.8 / GRAVITY), rel=1e-4)
    assert max(c.pose[LATERAL] for c in cues) > 0.002
    assert abs(cues[-1].pose[LATERAL]) < 1e-6


def test_constant_yaw_rate_gives_an_onset_that_washes_back_to_neutral() -> None:
    cueing = MotionCueing(GEOMETRY)
    yaw = [c.pose[YAW] for c in run(cueing, 15.0, angular_velocity=(0.0, 0.0, 1.0))]
    assert yaw[1] > yaw[0] > 0
    assert max(yaw) > 0.05
    assert abs(yaw[-1]) < 1e-5


def test_reset_brings_every_channel_back_to_neutral() -> None:
    cueing = MotionCueing(GEOMETRY)
    run(cueing, 1.0, acceleration=(1.0, -1.0, 0.5), angular_velocity=(0.1, 0.1, 1.0))
    cueing.reset()
    assert cueing.step(ZERO, ZERO).pose == (0.0,) * 6


def test_large_inputs_are_limited_and_counted() -> None:
    cueing = MotionCueing(GEOMETRY)
    cues = run(cueing, 5.0, acceleration=(15.0, 15.0, 15.0), angular_velocity=(3.0, 3.0, 3.0))
    assert any(c.limited for c in cues)
    assert cueing.limited == sum(c.limited for c in cues)


def test_a_pose_beyond_the_actuators_is_scaled_towards_neutral() -> None:
    cueing = MotionCueing(GEOMETRY)
    wanted = (0.26, 0.26, 0.03, 0.03, 0.35, 0.03)  # every axis at its limit: too far together
    pose, limited = cueing.limit(wanted)
    assert limited
    lengths = actuator_lengths(pose, GEOMETRY)
    margin = CONFIG.length_margin
    assert lengths.min() >= GEOMETRY.min_length + margin
    assert lengths.max() <= GEOMETRY.max_length - margin
    # Scaled, not distorted: every axis keeps its sign and the ratios between them.
    ratios = np.array(pose) / np.array([0.234, 0.234, 0.027, 0.027, 0.315, 0.027])
    np.testing.assert_allclose(ratios, ratios[0], rtol=1e-5)
    # A small pose passes unchanged.
    assert cueing.limit((0.01, 0.0, 0.0, 0.0, 0.0, 0.0))[1] is False


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_non_finite_input_is_refused_naming_it(value: float) -> None:
    cueing = MotionCueing(GEOMETRY)
    with pytest.raises(HilPlatformError, match="acceleration"):
        cueing.step((value, 0.0, 0.0), ZERO)
    with pytest.raises(HilPlatformError, match="angular_velocity"):
        cueing.step(ZERO, (0.0, 0.0))
    assert cueing.steps == 0


@pytest.mark.parametrize(
    ("field", "value"),
    [("period", 0.0), ("tilt_rate_limit", -1.0), ("limit_fraction", 1.5), ("translation_scale", math.nan)],
)
def test_bad_config_is_refused_naming_the_field(field: str, value: float) -> None:
    with pytest.raises(HilPlatformError, match=field):
        CueingConfig(**{field: value})


def test_a_margin_that_leaves_no_room_is_refused() -> None:
    with pytest.raises(HilPlatformError, match="length_margin"):
        MotionCueing(GEOMETRY, CueingConfig(length_margin=0.05))


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
vectors = st.tuples(finite, finite, finite)


@settings(deadline=None, max_examples=60)
@given(
    inputs=st.lists(st.tuples(vectors, vectors), min_size=1, max_size=40),
    hold=st.integers(min_value=1, max_value=25),
)
def test_every_pose_is_within_the_limits_and_accepted_by_the_platform(
    inputs: list[tuple[tuple[float, ...], tuple[float, ...]]], hold: int
) -> None:
    cueing = MotionCueing(GEOMETRY)
    machine = started_platform()
    limits = np.float32(GEOMETRY.dof_limits) * np.float32(CONFIG.limit_fraction)
    for acceleration, angular_velocity in inputs:
        for _ in range(hold):
            pose = cueing.step(acceleration, angular_velocity).pose
            assert all(np.float32(v) == v for v in pose)  # exactly what the datagram carries
            assert np.all(np.abs(pose) <= limits)
            lengths = actuator_lengths(pose, GEOMETRY)
            assert lengths.min() >= GEOMETRY.min_length + CONFIG.length_margin
            assert lengths.max() <= GEOMETRY.max_length - CONFIG.length_margin
            reply = unpack(machine.handle(pack(Command.DOF, pose)))
            assert reply.type == Reply.STATE, split_status(reply.spare)
    assert machine.state == PlatformState.STARTED
    assert machine.rejected.get(ErrorCode.OUT_OF_RANGE, 0) == 0


# --- acceleration from odometry -----------------------------------------------------------------


def test_estimator_differences_speed_and_adds_the_centripetal_term() -> None:
    estimator = AccelerationEstimator()
    assert estimator.update(0.0, (0.2, 0.0, 0.0), (0.0, 0.0, 1.0)) is None  # nothing to difference yet
    result = estimator.update(0.02, (0.22, 0.0, 0.0), (0.0, 0.0, 1.0))
    assert result is not None
    acceleration, angular = result
    # dv/dt forward, and v * w towards the centre (left, for a left turn).
    np.testing.assert_allclose(acceleration, (1.0, 0.21, 0.0), atol=1e-9)
    np.testing.assert_allclose(angular, (0.0, 0.0, 1.0))


def test_estimator_starts_afresh_after_a_gap() -> None:
    estimator = AccelerationEstimator(max_gap=0.5)
    estimator.update(0.0, (0.0, 0.0, 0.0), ZERO)
    assert estimator.update(1.0, (1.0, 0.0, 0.0), ZERO) is None
    result = estimator.update(1.1, (1.0, 0.0, 0.0), ZERO)
    assert result is not None
    np.testing.assert_allclose(result[0], ZERO, atol=1e-12)


def test_estimator_smoothing_damps_a_glitch_and_keeps_a_constant_acceleration() -> None:
    def peak_and_last(smoothing: float) -> tuple[float, float]:
        estimator = AccelerationEstimator(smoothing=smoothing)
        values = []
        for k in range(60):
            speed = 0.5 * k * 0.02 + (0.01 if k == 10 else 0.0)  # one sample 1 cm/s off
            result = estimator.update(k * 0.02, (speed, 0.0, 0.0), ZERO)
            if result is not None:
                values.append(float(result[0][0]))
        return max(values), values[-1]

    raw_peak, raw_last = peak_and_last(0.0)
    smooth_peak, smooth_last = peak_and_last(0.05)
    assert raw_peak == pytest.approx(1.0)  # 0.5 + 0.01 / 0.02
    assert smooth_peak < 0.5 + 0.5 * (raw_peak - 0.5)
    assert raw_last == pytest.approx(0.5) and smooth_last == pytest.approx(0.5, abs=1e-3)


@pytest.mark.parametrize(
    ("stamp", "linear", "match"),
    [(0.0, (0.1, 0.0, 0.0), "repeats"), (2.0, (math.nan, 0.0, 0.0), "linear"), (math.inf, ZERO, "stamp")],
)
def test_estimator_refuses_bad_samples_and_keeps_its_state(
    stamp: float, linear: tuple[float, ...], match: str
) -> None:
    estimator = AccelerationEstimator()
    estimator.update(0.0, (0.0, 0.0, 0.0), ZERO)
    with pytest.raises(HilPlatformError, match=match):
        estimator.update(stamp, linear, ZERO)
    result = estimator.update(0.1, (0.1, 0.0, 0.0), ZERO)
    assert result is not None
    assert result[0][0] == pytest.approx(1.0)


def test_estimator_starts_afresh_when_time_goes_back() -> None:
    estimator = AccelerationEstimator()
    estimator.update(10.0, (1.0, 0.0, 0.0), ZERO)
    assert estimator.update(0.0, (0.0, 0.0, 0.0), ZERO) is None  # the simulation was reset
    result = estimator.update(0.1, (0.1, 0.0, 0.0), ZERO)
    assert result is not None
    assert result[0][0] == pytest.approx(1.0)
