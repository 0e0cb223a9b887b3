"""World files and world geometry: YAML validation, ray casts, nearest points, the board ring."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from hil_sim.core.world import (
    MAX_BOARDS,
    MAX_BOXES,
    ArcMarking,
    Board,
    Box,
    FloorMap,
    Light,
    LineMarking,
    Pose,
    WorldConfig,
    WorldGeometry,
    demo_world,
    load_world,
    marking_outline,
    ring_of_boards,
    world_from_mapping,
)
from hil_sim.errors import HilSimError

WORLDS = Path(__file__).resolve().parents[1] / "worlds"
SHIPPED = sorted(WORLDS.glob("*.yaml"))


def cast1(geometry: WorldGeometry, x: float, y: float, angle: float, max_range: float = 10.0) -> float:
    hit = geometry.cast(
        np.array([x]), np.array([y]), np.array([math.cos(angle)]), np.array([math.sin(angle)]), max_range
    )
    return float(hit[0])


# --- loading -----------------------------------------------------------------------------


def test_the_shipped_worlds_are_there() -> None:
    assert {path.name for path in SHIPPED} >= {"demo.yaml", "empty.yaml"}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.name)
def test_shipped_world_loads(path: Path) -> None:
    world = load_world(path)
    assert isinstance(world, WorldConfig)
    assert abs(world.start.x) < world.width / 2 and abs(world.start.y) < world.height / 2
    assert world.push_threshold > 0
    WorldGeometry(world)  # and makes geometry


def test_demo_world_file_is_the_ring_of_six_boards() -> None:
    world = load_world(WORLDS / "demo.yaml")
    assert (world.width, world.height) == (8.0, 8.0)
    assert world.start == Pose(0.0, 0.0, 0.0)
    assert world.light == Light(1.5, 1.5, 0.5)
    assert world.push_threshold == 0.05
    assert len(world.boxes) == 1
    assert world.boards == ring_of_boards(6, 0.6, width=0.1, thickness=0.02, height=0.3)
    assert world.boards == demo_world().boards


def test_empty_world_file_has_walls_only() -> None:
    world = load_world(WORLDS / "empty.yaml")
    assert (world.width, world.height) == (10.0, 10.0)
    assert world.boxes == () and world.boards == ()
    assert len(WorldGeometry(world).owner) == 4


def test_an_empty_mapping_is_the_default_world() -> None:
    assert world_from_mapping(None, source="x.yaml") == WorldConfig()
    assert world_from_mapping({}, source="x.yaml") == WorldConfig()


def test_board_items_and_ring_add_up(tmp_path: Path) -> None:
    path = tmp_path / "world.yaml"
    path.write_text(
        "start: {x: 0.5, y: -0.5, yaw: 1.0}\n"
        "boards:\n"
        "  push_threshold: 0.2\n"
        "  ring: {count: 4, radius: 0.3}\n"
        "  items:\n"
        "    - {x: 1.0, y: 1.0}\n"
        "    - {x: -1.0, y: 1.0, yaw: 0.5, width: 0.2, thickness: 0.03, height: 0.4}\n"
    )
    world = load_world(path)
    assert world.push_threshold == 0.2
    assert world.boards[:4] == ring_of_boards(4, 0.3, centre=Pose(0.5, -0.5, 1.0))
    assert world.boards[4:] == (Board(1.0, 1.0, 0.0), Board(-1.0, 1.0, 0.5, 0.2, 0.03, 0.4))


BAD_WORLDS = [
    # (id, yaml text, the dotted key the message must name)
    ("unknown-top-level-key", "arena: {width: 4.0}\nrobots: 3\n", "robots"),
    ("arena-width-negative", "arena: {width: -4.0, height: 4.0}\n", "arena.width"),
    ("arena-height-not-a-number", "arena: {width: 4.0, height: wide}\n", "arena.height"),
    ("arena-width-infinite", "arena: {width: .inf}\n", "arena.width"),
    ("arena-unknown-key", "arena: {width: 4.0, depth: 4.0}\n", "arena.depth"),
    ("arena-not-a-mapping", "arena: [4.0, 4.0]\n", "arena"),
    ("ring-count-0", "boards: {ring: {count: 0, radius: 0.6}}\n", "boards.ring.count"),
    ("ring-count-six", "boards: {ring: {count: six, radius: 0.6}}\n", "boards.ring.count"),
    ("ring-count-float", "boards: {ring: {count: 6.0, radius: 0.6}}\n", "boards.ring.count"),
    ("ring-count-missing", "boards: {ring: {radius: 0.6}}\n", "boards.ring.count"),
    ("ring-radius-missing", "boards: {ring: {count: 6}}\n", "boards.ring.radius"),
    (
        "ring-thickness-zero",
        "boards: {ring: {count: 6, radius: 0.6, thickness: 0}}\n",
        "boards.ring.thickness",
    ),
    ("ring-unknown-key", "boards: {ring: {count: 6, radius: 0.6, colour: red}}\n", "boards.ring.colour"),
    ("push-threshold-zero", "boards: {push_threshold: 0}\n", "boards.push_threshold"),
    ("push-threshold-bool", "boards: {push_threshold: true}\n", "boards.push_threshold"),
    ("board-item-x-missing", "boards: {items: [{y: 1.0}]}\n", "boards.items[0].x"),
    ("board-items-not-a-list", "boards: {items: {x: 1.0, y: 1.0}}\n", "boards.items"),
    (
        "box-1-depth-missing",
        "boxes:\n  - {x: 1.0, y: 1.0, width: 0.2, depth: 0.2}\n  - {x: -1.0, y: 1.0, width: 0.2}\n",
        "boxes[1].depth",
    ),
    ("box-width-negative", "boxes: [{x: 1.0, y: 1.0, width: -0.2, depth: 0.2}]\n", "boxes[0].width"),
    ("box-unknown-key", "boxes: [{x: 1.0, y: 1.0, width: 0.2, depth: 0.2, h: 1}]\n", "boxes[0].h"),
    ("boxes-not-a-list", "boxes: {x: 1.0}\n", "boxes"),
    ("start-outside-the-arena", "arena: {width: 4.0, height: 4.0}\nstart: {x: 3.0, y: 0.0}\n", "start"),
    ("start-on-the-wall", "arena: {width: 4.0, height: 4.0}\nstart: {x: 0.0, y: -2.0}\n", "start"),
    ("start-yaw-nan", "start: {yaw: .nan}\n", "start.yaw"),
    ("light-outside-the-arena", "light: {x: 1.0, y: 9.0}\n", "light"),
    (
        "light-reference-distance-0",
        "light: {x: 1.0, y: 1.0, reference_distance: 0}\n",
        "light.reference_distance",
    ),
    ("floor-reflectance-above-1", "floor: {reflectance: 1.5}\n", "floor.reflectance"),
    ("floor-unknown-key", "floor: {colour: grey}\n", "floor.colour"),
    ("markings-not-a-list", "floor: {markings: {line: {}}}\n", "floor.markings"),
    ("marking-unknown-shape", "floor: {markings: [{square: {}}]}\n", "floor.markings[0]"),
    ("marking-two-shapes", "floor: {markings: [{line: {}, arc: {}}]}\n", "floor.markings[0]"),
    ("line-from-missing", "floor: {markings: [{line: {to: [1, 0]}}]}\n", "floor.markings[0].line.from"),
    (
        "line-to-not-a-point",
        "floor: {markings: [{line: {from: [0, 0], to: 1}}]}\n",
        "floor.markings[0].line.to",
    ),
    (
        "line-to-outside",
        "floor: {markings: [{line: {from: [0, 0], to: [9, 0]}}]}\n",
        "floor.markings[0].line.to",
    ),
    (
        "line-width-zero",
        "floor: {markings: [{line: {from: [0, 0], to: [1, 0], width: 0}}]}\n",
        "floor.markings[0].line.width",
    ),
    (
        "line-reflectance-negative",
        "floor: {markings: [{line: {from: [0, 0], to: [1, 0], reflectance: -0.1}}]}\n",
        "floor.markings[0].line.reflectance",
    ),
    (
        "line-unknown-key",
        "floor: {markings: [{line: {from: [0, 0], to: [1, 0], colour: black}}]}\n",
        "floor.markings[0].line.colour",
    ),
    ("arc-radius-missing", "floor: {markings: [{arc: {center: [0, 0]}}]}\n", "floor.markings[0].arc.radius"),
    (
        "arc-second-radius-negative",
        "floor: {markings: [{arc: {center: [0, 0], radius: 1}}, {arc: {center: [0, 0], radius: -1}}]}\n",
        "floor.markings[1].arc.radius",
    ),
    (
        "arc-backwards",
        "floor: {markings: [{arc: {center: [0, 0], radius: 1, from_deg: 90, to_deg: 0}}]}\n",
        "floor.markings[0].arc.to_deg",
    ),
]


@pytest.mark.parametrize(("text", "key"), [case[1:] for case in BAD_WORLDS], ids=[c[0] for c in BAD_WORLDS])
def test_bad_world_raises_naming_the_file_and_key(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "world.yaml"
    path.write_text(text)
    with pytest.raises(HilSimError) as info:
        load_world(path)
    message = str(info.value)
    assert message.startswith(str(path))
    assert key in message.removeprefix(str(path))


#: (id, yaml text, the message after "<file>: ") of worlds out of range or badly laid out.
BAD_LAYOUTS = [
    ("arena-1e300", "arena: {width: 1e300}\n", "arena.width: 1e+300 is outside 0.5..1000 m"),
    ("arena-1-mm", "arena: {width: 4, height: 0.001}\n", "arena.height: 0.001 is outside 0.5..1000 m"),
    (
        "board-mass",
        "boards: {items: [{x: 1, y: 1, mass: 1e300}]}\n",
        "boards.items[0].mass: 1e+300 is outside",
    ),
    ("ring-mass", "boards: {ring: {count: 3, radius: 1, mass: 0}}\n", "boards.ring.mass: 0 must be greater"),
    ("ring-radius", "boards: {ring: {count: 3, radius: 1e300}}\n", "boards.ring.radius: 1e+300 is outside"),
    (
        "board-thin",
        "boards: {items: [{x: 1, y: 1, thickness: 1e-300}]}\n",
        "boards.items[0].thickness: 1e-300",
    ),
    ("friction", "floor: {friction: 1e300}\n", "floor.friction: 1e+300 is outside 0.001..10"),
    ("push", "boards: {push_threshold: 1e300}\n", "boards.push_threshold: 1e+300 is outside 0.001..10 m/s"),
    (
        "box-yaw",
        "boxes: [{x: 1, y: 1, width: 0.2, depth: 0.2, yaw: 1e300}]\n",
        "boxes[0].yaw: 1e+300 is outside",
    ),
    (
        "board-yaw",
        "boards: {items: [{x: 1, y: 1, yaw: 90}]}\n",
        "boards.items[0].yaw: 90 is outside -6.28319",
    ),
    ("start-yaw", "start: {yaw: 1e300}\n", "start.yaw: 1e+300 is outside -6.28319..6.28319 rad"),
    ("light-distance", "light: {reference_distance: 1e300}\n", "light.reference_distance: 1e+300 is outside"),
    (
        "box-outside",
        "arena: {width: 4, height: 4}\nboxes: [{x: 1.95, y: 0, width: 0.2, depth: 0.2}]\n",
        "boxes[0]: at (1.95, 0) it reaches outside the 4 m x 4 m arena",
    ),
    ("board-outside", "boards: {items: [{x: 5, y: 0}]}\n", "boards.items[0]: at (5, 0) it reaches outside"),
    (
        "ring-outside",
        "arena: {width: 4, height: 4}\nboards: {ring: {count: 6, radius: 2.5}}\n",
        "boards.ring (board 0 of 6): at (2.5, 0) it reaches outside",
    ),
    (
        "boards-overlap",
        "boards: {items: [{x: 1, y: 1}, {x: 1, y: 1.05}]}\n",
        "boards.items[0]: overlaps boards.items[1]",
    ),
    (
        "ring-overlaps",
        "boards: {ring: {count: 8, radius: 0.1}}\n",
        "boards.ring (board 0 of 8): overlaps boards.ring (board 1 of 8)",
    ),
    (
        "board-on-a-box",
        "boxes: [{x: 1, y: 1, width: 0.4, depth: 0.4}]\nboards: {items: [{x: 1.1, y: 1}]}\n",
        "boards.items[0]: overlaps boxes[0]",
    ),
    (
        "box-on-the-start",
        "boxes: [{x: 0.1, y: 0, width: 0.2, depth: 0.2}]\n",
        "start: (0, 0) is within 0.1 m of box 0 at (0.1, 0)",
    ),
    (
        "board-on-the-start",
        "boards: {items: [{x: 0.05, y: 0}]}\n",
        "start: (0, 0) is within 0.1 m of board 0",
    ),
    (
        "ring-on-the-start",
        "boards: {ring: {count: 2, radius: 0.08}}\n",
        "start: (0, 0) is within 0.1 m of board 0",
    ),
    (
        "start-at-the-wall",
        "arena: {width: 4, height: 4}\nstart: {x: 1.95, y: 0}\n",
        "start: (1.95, 0) is within 0.1 m of the arena's wall",
    ),
    (
        "start-outside",
        "arena: {width: 4, height: 4}\nstart: {x: 3, y: 0}\n",
        "start: (3, 0) is outside the 4 m",
    ),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in BAD_LAYOUTS], ids=[c[0] for c in BAD_LAYOUTS])
def test_a_world_out_of_range_or_badly_laid_out_is_refused_naming_the_key(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "world.yaml"
    path.write_text(text)
    with pytest.raises(HilSimError) as info:
        load_world(path)
    assert str(info.value).startswith(f"{path}: {expected}")


def test_boards_may_touch_and_boxes_may_overlap() -> None:
    world = world_from_mapping(
        {
            "boxes": [
                {"x": 1, "y": -1, "width": 0.4, "depth": 0.4},
                {"x": 1.2, "y": -1, "width": 0.4, "depth": 0.4},
            ],
            "boards": {"items": [{"x": 1, "y": 1}, {"x": 1, "y": 1.1}]},
        },
        source="w",
    )
    assert len(world.boards) == 2 and len(world.boxes) == 2


@pytest.mark.parametrize(
    ("text", "key"),
    [
        pytest.param(
            "arena: {width: 4.0}\nrobots: 3\n",
            "robots",
            id="unknown-top-level-key",
        ),
        pytest.param("arena: {width: -4.0}\n", "arena.width", id="arena-width"),
        pytest.param("boards: {ring: {count: 0, radius: 1}}\n", "boards.ring.count", id="ring-count"),
        pytest.param("boxes: [{x: 1, y: 1, width: 1}]\n", "boxes[0].depth", id="box-depth"),
        pytest.param("light: {reference_distance: -1}\n", "light.reference_distance", id="light-ref"),
    ],
)
def test_bad_world_message_reads_file_colon_dotted_key(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "world.yaml"
    path.write_text(text)
    with pytest.raises(HilSimError) as info:
        load_world(path)
    assert str(info.value).startswith(f"{path}: {key}")


@pytest.mark.parametrize(
    "text",
    [
        "arena: {width: 4.0\n",
        "boards:\n  ring: {count: 6\n   radius: 0.6}\n- item\n",
        "arena: [\n",
        "a: b: c\n",
    ],
    ids=["unclosed-mapping", "mixed-block", "unclosed-list", "nested-colon"],
)
def test_malformed_yaml_raises_naming_the_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(HilSimError, match="invalid YAML") as info:
        load_world(path)
    assert str(info.value).startswith(str(path))


def test_top_level_list_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- arena\n- boards\n")
    with pytest.raises(HilSimError, match="expected a mapping") as info:
        load_world(path)
    assert str(path) in str(info.value)


def test_missing_file_raises_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.yaml"
    with pytest.raises(HilSimError, match="cannot read world") as info:
        load_world(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(
            b"arena: {width: 4\xff}\n",
            "cannot read world: not UTF-8 text: byte 0xff at offset 16 (line 1)",
            id="utf8",
        ),
        pytest.param(b"1: 2\nrobots: 3\n", "key 1 is not text", id="integer-key"),
        pytest.param(
            b"arena: {width: " + b"9" * 401 + b"}\n", "arena.width: an integer of 1333 bits", id="401-digits"
        ),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, "cannot read world: nested more than", id="deep"),
        pytest.param(
            b"boards: {ring: {count: 30000000, radius: 1.0}}\n",
            f"boards.ring.count: 30000000 boards, at most {MAX_BOARDS}",
            id="ring-count",
        ),
        pytest.param(
            b"boards:\n  ring: {count: 1000, radius: 1.0}\n  items: [{x: 1.0, y: 1.0}]\n",
            f"boards.items: 1001 boards with the ring, at most {MAX_BOARDS}",
            id="ring-and-items",
        ),
        pytest.param(
            ("boxes: [" + ", ".join(["{x: 1, y: 1, width: 1, depth: 1}"] * (MAX_BOXES + 1)) + "]\n").encode(),
            f"boxes: {MAX_BOXES + 1} boxes, at most {MAX_BOXES}",
            id="boxes",
        ),
    ],
)
def test_hostile_world_file_is_an_error_naming_it(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "world.yaml"
    path.write_bytes(content)
    with pytest.raises(HilSimError) as info:
        load_world(path)
    assert str(info.value).startswith(f"{path}: {expected}")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param({1: 2, "robots": 3}, "w: 1: unknown key", id="mixed-keys"),
        pytest.param({"arena": {"width": 10**400}}, "w: arena.width: 1000000000", id="huge-int"),
    ],
)
def test_world_mapping_with_odd_keys_or_numbers_is_an_error(
    data: dict[object, object], expected: str
) -> None:
    with pytest.raises(HilSimError) as info:
        world_from_mapping(data, source="w")
    assert str(info.value).startswith(expected)


def test_the_largest_ring_allowed_loads(tmp_path: Path) -> None:
    path = tmp_path / "world.yaml"
    path.write_text(
        # 1000 boards 0.1 m wide need a ring of 16 m to stand apart (0.1005 m between centres).
        f"arena: {{width: 40, height: 40}}\nboards: {{ring: {{count: {MAX_BOARDS}, radius: 16}}}}\n"
    )
    assert len(load_world(path).boards) == MAX_BOARDS


# --- ray casts ---------------------------------------------------------------------------

ARENA = WorldConfig(width=4.0, height=4.0, boards=())
RING = WorldConfig(width=4.0, height=4.0, boards=ring_of_boards(6, 0.6))


@pytest.mark.parametrize(
    ("x", "y", "angle_deg", "expected"),
    [
        (0.0, 0.0, 0.0, 2.0),
        (0.0, 0.0, 90.0, 2.0),
        (0.0, 0.0, 180.0, 2.0),
        (0.0, 0.0, -90.0, 2.0),
        (0.0, 0.0, 45.0, 2.0 * math.sqrt(2.0)),
        (0.0, 0.0, 30.0, 2.0 / math.cos(math.radians(30.0))),
        (1.5, 0.3, 0.0, 0.5),
        (1.5, 0.3, 180.0, 3.5),
        (-1.0, 1.2, 90.0, 0.8),
        (0.5, -1.0, -60.0, 1.0 / math.cos(math.radians(30.0))),
    ],
)
def test_cast_hits_a_wall_at_the_right_distance(
    x: float, y: float, angle_deg: float, expected: float
) -> None:
    assert cast1(WorldGeometry(ARENA), x, y, math.radians(angle_deg)) == pytest.approx(expected, abs=1e-12)


def test_cast_is_vectorised_and_keeps_the_shape() -> None:
    geometry = WorldGeometry(ARENA)
    angle = np.radians(np.array([[0.0, 90.0, 180.0], [45.0, -90.0, 270.0]]))
    ox, oy = np.zeros_like(angle), np.zeros_like(angle)
    hits = geometry.cast(ox, oy, np.cos(angle), np.sin(angle), 10.0)
    assert hits.shape == (2, 3)
    assert np.allclose(hits, [[2.0, 2.0, 2.0], [2.0 * math.sqrt(2.0), 2.0, 2.0]], atol=1e-12)


def test_cast_stops_at_max_range() -> None:
    geometry = WorldGeometry(ARENA)
    assert cast1(geometry, 0.0, 0.0, 0.0, max_range=1.5) == 1.5
    assert cast1(geometry, 0.0, 0.0, 0.0, max_range=2.5) == pytest.approx(2.0)


def test_cast_hits_a_box_face() -> None:
    world = WorldConfig(boxes=(Box(1.0, 0.0, 0.4, 0.2),))
    geometry = WorldGeometry(world)
    assert cast1(geometry, 0.0, 0.0, 0.0) == pytest.approx(0.8)
    assert cast1(geometry, 0.0, 0.09, 0.0) == pytest.approx(0.8)
    assert cast1(geometry, 0.0, 0.11, 0.0) == pytest.approx(2.0)  # passes beside it
    assert cast1(geometry, 1.0, 1.0, -math.pi / 2) == pytest.approx(0.9)  # from above


@pytest.mark.parametrize("board", range(6))
def test_cast_hits_each_ring_board_on_its_broad_face(board: int) -> None:
    angle = 2 * math.pi * board / 6
    assert cast1(WorldGeometry(RING), 0.0, 0.0, angle) == pytest.approx(0.6 - 0.01, abs=1e-12)


@pytest.mark.parametrize("gap", range(6))
def test_cast_misses_through_the_gaps_between_boards(gap: int) -> None:
    angle = 2 * math.pi * (gap + 0.5) / 6
    wall = 2.0 / max(abs(math.cos(angle)), abs(math.sin(angle)))
    assert cast1(WorldGeometry(RING), 0.0, 0.0, angle) == pytest.approx(wall, abs=1e-12)


def test_cast_passes_just_beside_a_board_edge() -> None:
    geometry = WorldGeometry(RING)
    assert cast1(geometry, 0.0, 0.049, 0.0) == pytest.approx(0.59)  # board 0 spans y in [-0.05, 0.05]
    assert cast1(geometry, 0.0, 0.051, 0.0) == pytest.approx(2.0)


def test_cast_ignores_a_fallen_board() -> None:
    geometry = WorldGeometry(RING)
    geometry.standing[0] = False
    assert geometry.boards_down == 1
    assert cast1(geometry, 0.0, 0.0, 0.0) == pytest.approx(2.0)
    assert cast1(geometry, 0.0, 0.0, math.pi / 3) == pytest.approx(0.59)  # the others still stand
    geometry.reset()
    assert geometry.boards_down == 0
    assert cast1(geometry, 0.0, 0.0, 0.0) == pytest.approx(0.59)


# --- nearest points ----------------------------------------------------------------------


def test_closest_gives_the_distance_to_a_wall() -> None:
    geometry = WorldGeometry(ARENA)
    points = np.array([[1.5, 0.3], [-1.9, -1.0], [0.2, 1.75], [1.8, -1.9]])
    dist, nearest, segment = geometry.closest(points)
    assert np.allclose(dist, [0.5, 0.1, 0.25, 0.1], atol=1e-12)
    assert np.allclose(nearest, [[2.0, 0.3], [-2.0, -1.0], [0.2, 2.0], [1.8, -2.0]], atol=1e-12)
    assert np.all(geometry.owner[segment] == -1)


def test_closest_gives_the_distance_to_a_corner() -> None:
    dist, nearest, _ = WorldGeometry(ARENA).closest(np.array([[1.7, 1.6]]))
    assert dist[0] == pytest.approx(0.3)  # the x = 2 wall, nearer than y = 2
    dist, nearest, _ = WorldGeometry(WorldConfig(boxes=(Box(0.0, 0.0, 0.2, 0.2),))).closest(
        np.array([[0.4, 0.5]])
    )
    assert dist[0] == pytest.approx(0.5)  # to the box corner (0.1, 0.1)
    assert np.allclose(nearest[0], [0.1, 0.1])


def test_closest_gives_the_distance_to_a_board() -> None:
    geometry = WorldGeometry(RING)
    dist, nearest, segment = geometry.closest(np.array([[0.3, 0.0], [0.3, 0.02]]))
    assert np.allclose(dist, 0.29)
    assert np.allclose(nearest, [[0.59, 0.0], [0.59, 0.02]])
    assert np.all(geometry.owner[segment] == 0)
    geometry.standing[0] = False
    dist, _, segment = geometry.closest(np.array([[0.3, 0.0]]))
    assert geometry.owner[segment[0]] != 0
    assert dist[0] > 0.29


# --- the board ring ----------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 3, 6, 7])
@pytest.mark.parametrize("centre", [Pose(), Pose(0.4, -0.3, 1.0)], ids=["origin", "offset"])
def test_ring_of_boards_faces_the_centre(count: int, centre: Pose) -> None:
    boards = ring_of_boards(count, 0.6, centre=centre, width=0.12, thickness=0.03, height=0.25)
    assert len(boards) == count
    for k, board in enumerate(boards):
        angle = 2 * math.pi * k / count
        assert board.x == pytest.approx(centre.x + 0.6 * math.cos(angle))
        assert board.y == pytest.approx(centre.y + 0.6 * math.sin(angle))
        to_centre = np.array([centre.x - board.x, centre.y - board.y]) / 0.6
        assert [math.cos(board.yaw), math.sin(board.yaw)] == pytest.approx(to_centre.tolist())
        assert (board.width, board.thickness, board.height) == (0.12, 0.03, 0.25)


@pytest.mark.parametrize("count", [3, 6])
def test_ring_boards_show_their_broad_face_to_the_centre(count: int) -> None:
    world = WorldConfig(width=4.0, height=4.0, boards=ring_of_boards(count, 0.6, width=0.1, thickness=0.02))
    geometry = WorldGeometry(world)
    _, nearest, segment = geometry.closest(np.zeros((1, 2)))
    for board in range(count):
        mine = np.flatnonzero(geometry.owner == board)
        mid = (geometry.start[mine] + geometry.end[mine]) / 2
        face = mine[np.argmin(np.hypot(mid[:, 0], mid[:, 1]))]  # the side nearest the centre
        assert math.sqrt(geometry.length_sq[face]) == pytest.approx(0.1)  # the broad one
        radial = np.array([math.cos(2 * math.pi * board / count), math.sin(2 * math.pi * board / count)])
        assert abs(np.dot(geometry.delta[face], radial)) < 1e-12  # square to the radius
        assert np.hypot(*mid[np.argmin(np.hypot(mid[:, 0], mid[:, 1]))]) == pytest.approx(0.59)
    assert np.hypot(*nearest[0]) == pytest.approx(0.59)
    assert geometry.owner[segment[0]] >= 0


# --- floor markings ------------------------------------------------------------------------

TRACK = """
arena: {width: 4.0, height: 4.0}
floor:
  reflectance: 0.7
  markings:
    - line: {from: [-1.0, -0.5], to: [1.0, -0.5], width: 0.02}
    - arc: {center: [1.0, 0.0], radius: 0.5, from_deg: -90, to_deg: 90, width: 0.04, reflectance: 0.1}
    - line: {from: [0.0, -1.0], to: [0.0, 1.0], width: 0.02, reflectance: 0.9}
