"""The simulator's end of the MCU link: pins in, the silence rule, sensor signals out.

One module for every simulator of the world: the ``sim`` node (robots of a
:class:`~hil_sim.core.simulation.Simulation`) and the Gazebo adapter (its one robot)
both hold a :class:`McuPort` over what they simulate (a :class:`PortTarget`).

* Pins in: the INPUT signals of the signal link (``hil/signals/to_sim``, or a direct
  call in one process), ``device.signal`` names of the robot's devices
  (:class:`~hil_sim.core.device_set.DeviceSet`); names the robot does not have are
  handed back (the node warns once). They are kept until :meth:`McuPort.flush`, which
  the owner calls at the start of its next step: pins count from a period's boundary.
* Silence: no pins from a robot's MCU for ``pin_timeout`` (on the MCU's clock) while
  its motors are driven, and its motors coast (a dead MCU's outputs float): the target
  lets the wheels go until pins come again.
* Signals out: the robot's OUTPUT signals, from its devices' last sample and their
  state as of now (:meth:`McuPort.outputs`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from hil_sim.core.device_set import DeviceSet


class PortTarget(Protocol):
    """What the port drives: robots with devices (a simulation, the Gazebo adapter)."""

    def devices_of(self, robot: int) -> tuple[DeviceSet, int]:
        """Robot ``robot``'s device set and its row there."""
        ...

    def take_inputs(self, robot: int, signals: Iterable[tuple[str, str, float]]) -> tuple[bool, list[str]]:
        """Store robot ``robot``'s INPUT signals: whether any changed, and the unknown names."""
        ...

    def apply_inputs(self) -> None:
        """Make the stored inputs count (motor voltages, servo targets...)."""
        ...

    def release(self, robot: int, released: bool = True) -> None:
        """Let robot ``robot``'s motors coast whatever its pins say (or not); :meth:`apply_inputs` applies."""
        ...

    def driving(self, robot: int) -> bool:
        """Whether robot ``robot``'s motors are driven at all."""
        ...

    def signals(self, robot: int) -> list[tuple[str, str, float]]:
        """Robot ``robot``'s OUTPUT signals as of now."""
        ...


class McuPort:
    """Pins in, silence, signals out for ``robots`` robots of ``target`` (module docstring).

    Args:
        target: what the pins drive.
        robots: how many of its robots have an MCU (robots 0..robots-1).
        pin_timeout: seconds without pins before the motors coast.
        now: the MCU clock's time now, counted as the last pins' (None: silent from the start).
    """

    def __init__(self, target: PortTarget, robots: int, *, pin_timeout: float, now: float | None) -> None:
        self.target = target
        self.robots = robots
        self.pin_timeout = pin_timeout
        self._at: list[float | None] = [now] * robots
        self.coasting = [False] * robots
        self._pending: dict[int, dict[tuple[str, str], float]] = {}
        self._back: set[int] = set()
        #: Pin messages taken, per robot.
        self.received = [0] * robots

    def restart(self, now: float) -> None:
        """Count silence from ``now`` on a (new) clock."""
        self._at = [now] * self.robots

    def take(
        self, robot: int, signals: Iterable[tuple[str, str, float]], *, now: float
    ) -> tuple[list[str], bool]:
        """Robot ``robot``'s pins at MCU time ``now``: the names it lacks, and whether it was coasting."""
        devices, _ = self.target.devices_of(robot)
        pending = self._pending.setdefault(robot, {})
        unknown = []
        for device, name, value in signals:
            if (device, name) in devices.inputs:
                pending[(device, name)] = value
            else:
                unknown.append(f"{device}.{name}")
        self.received[robot] += 1
        self._at[robot] = now
        back = self.coasting[robot]
        if back:
            self.coasting[robot] = False
            self._back.add(robot)
        return unknown, back

    def flush(self) -> None:
        """Hand the pins taken since the last flush to the target (at a period's start)."""
        if not (self._pending or self._back):
            return
        changed = bool(self._back)
        for robot in self._back:
            self.target.release(robot, False)
        self._back.clear()
        for robot, pins in self._pending.items():
            changed |= self.target.take_inputs(robot, ((d, s, v) for (d, s), v in pins.items()))[0]
        self._pending.clear()
        if changed:
            self.target.apply_inputs()

    def check_silence(self, now: float) -> list[int]:
        """Robots whose MCU is silent for ``pin_timeout`` at ``now`` while driving: they coast from now."""
        began = []
        for robot in range(self.robots):
            at = self._at[robot]
            if self.coasting[robot] or (at is not None and now - at <= self.pin_timeout):
                continue
            self.flush()
            if self.target.driving(robot):
                self.coasting[robot] = True
                self.target.release(robot)
                began.append(robot)
        if began:
            self.target.apply_inputs()
        return began

    def outputs(self, robot: int) -> list[tuple[str, str, float]]:
        """Robot ``robot``'s OUTPUT signals (what its MCU's pins see) as of now."""
        return self.target.signals(robot)
