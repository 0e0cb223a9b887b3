"""The live scene: the world, the robots where they are, each ranger's beam to its reading, bounded."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from hil_sim.core.robot_model import DeviceSpec, Mount, demo_robot
from hil_sim.core.scene import MAX_DETAILED, TRAIL_POINTS, Shape, Trails, scene_shapes, world_shapes
from hil_sim.core.simulation import Simulation
from hil_sim.core.world import Board, Pose, WorldConfig, ring_of_boards

RING = WorldConfig(boards=ring_of_boards(6, 0.6))


def shapes_in(shapes: list[Shape], ns: str) -> list[Shape]:
    return [s for s in shapes if s.ns == ns]


def simulation(world: WorldConfig = RING, robots: int = 1) -> Simulation:
    return Simulation(world, models=demo_robot(), robots=robots)


@pytest.mark.parametrize("standing", [[True] * 6, [False] * 6, [True, False, True, False, False, True]])
def test_a_board_stands_on_its_spot_or_lies_flat_where_it_fell(standing: list[bool]) -> None:
    boards = shapes_in(world_shapes(RING, standing), "boards")
    assert [s.id for s in boards] == list(range(6))
    for shape, board, up in zip(boards, RING.boards, standing, strict=True):
        x, y, z, yaw = shape.pose
        assert yaw == board.yaw
        if up:
            assert (x, y, z) == (board.x, board.y, board.height / 2)
            assert shape.scale == (board.thickness, board.width, board.height)
        else:  # flat, fallen away from the ring's centre
            assert z == board.thickness / 2
            assert math.hypot(x, y) == pytest.approx(math.hypot(board.x, board.y) + board.height / 2)
            assert shape.scale == (board.height, board.width, board.thickness)


def test_the_scene_has_the_robot_where_it_is_and_the_world_only_when_asked() -> None:
    sim = simulation()
    sim.teleport(0, Pose(0.3, -0.2, 1.0))
    shapes = scene_shapes(sim, Trails(1), hil_robots=1, world=True)
    (body,) = shapes_in(shapes, "robots")
    assert body.kind == "cylinder"
    assert body.pose[0] == pytest.approx(0.3) and body.pose[1] == pytest.approx(-0.2)
    assert body.pose[3] == pytest.approx(1.0)
    assert len(shapes_in(shapes, "boards")) == 6 and len(shapes_in(shapes, "walls")) == 4
    assert shapes_in(shapes, "arena")
    without = scene_shapes(sim, Trails(1), hil_robots=1, world=False)
    assert not {"arena", "walls", "boards", "boxes", "light"} & {s.ns for s in without}
    assert shapes_in(without, "robots")


def test_a_rangers_beam_reaches_as_far_as_its_reading() -> None:
    """Facing a wall 0.41 m ahead of the mounts: both beams hit, their far ends at the readings."""
    sim = simulation(WorldConfig())  # the empty 4 m arena: the wall at x = 2
    sim.teleport(0, Pose(1.5, 0.0, 0.0))
    sim.step(sim.sensor_every)  # a sensor sample at the new pose
    hit, clear = shapes_in(scene_shapes(sim, hil_robots=1, world=False), "beams")
    assert len(clear.points) == 0 and len(hit.points)
    segments = hit.points.reshape(-1, 2, 3)
    for name, mount in (("ultrasonic", (1.59, 0.0)), ("ir", (1.59, 0.02))):
        reading = float(sim.output(f"{name}.distance")[0]) / 100
        assert reading == pytest.approx(0.41, abs=0.03)
        # The cone's edges start at the ranger's mount and end at its reading.
        edges = segments[np.all(np.isclose(segments[:, 0, :2], mount), axis=1)]
        assert len(edges) == 2
        assert np.hypot(*(edges[:, 1, :2] - edges[:, 0, :2]).T) == pytest.approx([reading, reading])
    assert np.all(segments[:, :, 0] <= 2.0 + 1e-9)  # nothing drawn beyond the wall


def test_a_beam_with_nothing_in_range_is_drawn_clear_to_its_maximum() -> None:
    sim = simulation(WorldConfig(width=20.0, height=20.0))
    sim.step(sim.sensor_every)
    hit, clear = shapes_in(scene_shapes(sim, hil_robots=1, world=False), "beams")
    assert len(hit.points) == 0
    reach = np.linalg.norm(clear.points[1::2, :2] - clear.points[0::2, :2], axis=1)
    assert reach.max() == pytest.approx(2.0)  # the ultrasonic ranger's 200 cm


def test_the_pins_show_what_the_mcu_drives_and_what_it_reads() -> None:
    sim = simulation()
    sim.set_input("led.active", 1.0)
    sim.set_input("motor_left.enable", 180.0)
    (pins,) = shapes_in(scene_shapes(sim, hil_robots=1, world=False), "pins")
    assert "led: active 1" in pins.text
    assert "motor_left: enable 180, a 0, b 0" in pins.text
    assert "ultrasonic: distance" in pins.text and "compass: heading" in pins.text
    (leds,) = shapes_in(scene_shapes(sim, hil_robots=1, world=False), "leds")
    assert leds.colors[0][1] == 1.0  # lit
    assert not shapes_in(scene_shapes(sim, hil_robots=0, world=False), "pins")


def test_a_path_of_any_length_is_drawn_with_a_bounded_number_of_points_ending_where_the_robot_is() -> None:
    trails = Trails(2)
    steps = 200_000  # 5.5 hours at 10 Hz
    for n in range(steps):
        t = n * 0.1
        trails.sample(t, np.array([math.cos(t), 0.0]), np.array([math.sin(t), 0.0]))
    path = trails.points(0)
    assert 2 <= len(path) <= TRAIL_POINTS
    last = (steps - 1) * 0.1
    assert path[-1] == pytest.approx([math.cos(last), math.sin(last)])
    trails.reset()
    assert len(trails.points(0)) == 0


def test_a_swarms_scene_stays_bounded() -> None:
    sim = Simulation(WorldConfig(width=20.0, height=20.0), models=demo_robot(), robots=300)
    trails = Trails(300)
    trails.sample(0.0, sim.x, sim.y)
    trails.sample(1.0, sim.x + 0.1, sim.y)
    shapes = scene_shapes(sim, trails, hil_robots=300, world=True)
    assert len(shapes_in(shapes, "robots")) == MAX_DETAILED
    assert len(shapes_in(shapes, "pins")) == MAX_DETAILED
    assert len(shapes_in(shapes, "trails")) == MAX_DETAILED
    (swarm,) = shapes_in(shapes, "swarm")
    assert len(swarm.points) == 300 - MAX_DETAILED
    assert len(shapes) < 100  # one list shape for the rest, whatever their number


def test_a_board_of_a_world_with_items_has_its_own_shape() -> None:
    world = WorldConfig(boards=(Board(1.0, 0.0, 0.0),))
    (board,) = shapes_in(world_shapes(world, [True]), "boards")
    assert board.pose[:2] == (1.0, 0.0)


def test_a_ranger_on_a_servo_casts_its_beam_from_where_the_servo_turned_it() -> None:
    demo = demo_robot()
    pan = DeviceSpec("pan", "servo", Mount(0.06, 0.0, 0.07))
    sonar = DeviceSpec(
        "sonar",
        "ranger",
        Mount(0.075, 0.0, 0.09, servo="pan"),
        {"beam": "ultrasonic", "cone_deg": 0.0, "rays": 1, "max_range_cm": 100.0},
    )
    others = tuple(d for d in demo.devices if d.kind != "ranger")
    model = dataclasses.replace(demo, devices=(*others, pan, sonar))
    sim = Simulation(WorldConfig(width=20.0, height=20.0), models=model)
    sim.set_input("pan.pulse_us", 2400.0)  # all the way round: 180 degrees of Servo.h's range
    sim.step(round(2.0 / sim.dt))  # time to turn, and a sample after
    devices, row = sim.devices_of(0)
    angle = float(devices.joint_angle("pan")[row])
    assert abs(angle) > 0.5  # it turned
    (clear,) = [s for s in shapes_in(scene_shapes(sim, world=False), "beams") if len(s.points)]
    origin, end = clear.points
    expected = (0.06 + 0.015 * math.cos(angle), 0.015 * math.sin(angle), 0.09)
    assert origin == pytest.approx(expected)
    assert math.atan2(end[1] - origin[1], end[0] - origin[0]) == pytest.approx(angle)
    assert math.dist(origin, end) == pytest.approx(1.0)  # nothing in 1 m: clear to the maximum


def test_a_ws2812_strip_is_drawn_on_the_robot_in_the_colours_it_latched() -> None:
    model = dataclasses.replace(
        demo_robot(), devices=(*demo_robot().devices, DeviceSpec("strip", "rgb_leds", params={"leds": 3}))
    )
    sim = Simulation(WorldConfig(), models=model, robots=1)
    sim.teleport(0, Pose(0.5, 0.2, math.pi / 2))
    sim.set_input("strip.led0_r", 255.0)
    sim.set_input("strip.led2_b", 128.0)
    (strip,) = shapes_in(scene_shapes(sim, None, hil_robots=1, world=False), "strips")
    assert strip.colors == ((1.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 128 / 255, 1.0))
    # across the top of a robot facing +y: the first LED on its left (-x), the last on its right
    assert strip.points[:, 0] == pytest.approx([0.5 - 0.012, 0.5, 0.5 + 0.012])
    assert strip.points[:, 1] == pytest.approx([0.2] * 3)
    assert not shapes_in(scene_shapes(simulation(), None, hil_robots=1, world=False), "strips")
