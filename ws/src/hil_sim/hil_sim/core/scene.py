"""The scene of a run as plain shapes: what a viewer draws of the world and the robots.

:func:`world_shapes` is the world (walls, boxes, boards standing or fallen, the
floor's markings, the light), :func:`led_shapes` every robot's LED, and
:func:`scene_shapes` the whole live scene: the arena's floor and the world when
asked, every robot's body and heading, its LED, its WS2812 strips in the colours they
latched (:func:`strip_shapes`), each ranger's beam out to its
reading, the robots' paths (:class:`Trails`), the MCU's pins of each HIL robot (the
signal link's values both ways) and a status line. A :class:`Shape` is what rviz's
``visualization_msgs/Marker`` and Foxglove's scene primitives both have (a kind, a
pose, a size, a colour, points, text), in the world frame, so one adapter draws it
for either (:mod:`hil_sim.sim_markers`). Nothing here imports rclpy.

What a scene holds is bounded whatever the swarm or the run: beams, paths and pins
are drawn for the first :data:`MAX_DETAILED` robots, the others are dots with a
heading in one list shape per robot model; a path keeps at most
:data:`~hil_sim.core.track.TRACK_CAPACITY` samples and is drawn with at most
:data:`TRAIL_POINTS` of them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from hil_sim.core.devices.rgb_leds import RgbLeds
from hil_sim.core.simulation import Simulation
from hil_sim.core.track import Track
from hil_sim.core.world import BOX_HEIGHT, WALL_HEIGHT, WorldConfig, marking_outline

Array = npt.NDArray[np.float64]
RGBA = tuple[float, float, float, float]
#: The kinds of shape (rviz's marker types of the same names).
ShapeKind = Literal["cube", "sphere", "cylinder", "line_strip", "line_list", "sphere_list", "text"]

#: Robots drawn in detail (beams, paths, pins, their own body); the rest are dots.
MAX_DETAILED = 20
#: Most points of one robot's path in a scene.
TRAIL_POINTS = 150
#: Simulated seconds between the samples of a path.
TRAIL_PERIOD_S = 0.1
#: Segments of the arc at the end of a ranger's beam.
ARC_SEGMENTS = 4

GREY: RGBA = (0.6, 0.6, 0.6, 1.0)
BOX: RGBA = (0.5, 0.4, 0.3, 1.0)
BOARD_STANDING: RGBA = (0.9, 0.7, 0.2, 1.0)
BOARD_FALLEN: RGBA = (0.5, 0.35, 0.1, 1.0)
LIGHT: RGBA = (1.0, 1.0, 0.3, 1.0)
LED_ON: RGBA = (0.1, 1.0, 0.1, 1.0)
LED_OFF: RGBA = (0.1, 0.25, 0.1, 1.0)
HIL_BODY: RGBA = (0.2, 0.4, 0.9, 0.9)
OTHER_BODY: RGBA = (0.55, 0.55, 0.65, 0.9)
HEADING: RGBA = (1.0, 1.0, 1.0, 1.0)
BEAM_HIT: RGBA = (1.0, 0.35, 0.1, 0.9)
BEAM_CLEAR: RGBA = (0.3, 0.8, 1.0, 0.5)
TEXT: RGBA = (1.0, 1.0, 1.0, 1.0)
#: One colour per path, robot by robot (matplotlib's tab10, as in the report).
PATH_COLOURS: tuple[RGBA, ...] = tuple(
    (r / 255, g / 255, b / 255, 1.0)
    for r, g, b in (
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    )
)


@dataclass(frozen=True, eq=False)
class Shape:
    """One thing to draw, in the world frame (``odom``); ``(ns, id)`` names it across scenes.

    ``pose`` is x, y, z (m) and yaw (rad); ``scale`` the size (m: a box's sides, a
    cylinder's or sphere's diameters and height, a line's width in x, a text's height
    in z); ``points`` (K, 3) the corners of a line or the centres of a list, in the
    shape's own frame; ``colors`` one colour per point, when they differ.
    """

    ns: str
    id: int
    kind: ShapeKind
    pose: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    color: RGBA = (1.0, 1.0, 1.0, 1.0)
    points: Array = field(default_factory=lambda: np.zeros((0, 3)))
    colors: tuple[RGBA, ...] = ()
    text: str = ""


class _Shapes:
    """A list of shapes, each numbered within its namespace."""

    def __init__(self) -> None:
        self.shapes: list[Shape] = []
        self._next: dict[str, int] = {}

    def add(self, ns: str, kind: ShapeKind, **fields: object) -> None:
        number = self._next.get(ns, 0)
        self._next[ns] = number + 1
        self.shapes.append(Shape(ns, number, kind, **fields))  # type: ignore[arg-type]


def world_shapes(world: WorldConfig, standing: Sequence[bool]) -> list[Shape]:
    """Walls, boxes, boards (standing, or lying flat where they fell), floor markings, the light."""
    out = _Shapes()
    half_w, half_h = world.width / 2, world.height / 2
    for x, y, sx, sy in (
        (0.0, half_h, world.width, 0.02),
        (0.0, -half_h, world.width, 0.02),
        (half_w, 0.0, 0.02, world.height),
        (-half_w, 0.0, 0.02, world.height),
    ):
        out.add("walls", "cube", pose=(x, y, WALL_HEIGHT / 2, 0.0), scale=(sx, sy, WALL_HEIGHT), color=GREY)
    for box in world.boxes:
        out.add(
            "boxes",
            "cube",
            pose=(box.x, box.y, BOX_HEIGHT / 2, box.yaw),
            scale=(box.width, box.depth, BOX_HEIGHT),
            color=BOX,
        )
    for board, up in zip(world.boards, standing, strict=True):
        if up:
            out.add(
                "boards",
                "cube",
                pose=(board.x, board.y, board.height / 2, board.yaw),
                scale=(board.thickness, board.width, board.height),
                color=BOARD_STANDING,
            )
        else:  # lying flat, fallen away from the centre of the ring
            dx, dy = -math.cos(board.yaw) * board.height / 2, -math.sin(board.yaw) * board.height / 2
            out.add(
                "boards",
                "cube",
                pose=(board.x + dx, board.y + dy, board.thickness / 2, board.yaw),
                scale=(board.height, board.width, board.thickness),
                color=BOARD_FALLEN,
            )
    for marking in world.markings:
        shade = marking.reflectance
        xs, ys = marking_outline(marking)
        out.add(
            "floor",
            "line_strip",
            pose=(0.0, 0.0, 0.001, 0.0),
            scale=(marking.width, 0.0, 0.0),
            color=(shade, shade, shade, 1.0),
            points=np.column_stack([xs, ys, np.zeros(len(xs))]),
        )
    out.add(
        "light", "sphere", pose=(world.light.x, world.light.y, 0.3, 0.0), scale=(0.1, 0.1, 0.1), color=LIGHT
    )
    return out.shapes


def led_shapes(x: Array, y: Array, lit: Array) -> list[Shape]:
    """Every robot's LED above it: bright while lit (one list shape)."""
    points = np.column_stack([x, y, np.full(len(x), 0.12)])
    colors = tuple(LED_ON if on > 0.5 else LED_OFF for on in lit)
    return [Shape("leds", 0, "sphere_list", scale=(0.03, 0.03, 0.03), points=points, colors=colors)]


