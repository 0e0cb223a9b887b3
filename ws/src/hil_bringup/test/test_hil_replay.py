"""hil_replay on bad bags: a clear error naming the bag and what is wrong, exit 2, never a traceback."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import rclpy
import yaml
from geometry_msgs.msg import Twist

from hil_bringup import hil_replay as replay_module
from hil_bringup.core.bag import RUN_KEY
from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner, recorded_options
from hil_bringup.hil_replay import main
from hil_common import qos
from hil_common.core.paths import share_dir

Damage = Callable[[Path], None]
#: A bad bag: name, damage, exit status, words the message must hold.
Case = tuple[str, Damage, int, list[str]]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1 s lockstep run recorded with a world file given by a relative path."""
    folder = tmp_path_factory.mktemp("recorded")
    shutil.copy(share_dir("hil_sim") / "worlds" / "empty.yaml", folder / "world.yaml")
    with contextlib.chdir(folder):
        runner = GraphRunner(GraphOptions(rtf=0.0, behaviour="", world="world.yaml", record="bag"))
        runner.start()
        try:
            while runner.sim.sim.time < 1.0:
                runner.step()
        finally:
            runner.stop()
    return folder / "bag"


def _mcap(bag: Path) -> Path:
    return bag / "bag.mcap"


def _edit_run(**changes: object) -> Damage:
    """Change the recorded run options (custom_data.hil_run of metadata.yaml)."""

    def damage(bag: Path) -> None:
        metadata = yaml.safe_load((bag / "metadata.yaml").read_text())
        custom = metadata["rosbag2_bagfile_information"]["custom_data"]
        run = json.loads(custom[RUN_KEY])
        run.update(changes)
        custom[RUN_KEY] = json.dumps(run)
        (bag / "metadata.yaml").write_text(yaml.safe_dump(metadata))

    return damage


def _unstable_world(bag: Path) -> None:
    """The run's world replaced by one MuJoCo cannot simulate (a stiff spring on a tiny mass)."""
    (bag.parent / "unstable.xml").write_text(
        "<mujoco><worldbody><geom type='plane' size='3 3 0.1'/>"
        "<body name='spring' pos='1 1 0.5'><joint type='slide' stiffness='1e15' springref='0.1'/>"
        "<geom size='0.05' mass='1e-6' contype='0' conaffinity='0'/></body></worldbody></mujoco>"
    )
    (bag.parent / "unstable.yaml").write_text("mjcf: unstable.xml\n")
    _edit_run(physics="mujoco", world=str(bag.parent / "unstable.yaml"))(bag)


def _edit_metadata(old: str, new: str) -> Damage:
    def damage(bag: Path) -> None:
        text = (bag / "metadata.yaml").read_text()
        assert old in text
        (bag / "metadata.yaml").write_text(text.replace(old, new, 1))

    return damage


def _miscount(topic: str) -> Damage:
    """metadata.yaml says ``topic`` has 1000 messages more than the data holds."""

    def damage(bag: Path) -> None:
        metadata = yaml.safe_load((bag / "metadata.yaml").read_text())
        for entry in metadata["rosbag2_bagfile_information"]["topics_with_message_count"]:
            if entry["topic_metadata"]["name"] == topic:
                entry["message_count"] += 1000
        (bag / "metadata.yaml").write_text(yaml.safe_dump(metadata))

    return damage


def _flip_in_mcap(pattern: bytes, *, offset: int = 0, last: bool = False) -> Damage:
    """Flip every bit of one byte of the MCAP file: ``offset`` bytes into ``pattern``."""

    def damage(bag: Path) -> None:
        data = bytearray(_mcap(bag).read_bytes())
        at = (data.rindex(pattern) if last else data.index(pattern)) + offset
        data[at] ^= 0xFF
        _mcap(bag).write_bytes(data)

    return damage


def _in_last_odom(offset: int, value: bytes) -> Damage:
    """Overwrite bytes of the last odom message, ``offset`` bytes into its header."""

    def damage(bag: Path) -> None:
        data = bytearray(_mcap(bag).read_bytes())
        # CDR of nav_msgs/Odometry: encapsulation, header.stamp (sec, nanosec), frame_id "odom".
        header = list(re.finditer(rb"\x00\x01\x00\x00(.{8})\x05\x00\x00\x00odom\x00", data, re.DOTALL))[-1]
        data[header.start(1) + offset : header.start(1) + offset + len(value)] = value
        _mcap(bag).write_bytes(data)

    return damage


def _truncate(fraction: float) -> Damage:
    def damage(bag: Path) -> None:
        data = _mcap(bag).read_bytes()
        _mcap(bag).write_bytes(data[: int(len(data) * fraction)])

    return damage


