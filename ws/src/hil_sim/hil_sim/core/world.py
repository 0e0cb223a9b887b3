"""The world: a walled arena with box obstacles, boards that can fall, and a light.

Everything solid is a set of 2-D line segments (the robot and its rangers live in a
plane): the arena walls, the four sides of every box, and the four sides of every
standing board. A board stands on its short edge; its footprint is ``width`` by
``thickness``. When the robot hits it at more than ``push_threshold`` (speed toward
the board, m/s) it falls and lies flat: its segments are switched off, so it no
longer blocks the robot or the rangers.

The demo layout (worlds/demo.yaml) is a ring of boards around the robot's start, each with
its broad face toward the centre. Worlds load from YAML::

    arena: {width: 4.0, height: 4.0}          # metres, centred on the origin
    start: {x: 0.0, y: 0.0, yaw: 0.0}         # robot start (robot i is offset, see below)
    light: {x: 1.5, y: 1.5, reference_distance: 0.5}
    boxes: [{x: 1.2, y: -1.0, width: 0.3, depth: 0.2, yaw: 0.0}]
    boards:
      push_threshold: 0.05                    # m/s
      ring: {count: 6, radius: 0.6, width: 0.1, thickness: 0.02, height: 0.3, mass: 0.2}
      items: [{x: 1.0, y: 0.0, yaw: 0.0, width: 0.1, thickness: 0.02, height: 0.3}]
    floor:
      friction: 1.0                           # sliding friction coefficient
      reflectance: 0.8                        # what a line sensor sees off the markings (0..1)
      markings:                               # tape on the floor, later ones over earlier ones
        - line: {from: [-1.0, 0.0], to: [1.0, 0.0], width: 0.02, reflectance: 0.05}
        - arc: {center: [0.0, 0.5], radius: 0.5, from_deg: -90, to_deg: 90, width: 0.02}
    mjcf: arena.xml                           # optional: an MJCF world (physics mujoco)

The floor's markings are what line sensors see (:class:`FloorMap`, a 2-D lookup under
the sensor, the same in every physics backend): straight strips (``line``: from, to,
width) and circular ones (``arc``: centre, radius, from_deg..to_deg counter-clockwise,
width; 0..360 a ring), each with its ``reflectance`` (default 0.05: black tape). A
line's ends are square, as tape is cut.

A 3-D engine (physics ``mujoco``) also reads ``mass`` (kg) of the boards and the
floor's ``friction``; walls and boxes are :data:`WALL_HEIGHT` and :data:`BOX_HEIGHT`
tall. With ``mjcf`` (a path relative to the YAML) that MJCF file is the physical
world instead of the walls, boxes and boards here, which must then be left out;
``arena``, ``start`` and ``light`` still come from the YAML.

A bad file raises :class:`~hil_sim.errors.HilSimError` naming the file and the key.
What a world may hold:

* at most :data:`MAX_BOARDS` boards, :data:`MAX_BOXES` boxes and :data:`MAX_MARKINGS`
  floor markings, each marking's points inside the arena;
* numbers within sane ranges: an arena of :data:`ARENA_SIZE` m a side, lengths
  (sizes, the ring's radius, the light's reference distance) of :data:`LENGTH` m,
  masses of :data:`MASS` kg, a floor friction of :data:`FRICTION`, a push threshold
  of :data:`PUSH_THRESHOLD` m/s, yaws within :data:`MAX_YAW` rad either way;
* every box and board wholly inside the arena; no board overlapping another board
  or a box (boxes may overlap each other: they make walls of any shape);
* the start and the light inside the arena, and :data:`START_CLEARANCE` m clear
  around the start (walls, boxes, boards): the robot's body stands there
  (:func:`start_problem`, which a scenario's own start goes through too).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from hil_common.core.config_file import load_yaml
from hil_sim.errors import HilSimError

Array = npt.NDArray[np.float64]

#: Most boards (ring and items together) and boxes in a world: each is four segments
#: that every ray cast and collision test of every step goes through, and a ring
#: ``count`` is otherwise only bounded by memory.
MAX_BOARDS = 1000
MAX_BOXES = 1000
MAX_MARKINGS = 1000
#: A marking's width (m): from a millimetre to a metre.
MARKING_WIDTH = (0.001, 1.0)
#: Reflectance of the bare floor (light) and of a marking (black tape) unless given.
FLOOR_REFLECTANCE = 0.8
MARKING_REFLECTANCE = 0.05
#: Smallest and largest side of the arena (m): the robot (0.18 m across) must fit; a
#: kilometre is beyond any floor, and keeps the geometry's arithmetic well conditioned.
ARENA_SIZE = (0.5, 1000.0)
#: Sizes of boxes and boards, the ring's radius, the light's reference distance (m):
#: from a millimetre (a segment shorter than that makes the contact maths degenerate).
LENGTH = (0.001, 1000.0)
#: Board masses (kg) and the floor's sliding friction coefficient.
MASS = (0.001, 100.0)
FRICTION = (0.001, 10.0)
#: Speed toward a board (m/s) above which it falls; the robot drives at most 0.6 m/s.
PUSH_THRESHOLD = (0.001, 10.0)
#: Largest yaw (rad) either way: a full turn; beyond it is a typing mistake (or degrees).
MAX_YAW = 2 * math.pi
#: Free radius (m) around the start: the demo robot's body (0.09 m) and a centimetre.
START_CLEARANCE = 0.1


#: Heights (m) of the arena walls and of boxes, for 3-D engines and pictures.
WALL_HEIGHT = 0.2
BOX_HEIGHT = 0.2
#: Thickness (m) of the arena walls in 3-D engines (MuJoCo, the Gazebo export).
WALL_THICKNESS = 0.02
#: Sliding friction of the robot's ball caster on the floor in 3-D engines: it rolls.
CASTER_FRICTION = 0.002


@dataclass(frozen=True)
class Box:
    """A fixed rectangular obstacle, centred at (x, y), rotated by yaw."""

    x: float
    y: float
    width: float
    depth: float
    yaw: float = 0.0


@dataclass(frozen=True)
class Board:
    """A board standing on its short edge; ``yaw`` is the direction its broad face points."""

    x: float
    y: float
    yaw: float
    width: float = 0.1
    thickness: float = 0.02
    height: float = 0.3
    mass: float = 0.2  # kg: light wood (0.1 x 0.3 x 0.02 m at 330 kg/m^3)


@dataclass(frozen=True)
class Light:
    """A point light; a photoresistor facing it from ``reference_distance`` reads 1000."""

    x: float
    y: float
    reference_distance: float = 0.5


@dataclass(frozen=True)
class Pose:
    """A planar pose (m, m, rad)."""

    x: float = 0.0
    y: float = 0.0
    yaw: float = 0.0


@dataclass(frozen=True)
class LineMarking:
    """A straight strip of tape from ``start`` to ``end`` (m), ``width`` wide."""

    start: tuple[float, float]
    end: tuple[float, float]
    width: float = 0.02
    reflectance: float = MARKING_REFLECTANCE


@dataclass(frozen=True)
class ArcMarking:
    """A circular strip of tape: ``radius`` about ``center``, counter-clockwise ``from_deg`` to ``to_deg``."""

    center: tuple[float, float]
    radius: float
    from_deg: float = 0.0
    to_deg: float = 360.0
    width: float = 0.02
    reflectance: float = MARKING_REFLECTANCE


Marking = LineMarking | ArcMarking


@dataclass(frozen=True)
class WorldConfig:
    """Static description of a world."""

    width: float = 4.0
    height: float = 4.0
    start: Pose = Pose()
    light: Light = Light(1.5, 1.5)
    boxes: tuple[Box, ...] = ()
    boards: tuple[Board, ...] = ()
    push_threshold: float = 0.05
    floor_friction: float = 1.0
    #: An MJCF world file (absolute) replacing walls, boxes and boards; empty: none.
    mjcf: str = ""
    floor_reflectance: float = FLOOR_REFLECTANCE
    markings: tuple[Marking, ...] = ()
    #: The file the world was read from, for messages (not part of what the world is:
    #: left out of comparisons); empty: built in code.
    source: str = field(default="", compare=False)


def ring_of_boards(
    count: int,
    radius: float,
    *,
    centre: Pose = Pose(),
    width: float = 0.1,
    thickness: float = 0.02,
    height: float = 0.3,
    mass: float = 0.2,
) -> tuple[Board, ...]:
    """``count`` boards evenly on a circle, broad faces toward its centre."""
    boards = []
    for k in range(count):
        angle = 2 * math.pi * k / count
        x = centre.x + radius * math.cos(angle)
        y = centre.y + radius * math.sin(angle)
        boards.append(Board(x, y, math.atan2(centre.y - y, centre.x - x), width, thickness, height, mass))
    return tuple(boards)


def demo_world() -> WorldConfig:
    """The HIL demo, as ``worlds/demo.yaml``: six boards in a 0.6 m ring, a box, a light."""
    return WorldConfig(
        width=8.0, height=8.0, boxes=(Box(1.3, -1.2, 0.4, 0.3, 0.3),), boards=ring_of_boards(6, 0.6)
    )


def rectangle_corners(
    x: float, y: float, along: float, across: float, yaw: float
) -> list[tuple[float, float]]:
    """Corners of a rectangle ``along`` long in direction ``yaw``, ``across`` wide."""
    c, s = math.cos(yaw), math.sin(yaw)
    half_a, half_c = along / 2, across / 2
    return [
        (x + c * da - s * dc, y + s * da + c * dc)
        for da, dc in ((half_a, half_c), (-half_a, half_c), (-half_a, -half_c), (half_a, -half_c))
    ]


def in_arena(world: WorldConfig, x: float, y: float, *, margin: float = 0.0) -> bool:
    """(x, y) is inside the arena's walls, at least ``margin`` from them (NaN is not)."""
    return abs(x) < world.width / 2 - margin and abs(y) < world.height / 2 - margin