#: Spacing (m) of a WS2812 strip's LEDs in the scene, across the robot's top.
STRIP_PITCH = 0.012


def strip_shapes(sim: Simulation, detailed: int) -> list[Shape]:
    """The WS2812 strips (``rgb_leds``) of the first ``detailed`` robots, each LED in its colour.

    One sphere list: each strip across the robot's top (its first LED on the robot's
    left), an LED the colour it latched, black while unlit.
    """
    points: list[Array] = []
    colors: list[RGBA] = []
    for group in sim.groups:
        rows = group.rows
        mine = np.flatnonzero(rows < detailed)
        if not len(mine):
            continue
        top = group.model.body.height + 0.01
        for batch in group.devices.kinds.values():
            if not isinstance(batch, RgbLeds):
                continue
            for index in range(batch.count):
                shown = batch.colours(index)[mine] / 255.0  # (robots, leds, 3)
                leds = shown.shape[1]
                across = (np.arange(leds) - (leds - 1) / 2) * STRIP_PITCH
                lateral = -0.02 * index  # a second strip behind the first
                for k, row in enumerate(rows[mine]):
                    x, y, yaw = float(sim.x[row]), float(sim.y[row]), float(sim.yaw[row])
                    c, s = math.cos(yaw), math.sin(yaw)
                    points.append(
                        np.column_stack(
                            [
                                x + c * lateral + s * across,
                                y + s * lateral + c * -across,
                                np.full(leds, top),
                            ]
                        )
                    )
                    colors += [(float(r), float(g), float(b), 1.0) for r, g, b in shown[k]]
    if not points:
        return []
    return [
        Shape(
            "strips",
            0,
            "sphere_list",
            scale=(0.01, 0.01, 0.01),
            points=np.vstack(points),
            colors=tuple(colors),
        )
    ]


