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

from conftest import Spawn

#: The processes of a robot side by MCU, children and grandchildren (names as /proc has them).
ROBOT_SIDE = {
    "virtual": {"virtual_mcu", "signal_bridge", "control_loop", "robot_descripti"},
    "simavr": {"simavr_mcu", "signal_bridge", "control_loop", "robot_descripti", "hil_simavr"},
}


def side_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "hil_bringup.side", *args]


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