@dataclass(frozen=True)
class _Rectangle:
    """A footprint: centre, half sizes along and across, yaw of the ``along`` axis."""

    x: float
    y: float
    half_along: float
    half_across: float
    yaw: float

    def distance(self, px: float, py: float) -> float:
        """From (px, py) to the footprint (0 inside)."""
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        dx, dy = px - self.x, py - self.y
        along, across = abs(c * dx + s * dy) - self.half_along, abs(-s * dx + c * dy) - self.half_across
        return math.hypot(max(along, 0.0), max(across, 0.0))

    def corners(self) -> list[tuple[float, float]]:
        """The four corners."""
        return rectangle_corners(self.x, self.y, 2 * self.half_along, 2 * self.half_across, self.yaw)

    @property
    def radius(self) -> float:
        """Of the circle around it."""
        return math.hypot(self.half_along, self.half_across)

    def overlaps(self, other: _Rectangle) -> bool:
        """The two share more than an edge (no separating axis among the four sides')."""
        mine, theirs = np.array(self.corners()), np.array(other.corners())
        for yaw in (self.yaw, self.yaw + math.pi / 2, other.yaw, other.yaw + math.pi / 2):
            axis = np.array([math.cos(yaw), math.sin(yaw)])
            a, b = mine @ axis, theirs @ axis
            if min(a.max(), b.max()) - max(a.min(), b.min()) <= 1e-9:
                return False
        return True


