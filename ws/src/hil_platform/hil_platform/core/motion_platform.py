"""Motion platform datagrams (UDP): codec, inverse kinematics and state machine.

A Stewart (6-DOF) motion platform is driven over UDP. Every datagram, in both
directions, is exactly 32 bytes: eight big-endian 32-bit words::

    word  0       1    2    3    4    5    6    7
          [type] [a1] [a2] [a3] [a4] [a5] [a6] [spare]

``type`` and ``spare`` are unsigned 32-bit integers; ``a1``..``a6`` are IEEE-754
binary32 floats, big-endian (``struct`` format ``">I6fI"``).

Command types (host -> platform), ``spare`` is ignored (send 0):

=========  ======  =============================================================
type       value   meaning
=========  ======  =============================================================
ENGAGE     0x10    INIT -> ENGAGED: raise the platform to its neutral pose
START      0x11    ENGAGED -> STARTED: accept setpoints from now on
PARK       0x12    ENGAGED or STARTED -> PARKED: lower onto the stops
RESET      0x13    PARKED -> INIT
DOF        0x20    setpoint in DOF mode (STARTED only)
LENGTHS    0x21    setpoint in actuator-length mode (STARTED only)
STATUS     0x30    report the state; accepted in every state
=========  ======  =============================================================

The source project's platform started with the type word ``0x000000AF``; it is
accepted as an alias of START (:data:`COMMAND_ALIASES`), and the reply names the
word received (``offending_type`` 0x00AF), so such a host recognises its answer.

``a1``..``a6`` of a command are ignored except for the two setpoints:

* DOF mode: roll, pitch, heave, surge, yaw, lateral, relative to the neutral pose;
  angles in radians, translations in metres.
* Actuator-length mode: the six actuator lengths in metres, actuator 1 first.

Reply types (platform -> host): STATE (0x80) when the command was carried out,
ERROR (0x81) when it was refused; the platform answers every datagram with exactly
one reply. A reply carries the platform's current six actuator lengths (metres) in
``a1``..``a6`` and packs its status into ``spare``::

    spare = (state << 24) | (error_code << 16) | offending_type

``state`` is the platform state after the command (:class:`PlatformState`: INIT 0,
ENGAGED 1, STARTED 2, PARKED 3); ``error_code`` is 0 in a STATE reply and one of
:class:`ErrorCode` in an ERROR reply; ``offending_type`` is the low 16 bits of the
type word of the command answered (0 for BAD_LENGTH, whose type word may not exist).

Error codes: BAD_STATE 1 (command out of order; the state is unchanged),
UNKNOWN_TYPE 2 (the type word is not a command, reply types included), BAD_LENGTH 3
(the datagram is not 32 bytes), OUT_OF_RANGE 4 (a setpoint outside the limits: a DOF
value beyond its axis limit, a pose whose actuator lengths leave
``[min_length, max_length]``, an actuator length outside it, or any NaN/infinity).
The checks run in that order of precedence: length, type, state, range.

Inverse kinematics, axis convention (REP-103): x forward (surge), y left (lateral),
z up (heave), origin at the centre of the base joint circle. Roll, pitch and yaw
rotate about the fixed x, y and z axes in that order, ``R = Rz(yaw) Ry(pitch)
Rx(roll)`` (``transforms3d.euler.euler2mat(roll, pitch, yaw, "sxyz")``), so a
positive roll raises the left (+y) side. Actuator ``i`` runs from base joint ``b_i``
to platform joint ``p_i`` (``p_i`` in the platform frame), and its length is
``|T + R p_i - b_i|`` with ``T = (surge, lateral, neutral_height + heave)``.
"""

from __future__ import annotations

import enum
import math
import struct
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt
from transforms3d.euler import euler2mat  # type: ignore[import-untyped]

from hil_platform.errors import HilPlatformError

