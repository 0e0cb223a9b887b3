"""Motor step test: a command step, the wheels' response, a first-order fit, the model's view.

The test runs the same wherever its samples come from (``hil_step`` on
``joint_states``, or the lockstep session on the simulator's state): a
:class:`StepRun` is told the time and both wheel speeds of every sample and answers
with the body twist to command then (zero while the wheels settle, the step's twist
for ``duration`` seconds, then zero). Time is the samples' own (their stamps), so it
is simulated time against the simulator and wall time against a real robot alike.

The step is given as motor commands (``DRV`` units, -max_command..max_command) and
sent as the ``cmd_vel`` twist the control loop turns back into exactly those
commands (:func:`robot_control.core.kinematics.commands_to_twist`), because a user
has ``cmd_vel``, not the MCU's port.

Each wheel's response is fitted with a first-order model with dead time,
``y = y0 + K u (1 - exp(-(t - theta) / tau))`` for ``t >= theta`` (:func:`fit_first_order`),
and compared with what the DC motor model of :mod:`hil_sim.core.motor` expects at that
command (:func:`model_expectation`): the steady wheel speed per command unit and the
slow pole's time constant with half the robot's mass reflected onto each wheel (a
straight step; a turning step loads the wheels differently). The dead time is the
whole chain's (cmd_vel, loop frame, serial line, MCU, PWM, bridge), which the motor
model does not know; it is reported, not compared.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hil_sim.core.robot_model import RobotModel, demo_robot
from hil_testing.errors import HilTestingError
from robot_control.core.kinematics import DriveGeometry, commands_to_twist

Array = npt.NDArray[np.float64]

#: Wheel names in the order of ``joint_states`` and of every pair here.
WHEELS = ("left", "right")
#: Fewest samples after the step that a fit accepts.
MIN_SAMPLES = 8


@dataclass(frozen=True)
class FirstOrderFit:
    """``y = offset + gain * u * (1 - exp(-(t - dead_time) / tau))`` after the dead time."""

    gain: float  # output per command unit (rad/s per DRV unit for a wheel)
    tau: float  # s
    dead_time: float  # s
    offset: float  # output before the step
    rmse: float  # root mean square residual, output units
    samples: int

    def predict(self, t: Array, command: float) -> Array:
        """The fitted response at times ``t`` (s after the step) to a step of ``command``."""
        after = np.clip(np.asarray(t, dtype=float) - self.dead_time, 0.0, None)
        result: Array = self.offset + self.gain * command * (1.0 - np.exp(-after / self.tau))
        return result


def _model(params: Array, t: Array, command: float, offset: float) -> tuple[Array, Array]:
    """Response and Jacobian (d/d gain, tau, dead_time) of the first-order model."""
    gain, tau, dead = params
    after = t - dead
    live = after > 0
    decay = np.where(live, np.exp(-np.clip(after, 0.0, None) / tau), 1.0)
    value = offset + gain * command * (1.0 - decay)
    jacobian = np.empty((t.size, 3))
    jacobian[:, 0] = command * (1.0 - decay)
    jacobian[:, 1] = np.where(live, -gain * command * decay * after / tau**2, 0.0)
    jacobian[:, 2] = np.where(live, -gain * command * decay / tau, 0.0)
    return value, jacobian


def _crossing(t: Array, y: Array, level: float, rising: bool) -> float | None:
    """First time ``y`` reaches ``level``, interpolated between samples."""
    reached = y >= level if rising else y <= level
    index = int(np.argmax(reached))
    if not reached[index]:
        return None
    if index == 0:
        return float(t[0])
    t0, t1, y0, y1 = t[index - 1], t[index], y[index - 1], y[index]
    return float(t0 + (level - y0) / (y1 - y0) * (t1 - t0)) if y1 != y0 else float(t1)


def fit_first_order(
    t: npt.ArrayLike, y: npt.ArrayLike, *, command: float, offset: float = 0.0
) -> FirstOrderFit:
    """Fit gain, time constant and dead time of a step response (Levenberg-Marquardt).

    Args:
        t: sample times, s after the step was commanded (samples before it are ignored).
        y: the output at those times.
        command: the step's size (non-zero).
        offset: the output before the step (the mean of the samples before it).

    Raises:
        HilTestingError: too few samples after the step, a zero command, or no response.
    """
    times, values = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    if times.shape != values.shape:
        raise HilTestingError(f"step fit: {times.size} times but {values.size} values")
    keep = (times >= 0) & np.isfinite(values) & np.isfinite(times)
    times, values = times[keep], values[keep]
    if times.size < MIN_SAMPLES:
        raise HilTestingError(f"step fit: {times.size} samples after the step, need at least {MIN_SAMPLES}")
    if not (math.isfinite(command) and command != 0):
        raise HilTestingError(f"step fit: command = {command!r} must be a non-zero number")
    tail = values[-max(3, values.size // 5) :]
    final = float(tail.mean())
    rise = final - offset
    noise = float(tail.std())
    if abs(rise) <= max(3 * noise, 1e-9):
        raise HilTestingError(
            f"step fit: no response to the step "
            f"(output moved {rise:.4g} from {offset:.4g}, noise {noise:.3g})"
        )
    rising = rise > 0
    start = _crossing(times, values, offset + 0.1 * rise, rising) or float(times[0])
    t63 = _crossing(times, values, offset + 0.632 * rise, rising) or float(times[-1])
    span = float(times[-1] - times[0]) or 1.0
    tau0 = max((t63 - start) / (1.0 - 0.105), span * 1e-3)  # from 10 % to 63 %: 0.9 tau
    dead0 = max(start - 0.105 * tau0, 0.0)
    params = np.array([rise / command, tau0, dead0])

    def cost_of(p: Array) -> tuple[float, Array, Array]:
        value, jac = _model(p, times, command, offset)
        residual = values - value
        return float(residual @ residual), residual, jac

    cost, residual, jac = cost_of(params)
    damping = 1e-3
    for _ in range(200):
        normal = jac.T @ jac
        step = np.linalg.solve(normal + damping * np.diag(np.diag(normal) + 1e-12), jac.T @ residual)
        trial = params + step
        trial[1] = max(trial[1], span * 1e-4)
        trial[2] = min(max(trial[2], 0.0), float(times[-1]))
        trial_cost, trial_residual, trial_jac = cost_of(trial)
        if trial_cost < cost:
            improvement = (cost - trial_cost) / max(cost, 1e-300)
            params, cost, residual, jac = trial, trial_cost, trial_residual, trial_jac
            damping = max(damping / 3, 1e-9)
            if improvement < 1e-10:
                break
        else:
            damping *= 4
            if damping > 1e10:
                break
    return FirstOrderFit(
        gain=float(params[0]),
        tau=float(params[1]),
        dead_time=float(params[2]),
        offset=offset,
        rmse=math.sqrt(cost / times.size),
        samples=int(times.size),
    )


@dataclass(frozen=True)
class ModelExpectation:
    """What the DC motor model expects of one wheel for a step of ``command``."""

    command: float
    gain: float  # steady wheel speed per command unit, rad/s
    tau: float  # time constant of the slow pole, s
    steady_speed: float  # wheel rad/s


def model_expectation(
    command: float, *, max_command: int = 255, robot: RobotModel | None = None
) -> ModelExpectation:
    """The motor model's steady speed and time constant for a wheel stepped to ``command``.

    The voltage is the supply times ``|command| / max_command`` (the PWM duty); the
    load is half the robot's mass reflected through the gearbox (a straight step).

    Raises:
        HilTestingError: a zero command or one beyond ``max_command``.
    """
    if not (math.isfinite(command) and 0 < abs(command) <= max_command):
        raise HilTestingError(f"command = {command!r} must be non-zero and within +-{max_command}")
    robot = robot or demo_robot()
    motor = robot.motor
    voltage = motor.supply_voltage * abs(command) / max_command
    speed = math.copysign(motor.steady_speed(voltage) / motor.gear_ratio, command)
    slow = max(pole.real for pole in motor.poles(robot.load_inertia))
    return ModelExpectation(command=command, gain=speed / command, tau=-1.0 / slow, steady_speed=speed)


@dataclass(frozen=True)
class StepPlan:
    """The step: motor commands per wheel, how long to settle before and to hold it."""

    left: int = 150
    right: int = 150
    settle: float = 1.0  # s of zero command before the step
    duration: float = 2.0  # s the step is held
    geometry: DriveGeometry = field(default_factory=DriveGeometry)

    def __post_init__(self) -> None:
        limit = self.geometry.max_command
        for name in ("left", "right"):
            value = getattr(self, name)
            if not (isinstance(value, int) and abs(value) <= limit):
                raise HilTestingError(f"step: {name} = {value!r} must be an integer within +-{limit}")
        if self.left == 0 and self.right == 0:
            raise HilTestingError("step: left and right are both 0: nothing to step")
        for name in ("settle", "duration"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise HilTestingError(f"step: {name} = {value!r} must be a positive number of seconds")

    @property
    def twist(self) -> tuple[float, float]:
        """The cmd_vel (linear m/s, angular rad/s) the loop turns into these commands."""
        return commands_to_twist(self.left, self.right, self.geometry)

    @property
    def commands(self) -> tuple[int, int]:
        """(left, right)."""
        return self.left, self.right


class StepRun:
    """One step test fed with samples; says what to command and fits at the end."""

    def __init__(self, plan: StepPlan) -> None:
        self.plan = plan
        #: Time of the first sample; the step begins ``settle`` after it.
        self.started: float | None = None
        self.times: list[float] = []
        self.speeds: list[tuple[float, float]] = []
        #: The (left, right) commands the MCU reported (TL1) during the step, last seen.
        self.mcu_command: tuple[float, float] | None = None

    @property
    def step_time(self) -> float | None:
        """When the step is commanded (sample time), once the first sample came."""
        return None if self.started is None else self.started + self.plan.settle

    @property
    def end_time(self) -> float | None:
        """When the step ends."""
        return None if self.started is None else self.started + self.plan.settle + self.plan.duration

    @property
    def finished(self) -> bool:
        """Every sample the test needs has come."""
        return bool(self.times) and self.end_time is not None and self.times[-1] >= self.end_time

    def command_at(self, t: float) -> tuple[float, float]:
        """The twist (linear, angular) to command at time ``t``."""
        step, end = self.step_time, self.end_time
        if step is None or end is None or not (step <= t < end):
            return 0.0, 0.0
        return self.plan.twist

    def sample(self, t: float, left: float, right: float) -> tuple[float, float]:
        """Take one sample of both wheel speeds (rad/s); returns the twist to command now."""
        if self.started is None:
            self.started = t
        if not self.times or t > self.times[-1]:
            self.times.append(t)
            self.speeds.append((left, right))
        return self.command_at(t)

    def telemetry(self, t: float, values: dict[str, float]) -> None:
        """A TL1 (motor commands) report: kept when it falls in the step."""
        step, end = self.step_time, self.end_time
        if step is not None and end is not None and step <= t <= end and {"left", "right"} <= set(values):
            self.mcu_command = (values["left"], values["right"])

    def result(self, *, tolerance: float = 0.2, robot: RobotModel | None = None) -> StepResult:
        """Fit both wheels and compare with the motor model.

        Raises:
            HilTestingError: the run has not finished, or a wheel cannot be fitted.
        """
        step = self.step_time
        if step is None or not self.finished:
            raise HilTestingError("step test: not finished (no samples up to the end of the step)")
        times = np.asarray(self.times) - step
        speeds = np.asarray(self.speeds)
        before = times < 0
        wheels = {}
        for index, name in enumerate(WHEELS):
            command = self.plan.commands[index]
            if command == 0:
                continue
            offset = float(speeds[before, index].mean()) if before.any() else 0.0
            fit = fit_first_order(times, speeds[:, index], command=command, offset=offset)
            model = model_expectation(command, max_command=self.plan.geometry.max_command, robot=robot)
            wheels[name] = WheelResult(fit=fit, model=model)
        return StepResult(
            plan=self.plan,
            wheels=wheels,
            tolerance=tolerance,
            times=[float(v) for v in times],
            speeds=[(float(a), float(b)) for a, b in speeds],
            mcu_command=self.mcu_command,
        )


@dataclass(frozen=True)
class WheelResult:
    """One wheel's fit next to the model's expectation."""

    fit: FirstOrderFit
    model: ModelExpectation

    @property
    def gain_error(self) -> float:
        """Relative difference of the fitted gain from the model's."""
        return (self.fit.gain - self.model.gain) / self.model.gain

    @property
    def tau_error(self) -> float:
        """Relative difference of the fitted time constant from the model's."""
        return (self.fit.tau - self.model.tau) / self.model.tau


