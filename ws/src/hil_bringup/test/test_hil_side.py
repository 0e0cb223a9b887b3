"""hil_side: a side's processes end with it however it ends; its exit status says why."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from conftest import Spawn
from hil_bringup import hil_side

#: The processes of a robot side by MCU, children and grandchildren (names as /proc has them).
ROBOT_SIDE = {
    "virtual": {"virtual_mcu", "signal_bridge", "control_loop", "robot_descripti"},
    "simavr": {"simavr_mcu", "signal_bridge", "control_loop", "robot_descripti", "hil_simavr"},
}


def side_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "hil_bringup.hil_side", *args]


def children_of(pid: int) -> dict[int, str]:
    """``{pid: name}`` of the processes whose parent is ``pid``."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found[int(stat.parent.name)] = name
    return found


def descendants_of(pid: int) -> dict[int, str]:
    """``{pid: name}`` of the children of ``pid`` and of their children."""
    found = children_of(pid)
    for child in list(found):
        found.update(children_of(child))
    return found


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(condition: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        time.sleep(0.1)


def side_up(proc: subprocess.Popen[bytes], log: Path, names: set[str]) -> dict[int, str]:
    """Wait until a robot side's processes run and the loop has opened its port; their pids."""
    wait_for(lambda: set(descendants_of(proc.pid).values()) >= names, 120, "the side's processes start")
    # The loop logs its port once the MCU's ptys exist (the MCU makes them first).
    wait_for(lambda: "Hz on" in log.read_text(), 60, "the control loop starts")
    return descendants_of(proc.pid)


def test_a_world_side_with_live_starts_the_live_view_with_its_address(tmp_path: Path) -> None:
    commands = dict(hil_side.commands(hil_side.parse(["world", "--live", "--live-port", "9001"]), tmp_path))
    assert set(commands) == {"sim", "live_view"}
    command = commands["live_view"]
    assert Path(command[0]).name == "live_view"
    parameters = yaml.safe_load(Path(command[command.index("--params-file") + 1]).read_text())
    assert parameters["live_view"]["ros__parameters"]["port"] == 9001
    robot = dict(hil_side.commands(hil_side.parse(["robot", "--live"]), tmp_path))
    assert "live_view" not in robot


@pytest.mark.ros
@pytest.mark.parametrize("mcu", ["virtual", "simavr"])
def test_killing_a_robot_side_with_sigkill_ends_its_processes_and_a_new_side_starts(
    spawn: Spawn, tmp_path: Path, mcu: str
) -> None:
    links = ["--link-dir", str(tmp_path / "links"), "--mcu", mcu]
    first = spawn(side_command("robot", *links), name="first")
    started = side_up(first, tmp_path / "first.log", ROBOT_SIDE[mcu])
    try:
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        # Each process gets SIGTERM from the kernel at once and stops in well under a
        # second; the bound is generous so only a missing mechanism fails it.
        wait_for(
            lambda: not any(alive(pid) for pid in started),
            15,
            f"the killed side's processes end: {[n for p, n in started.items() if alive(p)]}",
        )
    finally:
        for pid in started:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    second = spawn(side_command("robot", *links), name="second")
    side_up(second, tmp_path / "second.log", ROBOT_SIDE[mcu])
    time.sleep(3.0)  # a process that cannot have its links exits within this
    assert second.poll() is None, (tmp_path / "second.log").read_text()[-3000:]


#: (world file content, expected exit status, words in the message)
BAD_WORLDS = [
    (None, 2, ["world.yaml", "cannot read"]),
    ("arena: [4, 4]\n", 2, ["world.yaml", "arena"]),
]


@pytest.mark.ros
@pytest.mark.parametrize(("content", "status", "words"), BAD_WORLDS)
def test_a_process_configuration_error_ends_the_side_with_status_2_and_the_message(
    tmp_path: Path, content: str | None, status: int, words: list[str]
) -> None:
    world = tmp_path / "world.yaml"
    if content is not None:
        world.write_text(content)
    result = subprocess.run(
        side_command("world", "--world", str(world)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == status, result.stderr[-2000:]
    for word in words:
        assert word in result.stderr
    assert "Traceback" not in result.stderr


class Probe:
    """The robot side's diagnostics and motor telemetry, as anyone on the network sees them."""

    def __init__(self) -> None:
        import rclpy  # noqa: PLC0415 - only the ROS tests need it
        from diagnostic_msgs.msg import DiagnosticArray  # noqa: PLC0415

        from hil_msgs.msg import Telemetry  # noqa: PLC0415

        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("side_probe", context=self.context)
        self.executor = rclpy.executors.SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        #: The latest (level, message, values) of each status, by name.
        self.status: dict[str, tuple[int, str, dict[str, str]]] = {}
        #: The latest TL1 (left, right), and how many came.
        self.motors: tuple[float, float] | None = None
        self.node.create_subscription(DiagnosticArray, "diagnostics", self._on_diagnostics, 50)
        self.node.create_subscription(Telemetry, "telemetry", self._on_telemetry, 50)

    def _on_diagnostics(self, message: object) -> None:
        for status in message.status:  # type: ignore[attr-defined]
            values = {kv.key: kv.value for kv in status.values}
            self.status[status.name] = (ord(status.level), status.message, values)

    def _on_telemetry(self, message: object) -> None:
        if message.list_id == "TL1":  # type: ignore[attr-defined]
            fields = dict(zip(message.field_names, message.values, strict=True))  # type: ignore[attr-defined]
            self.motors = (fields["left"], fields["right"])

    def level(self, name: str) -> int | None:
        return self.status[name][0] if name in self.status else None

    def wait_for(self, condition: Callable[[], object], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"not within {timeout:g} s: {what}; diagnostics: {self.status}")
            self.executor.spin_once(timeout_sec=0.1)

    def close(self) -> None:
        import rclpy  # noqa: PLC0415

        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


#: The robot side's statuses that watch the simulated clock.
CLOCK_WATCHERS = ("control_loop: loop", "signal_bridge: signal link", "virtual_mcu: virtual MCU")
ERROR = 2


@pytest.mark.ros
def test_a_robot_side_stops_its_motors_and_reports_an_error_while_the_world_is_gone(
    spawn: Spawn, tmp_path: Path
) -> None:
    probe = Probe()
    try:
        world = spawn(side_command("world"), name="world")
        spawn(side_command("robot", "--link-dir", str(tmp_path / "links")), name="robot")

        def driving() -> bool:
            return probe.motors is not None and probe.motors != (0.0, 0.0)

        def clock_fine() -> bool:
            return all(probe.level(name) not in (None, ERROR) for name in CLOCK_WATCHERS)

        probe.wait_for(lambda: driving() and clock_fine(), 90, "the robot drives in the world")
        (sim,) = [pid for pid, name in children_of(world.pid).items() if name == "sim"]
        os.kill(sim, signal.SIGKILL)  # the world is gone

        def clock_error() -> bool:
            return all(
                probe.level(name) == ERROR and "simulated clock" in probe.status[name][1]
                for name in CLOCK_WATCHERS
            )

        probe.wait_for(clock_error, 30, "every clock watcher reports the stopped clock")
        assert "clock" in probe.status["control_loop: loop"][2]["motors_held_by"]
        probe.motors = None
        probe.wait_for(lambda: probe.motors is not None, 10, "motor telemetry")
        assert probe.motors == (0.0, 0.0)  # the MCU applies the loop's DRV0,0
        assert world.wait(timeout=30) == 1  # the world side ends with its simulator

        spawn(side_command("world"), name="world_again")  # the world comes back
        probe.wait_for(lambda: clock_fine() and driving(), 90, "the robot drives again")
        assert "clock" not in probe.status["control_loop: loop"][2]["failsafes_active"]
    finally:
        probe.close()
