"""The live view: an app sees the run over the Foxglove WebSocket protocol; a bag keeps the scene.

The client here is what the Foxglove app and Lichtblick do: read serverInfo and the
advertised channels, subscribe, take binary messageData frames and decode each with
the definition its channel advertised (``ros2msg``, CDR), here with mcap_ros2's
decoder, which reads recorded runs the same way.
"""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import struct
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcap.reader import make_reader
from mcap.records import Schema
from mcap_ros2.decoder import DecoderFactory

from conftest import Spawn
from hil_bringup.core.live import SUBPROTOCOL
from hil_sim.core.build import world_path
from hil_sim.core.world import load_world

connect = pytest.importorskip("websockets.sync.client").connect

RUNNER = [sys.executable, "-m", "hil_bringup.hil_sim_runner", "--headless", "--rtf", "0"]
#: The robot's top speed (m/s): how far it can go between two stamps.
TOP_SPEED = 0.6
DEMO = load_world(world_path(""))
#: Foxglove WebSocket binary opcodes (server to client).
MESSAGE_DATA, TIME = 1, 2


class FoxgloveClient:
    """A Foxglove WebSocket client: channels by topic, subscriptions, decoded messages."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.info = json.loads(self.ws.recv(timeout=10))
        self.channels: dict[str, dict[str, Any]] = {}
        self._decoders: dict[int, tuple[str, Any]] = {}
        self.times: list[int] = []

    def frames(self, deadline: float) -> Iterator[str | bytes]:
        """Every frame the server sends until ``deadline`` (wall), advertisements taken in."""
        while time.monotonic() < deadline:
            try:
                frame = self.ws.recv(timeout=max(0.01, deadline - time.monotonic()))
            except TimeoutError:
                return
            if isinstance(frame, str):
                message = json.loads(frame)
                if message["op"] == "advertise":
                    self.channels.update({c["topic"]: c for c in message["channels"]})
            elif frame[0] == TIME:
                self.times.append(struct.unpack_from("<Q", frame, 1)[0])
            yield frame

    def await_channels(self, topics: list[str], deadline: float) -> None:
        for _ in self.frames(deadline):
            if set(topics) <= set(self.channels):
                return
        raise AssertionError(f"not advertised by the deadline: {set(topics) - set(self.channels)}")

    def subscribe(self, topics: list[str]) -> None:
        subscriptions = []
        for number, topic in enumerate(topics, start=1):
            channel = self.channels[topic]
            assert (channel["encoding"], channel["schemaEncoding"]) == ("cdr", "ros2msg")
            schema = Schema(0, channel["schema"].encode(), "ros2msg", channel["schemaName"])
            self._decoders[number] = (topic, DecoderFactory().decoder_for("cdr", schema))
            subscriptions.append({"id": number, "channelId": channel["id"]})
        self.ws.send(json.dumps({"op": "subscribe", "subscriptions": subscriptions}))

    def messages(self, deadline: float) -> Iterator[tuple[str, int, Any]]:
        """(topic, log time ns, decoded message) of the subscribed channels until ``deadline``."""
        for frame in self.frames(deadline):
            if isinstance(frame, bytes) and frame[0] == MESSAGE_DATA:
                number, log_time = struct.unpack_from("<IQ", frame, 1)
                topic, decode = self._decoders[number]
                yield topic, log_time, decode(frame[13:])


def seconds(stamp: Any) -> float:
    return float(stamp.sec + stamp.nanosec * 1e-9)


def await_line(log: Path, words: str, runner: Any, *, timeout: float = 120.0) -> str:
    """The first line of the runner's output with ``words`` (the runner must still run)."""
    deadline = time.monotonic() + timeout
    while True:
        found = [line for line in log.read_text().splitlines() if words in line]
        if found:
            return found[0]
        assert runner.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.1)


def check_board(marker: Any, index: int) -> None:
    """A board's marker: standing where the world puts it, or lying flat beside that spot."""
    board = DEMO.boards[index]
    x, y, z = marker.pose.position.x, marker.pose.position.y, marker.pose.position.z
    if math.isclose(z, board.height / 2):
        assert (x, y) == pytest.approx((board.x, board.y))
    else:
        assert z == pytest.approx(board.thickness / 2)
        assert math.hypot(x - board.x, y - board.y) == pytest.approx(board.height / 2)