def _box_footprint(box: Box) -> _Rectangle:
    return _Rectangle(box.x, box.y, box.width / 2, box.depth / 2, box.yaw)


def _board_footprint(board: Board) -> _Rectangle:
    # The broad face points along yaw, so the board is thin along it.
    return _Rectangle(board.x, board.y, board.thickness / 2, board.width / 2, board.yaw)


def start_problem(world: WorldConfig, pose: Pose) -> str | None:
    """Why a robot cannot start at ``pose`` in ``world``; None if it can.

    It cannot outside the arena, within :data:`START_CLEARANCE` of a wall, a box or a
    board, or with a yaw beyond :data:`MAX_YAW`. Checks the world's own start when it
    loads, and a scenario's start in its world.
    """
    if not (math.isfinite(pose.yaw) and abs(pose.yaw) <= MAX_YAW):
        return f"yaw {pose.yaw!r:.40} is outside -{MAX_YAW:.4g}..{MAX_YAW:.4g} rad"
    where = f"({pose.x:g}, {pose.y:g})"
    if not in_arena(world, pose.x, pose.y):
        return f"{where} is outside the {world.width:g} m x {world.height:g} m arena"
    if not in_arena(world, pose.x, pose.y, margin=START_CLEARANCE):
        return f"{where} is within {START_CLEARANCE:g} m of the arena's wall (the robot stands there)"
    things = [(f"box {i}", _box_footprint(b)) for i, b in enumerate(world.boxes)]
    things += [(f"board {i}", _board_footprint(b)) for i, b in enumerate(world.boards)]
    for name, footprint in things:
        if footprint.distance(pose.x, pose.y) < START_CLEARANCE:
            return (
                f"{where} is within {START_CLEARANCE:g} m of {name} at ({footprint.x:g}, {footprint.y:g}) "
                "(the robot stands there)"
            )
    return None