#: The datagram layout: type, six float32 values, spare; big-endian.
DATAGRAM = struct.Struct(">I6fI")
#: Size of every datagram in bytes.
DATAGRAM_SIZE = DATAGRAM.size
#: Names of the six DOF-mode values, in wire order.
DOF_AXES = ("roll", "pitch", "heave", "surge", "yaw", "lateral")

_UINT32_MAX = 0xFFFF_FFFF
_ZEROS = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


class Command(enum.IntEnum):
    """Type words of the datagrams the host sends to the platform."""

    ENGAGE = 0x10
    START = 0x11
    PARK = 0x12
    RESET = 0x13
    DOF = 0x20
    LENGTHS = 0x21
    STATUS = 0x30


class Reply(enum.IntEnum):
    """Type words of the datagrams the platform sends back."""

    STATE = 0x80
    ERROR = 0x81


class PlatformState(enum.IntEnum):
    """States of the platform, in the order a session walks through them."""

    INIT = 0
    ENGAGED = 1
    STARTED = 2
    PARKED = 3


class ErrorCode(enum.IntEnum):
    """Why a command was refused (0 in a STATE reply)."""

    NONE = 0
    BAD_STATE = 1
    UNKNOWN_TYPE = 2
    BAD_LENGTH = 3
    OUT_OF_RANGE = 4


#: Setpoint commands: accepted only in STARTED.
SETPOINTS = frozenset({Command.DOF, Command.LENGTHS})

#: The legal state changes; any other (state, command) pair except STATUS and the
#: setpoints in STARTED is refused with BAD_STATE.
TRANSITIONS: dict[tuple[PlatformState, Command], PlatformState] = {
    (PlatformState.INIT, Command.ENGAGE): PlatformState.ENGAGED,
    (PlatformState.ENGAGED, Command.START): PlatformState.STARTED,
    (PlatformState.ENGAGED, Command.PARK): PlatformState.PARKED,
    (PlatformState.STARTED, Command.PARK): PlatformState.PARKED,
    (PlatformState.PARKED, Command.RESET): PlatformState.INIT,
}

#: Type words of other hosts that mean one of our commands: the source project's
#: Stewart platform started with 0x000000AF.
COMMAND_ALIASES: dict[int, Command] = {0x0000_00AF: Command.START}

_COMMANDS: dict[int, Command] = {**{int(c): c for c in Command}, **COMMAND_ALIASES}


def command_of(msg_type: int) -> Command | None:
    """The command a type word asks for, aliases included; None if it is no command."""
    return _COMMANDS.get(msg_type)


@dataclass(frozen=True)
class Datagram:
    """One decoded datagram.

    Attributes:
        type: The type word (a :class:`Command` or :class:`Reply` value when known).
        values: ``a1``..``a6`` as Python floats (exactly the float32 values).
        spare: The last word.
    """

    type: int
    values: tuple[float, ...]
    spare: int


@dataclass(frozen=True)
class ReplyStatus:
    """The fields packed into the ``spare`` word of a reply.

    Attributes:
        state: Platform state after the command (a :class:`PlatformState` value).
        error: Error code (a :class:`ErrorCode` value, 0 for STATE replies).
        offending_type: Low 16 bits of the type word answered (0 for BAD_LENGTH).
    """

    state: int
    error: int
    offending_type: int


def pack(msg_type: int, values: Sequence[float] = _ZEROS, *, spare: int = 0) -> bytes:
    """Encode one 32-byte datagram.

    Args:
        msg_type: The type word (uint32).
        values: ``a1``..``a6``; each is rounded to float32.
        spare: The last word (uint32).

    Returns:
        The datagram.

    Raises:
        HilPlatformError: If there are not six values, a value does not fit a float32,
            or a word is not a uint32.
    """
    if len(values) != 6:
        raise HilPlatformError(f"motion platform datagram: values must be 6 floats, got {len(values)}")
    for name, word in (("type", msg_type), ("spare", spare)):
        if not 0 <= word <= _UINT32_MAX:
            raise HilPlatformError(f"motion platform datagram: {name} {word} is not a uint32")
    try:
        return DATAGRAM.pack(msg_type, *values, spare)
    except (struct.error, OverflowError, TypeError) as exc:
        raise HilPlatformError(f"motion platform datagram: values {tuple(values)!r}: {exc}") from exc