@dataclass(frozen=True)
class StepResult:
    """A finished step test: fits, model, the samples (times relative to the step)."""

    plan: StepPlan
    wheels: dict[str, WheelResult]
    tolerance: float
    times: list[float]
    speeds: list[tuple[float, float]]
    mcu_command: tuple[float, float] | None = None

    @property
    def passed(self) -> bool:
        """Every stepped wheel's gain and time constant within ``tolerance`` of the model's."""
        return bool(self.wheels) and all(
            abs(w.gain_error) <= self.tolerance and abs(w.tau_error) <= self.tolerance
            for w in self.wheels.values()
        )

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data (samples included)."""
        linear, angular = self.plan.twist
        return {
            "command": {"left": self.plan.left, "right": self.plan.right},
            "cmd_vel": {"linear": linear, "angular": angular},
            "settle_s": self.plan.settle,
            "duration_s": self.plan.duration,
            "mcu_command": None
            if self.mcu_command is None
            else {"left": self.mcu_command[0], "right": self.mcu_command[1]},
            "tolerance": self.tolerance,
            "passed": self.passed,
            "wheels": {
                name: {
                    "fit": {**asdict(w.fit), "unit": "wheel rad/s per command unit; s"},
                    "model": asdict(w.model),
                    "gain_error": w.gain_error,
                    "tau_error": w.tau_error,
                }
                for name, w in self.wheels.items()
            },
            "samples": {
                "t_s": self.times,
                "left_rad_s": [s[0] for s in self.speeds],
                "right_rad_s": [s[1] for s in self.speeds],
            },
        }


def write_step_report(result: StepResult, folder: Path) -> tuple[Path, Path]:
    """Write ``step.json`` and ``step.png`` into ``folder``; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    data_path, picture_path = folder / "step.json", folder / "step.png"
    data_path.write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    _draw_step(result, picture_path)
    return data_path, picture_path