def _check_layout(world: WorldConfig, *, source: str, box_names: list[str], board_names: list[str]) -> None:
    """Every box and board inside the arena, no board on another or on a box.

    Raises:
        HilSimError: ``<source>: <the object's key>: ...``.
    """
    boxes = [_box_footprint(b) for b in world.boxes]
    boards = [_board_footprint(b) for b in world.boards]
    half = np.array([world.width / 2, world.height / 2]) + 1e-9
    for name, footprint in zip([*box_names, *board_names], [*boxes, *boards], strict=True):
        if np.any(np.abs(np.array(footprint.corners())) > half):
            raise HilSimError(
                f"{source}: {name}: at ({footprint.x:g}, {footprint.y:g}) it reaches outside "
                f"the {world.width:g} m x {world.height:g} m arena"
            )
    if not boards:
        return
    # Pairs whose circles meet (numpy, all at once), then the exact test on those few.
    others = boards + boxes
    centres = np.array([[r.x, r.y] for r in others])
    radii = np.array([r.radius for r in others])
    gaps = np.hypot(*(centres[: len(boards), None, :] - centres[None, :, :]).transpose(2, 0, 1))
    near = gaps < radii[: len(boards), None] + radii[None, :]
    for i, j in zip(*np.nonzero(near), strict=True):
        if j > i and boards[i].overlaps(others[j]):
            other = (board_names + box_names)[j]
            raise HilSimError(f"{source}: {board_names[i]}: overlaps {other}")


class _Solid(NamedTuple):
    """The segments that are solid now (see :meth:`WorldGeometry._solid_segments`)."""

    start: Array
    delta: Array
    length_sq: Array
    #: Their indices among all segments.
    which: npt.NDArray[np.intp]
    #: start x, start y, delta x, delta y as (1, S) rows, for the ray casts.
    columns: tuple[Array, Array, Array, Array]


