"""DC motor behind an H-bridge: electrical and mechanical model.

Per motor (vectorised over any array shape):

* electrical: ``L di/dt = V - R i - Ke w``
* mechanical: ``J dw/dt = Kt i - b w - Tc sign(w)``

with ``w`` the motor shaft speed (rad/s), ``J`` the rotor inertia plus the load
reflected through the gearbox, ``b`` viscous and ``Tc`` Coulomb friction (which also
holds a motor at rest whose torque cannot overcome it).

The motor driver (a device kind of :mod:`hil_sim.core.devices`: L298N, TB6612FNG...)
gives the terminal voltage from its pins, averaged over a PWM period, and whether the
bridge is closed: an open bridge lets the motor coast (no current flows, the motor
only slows by friction); a closed one at 0 V brakes it (terminals shorted, back-EMF
current flows).

Integration over a step of ``dt``: the current is advanced exactly for the speed at
the start of the step (the electrical time constant, ~0.3 ms, is shorter than a 1 ms
step, which would make explicit Euler unstable); the speed is advanced with the new
current and implicit viscous friction. At the fixed point both are exact, so the
steady-state speed is the analytic one.

That step is affine in the state ``(i, w)`` while the voltage and the direction of
friction stay the same: ``x' = A x + V cv + d cd``. :meth:`MotorBank.advance` uses it to
take ``k`` steps at once, ``x_k = A^k x_0 + V Q_k cv + d Q_k cd`` with the powers
precomputed, which is the same recurrence evaluated in closed form (equal to the
step-by-step result to rounding). Motors whose speed would change sign, or that sit
at rest held by friction, are reported so the caller steps them one by one instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from hil_sim.errors import HilSimError

Array = npt.NDArray[np.float64]

#: PWM duty that means always on (the device library's PWM signals: 0..1024).
ENABLE_FULL = 1024.0


@dataclass(frozen=True)
class MotorParams:
    """A small geared DC motor (defaults: a 6 V "TT" hobby gearmotor, 1:48)."""

    resistance: float = 3.0  # ohm
    inductance: float = 1.0e-3  # H
    ke: float = 0.0057  # V s/rad, at the motor shaft
    kt: float = 0.0057  # N m/A
    rotor_inertia: float = 1.0e-6  # kg m^2
    viscous: float = 1.0e-7  # N m s/rad
    coulomb: float = 5.0e-4  # N m
    gear_ratio: float = 48.0
    supply_voltage: float = 6.0  # V at full enable

    def __post_init__(self) -> None:
        for name in ("resistance", "inductance", "ke", "kt", "rotor_inertia", "gear_ratio", "supply_voltage"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise HilSimError(f"motor: {name} = {value!r} must be a positive number")
        for name in ("viscous", "coulomb"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise HilSimError(f"motor: {name} = {value!r} must be >= 0")

    def steady_speed(self, voltage: float, load_inertia: float = 0.0) -> float:
        """Analytic steady motor-shaft speed (rad/s) at a constant voltage (> the friction)."""
        del load_inertia  # inertia does not change the steady state
        drive = self.kt * voltage / self.resistance - self.coulomb
        return max(drive, 0.0) / (self.viscous + self.kt * self.ke / self.resistance)

    def steady_voltage(self, speed: float) -> float:
        """The constant voltage whose steady motor-shaft speed is ``speed`` (rad/s, signed).

        The inverse of :meth:`steady_speed`; 0 for 0 (the motor is left at rest).
        """
        if speed == 0.0:
            return 0.0
        magnitude = (abs(speed) * (self.viscous + self.kt * self.ke / self.resistance) + self.coulomb) * (
            self.resistance / self.kt
        )
        return math.copysign(magnitude, speed)

    def poles(self, load_inertia: float = 0.0) -> tuple[complex, complex]:
        """Eigenvalues (1/s) of the linear electrical-mechanical system."""
        inertia = self.rotor_inertia + load_inertia
        system = np.array(
            [
                [-self.resistance / self.inductance, -self.ke / self.inductance],
                [self.kt / inertia, -self.viscous / inertia],
            ]
        )
        first, second = np.linalg.eigvals(system)
        return complex(first), complex(second)


class _Block(NamedTuple):
    """:meth:`MotorBank.advance`'s coefficients for one block length and bridge kind."""

    #: Rows (steps,) of ``A^k[1, 0]``, ``A^k[1, 1]``, ``(Q_k cv)[1]``, ``(Q_k cd)[1]``: the speeds.
    speed: tuple[Array, Array, Array, Array]
    #: The same (0-d) at the block's end for the current: ``A^K[0, 0]``, ``A^K[0, 1]``, ...
    current: tuple[Array, Array, Array, Array]