class Trails:
    """The paths of the first :data:`MAX_DETAILED` robots, one :class:`Track` each."""

    def __init__(self, robots: int) -> None:
        self.tracks = [Track() for _ in range(min(robots, MAX_DETAILED))]
        self._next = 0.0

    def sample(self, t: float, x: Array, y: Array) -> None:
        """Take the robots' positions at simulated time ``t`` if a sample is due."""
        if t < self._next:
            return
        self._next = t + TRAIL_PERIOD_S
        for robot, track in enumerate(self.tracks):
            track.add(t, float(x[robot]), float(y[robot]))

    def points(self, robot: int, limit: int = TRAIL_POINTS) -> Array:
        """(K, 2) x, y of robot ``robot``'s path, at most ``limit`` evenly picked, the latest last."""
        rows = self.tracks[robot].rows
        if len(rows) > limit:
            step = math.ceil(len(rows) / (limit - 1))
            rows = np.vstack([rows[:-1:step], rows[-1:]])
        return rows[:, 1:3]

    def reset(self) -> None:
        """Forget every path (the world was reset)."""
        self.tracks = [Track() for _ in self.tracks]
        self._next = 0.0


def pin_text(sim: Simulation, robot: int) -> str:
    """Robot ``robot``'s signal link as text: the MCU's pins as the simulator took them, then what it reads.

    One line per device: ``motor_left: enable 180, a 1, b 0``.
    """
    devices, row = sim.devices_of(robot)
    taken: dict[str, list[str]] = {}
    for (device, signal), slot in devices.inputs.items():
        value = float(slot.model.inputs[row, slot.index, slot.column])
        taken.setdefault(device, []).append(f"{signal} {value:.4g}")
    given: dict[str, list[str]] = {}
    for device, signal, value in sim.signals(robot):
        given.setdefault(device, []).append(f"{signal} {value:.4g}")
    lines = [f"robot {robot}: MCU pins out"]
    lines += [f"  {device}: {', '.join(values)}" for device, values in taken.items()]
    lines.append("MCU pins in")
    lines += [f"  {device}: {', '.join(values)}" for device, values in given.items()]
    return "\n".join(lines)


def _beams(sim: Simulation, robots: int) -> tuple[list[Array], list[Array]]:
    """Every ranger's beam of robots ``0..robots-1`` as segments ((2S, 3) each): those that hit, those clear.

    A beam is its cone's two edges (one line for a single ray) out to the reading and
    the arc there; it hits when the reading is short of the ranger's maximum.
    """
    hit: list[Array] = []
    clear: list[Array] = []
    for group in sim.groups:
        local = np.flatnonzero(group.rows < robots)
        if not len(local):
            continue
        rows, devices = group.rows[local], group.devices
        x, y, yaw = sim.x[rows], sim.y[rows], sim.yaw[rows]
        c, s = np.cos(yaw), np.sin(yaw)
        for name, model, index in devices.devices(["ranger"]):
            params = model.params[index]
            mx, my, myaw = (part[local] for part in devices.mounts.pose(name))
            z = np.full(len(rows), devices.model.device(name).mount.z)
            origin = np.column_stack([x + c * mx - s * my, y + s * mx + c * my, z])  # (n, 3)
            reach = params["max_range_cm"] / 100.0
            distance = np.clip(model.outputs[local, index, model.column("distance")] / 100.0, 0.0, reach)
            half = math.radians(params["cone_deg"]) / 2
            spread = np.linspace(-half, half, ARC_SEGMENTS + 1) if half > 0 else np.zeros(1)
            angle = (yaw + myaw)[:, None] + spread[None, :]  # (n, A)
            ends = np.stack(
                [
                    origin[:, None, 0] + distance[:, None] * np.cos(angle),
                    origin[:, None, 1] + distance[:, None] * np.sin(angle),
                    np.repeat(z[:, None], len(spread), axis=1),
                ],
                axis=-1,
            )  # (n, A, 3)
            edges = [np.stack([origin, ends[:, k]], axis=1)[:, None] for k in sorted({0, len(spread) - 1})]
            arc = np.stack([ends[:, :-1], ends[:, 1:]], axis=2)  # (n, A-1, 2, 3)
            segments = np.concatenate([*edges, arc], axis=1).reshape(len(rows), -1, 3)
            in_range = distance < reach * 0.999
            hit.extend(segments[in_range])
            clear.extend(segments[~in_range])
    return hit, clear


