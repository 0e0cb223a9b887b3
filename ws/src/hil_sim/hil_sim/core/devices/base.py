"""What every device model kind is made of: parameters, signals, state arrays, hooks.

A kind (``ranger``, ``l298n``, ``servo``...) is a :class:`DeviceModel` subclass in its
own file of this package, registered in :data:`hil_sim.core.devices.KINDS`. One
instance of the class models *every* device of that kind on a group of robots of one
:class:`~hil_sim.core.robot_model.RobotModel`: its arrays have the robots as their
first axis and the devices as their second, so three sonars on a hundred robots are
one set of numpy operations.

A kind declares:

* its parameters, not here but once in hil_devices' ``config/models.json``
  (:mod:`hil_devices.core.models`), which the device library and the robot profiles
  read too: a subclass with a ``KIND`` gets them as ``PARAMS`` (:class:`Param`: default,
  range or choices, unit, description) and its ``DESCRIPTION`` from there;
  :func:`resolve_params` fills the defaults and checks;
* ``INPUTS``: the columns of :attr:`DeviceModel.inputs`, the values the MCU drives (the
  INPUT signals of the signal link, as the device library's JSON names them);
* ``OUTPUTS``: the columns of :attr:`DeviceModel.outputs`: the OUTPUT signals the MCU
  reads and the physical values the ROS topics show (a ranger's true distance...);
  :meth:`DeviceModel.signals` says which of them one device has on the link;
* ``noise(spec)``: how many uniforms and normals one device draws per sensor sample
  (:class:`~hil_sim.core.noise.NoiseBank`: per robot, in device order, always alike).

and implements the hooks it needs: :meth:`~DeviceModel.apply` (inputs changed),
:meth:`~DeviceModel.advance` (time passes: a servo turns), :meth:`~DeviceModel.sample`
(a sensor sample from a :class:`Scene`), :meth:`~DeviceModel.refresh` (outputs that
follow the state at every read: switches, encoders), :meth:`~DeviceModel.touch`
(contacts) and, for motor drivers, :meth:`~DeviceModel.drive`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
import numpy.typing as npt

from hil_devices.core.models import model_kinds, models_path
from hil_devices.core.params import DeviceParam
from hil_sim.errors import HilSimError

if TYPE_CHECKING:
    from hil_sim.core.physics_types import Rays
    from hil_sim.core.robot_model import DeviceSpec, RobotModel
    from hil_sim.core.world import FloorMap, WorldConfig

Array = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IndexArray = npt.NDArray[np.intp]


@dataclass(frozen=True)
class Param:
    """One parameter of a device kind.

    ``default`` None means required. A number is checked against ``min``/``max``, a
    string against ``choices``; ``table`` marks a list of numbers (a lookup table; an
    empty default: none unless given).
    """

    default: Any
    description: str
    min: float = -math.inf
    max: float = math.inf
    unit: str = ""
    choices: tuple[str, ...] = ()
    table: bool = False


def _param(declared: DeviceParam) -> Param:
    return Param(
        declared.default,
        declared.description,
        declared.min,
        declared.max,
        declared.unit,
        declared.choices,
        declared.table,
    )


def resolve_params(kind: type[DeviceModel], spec: DeviceSpec, where: str) -> dict[str, Any]:
    """The device's parameters with the kind's defaults filled in, each checked.

    Raises:
        HilSimError: an unknown or missing parameter, or a value out of its range,
            naming ``where`` and the parameter.
    """
    unknown = sorted(set(spec.params) - set(kind.PARAMS))
    if unknown:
        allowed = ", ".join(sorted(kind.PARAMS)) or "none"
        raise HilSimError(
            f"{where}: params.{unknown[0]}: not a parameter of kind {kind.KIND} (allowed: {allowed})"
        )
    values: dict[str, Any] = {}
    for name, param in kind.PARAMS.items():
        value = spec.params.get(name, param.default)
        field = f"{where}: params.{name}"
        if value is None:
            raise HilSimError(f"{field}: missing ({param.description})")
        if param.choices:
            if value not in param.choices:
                raise HilSimError(f"{field}: {value!r} is not one of {', '.join(param.choices)}")
        elif param.table:
            if value == () == param.default:
                values[name] = ()
                continue
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) < 2:
                raise HilSimError(f"{field}: expected a list of at least two numbers")
            value = tuple(finite_number(item, f"{field}[{k}]") for k, item in enumerate(value))
        else:
            value = finite_number(value, field)
            if not param.min <= value <= param.max:
                unit = f" {param.unit}" if param.unit else ""
                raise HilSimError(f"{field}: {value:g} is outside {param.min:g}..{param.max:g}{unit}")
        values[name] = value
    return values


def finite_number(value: Any, field: str) -> float:
    """``value`` as a float if it is a finite number (not a bool).

    Raises:
        HilSimError: naming ``field``.
    """
    number = math.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    if not math.isfinite(number):
        raise HilSimError(f"{field}: {value!r:.40} is not a finite number")
    return number


class Scene(Protocol):
    """What a sensor sample sees: the robots' state, the world, and ways to look into it.

    The simulation offers it from its physics backend, the Gazebo adapter from
    Gazebo's topics; the device models are the same in both.
    """

    #: Simulated seconds.
    time: float
    world: WorldConfig
    floor: FloorMap
    #: (n,) pose (m, m, rad) and forward and turn speed (m/s, rad/s) of the group's robots.
    x: Array
    y: Array
    yaw: Array
    v: Array
    w: Array
    #: (n, 2) wheel angles (rad), forward positive.
    wheel_angle: Array

    def nearest(self, names: Sequence[str], rays: Rays, first: IndexArray, max_range: float) -> Array:
        """(n, len(names)) distance (m) to the nearest solid thing seen by each ranger.

        ``rays`` (body frame; (R,) or (n, R) arrays) are all of them, ranger ``k``'s from
        ``first[k]`` to ``first[k + 1]``; nothing within ``max_range`` reads ``max_range``.
        """
        ...

    def field(self, yaw: Array) -> Array | None:
        """(n, 3) the earth's magnetic field (T) in a frame turned ``yaw`` (rad, (n,)) from the body's.

        None: not known yet (a compass keeps its last reading).
        """
        ...


class Mounts(Protocol):
    """Where each device of a group sits now (a device on a servo turns with it)."""

    def pose(self, name: str) -> tuple[Array, Array, Array]:
        """(n,) x, y (m) and yaw (rad) of device ``name`` in the body frame."""
        ...

    def moving(self, name: str) -> bool:
        """Whether device ``name`` rides on a servo (its pose changes)."""
        ...


class DeviceModel:
    """Every device of one kind on the robots of one group (module docstring).

    Args:
        specs: the devices, in the robot model's order.
        robots: how many robots the group has.
        model: their robot model (body, motor).
        where: how errors name the devices (``robot demo``).
    """

    KIND: ClassVar[str] = ""
    #: From ``config/models.json`` (module docstring).
    DESCRIPTION: ClassVar[str] = ""
    PARAMS: ClassVar[Mapping[str, Param]] = {}
    INPUTS: ClassVar[tuple[str, ...]] = ()
    OUTPUTS: ClassVar[tuple[str, ...]] = ()
    #: Each device belongs to a wheel (``spec.wheel``: left or right).
    WHEEL: ClassVar[bool] = False
    #: A motor driver: :meth:`drive` gives its wheel's voltage.
    DRIVER: ClassVar[bool] = False
    #: A servo: devices may ride on it (:meth:`angle`).
    JOINT: ClassVar[bool] = False
    #: A device a user sets (a button, a knob, a remote): its outputs are what
    #: :meth:`set_value` makes them, nothing in the world changes them.
    USER: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A kind (a subclass with a ``KIND``) takes its parameters and description from models.json."""
        super().__init_subclass__(**kwargs)
        if cls.KIND:
            declared = model_kinds().get(cls.KIND)
            if declared is None:
                raise HilSimError(f"device model kind {cls.KIND}: not declared in {models_path()}")
            cls.DESCRIPTION = declared.description
            cls.PARAMS = {name: _param(p) for name, p in declared.params.items()}

    def __init__(self, specs: Sequence[DeviceSpec], *, robots: int, model: RobotModel, where: str) -> None:
        self.specs = tuple(specs)
        self.names = tuple(spec.name for spec in self.specs)
        self.count = len(self.specs)
        self.robots = robots
        self.model = model
        self.params = [
            resolve_params(type(self), spec, f"{where}: device {spec.name}") for spec in self.specs
        ]
        self.inputs: Array = np.zeros((robots, self.count, len(self.INPUTS)))
        self.outputs: Array = np.zeros((robots, self.count, len(self.OUTPUTS)))
        #: Noise columns of each device (set by the device set): uniforms and normals.
        self.uniform_columns: list[IndexArray] = []
        self.normal_columns: list[IndexArray] = []

    # --- declarations ------------------------------------------------------------------

    @classmethod
    def signals(cls, spec: DeviceSpec, params: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The INPUT and OUTPUT signals of one device on the link (default: all columns)."""
        del spec, params
        return cls.INPUTS, cls.OUTPUTS

    @classmethod
    def noise(cls, params: Mapping[str, Any]) -> tuple[int, int]:
        """Uniforms and normals one device draws per sensor sample."""
        del params
        return 0, 0

    def rest_inputs(self) -> Array:
        """(count, inputs) the inputs before the MCU has said anything (default zero; ties held)."""
        rest = np.zeros((self.count, len(self.INPUTS)))
        for k, spec in enumerate(self.specs):
            for name, value in spec.ties.items():
                rest[k, self.INPUTS.index(name)] = value
        return rest

    # --- hooks -----------------------------------------------------------------------

    def reset(self) -> None:
        """Back to the start: inputs at rest, state cleared."""
        self.inputs[:] = self.rest_inputs()[None, :, :]
        self.outputs[:] = 0.0

    def apply(self) -> None:
        """The inputs changed: take them."""

    def advance(self, seconds: float) -> None:
        """``seconds`` of simulated time passed (actuators that move by themselves)."""
        del seconds

    def sample(self, scene: Scene, mounts: Mounts, uniform: Array, normal: Array) -> None:
        """A sensor sample: ``uniform``/``normal`` are the group's draws (n, columns) of this sample."""
        del scene, mounts, uniform, normal

    def refresh(self, scene: Scene) -> None:
        """Outputs that follow the state at every read (switches, encoders)."""
        del scene

    def touch(self, rows: IndexArray, bearing: Array, now: float) -> None:
        """The group's robots ``rows`` touched something at ``bearing`` (rad, body frame, [-pi, pi))."""
        del rows, bearing, now

    def drive(self) -> tuple[Array, BoolArray]:
        """Motor drivers: (n, count) the bridge's average voltage as a fraction of the supply, and closed."""
        raise NotImplementedError(f"kind {self.KIND} drives no wheel")

    def angle(self) -> Array:
        """Servos: (n, count) the joint angle (rad, 0 at the centre of the range)."""
        raise NotImplementedError(f"kind {self.KIND} is no joint")

    # --- what a user sets (USER kinds) -------------------------------------------------

    @classmethod
    def user_value(cls, value: float | Mapping[str, float]) -> dict[str, float]:
        """USER kinds: a value a user gives, as the output columns it sets (checked).

        The default takes one number for a kind with one output.

        Raises:
            HilSimError: not a value of this kind (naming what it takes).
        """
        if not cls.USER:
            raise HilSimError(f"kind {cls.KIND} is not set by a user")
        if isinstance(value, Mapping) or len(cls.OUTPUTS) != 1:
            raise HilSimError(f"kind {cls.KIND} takes one number, got {value!r}")
        return {cls.OUTPUTS[0]: finite_number(value, f"kind {cls.KIND}: value")}

    def set_value(self, rows: IndexArray, index: int, columns: Mapping[str, float]) -> None:
        """USER kinds: the user sets device ``index`` of robots ``rows`` (columns of :meth:`user_value`)."""
        for name, number in columns.items():
            self.outputs[rows, index, self.column(name)] = number

    def let_go(self, rows: IndexArray, index: int) -> None:
        """USER kinds: the user lets go of device ``index`` (a set's time ran out): back to rest."""
        self.outputs[rows, index] = 0.0

    # --- helpers ---------------------------------------------------------------------

    def column(self, name: str) -> int:
        """The outputs column called ``name``."""
        return self.OUTPUTS.index(name)

    def instances(self, **match: Any) -> IndexArray:
        """Indices of the devices whose params have these values."""
        return np.array(
            [
                k
                for k, params in enumerate(self.params)
                if all(params[key] == value for key, value in match.items())
            ],
            dtype=np.intp,
        )