class WorldGeometry:
    """The world as segments, with a switch per board, for collisions and ray casts."""

    def __init__(self, config: WorldConfig) -> None:
        self.config = config
        starts: list[tuple[float, float]] = []
        ends: list[tuple[float, float]] = []
        owners: list[int] = []

        def polygon(corners: list[tuple[float, float]], owner: int) -> None:
            for k, corner in enumerate(corners):
                starts.append(corner)
                ends.append(corners[(k + 1) % len(corners)])
                owners.append(owner)

        half_w, half_h = config.width / 2, config.height / 2
        polygon([(half_w, half_h), (-half_w, half_h), (-half_w, -half_h), (half_w, -half_h)], -1)
        for box in config.boxes:
            polygon(rectangle_corners(box.x, box.y, box.width, box.depth, box.yaw), -1)
        for index, board in enumerate(config.boards):
            # The broad face points along yaw, so the board extends across it.
            polygon(rectangle_corners(board.x, board.y, board.thickness, board.width, board.yaw), index)
        self.start: Array = np.array(starts, dtype=float)
        self.end: Array = np.array(ends, dtype=float)
        self.owner = np.array(owners, dtype=int)
        self.delta: Array = self.end - self.start
        self.length_sq: Array = np.einsum("ij,ij->i", self.delta, self.delta)
        self.standing = np.ones(len(config.boards), dtype=bool)
        self._solid_key: bytes | None = None
        self._solid: _Solid | None = None

    def _solid_segments(self) -> _Solid:
        """The solid segments, cached until a board falls."""
        key = self.standing.tobytes()
        if key != self._solid_key or self._solid is None:
            index = np.flatnonzero(self.active())
            start, delta = self.start[index], self.delta[index]
            columns = (start[None, :, 0], start[None, :, 1], delta[None, :, 0], delta[None, :, 1])
            self._solid = _Solid(start, delta, self.length_sq[index], index, columns)
            self._solid_key = key
        return self._solid

    @property
    def boards_down(self) -> int:
        """How many boards have fallen."""
        return int((~self.standing).sum())

    def active(self) -> npt.NDArray[np.bool_]:
        """Which segments are solid now (walls and boxes always; boards while standing)."""
        solid = np.ones(len(self.owner), dtype=bool)
        is_board = self.owner >= 0
        solid[is_board] = self.standing[self.owner[is_board]]
        return solid

    def reset(self) -> None:
        """Stand every board up again."""
        self.standing[:] = True

    def to_segments(self, points: Array) -> tuple[Array, Array, Array, npt.NDArray[np.intp]]:
        """From each point (P, 2) to every solid segment (S of them).

        Returns:
            The distances (P, S), the nearest points (P, S, 2), where those lie along
            their segments (P, S: 0 at the start, 1 at the end), and the segments'
            indices (S,) among all.
        """
        start, delta, length_sq, active, _ = self._solid_segments()
        rel = points[:, None, :] - start[None, :, :]
        t = np.clip(np.einsum("psk,sk->ps", rel, delta) / length_sq, 0.0, 1.0)
        nearest = start[None, :, :] + t[..., None] * delta[None, :, :]
        gap = points[:, None, :] - nearest
        dist = np.sqrt(np.einsum("psk,psk->ps", gap, gap))
        return dist, nearest, t, active

    def closest(self, points: Array) -> tuple[Array, Array, npt.NDArray[np.intp]]:
        """For each point (P, 2): distance to the nearest solid segment, the point on it, its index."""
        dist, nearest, _, active = self.to_segments(points)
        which = np.argmin(dist, axis=1)
        rows = np.arange(len(points))
        return dist[rows, which], nearest[rows, which], active[which].astype(np.intp)

    def cast(self, ox: Array, oy: Array, dx: Array, dy: Array, max_range: float) -> Array:
        """Distance along rays to the first solid segment, ``max_range`` if none.

        Args:
            ox: Ray origins, x (any shape).
            oy: Ray origins, y.
            dx: Unit directions, x.
            dy: Unit directions, y.
            max_range: Longest distance reported.
        """
        sx, sy, ex, ey = self._solid_segments().columns
        shape = ox.shape
        # Solve origin + t * dir = start + u * delta for every ray/segment pair.
        ox, oy, dx, dy = ox.reshape(-1, 1), oy.reshape(-1, 1), dx.reshape(-1, 1), dy.reshape(-1, 1)
        denom = dx * ey - dy * ex
        rx, ry = sx - ox, sy - oy
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (rx * ey - ry * ex) / denom
            u = (rx * dy - ry * dx) / denom
        hit = (np.abs(denom) > 1e-12) & (t >= 0.0) & (u >= 0.0) & (u <= 1.0)
        nearest: Array = np.minimum.reduce(t, axis=1, initial=max_range, where=hit)
        return nearest.reshape(shape)


def marking_outline(marking: Marking, *, step_deg: float = 5.0) -> tuple[Array, Array]:
    """Points (m) along a marking's centre line, for drawing it."""
    if isinstance(marking, LineMarking):
        return np.array([marking.start[0], marking.end[0]]), np.array([marking.start[1], marking.end[1]])
    count = max(2, math.ceil((marking.to_deg - marking.from_deg) / step_deg) + 1)
    angle = np.radians(np.linspace(marking.from_deg, marking.to_deg, count))
    cx, cy = marking.center
    return cx + marking.radius * np.cos(angle), cy + marking.radius * np.sin(angle)