class MotorBank:
    """The states (current, shaft speed) of many identical motors, stepped together."""

    def __init__(
        self, params: MotorParams, shape: tuple[int, ...], *, load_inertia: float = 0.0, dt: float
    ) -> None:
        if not (math.isfinite(dt) and dt > 0):
            raise HilSimError(f"motor step dt = {dt!r} must be positive")
        self.params = params
        self.dt = dt
        self.inertia = params.rotor_inertia + load_inertia
        self.current: Array = np.zeros(shape)
        self.speed: Array = np.zeros(shape)
        self._alpha = math.exp(-params.resistance * dt / params.inductance)
        self._denominator = self.inertia + params.viscous * dt
        self._powers: dict[bool, tuple[Array, Array, Array]] = {}
        self._max_block = 0
        self._blocks: dict[tuple[bool, int], _Block] = {}

    def step(
        self, voltage: Array, closed: npt.NDArray[np.bool_], rows: npt.NDArray[np.intp] | None = None
    ) -> None:
        """Advance every motor (or those of ``rows``) by ``dt`` at the given terminal voltages."""
        index = slice(None) if rows is None else rows
        p = self.params
        speed = self.speed[index]
        current = self.step_current(voltage, closed, rows)
        drive = p.kt * current
        moving = speed != 0.0
        direction = np.where(moving, np.sign(speed), np.sign(drive))
        tried = (self.inertia * speed + self.dt * (drive - p.coulomb * direction)) / self._denominator
        weak = np.abs(drive) <= p.coulomb
        # Friction holds a motor that is at rest, or stops one whose speed it reverses,
        # unless the drive torque exceeds it.
        held = weak & (~moving | (np.sign(tried) != np.sign(speed)))
        self.current[index] = current
        self.speed[index] = np.where(held, 0.0, tried)

    def step_current(
        self, voltage: Array, closed: npt.NDArray[np.bool_], rows: npt.NDArray[np.intp] | None = None
    ) -> Array:
        """The electrical half of :meth:`step`: the current after ``dt`` at the present speed.

        Returns the new current (of ``rows``) without storing it. A physics engine that
        integrates the mechanical half itself (the MuJoCo backend) takes the torque
        ``kt * current`` from here and sets :attr:`speed` from its own state.
        """
        index = slice(None) if rows is None else rows
        p = self.params
        steady = (voltage[index] - p.ke * self.speed[index]) / p.resistance
        current: Array = np.where(closed[index], steady + (self.current[index] - steady) * self._alpha, 0.0)
        return current

    def current_map(self, voltage: Array, closed: npt.NDArray[np.bool_]) -> tuple[Array, Array, Array]:
        """:meth:`step_current` as an affine map: ``i' = a * i + b - c * w`` for these voltages.

        The coefficients hold while the voltages do, so a caller stepping many times
        (the MuJoCo backend, once per physics step) computes them once per block.
        """
        p, alpha = self.params, self._alpha
        on = np.asarray(closed, dtype=float)
        a: Array = on * alpha
        b: Array = on * (1 - alpha) / p.resistance * voltage
        c: Array = on * (1 - alpha) * p.ke / p.resistance
        return a, b, c

    def _closed_form(self, closed: bool, steps: int) -> tuple[Array, Array, Array]:
        """Powers ``A^k`` (K, 2, 2) and the sums ``Q_k cv``, ``Q_k cd`` (K, 2) for k = 1..steps."""
        if steps > self._max_block:
            self._powers.clear()
            self._max_block = max(steps, 2 * self._max_block, 32)
        if closed not in self._powers:
            p, dt, alpha, den = self.params, self.dt, self._alpha, self._denominator
            if closed:
                gain = dt * p.kt / den
                a = np.array(
                    [
                        [alpha, -(1 - alpha) * p.ke / p.resistance],
                        [gain * alpha, self.inertia / den - gain * (1 - alpha) * p.ke / p.resistance],
                    ]
                )
                cv = np.array([(1 - alpha) / p.resistance, gain * (1 - alpha) / p.resistance])
            else:
                a = np.array([[0.0, 0.0], [0.0, self.inertia / den]])
                cv = np.zeros(2)
            cd = np.array([0.0, -dt * p.coulomb / den])
            powers: list[Array] = []
            sums_v: list[Array] = []
            sums_d: list[Array] = []
            power, acc_v, acc_d = np.eye(2), np.zeros(2), np.zeros(2)
            for _ in range(self._max_block):
                acc_v, acc_d = a @ acc_v + cv, a @ acc_d + cd
                power = a @ power
                powers.append(power)
                sums_v.append(acc_v)
                sums_d.append(acc_d)
            self._powers[closed] = (np.array(powers), np.array(sums_v), np.array(sums_d))
        table_a, table_v, table_d = self._powers[closed]
        return table_a[:steps], table_v[:steps], table_d[:steps]

    def _block(self, closed: bool, steps: int) -> _Block:
        """The closed form's coefficients for a block of ``steps``, laid out for :meth:`advance`.

        Cached per (closed, steps): a run takes blocks of a few lengths, and slicing the
        tables anew each block cost more numpy calls than the arithmetic itself.
        """
        block = self._blocks.get((closed, steps))
        if block is None:
            powers, sum_v, sum_d = self._closed_form(closed, steps)
            # The end's as 0-d arrays: numpy converts a scalar on every operation.
            end = (powers[-1, 0, 0], powers[-1, 0, 1], sum_v[-1, 0], sum_d[-1, 0])
            block = _Block(
                (powers[:, 1, 0].copy(), powers[:, 1, 1].copy(), sum_v[:, 1].copy(), sum_d[:, 1].copy()),
                (np.array(end[0]), np.array(end[1]), np.array(end[2]), np.array(end[3])),
            )
            self._blocks[(closed, steps)] = block
        return block

    def advance(
        self, voltage: Array, closed: npt.NDArray[np.bool_], steps: int
    ) -> tuple[Array, npt.NDArray[np.bool_]]:
        """Take ``steps`` steps at once where the closed form holds.

        Returns:
            The speeds (shape + (steps,)) along the way, and a mask of the motors for
            which the closed form did not hold (their state is left untouched; step
            them one by one with :meth:`step`).
        """
        speed0, current0 = self.speed, self.current
        direction = np.sign(np.where(speed0 != 0.0, speed0, voltage))
        i0, w0 = current0[..., None], speed0[..., None]
        v, d = voltage[..., None], direction[..., None]
        all_closed = bool(closed.all())
        kinds = (True,) if all_closed else (True, False) if closed.any() else (False,)
        trajectories = []
        for is_closed in kinds:
            (p10, p11, sv1, sd1), (p00, p01, sv0, sd0) = self._block(is_closed, steps)
            # The speed along the way moves the robot; of the current only the end matters.
            speed = p10 * i0 + p11 * w0 + v * sv1 + d * sd1
            last = p00 * current0 + p01 * speed0 + voltage * sv0
            trajectories.append((last + direction * sd0, speed))
        if len(trajectories) == 1:
            current, speed = trajectories[0]
        else:
            current = np.where(closed, trajectories[0][0], trajectories[1][0])
            speed = np.where(closed[..., None], trajectories[0][1], trajectories[1][1])
        # The closed form assumed friction kept one direction; a motor whose speed
        # changes sign needs the exact steps. So does one at rest that friction may hold,
        # unless it stays at exactly zero all the way (its direction is then 0 too).
        valid = (np.sign(speed) == d).all(axis=-1)
        if valid.all():
            self.current, self.speed = current, speed[..., -1].copy()
        else:
            self.current = np.where(valid, current, self.current)
            self.speed = np.where(valid, speed[..., -1], self.speed)
        return speed, ~valid

    def torque(self) -> Array:
        """Motor-shaft torque (N m) from the present current."""
        return self.params.kt * self.current


