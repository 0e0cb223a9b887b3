"""sim.launch.py under launch_testing: the robot moves under cmd_vel, then every process exits cleanly.

ROS 2 from PyPI wheels has no launch, launch_ros or launch_testing (ROS2_ON_PIP.md): there
the module is skipped. With them installed, launch_testing's pytest plugin collects it:
``generate_test_description`` starts the launch file, the active test drives the robot
while it runs, and the post-shutdown test checks how the processes ended.
"""

from __future__ import annotations

import asyncio
import importlib
import math
import unittest

import pytest

# Skipped before any launch_testing name (or its pytest marker) is evaluated. Safe as a
# module-level skip only because launch_testing's pytest plugin cannot be loaded without it.
pytest.importorskip(
    "launch_testing", reason="launch_testing is not installed (ROS 2 from PyPI wheels has none)"
)

import launch_testing
import launch_testing.actions
import launch_testing.asserts
from geometry_msgs.msg import Twist
from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.events.process import ProcessExited
from launch.launch_description_sources import PythonLaunchDescriptionSource
from nav_msgs.msg import Odometry

from hil_common import qos
from hil_common.core.paths import share_dir
from support.ros_probe import RosProbe


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


#: launch_testing's plugin imports this module inside its own collection hook, where a
#: module-level skip would skip every test of the directory: so a missing launch_ros (which
#: sim.launch.py needs) skips the launch test itself.
needs_launch_ros = pytest.mark.skipif(
    not _importable("launch_ros"), reason="launch_ros is not installed (ROS 2 from PyPI wheels has none)"
)

#: Event loops of launch_testing's test thread, closed after shutdown (see _own_event_loop).
_test_thread_loops: list[asyncio.AbstractEventLoop] = []


def _own_event_loop() -> None:
    """Give launch_testing's test thread an event loop that the post-shutdown test closes.

    Once the active tests are done, that thread calls ``LaunchService.shutdown()``, which
    asks for the calling thread's event loop and so creates one nobody closes: its
    ResourceWarning fails the run under ``filterwarnings = error``.
    """
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    _test_thread_loops.append(loop)


@pytest.mark.launch_test
@pytest.mark.ros
@needs_launch_ros
def generate_test_description() -> LaunchDescription:
    # The private ROS_DOMAIN_ID is set by conftest.py when pytest starts; the launched
    # processes inherit it.
    sim = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(share_dir("hil_bringup") / "launch" / "sim.launch.py")),
        # MANUAL mode, so cmd_vel drives the robot; real time, as a user runs it.
        launch_arguments={"behaviour": "manual", "rtf": "1.0"}.items(),
    )
    return LaunchDescription([sim, launch_testing.actions.ReadyToTest()])


class TestSimUnderCmdVel(unittest.TestCase):
    def test_odom_moves_under_cmd_vel(self, proc_info: launch_testing.ActiveProcInfoHandler) -> None:
        _own_event_loop()
        probe = RosProbe("launch_test")
        try:
            probe.record(Odometry, "odom", qos.SENSOR)
            cmd_vel = probe.publisher(Twist, "cmd_vel", qos.COMMAND)
            twist = Twist()
            twist.linear.x = 0.3

            def moved() -> bool:
                # A process that died will not come back: fail now, not at the timeout.
                events = [proc_info[action] for action in proc_info.processes()]
                ended = [f"{e.process_name} ({e.returncode})" for e in events if isinstance(e, ProcessExited)]
                assert not ended, f"processes ended early (their output is above): {', '.join(ended)}"
                cmd_vel.publish(twist)
                odom = probe.latest("odom")
                if odom is None:
                    return False
                return math.hypot(odom.pose.pose.position.x, odom.pose.pose.position.y) > 0.2

            probe.wait_for(moved, timeout=60.0, what="odom moving under cmd_vel")
        finally:
            probe.close()


@launch_testing.post_shutdown_test()
class TestSimShutdown(unittest.TestCase):
    @classmethod
    def tearDownClass(cls) -> None:
        # The launch has stopped and the test thread is done with its loop (_own_event_loop).
        while _test_thread_loops:
            _test_thread_loops.pop().close()

    def test_processes_exited_cleanly(self, proc_info: launch_testing.ProcInfoHandler) -> None:
        # launch stops them with SIGINT; every node catches it and returns 0 (node_runtime),
        # so anything else (-15, -9: escalated to SIGTERM/SIGKILL; 1: a traceback) is a bug.
        launch_testing.asserts.assertExitCodes(
            proc_info, allowable_exit_codes=[launch_testing.asserts.EXIT_OK]
        )
