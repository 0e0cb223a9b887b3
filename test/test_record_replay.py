"""Recording a run to rosbag2 (MCAP), reading it with another library, replaying it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import rclpy
import yaml
from geometry_msgs.msg import Twist
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from rosbags.interfaces import QosDurability, QosReliability
from rosbags.rosbag2 import Reader
from std_msgs.msg import String

from hil_bringup.core.bag import read_bag
from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner
from hil_bringup.hil_replay import replay
from hil_common import qos

WIRE = ["/hil/wire/command/tx", "/hil/wire/command/rx", "/hil/wire/signal/tx", "/hil/wire/signal/rx"]
#: Topics a player must offer transient local again, so a late subscriber gets their one message.
LATCHED = ("/tf_static", "/robot_description")


@pytest.fixture(scope="module")
def bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lockstep run: teleop for 3 s, then AUTO boards until 8 s, recorded."""
    path = tmp_path_factory.mktemp("bags") / "run"
    context = rclpy.Context()
    rclpy.init(context=context)
    station = rclpy.create_node("record_test_station", context=context)
    cmd_vel = station.create_publisher(Twist, "cmd_vel", qos.COMMAND)
    command = station.create_publisher(String, "robotCommand", qos.COMMAND)
    runner = GraphRunner(GraphOptions(rtf=0.0, behaviour="", seed=4, record=str(path)))
    runner.start()
    try:
        sim = runner.sim.sim
        twist = Twist()
        sent_auto = sent_go = False
        while sim.time < 8.0:
            if not sent_go and sim.time >= 5.0:
                # Taken by the loop with no DDS delivery at all: the bag must still hold it,
                # at the simulated time the loop took it.
                runner.loop.on_robot_command(String(data="GO"))
                sent_go = True
            if sim.time < 3.0:
                twist.linear.x, twist.angular.z = (0.3, 0.0) if sim.time < 1.5 else (0.1, 1.0)
                cmd_vel.publish(twist)
            elif not sent_auto:
                command.publish(String(data="AUTO boards"))
                sent_auto = True
            runner.step()
    finally:
        runner.stop()
        rclpy.try_shutdown(context=context)
    return path


@pytest.mark.ros
def test_bag_has_valid_rosbag2_mcap_metadata(bag: Path) -> None:
    info = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["storage_identifier"] == "mcap"
    assert info["version"] >= 8
    assert info["relative_file_paths"] == ["run.mcap"]
    names = {entry["topic_metadata"]["name"] for entry in info["topics_with_message_count"]}
    assert {"/odom", "/cmd_vel", "/robotCommand", "/telemetry", "/tf", "/clock", *WIRE} <= names


@pytest.mark.ros
def test_bag_names_the_ros_distro_and_each_topics_offered_qos_for_rosbags(bag: Path) -> None:
    distro = os.environ["ROS_DISTRO"]  # setup.bash sets it for the wheels (jazzy)
    info = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["ros_distro"] == distro
    with Reader(bag) as reader:
        assert reader.ros_distro == distro  # the MCAP file's own rosbag2 metadata record
        offered = {c.topic: c.ext.offered_qos_profiles for c in reader.connections}  # type: ignore[union-attr]
    assert all(offered.values()), [topic for topic, profiles in offered.items() if not profiles]
    for topic in LATCHED:
        assert {p.durability for p in offered[topic]} == {QosDurability.TRANSIENT_LOCAL}, topic
    for topic in ("/odom", "/telemetry", "/cmd_vel", *WIRE):
        assert {p.durability for p in offered[topic]} == {QosDurability.VOLATILE}, topic
        assert {p.reliability for p in offered[topic]} == {QosReliability.RELIABLE}, topic


@pytest.mark.ros
def test_bag_names_each_topics_offered_qos_for_the_mcap_reader(bag: Path) -> None:
    """rosbag2 Jazzy's format: a YAML list of profiles in each channel's metadata."""
    with (bag / "run.mcap").open("rb") as stream:
        reader = make_reader(stream)
        summary = reader.get_summary()
        assert summary is not None
        channels = {
            c.topic: yaml.safe_load(c.metadata["offered_qos_profiles"]) for c in summary.channels.values()
        }
        records = {m.name: m.metadata for m in reader.iter_metadata()}
    keys = {"history", "depth", "reliability", "durability", "deadline", "lifespan", "liveliness"}
    for topic, profiles in channels.items():
        assert profiles and all(keys <= profile.keys() for profile in profiles), topic
    for topic in LATCHED:
        assert {p["durability"] for p in channels[topic]} == {"transient_local"}, topic
        assert {p["reliability"] for p in channels[topic]} == {"reliable"}, topic
    assert {p["durability"] for p in channels["/odom"]} == {"volatile"}
    stored = yaml.safe_load(records["rosbag2"]["serialized_metadata"])
    assert stored["ros_distro"] == os.environ["ROS_DISTRO"]


@pytest.mark.ros
def test_another_library_reads_every_topic_and_the_wire_traffic(bag: Path) -> None:
    counts: dict[str, int] = {}
    telemetry = None
    lines: list[bytes] = []
    with (bag / "run.mcap").open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        for _, channel, _, message in reader.iter_decoded_messages():
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
            if channel.topic == "/telemetry" and telemetry is None:
                telemetry = message
            if channel.topic == "/hil/wire/command/rx":
                lines.append(bytes(message.data))
    for topic in ("/odom", "/cmd_vel", "/telemetry", "/clock", "/world/markers", *WIRE):
        assert counts.get(topic, 0) > 0, f"no {topic} in the bag"
    assert counts["/robotCommand"] >= 1
    assert telemetry is not None
    assert telemetry.list_id in ("TL1", "TL2")
    assert telemetry.raw.startswith(telemetry.list_id)
    assert len(telemetry.values) == len(telemetry.field_names)
    # Command-link traffic is recorded a line at a time, as it crossed the wire.
    assert lines and all(line.endswith(b"\n") and line.count(b"\n") == 1 for line in lines)
    assert any(line.startswith(b"HBB,") for line in lines)


@pytest.mark.ros
def test_bag_holds_the_inputs_the_loop_took_at_their_simulated_times(bag: Path) -> None:
    commands = [(stamp, message.data) for _, stamp, message in read_bag(bag, ["/robotCommand"])]
    assert "GO" in [text for _, text in commands], commands
    stamp = next(stamp for stamp, text in commands if text == "GO")
    assert stamp == 5_000_000_000  # the first period at or after 5 s, on the simulated clock
    auto = next(stamp for stamp, text in commands if text == "AUTO boards")
    assert auto % 5_000_000 == 0  # taken between two periods, stamped with the period's time


@pytest.mark.ros
def test_replay_reproduces_the_recorded_trajectory_within_a_centimetre(bag: Path) -> None:
    result = replay(bag)
    assert result.inputs > 10
    assert result.samples > 300
    assert result.within(0.01), f"deviation up to {result.max_deviation_m:.4f} m"