class FloorMap:
    """The floor's reflectance at any point: the bare floor, its markings over it."""

    def __init__(self, config: WorldConfig) -> None:
        self.base = config.floor_reflectance
        self.markings = config.markings

    def reflectance(self, x: Array, y: Array) -> Array:
        """Reflectance (0..1) at points ``x``, ``y`` (m, any shape)."""
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        seen = np.full(x.shape, self.base)
        for marking in self.markings:
            if isinstance(marking, LineMarking):
                (ax, ay), (bx, by) = marking.start, marking.end
                dx, dy = bx - ax, by - ay
                length_sq = dx * dx + dy * dy
                # A strip with square ends, as tape is cut.
                t = ((x - ax) * dx + (y - ay) * dy) / length_sq if length_sq else np.zeros(x.shape)
                across = np.abs((x - ax) * dy - (y - ay) * dx) / math.sqrt(length_sq) if length_sq else np.inf
                on = (t >= 0.0) & (t <= 1.0) & (across <= marking.width / 2)
            else:
                cx, cy = marking.center
                on = np.abs(np.hypot(x - cx, y - cy) - marking.radius) <= marking.width / 2
                sweep = marking.to_deg - marking.from_deg
                if sweep < 360.0:
                    angle = (np.degrees(np.arctan2(y - cy, x - cx)) - marking.from_deg) % 360.0
                    on &= angle <= sweep
            seen = np.where(on, marking.reflectance, seen)
        return seen


# --- YAML ------------------------------------------------------------------------------


def _number(
    data: dict[str, Any],
    key: str,
    where: str,
    *,
    default: float | None = None,
    positive: bool = False,
    within: tuple[float, float] | None = None,
    unit: str = "m",
) -> float:
    if key not in data:
        if default is None:
            raise HilSimError(f"{where}.{key}: missing")
        return default
    value = data[key]
    number = math.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        with contextlib.suppress(OverflowError):  # an int beyond float range stays NaN
            number = float(value)
    if not math.isfinite(number):
        raise HilSimError(f"{where}.{key}: {value!r:.40} is not a finite number")
    if positive and number <= 0:
        raise HilSimError(f"{where}.{key}: {value!r} must be greater than 0")
    if within is not None and not within[0] <= number <= within[1]:
        units = f" {unit}" if unit else ""
        raise HilSimError(f"{where}.{key}: {value!r} is outside {within[0]:g}..{within[1]:g}{units}")
    return number


def _yaw(data: dict[str, Any], where: str) -> float:
    return _number(data, "yaw", where, default=0.0, within=(-MAX_YAW, MAX_YAW), unit="rad")


def _mapping(data: Any, where: str, allowed: set[str]) -> dict[str, Any]:
    """``where`` is ``<file>`` at the top level or ``<file>: <dotted key>`` below it."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise HilSimError(f"{where}: expected a mapping")
    unknown = sorted(set(data) - allowed, key=str)
    if unknown:
        key = f"{where}.{unknown[0]}" if ": " in where else f"{where}: {unknown[0]}"
        raise HilSimError(f"{key}: unknown key (allowed: {', '.join(sorted(allowed))})")
    return data


def _point(data: dict[str, Any], key: str, where: str, world: tuple[float, float]) -> tuple[float, float]:
    """An [x, y] point inside the arena (``world``: its width and height)."""
    value = data.get(key)
    if not (isinstance(value, list) and len(value) == 2):
        raise HilSimError(f"{where}.{key}: expected [x, y]")
    x = _number({"x": value[0]}, "x", f"{where}.{key}")
    y = _number({"y": value[1]}, "y", f"{where}.{key}")
    if abs(x) > world[0] / 2 or abs(y) > world[1] / 2:
        raise HilSimError(f"{where}.{key}: ({x:g}, {y:g}) is outside the arena")
    return x, y


def _markings(data: Any, source: str, arena: tuple[float, float]) -> list[Marking]:
    """The floor's markings (module docstring)."""
    if data is None:
        return []
    if not isinstance(data, list):
        raise HilSimError(f"{source}: floor.markings: expected a list")
    if len(data) > MAX_MARKINGS:
        raise HilSimError(f"{source}: floor.markings: {len(data)} markings, at most {MAX_MARKINGS}")
    markings: list[Marking] = []
    for index, item in enumerate(data):
        where = f"{source}: floor.markings[{index}]"
        if not (isinstance(item, dict) and len(item) == 1):
            raise HilSimError(f"{where}: expected one of line: {{...}} or arc: {{...}}")
        ((shape, body),) = item.items()
        at = f"{where}.{shape}"
        if shape == "line":
            fields = _mapping(body, at, {"from", "to", "width", "reflectance"})
            start, end = _point(fields, "from", at, arena), _point(fields, "to", at, arena)
        elif shape == "arc":
            fields = _mapping(body, at, {"center", "radius", "from_deg", "to_deg", "width", "reflectance"})
            center = _point(fields, "center", at, arena)
            radius = _number(fields, "radius", at, positive=True, within=LENGTH)
            low = _number(fields, "from_deg", at, default=0.0, within=(-360.0, 360.0), unit="deg")
            high = _number(fields, "to_deg", at, default=low + 360.0, within=(-360.0, 720.0), unit="deg")
            if not low < high <= low + 360.0:
                raise HilSimError(f"{at}.to_deg: {high:g} must be above from_deg ({low:g}) by at most 360")
        else:
            raise HilSimError(f"{where}: {shape!r} is not a marking (line, arc)")
        width = _number(fields, "width", at, default=0.02, within=MARKING_WIDTH)
        reflectance = _number(
            fields, "reflectance", at, default=MARKING_REFLECTANCE, within=(0.0, 1.0), unit=""
        )
        if shape == "line":
            markings.append(LineMarking(start, end, width, reflectance))
        else:
            markings.append(ArcMarking(center, radius, low, high, width, reflectance))
    return markings


