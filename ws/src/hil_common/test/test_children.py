"""Children started with die_with_parent() end when their parent dies, even by SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import Spawn
from hil_common.core import children
from hil_common.core.children import ORPHAN_EXIT_STATUS, die_with_parent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux kernel feature")

#: A parent that starts a long sleep as its child, prints the child's pid and waits.
PARENT = """
import subprocess, sys, time
from hil_common.core.children import die_with_parent
child = subprocess.Popen(["sleep", "600"], preexec_fn={preexec})
print(child.pid, flush=True)
time.sleep(600)
"""


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return not alive(pid)


@pytest.mark.parametrize(("preexec", "dies"), [("die_with_parent()", True), ("None", False)])
def test_a_child_ends_when_its_parent_is_killed_with_sigkill(
    spawn: Spawn, tmp_path: Path, preexec: str, dies: bool
) -> None:
    parent = spawn([sys.executable, "-c", PARENT.format(preexec=preexec)], name="parent")
    log = tmp_path / "parent.log"  # the spawn fixture's log of the parent's output
    deadline = time.monotonic() + 30
    while not log.read_text().strip() and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(log.read_text().split()[0])
    try:
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        # The kernel signals at once; a generous bound catches a missing mechanism only
        # (without it the child is reparented and sleeps on: that needs no long look).
        assert wait_gone(child, 10.0 if dies else 2.0) is dies
    finally:
        if alive(child):
            os.kill(child, signal.SIGKILL)


def test_a_child_whose_parent_is_already_gone_ends_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The request names a parent that is not the child's parent any more: as if it had died
    # between fork and prctl, when the kernel would send nothing.
    with monkeypatch.context() as patch:
        patch.setattr(children.os, "getpid", lambda: 1)
        request = die_with_parent()
    child = subprocess.Popen(["sleep", "600"], preexec_fn=request)  # noqa: PLW1509
    try:
        assert child.wait(timeout=10) == ORPHAN_EXIT_STATUS
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