def scene_shapes(
    sim: Simulation, trails: Trails | None = None, *, hil_robots: int = 0, world: bool = True
) -> list[Shape]:
    """The live scene (module docstring): :func:`arena_shapes` if ``world``, then :func:`robot_shapes`.

    Args:
        sim: the simulation, as of now.
        trails: the robots' paths (None: none drawn).
        hil_robots: robots ``0..hil_robots-1`` have an MCU: their pins are drawn.
        world: include the world (it changes only when a board falls).
    """
    arena = arena_shapes(sim.world, [bool(s) for s in sim.geometry.standing]) if world else []
    return [*arena, *robot_shapes(sim, trails, hil_robots=hil_robots)]


def arena_shapes(world: WorldConfig, standing: Sequence[bool]) -> list[Shape]:
    """The arena's floor (as light as the floor's reflectance) and :func:`world_shapes`."""
    shade = world.floor_reflectance * 0.6
    floor = Shape(
        "arena",
        0,
        "cube",
        pose=(0.0, 0.0, -0.001, 0.0),
        scale=(world.width, world.height, 0.002),
        color=(shade, shade, shade, 1.0),
    )
    return [floor, *world_shapes(world, standing)]


def robot_shapes(sim: Simulation, trails: Trails | None = None, *, hil_robots: int = 0) -> list[Shape]:
    """What moves: LEDs, bodies and headings, beams, paths, pins, the status line (:func:`scene_shapes`)."""
    config = sim.world
    shapes: list[Shape] = []
    shapes += led_shapes(sim.x, sim.y, sim.led)
    detailed = min(sim.count, MAX_DETAILED)
    out = _Shapes()
    heads: list[Array] = []
    for group in sim.groups:
        body = group.model.body
        height = body.height - body.clearance
        z = (body.height + body.clearance) / 2
        rows = group.rows
        x, y, yaw = sim.x[rows], sim.y[rows], sim.yaw[rows]
        tips = np.column_stack([x + body.body_radius * np.cos(yaw), y + body.body_radius * np.sin(yaw)])
        top = np.full(len(rows), body.height + 0.002)
        heads.append(
            np.stack([np.column_stack([x, y, top]), np.column_stack([tips, top])], axis=1).reshape(-1, 3)
        )
        for k, robot in enumerate(rows):
            if robot < detailed:
                out.add(
                    "robots",
                    "cylinder",
                    pose=(float(x[k]), float(y[k]), z, float(yaw[k])),
                    scale=(2 * body.body_radius, 2 * body.body_radius, height),
                    color=HIL_BODY if robot < hil_robots else OTHER_BODY,
                )
        many = rows >= detailed
        if many.any():
            out.add(
                "swarm",
                "sphere_list",
                scale=(2 * body.body_radius, 2 * body.body_radius, height),
                color=OTHER_BODY,
                points=np.column_stack([x[many], y[many], np.full(int(many.sum()), z)]),
            )
    shapes += out.shapes
    shapes += strip_shapes(sim, detailed)
    shapes.append(
        Shape("headings", 0, "line_list", scale=(0.01, 0.0, 0.0), color=HEADING, points=np.vstack(heads))
    )
    hit, clear = _beams(sim, detailed)
    for number, (segments, color) in enumerate(((hit, BEAM_HIT), (clear, BEAM_CLEAR))):
        points = np.concatenate(segments) if segments else np.zeros((0, 3))
        shapes.append(
            Shape("beams", number, "line_list", scale=(0.005, 0.0, 0.0), color=color, points=points)
        )
    if trails is not None:
        for robot in range(len(trails.tracks)):
            path = trails.points(robot)
            if len(path) >= 2:
                shapes.append(
                    Shape(
                        "trails",
                        robot,
                        "line_strip",
                        pose=(0.0, 0.0, 0.003, 0.0),
                        scale=(0.01, 0.0, 0.0),
                        color=PATH_COLOURS[robot % len(PATH_COLOURS)],
                        points=np.column_stack([path, np.zeros(len(path))]),
                    )
                )
    for robot in range(min(hil_robots, detailed)):
        shapes.append(
            Shape(
                "pins",
                robot,
                "text",
                pose=(float(sim.x[robot]), float(sim.y[robot]), 0.45, 0.0),
                scale=(0.0, 0.0, 0.03),
                color=TEXT,
                text=pin_text(sim, robot),
            )
        )
    boards = len(config.boards)
    status = f"t {sim.time:.1f} s" + (
        f", boards down {sim.geometry.boards_down} of {boards}" if boards else ""
    )
    shapes.append(
        Shape(
            "status",
            0,
            "text",
            pose=(0.0, config.height / 2 + 0.15, 0.1, 0.0),
            scale=(0.0, 0.0, 0.12),
            color=TEXT,
            text=status,
        )
    )
    return shapes