class MotorGroups:
    """The (N, 2) motors of robots of several models: one :class:`MotorBank` per model.

    The same interface as a bank; :attr:`speed` and :attr:`current` hold every robot's.
    Each call hands the rows of each group to its bank and takes its state back.
    """

    def __init__(self, banks: list[tuple[npt.NDArray[np.intp], MotorBank]], robots: int) -> None:
        self.banks = banks
        self.dt = banks[0][1].dt
        self.current: Array = np.zeros((robots, 2))
        self.speed: Array = np.zeros((robots, 2))
        self._group = np.zeros(robots, dtype=np.intp)
        self._local = np.zeros(robots, dtype=np.intp)
        for group, (rows, _) in enumerate(banks):
            self._group[rows] = group
            self._local[rows] = np.arange(len(rows))

    def _lend(self, rows: npt.NDArray[np.intp], bank: MotorBank) -> None:
        bank.current, bank.speed = self.current[rows], self.speed[rows]

    def _take(self, rows: npt.NDArray[np.intp], bank: MotorBank) -> None:
        self.current[rows], self.speed[rows] = bank.current, bank.speed

    def step(
        self, voltage: Array, closed: npt.NDArray[np.bool_], rows: npt.NDArray[np.intp] | None = None
    ) -> None:
        """:meth:`MotorBank.step` of every robot (or of ``rows``)."""
        for group, (members, bank) in enumerate(self.banks):
            self._lend(members, bank)
            local = None if rows is None else self._local[rows[self._group[rows] == group]]
            if local is None or local.size:
                bank.step(voltage[members], closed[members], local)
            self._take(members, bank)

    def step_current(
        self, voltage: Array, closed: npt.NDArray[np.bool_], rows: npt.NDArray[np.intp] | None = None
    ) -> Array:
        """:meth:`MotorBank.step_current` of every robot (or of ``rows``)."""
        current = self.current.copy()
        for members, bank in self.banks:
            self._lend(members, bank)
            current[members] = bank.step_current(voltage[members], closed[members])
        result: Array = current if rows is None else current[rows]
        return result

    def current_map(self, voltage: Array, closed: npt.NDArray[np.bool_]) -> tuple[Array, Array, Array]:
        """:meth:`MotorBank.current_map` of every robot."""
        a, b, c = np.zeros_like(voltage), np.zeros_like(voltage), np.zeros_like(voltage)
        for members, bank in self.banks:
            a[members], b[members], c[members] = bank.current_map(voltage[members], closed[members])
        return a, b, c

    def advance(
        self, voltage: Array, closed: npt.NDArray[np.bool_], steps: int
    ) -> tuple[Array, npt.NDArray[np.bool_]]:
        """:meth:`MotorBank.advance` of every robot."""
        speeds = np.zeros((*self.speed.shape, steps))
        exact = np.zeros(self.speed.shape, dtype=bool)
        for members, bank in self.banks:
            self._lend(members, bank)
            speeds[members], exact[members] = bank.advance(voltage[members], closed[members], steps)
            self._take(members, bank)
        return speeds, exact

    def torque(self) -> Array:
        """Motor-shaft torque (N m) from the present current."""
        torque = np.zeros_like(self.current)
        for members, bank in self.banks:
            torque[members] = bank.params.kt * self.current[members]
        return torque


def motor_banks(
    groups: list[tuple[npt.NDArray[np.intp], MotorParams, float]], robots: int, *, dt: float
) -> MotorBank | MotorGroups:
    """The motors of ``robots`` robots: (rows, motor, load inertia) per group of one model.

    One group is one plain :class:`MotorBank`.
    """
    if len(groups) == 1:
        _, params, load = groups[0]
        return MotorBank(params, (robots, 2), load_inertia=load, dt=dt)
    return MotorGroups(
        [
            (rows, MotorBank(params, (len(rows), 2), load_inertia=load, dt=dt))
            for rows, params, load in groups
        ],
        robots,
    )
