"""The go-to controller's core, on a differential-drive robot with motor lag and stiction."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_common.core.kinematics import wrap_angle
from hil_testing.core.goto import GotoGains, GotoGoal, GotoRun, write_goto_report
from hil_testing.errors import HilTestingError

#: Wheel speeds follow the command with this time constant (the demo motor's ~0.11 s).
TAU = 0.11
#: Wheel surface speeds below this do not move (Coulomb friction), m/s.
STICTION = 0.02
FRAME = 1 / 30


def drive(run: GotoRun, x: float, y: float, yaw: float, *, limit: float = 60.0) -> tuple[float, float, float]:
    """Run the controller at 30 Hz on a robot whose wheels lag and stick; the final pose."""
    half_base = 0.07
    left = right = 0.0
    t = 0.0
    while not run.finished and t < limit:
        linear, angular = run.update(t, x, y, yaw)
        targets = (linear - angular * half_base, linear + angular * half_base)
        # A wheel asked for less than the stiction speed stays put (it coasts down to rest).
        goals = [target if abs(target) >= STICTION else 0.0 for target in targets]
        for _ in range(10):
            dt = FRAME / 10
            left += (goals[0] - left) * dt / TAU
            right += (goals[1] - right) * dt / TAU
            v, w = (left + right) / 2, (right - left) / (2 * half_base)
            x += v * math.cos(yaw) * dt
            y += v * math.sin(yaw) * dt
            yaw = wrap_angle(yaw + w * dt)
        t += FRAME
    return x, y, yaw


@settings(max_examples=30, deadline=None)
@given(
    gx=st.floats(-1.5, 1.5),
    gy=st.floats(-1.5, 1.5),
    gyaw=st.floats(-math.pi, math.pi),
    start_yaw=st.floats(-math.pi, math.pi),
)
def test_controller_reaches_any_goal_within_its_tolerances(
    gx: float, gy: float, gyaw: float, start_yaw: float
) -> None:
    run = GotoRun(GotoGoal(gx, gy, gyaw, timeout=30.0))
    drive(run, 0.0, 0.0, start_yaw)
    result = run.result()
    assert result.reached, (result.position_error, result.yaw_error)
    assert result.position_error <= 2 * run.goal.tolerance
    assert abs(result.yaw_error) <= 2 * run.goal.yaw_tolerance


def test_result_reports_time_path_and_distance(tmp_path: Path) -> None:
    run = GotoRun(GotoGoal(1.0, 0.0, 0.0))
    drive(run, 0.0, 0.0, 0.0)
    result = run.result()
    assert result.reached
    assert 1.0 / 0.3 < result.time < 8.0  # at most 0.3 m/s, with spin-up and the slow final approach
    assert result.distance_travelled == pytest.approx(1.0, abs=0.05)
    assert result.path[0][:3] == (0.0, 0.0, 0.0)
    data_path, picture_path = write_goto_report(result, tmp_path)
    data = json.loads(data_path.read_text())
    assert data["reached"] is True
    assert len(data["path"]["x_m"]) == len(result.path)
    assert picture_path.stat().st_size > 10_000


def test_run_that_cannot_reach_its_goal_stops_at_the_timeout_not_reached() -> None:
    run = GotoRun(GotoGoal(5.0, 0.0, 0.0, timeout=2.0))
    x, _, _ = drive(run, 0.0, 0.0, 0.0)
    result = run.result()
    assert run.finished
    assert not result.reached
    assert result.time == pytest.approx(2.0, abs=2 * FRAME)
    assert x < 1.0
    assert run.update(3.0, x, 0.0, 0.0) == (0.0, 0.0)  # finished: zero from now on


def test_controller_turns_on_the_spot_first_when_the_goal_is_behind() -> None:
    run = GotoRun(GotoGoal(-1.0, 0.0, 0.0))
    linear, angular = run.update(0.0, 0.0, 0.0, 0.0)
    assert linear == 0.0
    assert abs(angular) >= GotoGains().min_angular


@pytest.mark.parametrize(
    ("angle", "wrapped"),
    [(0.0, 0.0), (math.pi, math.pi), (-math.pi, math.pi), (3 * math.pi / 2, -math.pi / 2)],
)
def test_wrap_angle_gives_minus_pi_to_pi(angle: float, wrapped: float) -> None:
    assert wrap_angle(angle) == pytest.approx(wrapped)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: GotoGoal(math.nan, 0.0), "x = nan"),
        (lambda: GotoGoal(0.0, 0.0, tolerance=0.0), "tolerance = 0.0"),
        (lambda: GotoGoal(0.0, 0.0, settle=-1.0), "settle = -1.0"),
        (lambda: GotoGains(max_linear=-1.0), "max_linear = -1.0"),
        (lambda: GotoGains(min_linear=0.5, max_linear=0.3), "minimum speed is above its maximum"),
    ],
)
def test_bad_goal_or_gains_name_the_field(make: object, message: str) -> None:
    with pytest.raises(HilTestingError, match=message):
        make()  # type: ignore[operator]


def test_result_without_any_pose_says_so() -> None:
    with pytest.raises(HilTestingError, match="no pose"):
        GotoRun(GotoGoal(1.0, 0.0)).result()