def unpack(data: bytes) -> Datagram:
    """Decode one datagram.

    Args:
        data: Exactly :data:`DATAGRAM_SIZE` bytes.

    Returns:
        The decoded datagram; the type word is not checked.

    Raises:
        HilPlatformError: If ``data`` is not 32 bytes long.
    """
    if len(data) != DATAGRAM_SIZE:
        raise HilPlatformError(f"motion platform datagram: length {len(data)}, expected {DATAGRAM_SIZE}")
    msg_type, a1, a2, a3, a4, a5, a6, spare = DATAGRAM.unpack(data)
    return Datagram(type=msg_type, values=(a1, a2, a3, a4, a5, a6), spare=spare)


def join_status(state: int, error: int, offending_type: int) -> int:
    """Pack a reply's state, error code and offending type into its ``spare`` word."""
    return ((state & 0xFF) << 24) | ((error & 0xFF) << 16) | (offending_type & 0xFFFF)


def split_status(spare: int) -> ReplyStatus:
    """Unpack the ``spare`` word of a reply into its fields."""
    return ReplyStatus(state=(spare >> 24) & 0xFF, error=(spare >> 16) & 0xFF, offending_type=spare & 0xFFFF)


@dataclass(frozen=True)
class PlatformGeometry:
    """Joint layout and limits of a Stewart platform; the default is a small hobby one.

    The six base joints sit on a circle in three pairs centred at 0, 120 and 240
    degrees about z; the platform joints likewise, with pairs centred at 60, 180 and
    300 degrees, so each actuator leans towards the neighbouring pair. Actuator 1
    runs from the base joint at ``-base_pair_spacing / 2`` to the platform joint at
    ``-60 deg + platform_pair_spacing / 2``; the others follow counter-clockwise.

    Attributes:
        base_radius: Radius of the base joint circle (m).
        platform_radius: Radius of the platform joint circle (m).
        base_pair_spacing: Angle between the two joints of a base pair (rad).
        platform_pair_spacing: Angle between the two joints of a platform pair (rad).
        neutral_height: Height of the platform joint plane above the base joint
            plane at the neutral pose (m).
        min_length: Shortest actuator length (m); the platform parks there.
        max_length: Longest actuator length (m).
        dof_limits: Largest magnitude of each DOF value, in wire order (roll, pitch,
            heave, surge, yaw, lateral; rad or m).

    Raises:
        HilPlatformError: If a field is out of range; the message names it.
    """

    base_radius: float = 0.12
    platform_radius: float = 0.08
    base_pair_spacing: float = math.radians(20.0)
    platform_pair_spacing: float = math.radians(20.0)
    neutral_height: float = 0.15
    min_length: float = 0.13
    max_length: float = 0.21
    dof_limits: tuple[float, ...] = (0.26, 0.26, 0.03, 0.03, 0.35, 0.03)

    def __post_init__(self) -> None:
        for name in ("base_radius", "platform_radius", "neutral_height", "min_length", "max_length"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise HilPlatformError(f"PlatformGeometry: {name} must be a finite number > 0, got {value!r}")
        for name in ("base_pair_spacing", "platform_pair_spacing"):
            value = getattr(self, name)
            # Pairs wider than a third of the circle would overlap their neighbours.
            if not (isinstance(value, (int, float)) and 0 <= value < 2 * math.pi / 3):
                raise HilPlatformError(f"PlatformGeometry: {name} must be in [0, 2*pi/3) rad, got {value!r}")
        if self.min_length >= self.max_length:
            raise HilPlatformError(
                f"PlatformGeometry: min_length {self.min_length} must be below max_length {self.max_length}"
            )
        limits = tuple(self.dof_limits)
        if len(limits) != 6 or not all(
            isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in limits
        ):
            raise HilPlatformError(
                f"PlatformGeometry: dof_limits must be 6 finite numbers >= 0 "
                f"({', '.join(DOF_AXES)}), got {self.dof_limits!r}"
            )
        neutral = self.neutral_length()
        if not self.min_length <= neutral <= self.max_length:
            raise HilPlatformError(
                f"PlatformGeometry: neutral_height {self.neutral_height} gives actuator length "
                f"{neutral:.4f} m, outside [min_length, max_length] = [{self.min_length}, {self.max_length}]"
            )

    def base_joints(self) -> npt.NDArray[np.float64]:
        """Base joint positions, one row (x, y, z) per actuator (m)."""
        half = self.base_pair_spacing / 2
        angles = np.array([c + s for c in (0.0, 2 * np.pi / 3, 4 * np.pi / 3) for s in (-half, half)])
        return _on_circle(self.base_radius, angles)

    def platform_joints(self) -> npt.NDArray[np.float64]:
        """Platform joint positions in the platform frame, one row per actuator (m)."""
        half = self.platform_pair_spacing / 2
        # Rolled by one so that actuator 1 leans to the pair at -60 degrees.
        centres = (-np.pi / 3, np.pi / 3, np.pi)
        angles = np.roll(np.array([c + s for c in centres for s in (-half, half)]), -1)
        return _on_circle(self.platform_radius, angles)

    @cached_property
    def joints(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """The platform and base joints (:meth:`platform_joints`, :meth:`base_joints`), once, read-only."""
        pair = (self.platform_joints(), self.base_joints())
        for joints in pair:
            joints.flags.writeable = False
        return pair

    def neutral_length(self) -> float:
        """The (common) actuator length at the neutral pose (m)."""
        return float(actuator_lengths(_ZEROS, self)[0])


def _on_circle(radius: float, angles: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return np.column_stack((radius * np.cos(angles), radius * np.sin(angles), np.zeros_like(angles)))


def actuator_lengths(pose: Sequence[float], geometry: PlatformGeometry) -> npt.NDArray[np.float64]:
    """Inverse kinematics: the six actuator lengths for a pose.

    Args:
        pose: Roll, pitch, heave, surge, yaw, lateral relative to the neutral pose
            (rad and m; the DOF-mode wire order).
        geometry: The platform.

    Returns:
        Six lengths (m), actuator 1 first. Limits are not checked.

    Raises:
        HilPlatformError: If ``pose`` does not have six values.
    """
    if len(pose) != 6:
        raise HilPlatformError(f"actuator_lengths: pose must have 6 values ({', '.join(DOF_AXES)})")
    roll, pitch, heave, surge, yaw, lateral = (float(v) for v in pose)
    rotation: npt.NDArray[np.float64] = euler2mat(roll, pitch, yaw, "sxyz")
    translation = np.array([surge, lateral, geometry.neutral_height + heave])
    platform, base = geometry.joints
    legs = translation + platform @ rotation.T - base
    lengths: npt.NDArray[np.float64] = np.linalg.norm(legs, axis=1)
    return lengths


class PlatformStateMachine:
    """The platform's side of the protocol: answers each datagram with one reply.

    The emulated actuators move instantly: the platform rests on its stops (every
    actuator at ``min_length``) in INIT and PARKED, rises to the neutral pose on
    ENGAGE and follows each accepted setpoint.

    Args:
        geometry: The platform; the default hobby platform when omitted.
    """

    def __init__(self, geometry: PlatformGeometry | None = None) -> None:
        self._geometry = geometry if geometry is not None else PlatformGeometry()
        self._state = PlatformState.INIT
        self._rest = (self._geometry.min_length,) * 6
        self._neutral = tuple(float(v) for v in actuator_lengths(_ZEROS, self._geometry))
        self._lengths: tuple[float, ...] = self._rest
        # Limits compared against float32 wire values are rounded to float32 too, so
        # a host that sends exactly a limit is not refused for the rounding.
        self._min32 = float(np.float32(self._geometry.min_length))
        self._max32 = float(np.float32(self._geometry.max_length))
        self._dof32 = tuple(float(np.float32(v)) for v in self._geometry.dof_limits)
        self._accepted: Counter[Command] = Counter()
        self._rejected: Counter[ErrorCode] = Counter()

    @property
    def geometry(self) -> PlatformGeometry:
        """The platform's geometry."""
        return self._geometry

    @property
    def state(self) -> PlatformState:
        """The current state."""
        return self._state

    @property
    def lengths(self) -> tuple[float, ...]:
        """The current six actuator lengths (m)."""
        return self._lengths

    @property
    def accepted(self) -> dict[Command, int]:
        """How many commands of each type were carried out."""
        return dict(self._accepted)

    @property
    def rejected(self) -> dict[ErrorCode, int]:
        """How many datagrams were refused, by reason."""
        return dict(self._rejected)

    def handle(self, datagram: bytes) -> bytes:
        """Carry out one received datagram and return the reply datagram.

        Never raises: bad input gets an ERROR reply and is counted in
        :attr:`rejected`; the state is then unchanged.
        """
        if len(datagram) != DATAGRAM_SIZE:
            return self._refuse(ErrorCode.BAD_LENGTH, 0)
        received = unpack(datagram)
        command = command_of(received.type)
        if command is None:
            return self._refuse(ErrorCode.UNKNOWN_TYPE, received.type)
        error = self._carry_out(command, received.values)
        # The reply names the word received, an alias's own word included.
        if error is not ErrorCode.NONE:
            return self._refuse(error, received.type)
        self._accepted[command] += 1
        return self._reply(Reply.STATE, ErrorCode.NONE, received.type)

    def _carry_out(self, command: Command, values: tuple[float, ...]) -> ErrorCode:
        """Change state and actuators as ``command`` asks, or say why it is refused."""
        if command is Command.STATUS:
            return ErrorCode.NONE
        if command in SETPOINTS:
            return self._move(command, values)
        target = TRANSITIONS.get((self._state, command))
        if target is None:
            return ErrorCode.BAD_STATE
        self._state = target
        if command is Command.ENGAGE:
            self._lengths = self._neutral
        elif command is Command.PARK:
            self._lengths = self._rest
        return ErrorCode.NONE

    def _move(self, command: Command, values: tuple[float, ...]) -> ErrorCode:
        """Follow a setpoint if the state and the limits allow it."""
        if self._state is not PlatformState.STARTED:
            return ErrorCode.BAD_STATE
        if not all(math.isfinite(v) for v in values):
            return ErrorCode.OUT_OF_RANGE
        if command is Command.DOF:
            if any(abs(v) > limit for v, limit in zip(values, self._dof32, strict=True)):
                return ErrorCode.OUT_OF_RANGE
            lengths = tuple(float(v) for v in actuator_lengths(values, self._geometry))
            low, high = self._geometry.min_length, self._geometry.max_length
        else:
            lengths = values
            low, high = self._min32, self._max32
        if not all(low <= v <= high for v in lengths):
            return ErrorCode.OUT_OF_RANGE
        self._lengths = lengths
        return ErrorCode.NONE

    def _refuse(self, error: ErrorCode, offending_type: int) -> bytes:
        self._rejected[error] += 1
        return self._reply(Reply.ERROR, error, offending_type)

    def _reply(self, reply: Reply, error: ErrorCode, offending_type: int) -> bytes:
        return DATAGRAM.pack(reply, *self._lengths, join_status(self._state, error, offending_type))