BAD_BAGS: list[Case] = [
    ("world file gone", _edit_run(world="/gone/world.yaml"), 2, ["world file /gone/world.yaml", "missing"]),
    ("world name unknown", _edit_run(world="nowhere"), 2, ["hil_run.world", "'nowhere' is not a world"]),
    ("firmware gone", _edit_run(mcu="simavr", firmware="/nonexistent/robot.elf"), 2, ["firmware", "missing"]),
    ("parameter file gone", _edit_run(params_file="/gone/params.yaml"), 2, ["parameter file", "missing"]),
    ("world refused", _edit_run(world="/etc/hostname"), 2, ["cannot rebuild the recorded run", "hostname"]),
    (
        "world gone unstable",
        _unstable_world,
        2,
        ["replayed run failed", "unstable.yaml", "numerically unstable"],
    ),
    ("option of a wrong type", _edit_run(robots="two"), 2, ["hil_run: robots = 'two'", "expected"]),
    ("option out of range", _edit_run(robots=0), 2, ["hil_run: robots = 0", "minimum"]),
    ("no run options", _edit_metadata(f"{RUN_KEY}:", "other:"), 2, ["no HIL run options"]),
    (
        "count of a topic not read",
        _miscount("/clock"),
        2,
        ["damaged", "/clock messages", "metadata.yaml says"],
    ),
    ("mcap missing", lambda bag: _mcap(bag).unlink(), 2, ["cannot read the bag", "missing"]),
    ("mcap empty", lambda bag: _mcap(bag).write_bytes(b""), 2, ["cannot read the bag", "empty"]),
    ("mcap truncated", _truncate(0.5), 2, ["cannot read the bag", "damaged"]),
    ("mcap magic flipped", _flip_in_mcap(b"MCAP"), 2, ["cannot read the bag", "damaged", "magic"]),
    ("topic name flipped", _flip_in_mcap(b"/odom", offset=1, last=True), 2, ["damaged", "UTF-8"]),
    ("odom frame flipped", _in_last_odom(12, b"\x90"), 2, ["damaged", "/odom", "UTF-8"]),
    ("odom stamp flipped", _in_last_odom(3, b"\x40"), 2, ["damaged", "/odom", "1.07374e+09"]),
]


@pytest.mark.ros
@pytest.mark.parametrize("case", BAD_BAGS, ids=[case[0] for case in BAD_BAGS])
def test_a_bad_bag_is_an_error_naming_the_bag_and_what_is_wrong(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], case: Case
) -> None:
    _, damage, status, words = case
    bag = tmp_path / "bag"
    shutil.copytree(recorded, bag)
    damage(bag)
    assert main([str(bag)]) == status
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert str(bag) in err
    for word in words:
        assert word in err, err


@pytest.mark.ros
def test_a_sound_bag_replays_and_its_world_is_recorded_by_absolute_path(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    metadata = yaml.safe_load((recorded / "metadata.yaml").read_text())
    run = json.loads(metadata["rosbag2_bagfile_information"]["custom_data"][RUN_KEY])
    assert run["world"] == str(recorded.parent / "world.yaml")
    monkeypatch.chdir(tmp_path)  # elsewhere than the run: the world is still found
    assert main([str(recorded)]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["agree"] is True
    assert json.loads(out)["exact"] is True
    assert "real time" not in err


@pytest.mark.ros
def test_a_real_time_recording_is_said_to_replay_only_approximately_before_it_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bag = tmp_path / "bag"
    context = rclpy.Context()
    rclpy.init(context=context)
    station = rclpy.create_node("replay_test_station", context=context)
    cmd_vel = station.create_publisher(Twist, "cmd_vel", qos.COMMAND)
    runner = GraphRunner(GraphOptions(rtf=1.0, behaviour="manual", world="empty", record=str(bag)))
    runner.start()
    try:
        twist = Twist()
        twist.linear.x, twist.angular.z = 0.2, 0.5
        while runner.sim.sim.time < 1.5 and runner.failure() is None:
            cmd_vel.publish(twist)
            time.sleep(0.05)
    finally:
        runner.stop()
        rclpy.try_shutdown(context=context)
    said_before: list[str] = []
    real_replay = replay_module.replay

    def replay_after_the_note(path: str | Path) -> replay_module.Comparison:
        said_before.append(capsys.readouterr().err)
        return real_replay(path)

    monkeypatch.setattr(replay_module, "replay", replay_after_the_note)
    assert main([str(bag)]) in (0, 1)  # it may happen to agree: what counts is that it says so first
    note = said_before[0]
    assert f"{bag} was recorded in real time (rtf 1)" in note
    assert "only a lockstep recording (rtf 0) replays exactly" in note
    assert "Traceback" not in note
    assert json.loads(capsys.readouterr().out)["exact"] is False


def test_a_bag_keeps_world_files_by_absolute_path_and_world_names_as_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert recorded_options(GraphOptions(world="empty"))["world"] == "empty"
    assert recorded_options(GraphOptions(world="my.yaml"))["world"] == str(tmp_path / "my.yaml")
    assert recorded_options(GraphOptions(world=""))["world"] == ""
    assert recorded_options(GraphOptions(params_file="p.yaml"))["params_file"] == str(tmp_path / "p.yaml")