def _physical(top: dict[str, Any], source: str, *, has_objects: bool) -> tuple[float, str]:
    """What only a 3-D engine reads: the floor's friction and an MJCF world file."""
    floor = _mapping(top.get("floor"), f"{source}: floor", {"friction", "reflectance", "markings"})
    friction = _number(
        floor, "friction", f"{source}: floor", default=1.0, positive=True, within=FRICTION, unit=""
    )
    mjcf = top.get("mjcf") or ""
    if not isinstance(mjcf, str):
        raise HilSimError(f"{source}: mjcf: {mjcf!r:.40} is not a file name")
    if mjcf and has_objects:
        raise HilSimError(f"{source}: mjcf: an MJCF world brings its own boxes and boards; leave them out")
    return friction, str(Path(source).parent / mjcf) if mjcf else ""


def _board(item: dict[str, Any], where: str, *, position: bool) -> dict[str, float]:
    """A board's (or the ring's) size and mass, and its position if ``position``."""
    values = {
        "width": _number(item, "width", where, default=0.1, positive=True, within=LENGTH),
        "thickness": _number(item, "thickness", where, default=0.02, positive=True, within=LENGTH),
        "height": _number(item, "height", where, default=0.3, positive=True, within=LENGTH),
        "mass": _number(item, "mass", where, default=0.2, positive=True, within=MASS, unit="kg"),
    }
    if position:
        values.update(x=_number(item, "x", where), y=_number(item, "y", where), yaw=_yaw(item, where))
    return values


def _boxes(data: Any, source: str) -> list[Box]:
    """The ``boxes`` list."""
    boxes_data = data or []
    if not isinstance(boxes_data, list):
        raise HilSimError(f"{source}: boxes: expected a list")
    if len(boxes_data) > MAX_BOXES:
        raise HilSimError(f"{source}: boxes: {len(boxes_data)} boxes, at most {MAX_BOXES}")
    boxes = []
    for index, raw in enumerate(boxes_data):
        where = f"{source}: boxes[{index}]"
        item = _mapping(raw, where, {"x", "y", "width", "depth", "yaw"})
        boxes.append(
            Box(
                _number(item, "x", where),
                _number(item, "y", where),
                _number(item, "width", where, positive=True, within=LENGTH),
                _number(item, "depth", where, positive=True, within=LENGTH),
                _yaw(item, where),
            )
        )
    return boxes


