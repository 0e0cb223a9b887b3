"""Every device of a group of robots of one model: the kinds' models, noise, signal names.

A :class:`DeviceSet` is what the simulation (one per group of robots sharing a
:class:`~hil_sim.core.robot_model.RobotModel`) and the Gazebo adapter (one robot) hold
of the devices: one :class:`~hil_sim.core.devices.base.DeviceModel` per kind present,
the noise columns each device draws from (device by device, in the model's order:
robot ``r`` draws the same pattern whatever else runs), where every signal of the link
lives, and where each device sits now (:class:`MountTable`: on a servo, it turns).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hil_sim.core.devices import KINDS, check_model, kind
from hil_sim.core.devices.base import Array, BoolArray, DeviceModel, IndexArray, Scene, finite_number
from hil_sim.core.devices.bumper import Bumper
from hil_sim.core.robot_model import WHEELS, RobotModel
from hil_sim.errors import HilSimError


@dataclass(frozen=True)
class Setting:
    """What a user sets on one device (:meth:`DeviceSet.setting`, checked).

    A device of a USER kind (a button, an analog input, an IR remote) takes ``columns``
    as its outputs; any other device's OUTPUT ``signal`` on the link is held at
    ``columns[signal]`` over what the simulation computes (a sensor override).
    """

    device: str
    #: The overridden link signal; empty for a USER kind's device.
    signal: str
    columns: Mapping[str, float]


@dataclass(frozen=True)
class Slot:
    """Where one signal of the link lives: the kind's model, the device's index, the column."""

    device: str
    signal: str
    model: DeviceModel
    index: int
    column: int


class MountTable:
    """Where each device of the group sits now, in the body frame (a servo turns its riders)."""

    def __init__(self, devices: DeviceSet) -> None:
        self._devices = devices
        self._mounts = {spec.name: spec.mount for spec in devices.model.devices}
        self._fixed: dict[str, tuple[Array, Array, Array]] = {}

    def moving(self, name: str) -> bool:
        """Whether device ``name`` rides on a servo."""
        return bool(self._mounts[name].servo)

    def pose(self, name: str) -> tuple[Array, Array, Array]:
        """(n,) x, y (m) and yaw (rad) of device ``name`` in the body frame."""
        mount = self._mounts[name]
        if not mount.servo:
            fixed = self._fixed.get(name)
            if fixed is None:
                n = self._devices.robots
                fixed = (np.full(n, mount.x), np.full(n, mount.y), np.full(n, mount.yaw))
                self._fixed[name] = fixed
            return fixed
        servo = self._mounts[mount.servo]
        angle = self._devices.joint_angle(mount.servo)
        dx, dy = mount.x - servo.x, mount.y - servo.y
        c, s = np.cos(angle), np.sin(angle)
        return servo.x + c * dx - s * dy, servo.y + s * dx + c * dy, mount.yaw + angle


class DeviceSet:
    """Every device of ``robots`` robots of ``model`` (module docstring).

    Raises:
        HilSimError: a device's parameters are wrong (naming it).
    """

    def __init__(self, model: RobotModel, robots: int) -> None:
        check_model(model)
        self.model = model
        self.robots = robots
        where = f"robot {model.name}"
        by_kind: dict[str, list[int]] = {}
        for position, spec in enumerate(model.devices):
            by_kind.setdefault(spec.kind, []).append(position)
        #: One model per kind present, in the order of the kinds' first devices.
        self.kinds: dict[str, DeviceModel] = {
            name: kind(name)([model.devices[p] for p in positions], robots=robots, model=model, where=where)
            for name, positions in by_kind.items()
        }
        #: Device name -> its kind's model and its index there.
        self.where: dict[str, tuple[DeviceModel, int]] = {}
        for name, positions in by_kind.items():
            for index, position in enumerate(positions):
                self.where[model.devices[position].name] = (self.kinds[name], index)
        # Noise columns, device by device in the model's order.
        uniforms = normals = 0
        for spec in model.devices:
            batch, index = self.where[spec.name]
            count_u, count_n = batch.noise(batch.params[index])
            batch.uniform_columns.append(np.arange(uniforms, uniforms + count_u, dtype=np.intp))
            batch.normal_columns.append(np.arange(normals, normals + count_n, dtype=np.intp))
            uniforms, normals = uniforms + count_u, normals + count_n
        #: Uniforms and normals each robot draws per sensor sample.
        self.uniforms, self.normals = uniforms, normals
        #: The link's INPUT signals by (device, signal), the OUTPUT signals in link order.
        self.inputs: dict[tuple[str, str], Slot] = {}
        self.outputs: list[Slot] = []
        for spec in model.devices:
            batch, index = self.where[spec.name]
            takes, gives = batch.signals(spec, batch.params[index])
            for signal in takes:
                self.inputs[(spec.name, signal)] = Slot(
                    spec.name, signal, batch, index, batch.INPUTS.index(signal)
                )
            for signal in gives:
                self.outputs.append(Slot(spec.name, signal, batch, index, batch.OUTPUTS.index(signal)))
        self.drivers = [batch for batch in self.kinds.values() if batch.DRIVER]
        self.joints = [batch for batch in self.kinds.values() if batch.JOINT]
        self.sensors = [
            batch for batch in self.kinds.values() if type(batch).sample is not DeviceModel.sample
        ]
        self.live = [batch for batch in self.kinds.values() if type(batch).refresh is not DeviceModel.refresh]
        self.bumpers = [batch for batch in self.kinds.values() if isinstance(batch, Bumper)]
        self.mounts = MountTable(self)
        #: Sensor overrides: (row, device, signal) -> the value the link carries instead.
        self._held: dict[tuple[int, str, str], float] = {}
        #: User settings so far (part of :meth:`live_key`: the outputs change with them).
        self._settings = 0

    # --- state ------------------------------------------------------------------------

    def reset(self) -> None:
        """Inputs at rest, every state back to the start, nothing a user set."""
        for batch in self.kinds.values():
            batch.reset()
        self._held.clear()
        self._settings += 1
        self.apply()

    def apply(self) -> None:
        """The inputs changed: every kind takes them."""
        for batch in self.kinds.values():
            batch.apply()

    def advance(self, seconds: float) -> None:
        """Time passes for the actuators that move by themselves (servos)."""
        for batch in self.joints:
            batch.advance(seconds)

    def sample(self, scene: Scene, uniform: Array, normal: Array) -> None:
        """A sensor sample of every sensor."""
        for batch in self.sensors:
            batch.sample(scene, self.mounts, uniform, normal)

    def refresh(self, scene: Scene) -> None:
        """Outputs that follow the state (switches, encoders), as of now."""
        for batch in self.live:
            batch.refresh(scene)

    def touch(self, rows: IndexArray, bearing: Array, now: float) -> None:
        """Contacts of the group's robots ``rows`` at ``bearing`` (rad, body frame, [-pi, pi))."""
        for batch in self.bumpers:
            batch.touch(rows, bearing, now)

    def release_bumpers(self, rows: IndexArray | slice) -> None:
        """Open these robots' bumper switches."""
        for batch in self.bumpers:
            batch.release(rows)

    def drive(self) -> tuple[Array, BoolArray]:
        """(n, 2) each wheel's average voltage as a fraction of the supply, and closed."""
        fraction = np.zeros((self.robots, len(WHEELS)))
        closed = np.zeros((self.robots, len(WHEELS)), dtype=bool)
        for batch in self.drivers:
            part, shut = batch.drive()
            wheel = batch.wheel  # type: ignore[attr-defined]
            fraction[:, wheel] = part
            closed[:, wheel] = shut
        return fraction, closed

    def joint_angle(self, name: str) -> Array:
        """(n,) the angle (rad) of servo ``name``."""
        batch, index = self.where[name]
        return batch.angle()[:, index]

    def joint_states(self) -> list[tuple[str, Array]]:
        """Every servo's joint (``<name>_joint``) and its angles (n,)."""
        return [
            (f"{name}_joint", batch.angle()[:, index])
            for batch in self.joints
            for index, name in enumerate(batch.names)
        ]

    # --- the signal link --------------------------------------------------------------

    def take(self, row: int, signals: Iterable[tuple[str, str, float]]) -> tuple[bool, list[str]]:
        """One robot's INPUT signals: whether any value changed, and the names it does not have."""
        changed = False
        unknown = []
        for device, name, value in signals:
            slot = self.inputs.get((device, name))
            if slot is None:
                unknown.append(f"{device}.{name}")
                continue
            cell = slot.model.inputs[row, slot.index]
            if cell[slot.column] != value:
                cell[slot.column] = value
                changed = True
        return changed, unknown

    def set_input(self, rows: IndexArray | slice, device: str, signal: str, value: float | Array) -> None:
        """Set one INPUT signal of these robots (tests, tools); :meth:`apply` follows.

        Raises:
            HilSimError: the robot has no such input.
        """
        slot = self.inputs.get((device, signal))
        if slot is None:
            known = ", ".join(f"{d}.{s}" for d, s in self.inputs) or "none"
            raise HilSimError(f"robot {self.model.name}: no input {device}.{signal} (inputs: {known})")
        slot.model.inputs[rows, slot.index, slot.column] = value

    def driving(self, row: int) -> bool:
        """Whether any motor driver input of robot ``row`` is non-zero (something to let go)."""
        return any(bool(batch.inputs[row].any()) for batch in self.drivers)

    def signals(self, row: int) -> list[tuple[str, str, float]]:
        """Robot ``row``'s OUTPUT signals, from the last sample and the state as refreshed.

        A sensor override (:meth:`set`) replaces its signal's value.
        """
        out = [
            (slot.device, slot.signal, float(slot.model.outputs[row, slot.index, slot.column]))
            for slot in self.outputs
        ]
        if self._held:
            out = [(d, s, self._held.get((row, d, s), v)) for d, s, v in out]
        return out

    def live_key(self, row: int) -> bytes:
        """The outputs that change between samples (switches, encoders, user settings) of robot ``row``."""
        parts = [batch.outputs[row].tobytes() for batch in self.live]
        return b"".join([*parts, self._settings.to_bytes(8, "little")])

    # --- what a user sets -------------------------------------------------------------

    def settable(self) -> dict[str, tuple[str, ...]]:
        """Each device a user can set, with the link signals it sets: USER kinds' devices, then sensors."""
        gives: dict[str, list[str]] = {}
        for slot in self.outputs:
            gives.setdefault(slot.device, []).append(slot.signal)
        return {
            spec.name: tuple(gives[spec.name])
            for spec in sorted(self.model.devices, key=lambda s: not self.where[s.name][0].USER)
            if spec.name in gives
        }

    def users(self) -> list[str]:
        """The devices of USER kinds (a button, an analog input, an IR remote), in the model's order."""
        return [spec.name for spec in self.model.devices if self.where[spec.name][0].USER]

    def setting(self, device: str, value: float | Mapping[str, float], *, signal: str = "") -> Setting:
        """A user's ``value`` for ``device`` (its ``signal``, for a sensor with several), checked.

        Raises:
            HilSimError: no such device, one that gives the MCU nothing, a signal it does
                not have, or a value its kind does not take (naming them).
        """
        found = self.where.get(device)
        settable = self.settable()
        if found is None or device not in settable:
            known = ", ".join(settable) or "none"
            what = "no device" if found is None else "nothing the MCU reads from"
            raise HilSimError(f"robot {self.model.name}: {what} {device!r} to set (settable: {known})")
        batch, _ = found
        if batch.USER:
            if signal:
                raise HilSimError(f"{device} ({batch.KIND}): set it as a whole, without a signal")
            return Setting(device, "", batch.user_value(value))
        signals = settable[device]
        if not signal and len(signals) > 1:
            raise HilSimError(f"{device}: name the signal to override (one of {', '.join(signals)})")
        signal = signal or signals[0]
        if signal not in signals:
            raise HilSimError(f"{device}: no signal {signal!r} to the MCU (it gives {', '.join(signals)})")
        if isinstance(value, Mapping):
            raise HilSimError(f"{device}.{signal}: an override is one number, got {value!r}")
        return Setting(device, signal, {signal: finite_number(value, f"{device}.{signal}: value")})

    def set(self, row: int, setting: Setting) -> None:
        """Robot ``row`` takes a user's setting (a USER kind's value, or a sensor override)."""
        batch, index = self.where[setting.device]
        if setting.signal:
            self._held[(row, setting.device, setting.signal)] = setting.columns[setting.signal]
        else:
            batch.set_value(np.array([row], dtype=np.intp), index, setting.columns)
        self._settings += 1

    def let_go(self, row: int, setting: Setting) -> None:
        """Robot ``row``'s user lets go of ``setting``'s device: back to rest, or no more override."""
        batch, index = self.where[setting.device]
        if setting.signal:
            self._held.pop((row, setting.device, setting.signal), None)
        else:
            batch.let_go(np.array([row], dtype=np.intp), index)
        self._settings += 1

    def held(self, row: int) -> dict[str, float]:
        """Robot ``row``'s sensor overrides now, by ``device.signal``."""
        return {f"{d}.{s}": v for (r, d, s), v in self._held.items() if r == row}

    def value(self, device: str, column: str) -> Array:
        """(n,) an output column of one device (a signal or a physical value such as ``true_cm``).

        Raises:
            HilSimError: no such device or column.
        """
        found = self.where.get(device)
        if found is None:
            raise HilSimError(f"robot {self.model.name}: no device {device!r}")
        batch, index = found
        if column not in batch.OUTPUTS:
            raise HilSimError(
                f"device {device} ({batch.KIND}): no output {column!r} (outputs: {', '.join(batch.OUTPUTS)})"
            )
        return batch.outputs[:, index, batch.OUTPUTS.index(column)]

    def devices(self, kinds: Sequence[str] | None = None) -> list[tuple[str, DeviceModel, int]]:
        """(name, kind's model, index) of every device (of these kinds), in the model's order."""
        return [
            (spec.name, *self.where[spec.name])
            for spec in self.model.devices
            if kinds is None or spec.kind in kinds
        ]


__all__ = ["KINDS", "DeviceSet", "MountTable", "Setting", "Slot"]