@pytest.mark.ros
def test_an_app_sees_the_scene_and_the_topics_of_a_live_lockstep_run(spawn: Spawn, tmp_path: Path) -> None:
    command = [
        *RUNNER,
        "--duration",
        "3000",
        "--live",
        "--live-port",
        "0",
        "--report-dir",
        str(tmp_path / "r"),
    ]
    runner = spawn(command, name="runner")
    log = tmp_path / "runner.log"
    url = await_line(log, "live view on ws://", runner).split("live view on ")[1].split()[0]
    with connect(url, subprotocols=[SUBPROTOCOL], max_size=None, open_timeout=10) as ws:
        client = FoxgloveClient(ws)
        assert client.info["op"] == "serverInfo" and client.info["name"] == "hil"
        assert "time" in client.info["capabilities"]
        client.await_channels(["/hil/scene", "/odom", "/telemetry"], time.monotonic() + 30)
        assert client.channels["/hil/scene"]["schemaName"] == "visualization_msgs/msg/MarkerArray"
        client.subscribe(["/hil/scene", "/odom"])
        scenes: list[Any] = []
        odoms: list[tuple[float, float, float]] = []
        for topic, _, message in client.messages(time.monotonic() + 60):
            if topic == "/odom":
                position = message.pose.pose.position
                odoms.append((seconds(message.header.stamp), position.x, position.y))
            elif any(m.ns == "boards" for m in message.markers):
                scenes.append(message)
            if len(scenes) >= 3 and len(odoms) >= 3:
                break
        assert len(scenes) >= 3 and len(odoms) >= 3, (len(scenes), len(odoms))
        assert client.times, "no server time (the time capability)"
    for scene in scenes:
        boards = sorted((m for m in scene.markers if m.ns == "boards"), key=lambda m: m.id)
        assert [m.id for m in boards] == list(range(len(DEMO.boards)))
        for marker in boards:
            check_board(marker, marker.id)
        (robot,) = (m for m in scene.markers if m.ns == "robots")
        assert robot.header.frame_id == "odom"
        # The robot's body where odometry has it, within what it can drive between the stamps.
        stamp = seconds(robot.header.stamp)
        t, x, y = min(odoms, key=lambda odom: abs(odom[0] - stamp))
        gap = math.hypot(robot.pose.position.x - x, robot.pose.position.y - y)
        assert gap <= TOP_SPEED * abs(t - stamp) + 0.01, (stamp, t, gap)
        assert {"walls", "leds", "beams", "pins", "status"} <= {m.ns for m in scene.markers}
    os.killpg(runner.pid, signal.SIGINT)
    assert runner.wait(timeout=30) == 0, log.read_text()[-3000:]
    assert "Traceback" not in log.read_text()


@pytest.mark.ros
def test_a_recorded_run_keeps_the_scene_for_the_apps(spawn: Spawn, tmp_path: Path) -> None:
    bag = tmp_path / "bag"
    command = [*RUNNER, "--duration", "3", "--record", str(bag), "--report-dir", str(tmp_path / "r")]
    runner = spawn(command, name="runner")
    assert runner.wait(timeout=120) == 0, (tmp_path / "runner.log").read_text()[-3000:]
    (mcap,) = bag.glob("*.mcap")
    with mcap.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        summary = reader.get_summary()
        assert summary is not None
        (scene,) = (c for c in summary.channels.values() if c.topic == "/hil/scene")
        assert summary.schemas[scene.schema_id].name == "visualization_msgs/msg/MarkerArray"
        # 10 scenes a simulated second, not paced by the wall clock when recording.
        assert summary.statistics is not None
        assert summary.statistics.channel_message_counts[scene.id] >= 20
        for _, _, _, message in reader.iter_decoded_messages(topics=["/hil/scene"]):
            namespaces = {m.ns for m in message.markers}
            assert {"robots", "beams", "status"} <= namespaces
            if "boards" in namespaces:
                break
        else:
            raise AssertionError("no scene with the world in the bag")
    boards = [m for m in message.markers if m.ns == "boards"]
    assert len(boards) == len(DEMO.boards)


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port something else listens on."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


#: A live view that cannot be served: (run options, exit status, words of the message);
#: {busy} is a port something else listens on.
BAD_LIVE = [
    (["--live-port", "70000"], 2, ["live_port", "65535"]),
    (["--live-port", "{busy}"], 2, ["live view at 127.0.0.1:{busy}", "Address already in use"]),
    (["--live-host", "10.255.255.1"], 2, ["live view at 10.255.255.1", "Cannot assign requested address"]),
]


@pytest.mark.ros
@pytest.mark.parametrize("case", BAD_LIVE, ids=["port-out-of-range", "port-taken", "host-not-here"])
def test_a_live_view_that_cannot_be_served_is_a_clear_error(
    spawn: Spawn, tmp_path: Path, busy_port: int, case: tuple[list[str], int, list[str]]
) -> None:
    options, status, words = case
    given = [option.format(busy=busy_port) for option in options]
    runner = spawn([*RUNNER, "--duration", "1", "--live", *given], name="runner")
    assert runner.wait(timeout=120) == status
    output = (tmp_path / "runner.log").read_text()
    for word in words:
        assert word.format(busy=busy_port) in output, output[-3000:]
    assert "Traceback" not in output