"""


def test_floor_markings_load_with_their_defaults(tmp_path: Path) -> None:
    path = tmp_path / "track.yaml"
    path.write_text(TRACK)
    world = load_world(path)
    assert world.floor_reflectance == 0.7
    assert world.markings == (
        LineMarking((-1.0, -0.5), (1.0, -0.5), 0.02, 0.05),
        ArcMarking((1.0, 0.0), 0.5, -90.0, 90.0, 0.04, 0.1),
        LineMarking((0.0, -1.0), (0.0, 1.0), 0.02, 0.9),
    )


@pytest.mark.parametrize(
    ("x", "y", "expected"),
    [
        (0.5, -0.5, 0.05),  # on the first line
        (0.5, -0.509, 0.05),  # within its half width
        (0.5, -0.512, 0.7),  # just off it: bare floor
        (-1.005, -0.5, 0.7),  # beyond its end
        (1.5, 0.0, 0.1),  # on the arc (its east point)
        (1.0, 0.519, 0.1),
        (0.5, 0.0, 0.7),  # the arc's west point is not in its -90..90 sweep
        (0.0, -0.5, 0.9),  # the last marking lies over the first
        (0.0, 1.5, 0.7),
    ],
)
def test_the_floor_map_is_the_reflectance_under_a_point(
    tmp_path: Path, x: float, y: float, expected: float
) -> None:
    path = tmp_path / "track.yaml"
    path.write_text(TRACK)
    floor = FloorMap(load_world(path))
    assert floor.reflectance(np.array([x]), np.array([y]))[0] == expected
    assert floor.reflectance(np.full((2, 3), x), np.full((2, 3), y)).shape == (2, 3)


def test_a_full_ring_covers_every_bearing() -> None:
    ring = WorldConfig(markings=(ArcMarking((0.0, 0.0), 1.0),))
    angles = np.linspace(0, 2 * np.pi, 37)
    assert (FloorMap(ring).reflectance(np.cos(angles), np.sin(angles)) == 0.05).all()


def test_the_line_world_is_a_closed_track() -> None:
    world = load_world(WORLDS / "line.yaml")
    assert world.markings and not world.boards
    xs, ys = zip(*(p for m in world.markings for p in zip(*marking_outline(m), strict=True)), strict=True)
    assert max(np.hypot(xs, ys)) < world.width / 2


def test_to_segments_gives_every_solid_segment_its_distance_and_foot() -> None:
    geometry = WorldGeometry(WorldConfig(width=4.0, height=4.0, boards=(Board(1.0, 0.0, 0.0),)))
    geometry.standing[0] = False
    dist, nearest, along, segments = geometry.to_segments(np.array([[1.5, 1.0]]))
    assert segments.tolist() == [0, 1, 2, 3]  # the walls: the fallen board's four are gone
    start, end = geometry.start[segments], geometry.end[segments]
    np.testing.assert_allclose(nearest[0], start + along[0][:, None] * (end - start), atol=1e-12)
    np.testing.assert_allclose(dist[0], np.hypot(*(np.array([1.5, 1.0]) - nearest[0]).T), atol=1e-12)
    assert sorted(dist[0].tolist()) == pytest.approx([0.5, 1.0, 3.0, 3.5])
    assert geometry.closest(np.array([[1.5, 1.0]]))[0][0] == pytest.approx(0.5)