def _draw_step(result: StepResult, path: Path) -> None:
    from matplotlib.figure import Figure  # noqa: PLC0415 - only when a report is written (no pyplot)

    fig = Figure(figsize=(8, 5))
    ax = fig.subplots()
    times = np.asarray(result.times)
    speeds = np.asarray(result.speeds).reshape(-1, 2)
    dense = np.linspace(min(0.0, float(times.min(initial=0.0))), float(times.max(initial=1.0)), 400)
    for index, (name, color) in enumerate(zip(WHEELS, ("tab:blue", "tab:orange"), strict=True)):
        ax.plot(times, speeds[:, index], ".", ms=3, color=color, label=f"{name} wheel")
        wheel = result.wheels.get(name)
        if wheel is None:
            continue
        command = result.plan.commands[index]
        ax.plot(
            dense,
            wheel.fit.predict(dense, command) * (dense >= 0),
            "-",
            color=color,
            label=f"{name} fit: K {wheel.fit.gain:.4f}, tau {wheel.fit.tau * 1e3:.0f} ms, "
            f"dead {wheel.fit.dead_time * 1e3:.0f} ms",
        )
        model = FirstOrderFit(
            wheel.model.gain, wheel.model.tau, wheel.fit.dead_time, wheel.fit.offset, 0.0, 0
        )
        ax.plot(
            dense,
            model.predict(dense, command) * (dense >= 0),
            "--",
            color=color,
            alpha=0.6,
            label=f"{name} motor model: K {wheel.model.gain:.4f}, tau {wheel.model.tau * 1e3:.0f} ms",
        )
    ax.axvline(0.0, color="gray", lw=0.8)
    ax.set_xlabel("time after the step (s)")
    ax.set_ylabel("wheel speed (rad/s)")
    verdict = "within" if result.passed else "NOT within"
    ax.set_title(
        f"step to ({result.plan.left}, {result.plan.right}): "
        f"{verdict} {result.tolerance:.0%} of the motor model"
    )
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
