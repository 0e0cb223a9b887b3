"""Shapes (:mod:`hil_sim.core.scene`) as rviz markers: ``world/markers`` and the live scene ``hil/scene``.

Both are ``visualization_msgs/MarkerArray`` in the ``odom`` frame: rviz, the Foxglove
app and Lichtblick draw them live, and a recording keeps them as they are.
"""

from __future__ import annotations

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from hil_sim.core.scene import Shape, Trails, arena_shapes, led_shapes, robot_shapes, world_shapes
from hil_sim.core.simulation import Simulation
from hil_sim.sim_topics import yaw_quaternion

#: Marker type of each shape kind.
MARKER_TYPES = {
    "cube": Marker.CUBE,
    "sphere": Marker.SPHERE,
    "cylinder": Marker.CYLINDER,
    "line_strip": Marker.LINE_STRIP,
    "line_list": Marker.LINE_LIST,
    "sphere_list": Marker.SPHERE_LIST,
    "text": Marker.TEXT_VIEW_FACING,
}
#: The frame every shape is in.
FRAME = "odom"
#: The live scene's topic (relative: in the simulator's namespace).
SCENE_TOPIC = "hil/scene"


def marker(shape: Shape, stamp: Time) -> Marker:
    """One shape as an rviz marker (added, for ever: a later one of the same ns and id replaces it)."""
    out = Marker(type=MARKER_TYPES[shape.kind], ns=shape.ns, id=shape.id, action=Marker.ADD, text=shape.text)
    out.header.stamp, out.header.frame_id = stamp, FRAME
    x, y, z, yaw = shape.pose
    out.pose.position.x, out.pose.position.y, out.pose.position.z = x, y, z
    qx, qy, qz, qw = yaw_quaternion(yaw)
    out.pose.orientation.x, out.pose.orientation.y = qx, qy
    out.pose.orientation.z, out.pose.orientation.w = qz, qw
    out.scale.x, out.scale.y, out.scale.z = (float(v) for v in shape.scale)
    out.color.r, out.color.g, out.color.b, out.color.a = (float(v) for v in shape.color)
    if len(shape.points):
        out.points = [Point(x=px, y=py, z=pz) for px, py, pz in shape.points.tolist()]
    if shape.colors:
        out.colors = [ColorRGBA(r=r, g=g, b=b, a=a) for r, g, b, a in shape.colors]
    return out


def marker_array(shapes: list[Shape], stamp: Time) -> MarkerArray:
    """Shapes as one MarkerArray."""
    return MarkerArray(markers=[marker(shape, stamp) for shape in shapes])


class WorldMarkers:
    """``world/markers``: walls, boxes, boards, floor markings, light and LEDs in the odom frame.

    The world's markers are built once per set of standing boards (they change only
    when a board falls); the LEDs every time.
    """

    def __init__(self) -> None:
        self._standing: tuple[bool, ...] | None = None
        self._world: list[Marker] = []

    def message(self, sim: Simulation, stamp: Time) -> MarkerArray:
        """The world's markers at ``stamp``."""
        standing = tuple(bool(s) for s in sim.geometry.standing)
        if standing != self._standing:
            self._standing = standing
            self._world = [marker(shape, stamp) for shape in world_shapes(sim.world, standing)]
        for each in self._world:
            each.header.stamp = stamp
        leds = [marker(shape, stamp) for shape in led_shapes(sim.x, sim.y, sim.led)]
        return MarkerArray(markers=[*self._world, *leds])


class SceneMarkers:
    """The live scene's messages; the world's markers are built once per set of standing boards."""

    def __init__(self) -> None:
        self._standing: tuple[bool, ...] | None = None
        self._world: list[Marker] = []

    def message(
        self, sim: Simulation, trails: Trails, stamp: Time, *, hil_robots: int, world: bool
    ) -> MarkerArray:
        """The scene at ``stamp`` (:func:`hil_sim.core.scene.scene_shapes`), the world with it if asked."""
        markers = []
        if world:
            standing = tuple(bool(s) for s in sim.geometry.standing)
            if standing != self._standing:
                self._standing, self._world = (
                    standing,
                    [marker(shape, stamp) for shape in arena_shapes(sim.world, standing)],
                )
            for each in self._world:
                each.header.stamp = stamp
            markers += self._world
        markers += [marker(shape, stamp) for shape in robot_shapes(sim, trails, hil_robots=hil_robots)]
        return MarkerArray(markers=markers)
