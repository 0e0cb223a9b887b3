"""sim.launch.py started by the real launch system (skipped where launch_ros is not installed).

ROS 2 from PyPI wheels has no launch/launch_ros (ROS2_ON_PIP.md); on a machine with
a ROS 2 install this starts the launch file and checks the robot moves under cmd_vel.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest

# launch_ros first: without ROS 2's launch, "launch" resolves to hil_bringup's own launch/
# folder (a namespace package on the develop-install path), which is not the launch system.
pytest.importorskip("launch_ros", reason="launch_ros is not installed (ROS 2 from PyPI wheels has none)")
launch = pytest.importorskip("launch", reason="launch is not installed (ROS 2 from PyPI wheels has none)")

from geometry_msgs.msg import Twist  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402

from hil_bridge import qos  # noqa: E402
from hil_bridge.core.paths import share_dir  # noqa: E402
from support.ros_probe import RosProbe  # noqa: E402


@pytest.mark.ros
def test_sim_launch_moves_the_robot_under_cmd_vel(tmp_path: Path) -> None:
    source = PythonLaunchDescriptionSource(str(share_dir("hil_bringup") / "launch" / "sim.launch.py"))
    include = launch.actions.IncludeLaunchDescription(
        source, launch_arguments={"behaviour": "", "rtf": "1.0"}.items()
    )
    service = launch.LaunchService()
    service.include_launch_description(launch.LaunchDescription([include]))

    def drive() -> None:
        probe = RosProbe("launch_test")
        try:
            probe.record(Odometry, "odom", qos.SENSOR)
            cmd_vel = probe.publisher(Twist, "cmd_vel", qos.COMMAND)
            twist = Twist()
            twist.linear.x = 0.3

            def moved() -> bool:
                assert not launching.done(), "the launch ended early (its log says why)"
                cmd_vel.publish(twist)
                odom = probe.latest("odom")
                if odom is None:
                    return False
                return math.hypot(odom.pose.pose.position.x, odom.pose.pose.position.y) > 0.2

            probe.wait_for(moved, timeout=60.0, what="odom moving under cmd_vel")
        finally:
            probe.close()

    launching: asyncio.Future[int]

    async def run() -> None:
        # LaunchService runs only in the main thread: the probe's blocking checks run beside it.
        nonlocal launching
        launching = asyncio.ensure_future(service.run_async())
        try:
            await asyncio.get_running_loop().run_in_executor(None, drive)
        finally:
            stopping = service.shutdown()
            if stopping is not None:
                await stopping
            assert await asyncio.wait_for(launching, timeout=30.0) == 0, "the launch reported errors"

    asyncio.run(run())
