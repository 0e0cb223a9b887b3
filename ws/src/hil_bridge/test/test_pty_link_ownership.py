"""A pty link belongs to the live pair that made it: a second one fails loudly, a stale one is replaced."""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Spawn
from hil_bridge.core.pty_link import PtyPair, lock_path, pty_pairs, replace_symlink, stale_link
from hil_bridge.core.serial_link import SerialLink
from hil_common.errors import HilError

#: Holds a pair at argv[1], says so, then waits to be killed (never closes it itself).
HOLDER_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from hil_bridge.core.pty_link import PtyPair

    pair = PtyPair(sys.argv[1])
    print(pair.slave_name, flush=True)
    time.sleep(600)
    """
)


def wait_for(condition: Callable[[], object], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout} s: {what}")
        time.sleep(0.005)


def start_holder(spawn: Spawn, link: Path, tmp_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A process holding a pair at ``link``; returns it and its pty's slave name."""
    proc = spawn([sys.executable, "-c", HOLDER_SCRIPT, str(link)], name="holder")
    output = tmp_path / "holder.log"  # where spawn puts its output
    deadline = time.monotonic() + 10.0  # generous: an interpreter start
    while time.monotonic() < deadline:
        text = output.read_text() if output.exists() else ""
        if text.endswith("\n"):
            return proc, text.strip()
        if proc.poll() is not None:
            pytest.fail(f"the holder exited with {proc.returncode}: {text}")
        time.sleep(0.02)
    pytest.fail("the holder did not make its pty within 10 s")


def test_second_pair_at_a_link_held_by_a_live_process_fails_naming_its_pid(
    tmp_path: Path, spawn: Spawn
) -> None:
    link = tmp_path / "mcu_command"
    proc, holder_pty = start_holder(spawn, link, tmp_path)
    pid = proc.pid
    with pytest.raises(HilError, match=rf"link {link} is held by live process {pid} \(python"):
        PtyPair(link)
    assert str(link.readlink()) == holder_pty, "the holder's link was taken away"
    with pytest.raises(HilError, match=str(pid)):
        pty_pairs(tmp_path / "signal_link", link)
    assert not (tmp_path / "signal_link").exists(), "the pair made before the failure was left behind"


def test_link_of_a_killed_owner_is_replaced_and_the_replacement_logged(
    tmp_path: Path, spawn: Spawn, caplog: pytest.LogCaptureFixture
) -> None:
    link = tmp_path / "mcu_command"
    proc, holder_pty = start_holder(spawn, link, tmp_path)
    pid = proc.pid
    os.killpg(proc.pid, signal.SIGKILL)  # no close(): the link and its lock file stay behind
    proc.wait(timeout=10)
    assert str(link.readlink()) == holder_pty and lock_path(link).exists()
    with caplog.at_level(logging.INFO, logger="hil_bridge.core.pty_link"), PtyPair(link) as pair:
        assert str(link.readlink()) == pair.slave_name
        assert pair.write(b"ok") == 2
    assert f"its owner ({pid} " in caplog.text and "stale" in caplog.text
    assert not link.exists() and not lock_path(link).exists()


def test_two_open_pairs_in_one_process_clash_and_the_path_is_free_again_after_close(tmp_path: Path) -> None:
    link = tmp_path / "signal_link"
    first = PtyPair(link)
    try:
        with pytest.raises(HilError, match=rf"held by live process {os.getpid()} \(.*this process\)"):
            PtyPair(link)
        assert str(link.readlink()) == first.slave_name
    finally:
        first.close()
    assert not lock_path(link).exists()
    with PtyPair(link) as second:
        assert str(link.readlink()) == second.slave_name


def test_a_link_from_before_lock_files_is_replaced(tmp_path: Path) -> None:
    link = tmp_path / "mcu_command"
    link.symlink_to("/dev/pts/nonexistent")
    with PtyPair(link) as pair:
        assert str(link.readlink()) == pair.slave_name


def test_a_reconnecting_link_never_opens_a_killed_owners_link_and_opens_the_next_owners(
    tmp_path: Path, spawn: Spawn
) -> None:
    link = tmp_path / "mcu_command"
    proc, _ = start_holder(spawn, link, tmp_path)
    reader = SerialLink(str(link), backoff_min=0.001, backoff_max=0.001)
    try:
        wait_for(lambda: (reader.poll(), reader.is_open)[1], "the reader opening the owner's link")
        os.killpg(proc.pid, signal.SIGKILL)  # no close(): the link and its lock file stay behind
        proc.wait(timeout=10)
        with PtyPair() as other:
            # The kernel gives the next pty anyone opens the lowest free number: the one
            # the dead owner's link names. Pointing the link at it makes that certain.
            replace_symlink(link, other.slave_name)
            assert other.write(b"not yours") == 9
            deadline = time.monotonic() + 0.3  # some hundred reopen attempts
            while time.monotonic() < deadline:
                assert reader.poll() == b""
                assert not reader.is_open, "the reader opened another program's pty"
        assert f"its owner ({proc.pid} python) is gone" in reader.detail
        with PtyPair(link) as owner:
            wait_for(lambda: (reader.poll(), reader.is_open)[1], "the reader opening the new owner's link")
            assert owner.write(b"ok") == 2
            got = bytearray()
            wait_for(lambda: got.extend(reader.poll()) or got == b"ok", "the new owner's bytes")
    finally:
        reader.close()


def test_a_claim_waits_out_a_readers_brief_look_at_the_lock(tmp_path: Path, spawn: Spawn) -> None:
    link = tmp_path / "mcu_command"
    proc, _ = start_holder(spawn, link, tmp_path)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    look = os.open(lock_path(link), os.O_RDONLY)
    fcntl.flock(look, fcntl.LOCK_SH)  # as stale_link() does, for microseconds
    assert stale_link(link)
    releaser = threading.Timer(0.01, os.close, (look,))
    releaser.start()
    try:
        with PtyPair(link) as pair:
            assert str(link.readlink()) == pair.slave_name
    finally:
        releaser.join()
    assert stale_link(link) == ""  # closed: no link left