def _boards(board_data: dict[str, Any], source: str, *, centre: Pose) -> tuple[list[Board], list[str]]:
    """The ring's boards (around ``centre``), then the items; and each one's key for errors."""
    boards: list[Board] = []
    board_names: list[str] = []
    if board_data.get("ring") is not None:
        where = f"{source}: boards.ring"
        ring = _mapping(
            board_data["ring"], where, {"count", "radius", "width", "thickness", "height", "mass"}
        )
        count = ring.get("count")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise HilSimError(f"{where}.count: {count!r:.40} is not a positive integer")
        if count > MAX_BOARDS:
            raise HilSimError(f"{where}.count: {count} boards, at most {MAX_BOARDS}")
        radius = _number(ring, "radius", where, positive=True, within=LENGTH)
        boards += ring_of_boards(count, radius, centre=centre, **_board(ring, where, position=False))
        board_names += [f"boards.ring (board {k} of {count})" for k in range(count)]
    items = board_data.get("items") or []
    if not isinstance(items, list):
        raise HilSimError(f"{source}: boards.items: expected a list")
    if len(boards) + len(items) > MAX_BOARDS:
        raise HilSimError(
            f"{source}: boards.items: {len(boards) + len(items)} boards with the ring, at most {MAX_BOARDS}"
        )
    for index, raw in enumerate(items):
        where = f"{source}: boards.items[{index}]"
        item = _mapping(raw, where, {"x", "y", "yaw", "width", "thickness", "height", "mass"})
        boards.append(Board(**_board(item, where, position=True)))
        board_names.append(f"boards.items[{index}]")
    return boards, board_names


def world_from_mapping(data: Any, *, source: str) -> WorldConfig:
    """Validate a world description (see the module docstring).

    Raises:
        HilSimError: naming ``source`` and the bad key, e.g. ``world.yaml: boards.ring.count``.
    """
    top = _mapping(data, source, {"arena", "start", "light", "boxes", "boards", "floor", "mjcf"})
    arena = _mapping(top.get("arena"), f"{source}: arena", {"width", "height"})
    width = _number(arena, "width", f"{source}: arena", default=4.0, positive=True, within=ARENA_SIZE)
    height = _number(arena, "height", f"{source}: arena", default=4.0, positive=True, within=ARENA_SIZE)
    start_data = _mapping(top.get("start"), f"{source}: start", {"x", "y", "yaw"})
    start = Pose(
        _number(start_data, "x", f"{source}: start", default=0.0),
        _number(start_data, "y", f"{source}: start", default=0.0),
        _yaw(start_data, f"{source}: start"),
    )
    light_data = _mapping(top.get("light"), f"{source}: light", {"x", "y", "reference_distance"})
    light = Light(
        _number(light_data, "x", f"{source}: light", default=1.5),
        _number(light_data, "y", f"{source}: light", default=1.5),
        _number(
            light_data, "reference_distance", f"{source}: light", default=0.5, positive=True, within=LENGTH
        ),
    )
    boxes = _boxes(top.get("boxes"), source)
    board_data = _mapping(top.get("boards"), f"{source}: boards", {"push_threshold", "ring", "items"})
    threshold = _number(
        board_data,
        "push_threshold",
        f"{source}: boards",
        default=0.05,
        positive=True,
        within=PUSH_THRESHOLD,
        unit="m/s",
    )
    boards, board_names = _boards(board_data, source, centre=start)
    friction, mjcf = _physical(top, source, has_objects=bool(boxes or boards))
    floor = _mapping(top.get("floor"), f"{source}: floor", {"friction", "reflectance", "markings"})
    reflectance = _number(
        floor, "reflectance", f"{source}: floor", default=FLOOR_REFLECTANCE, within=(0.0, 1.0), unit=""
    )
    markings = _markings(floor.get("markings"), source, (width, height))
    world = WorldConfig(
        width,
        height,
        start,
        light,
        tuple(boxes),
        tuple(boards),
        threshold,
        friction,
        mjcf,
        reflectance,
        tuple(markings),
        source=source,
    )
    if not in_arena(world, light.x, light.y):
        raise HilSimError(f"{source}: light: ({light.x:g}, {light.y:g}) is outside the arena")
    _check_layout(
        world, source=source, box_names=[f"boxes[{i}]" for i in range(len(boxes))], board_names=board_names
    )
    problem = start_problem(world, start)
    if problem is not None:
        raise HilSimError(f"{source}: start: {problem}")
    return world


def load_world(path: str | Path) -> WorldConfig:
    """Load a world YAML file.

    Raises:
        HilSimError: unreadable file, bad YAML (:mod:`hil_common.core.config_file`) or
            invalid keys; names the file and key.
    """
    return world_from_mapping(load_yaml(path, what="world", error=HilSimError), source=str(path))
