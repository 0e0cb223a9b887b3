"""A run split across machines: the world side and a robot side in two network namespaces.

Two network namespaces joined by a veth pair (private test addresses inside the
namespaces only) stand in for two machines: ``hil_side world`` (the simulator, with
the radio) in one, ``hil_side robot`` (robot 0's MCU, bridge, loop and radio module,
on simulated time) in the other. They meet only over DDS across the veth: robot 0
in the world turns (the boards search starts with a scan) only if its pins cross.
Needs root and iproute2 (skipped without).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PROBE = r"""
import json, time, rclpy
from nav_msgs.msg import Odometry
from rclpy.qos import qos_profile_sensor_data
rclpy.init()
node = rclpy.create_node("netns_probe")
turns = []
node.create_subscription(Odometry, "robot_0/odom", lambda m: turns.append(abs(m.twist.twist.angular.z)),
                         qos_profile_sensor_data)
start = time.monotonic()
while time.monotonic() - start < 60 and not any(w > 0.3 for w in turns):
    rclpy.spin_once(node, timeout_sec=0.2)
print(json.dumps({"messages": len(turns), "max_turn": max(turns, default=0.0)}))
node.destroy_node()
rclpy.try_shutdown()
"""


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


@pytest.fixture
def namespaces() -> Iterator[tuple[str, str]]:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("network namespaces need root and iproute2")
    tag = f"{os.getpid() % 100000}"
    world, robot = f"hilw{tag}", f"hilr{tag}"
    subnet = f"10.213.{random.randrange(1, 250)}"
    try:
        ip("netns", "add", world)
        ip("netns", "add", robot)
        ip("link", "add", f"hvw{tag}", "type", "veth", "peer", "name", f"hvr{tag}")
        for ns, dev, host in ((world, f"hvw{tag}", 1), (robot, f"hvr{tag}", 2)):
            ip("link", "set", dev, "netns", ns)
            ip("-n", ns, "addr", "add", f"{subnet}.{host}/24", "dev", dev)
            ip("-n", ns, "link", "set", "lo", "up")
            ip("-n", ns, "link", "set", dev, "up")
            ip("-n", ns, "route", "add", "224.0.0.0/4", "dev", dev)  # DDS discovery is multicast
    except subprocess.CalledProcessError as exc:
        for ns in (world, robot):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        pytest.skip(f"cannot make network namespaces here: {exc.stderr.decode().strip()}")
    yield world, robot
    for ns in (world, robot):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)  # takes the veth


def side(ns: str, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    command = ["ip", "netns", "exec", ns, sys.executable, "-m", "hil_bringup.hil_side", *args]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_a_robot_side_in_another_namespace_drives_its_robot_in_the_world(
    namespaces: tuple[str, str], tmp_path: Path
) -> None:
    world_ns, robot_ns = namespaces
    env = {
        **os.environ,
        "ROS_DOMAIN_ID": str(random.randrange(100, 233)),
        "ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET",  # across the veth, not localhost only
    }
    run = ("--robots", "2", "--hil-robots", "1", "--radio")
    world = side(world_ns, "world", *run, env=env)
    links = str(tmp_path / "links")
    robot = side(robot_ns, "robot", "--robot-index", "0", *run, "--link-dir", links, env=env)
    sides = [world, robot]
    try:
        probe = subprocess.run(
            ["ip", "netns", "exec", world_ns, sys.executable, "-c", PROBE],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert probe.returncode == 0, probe.stderr[-2000:]
        seen = json.loads(probe.stdout.strip().splitlines()[-1])
        assert seen["messages"] > 0, "no odom from the world side"
        assert seen["max_turn"] > 0.3, f"robot 0 never turned: its chain's pins did not cross ({seen})"
    finally:
        for process in sides:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        outputs = []
        for process in sides:
            try:
                out, _ = process.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                out, _ = process.communicate()
            outputs.append(out)
    assert [p.returncode for p in sides] == [0, 0], "\n".join(o[-1500:] for o in outputs)
