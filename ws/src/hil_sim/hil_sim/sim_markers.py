"""The world as rviz markers: walls, boxes, boards (standing or fallen), floor markings, the light, LEDs."""

from __future__ import annotations

import math

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
from visualization_msgs.msg import Marker, MarkerArray

from hil_sim.core.simulation import Simulation
from hil_sim.core.world import marking_outline
from hil_sim.sim_topics import yaw_quaternion


def world_markers(sim: Simulation, stamp: Time) -> MarkerArray:
    """Walls, boxes, boards, floor markings, light and LEDs as rviz markers in the odom frame."""
    world = sim.world
    markers: list[Marker] = []

    def add(
        kind: int,
        ns: str,
        pose: tuple[float, float, float, float],
        scale: tuple[float, float, float],
        color: tuple[float, float, float, float],
    ) -> Marker:
        marker = Marker(type=kind, ns=ns, id=len(markers), action=Marker.ADD)
        marker.header.stamp, marker.header.frame_id = stamp, "odom"
        x, y, z, yaw = pose
        marker.pose.position.x, marker.pose.position.y, marker.pose.position.z = x, y, z
        qx, qy, qz, qw = yaw_quaternion(yaw)
        marker.pose.orientation.x, marker.pose.orientation.y = qx, qy
        marker.pose.orientation.z, marker.pose.orientation.w = qz, qw
        marker.scale.x, marker.scale.y, marker.scale.z = scale
        marker.color.r, marker.color.g, marker.color.b, marker.color.a = color
        markers.append(marker)
        return marker

    grey, wall_h = (0.6, 0.6, 0.6, 1.0), 0.2
    half_w, half_h = world.width / 2, world.height / 2
    for x, y, sx, sy in (
        (0, half_h, world.width, 0.02),
        (0, -half_h, world.width, 0.02),
        (half_w, 0, 0.02, world.height),
        (-half_w, 0, 0.02, world.height),
    ):
        add(Marker.CUBE, "walls", (x, y, wall_h / 2, 0.0), (sx, sy, wall_h), grey)
    for box in world.boxes:
        add(
            Marker.CUBE,
            "boxes",
            (box.x, box.y, 0.1, box.yaw),
            (box.width, box.depth, 0.2),
            (0.5, 0.4, 0.3, 1.0),
        )
    for board, standing in zip(world.boards, sim.geometry.standing, strict=True):
        if standing:
            add(
                Marker.CUBE,
                "boards",
                (board.x, board.y, board.height / 2, board.yaw),
                (board.thickness, board.width, board.height),
                (0.9, 0.7, 0.2, 1.0),
            )
        else:  # lying flat, fallen away from the centre of the ring
            dx, dy = -math.cos(board.yaw) * board.height / 2, -math.sin(board.yaw) * board.height / 2
            add(
                Marker.CUBE,
                "boards",
                (board.x + dx, board.y + dy, board.thickness / 2, board.yaw),
                (board.height, board.width, board.thickness),
                (0.5, 0.35, 0.1, 1.0),
            )
    for marking in world.markings:
        shade = marking.reflectance
        strip = add(
            Marker.LINE_STRIP,
            "floor",
            (0.0, 0.0, 0.001, 0.0),
            (marking.width, 0.0, 0.0),
            (shade, shade, shade, 1.0),
        )
        xs, ys = marking_outline(marking)
        strip.points = [Point(x=float(x), y=float(y), z=0.0) for x, y in zip(xs, ys, strict=True)]
    add(
        Marker.SPHERE,
        "light",
        (world.light.x, world.light.y, 0.3, 0.0),
        (0.1, 0.1, 0.1),
        (1.0, 1.0, 0.3, 1.0),
    )
    lit = sim.led
    for robot in range(sim.count):
        add(
            Marker.SPHERE,
            "leds",
            (float(sim.x[robot]), float(sim.y[robot]), 0.12, 0.0),
            (0.03, 0.03, 0.03),
            (0.1, 1.0, 0.1, 1.0) if lit[robot] > 0.5 else (0.1, 0.25, 0.1, 1.0),
        )
    return MarkerArray(markers=markers)
