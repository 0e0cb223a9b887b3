"""Fixtures shared by every test in the repository.

* A private ``ROS_DOMAIN_ID`` claimed with a lock file when pytest starts (so parallel
  test runs on one machine never hear each other), and localhost-only discovery, set
  before anything is collected: launch_testing's items, which get no fixtures, and the
  processes they launch are in it too. ``ros_domain`` (session fixture) gives its id.
* ``spawn``: starts helper processes in their own process group (as another user if
  asked) and kills the whole group at teardown.
* At the end of the session any process the tests left behind is reported, killed,
  and fails the run.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import random
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

#: Fast DDS maps a domain id to UDP ports; ids above 232 overflow them on Linux.
#: 0..99 are left to the user's own ROS graphs.
DOMAIN_RANGE = range(100, 233)
LOCK_DIR = Path(tempfile.gettempdir()) / "hil-test-ros-domains"


def _claim_domain() -> tuple[int, IO[str]]:
    LOCK_DIR.mkdir(exist_ok=True)
    candidates = list(DOMAIN_RANGE)
    random.shuffle(candidates)
    for domain in candidates:
        handle = (LOCK_DIR / f"{domain}.lock").open("w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        return domain, handle
    raise RuntimeError(f"no free ROS_DOMAIN_ID in {DOMAIN_RANGE} (locks in {LOCK_DIR})")


_DOMAIN = pytest.StashKey[tuple[int, IO[str], dict[str, str | None]]]()


def pytest_configure(config: pytest.Config) -> None:
    """Claim this session's private ROS_DOMAIN_ID before anything is collected."""
    domain, lock = _claim_domain()
    saved = {k: os.environ.get(k) for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")}
    os.environ["ROS_DOMAIN_ID"] = str(domain)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    config.stash[_DOMAIN] = (domain, lock, saved)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Give the domain back and restore the environment."""
    claimed = config.stash.get(_DOMAIN, None)
    if claimed is None:
        return
    _, lock, saved = claimed
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    lock.close()


@pytest.fixture(scope="session")
def ros_domain(pytestconfig: pytest.Config) -> int:
    """This session's private ROS_DOMAIN_ID."""
    return pytestconfig.stash[_DOMAIN][0]


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT (clean rclpy shutdown), then SIGTERM, then SIGKILL, to the whole group."""
    for sig, wait in ((signal.SIGINT, 5.0), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    # Members of the group that outlived its leader.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


Spawn = Callable[..., "subprocess.Popen[bytes]"]


class ProcessGroups:
    """Processes started in their own process groups, all stopped together."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.started: list[subprocess.Popen[bytes]] = []

    def start(
        self,
        args: list[str],
        *,
        name: str = "proc",
        env: dict[str, str] | None = None,
        user: int | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start ``args`` (as ``user``, a uid, with its group only); output to ``<log_dir>/<name>.log``."""
        as_user: dict[str, Any] = {}
        if user is not None:
            as_user = {"user": user, "group": pwd.getpwuid(user).pw_gid, "extra_groups": []}
        with (self.log_dir / f"{name}.log").open("wb") as log:
            proc = subprocess.Popen(
                args,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})},
                start_new_session=True,
                **as_user,
            )
        self.started.append(proc)
        return proc

    def stop_all(self) -> None:
        for proc in self.started:
            _stop_group(proc)


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Spawn]:
    """Start a process in its own group; every one is stopped at teardown."""
    groups = ProcessGroups(tmp_path)
    try:
        yield groups.start
    finally:
        groups.stop_all()


@pytest.fixture(scope="module")
def spawn_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Spawn]:
    """Like ``spawn``, for processes shared by the tests of one module."""
    groups = ProcessGroups(tmp_path_factory.mktemp("procs"))
    try:
        yield groups.start
    finally:
        groups.stop_all()


def _children_of(pid: int) -> list[tuple[int, str]]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            text = stat.read_text()
            # The command name is parenthesised and may contain spaces.
            name = text[text.index("(") + 1 : text.rindex(")")]
            ppid = int(text[text.rindex(")") + 2 :].split()[1])
            if ppid == pid:
                found.append((int(stat.parent.name), name))
    return found


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if a test left a child process behind (and kill it)."""
    leftovers = _children_of(os.getpid())
    if not leftovers:
        return
    for pid, _name in leftovers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    listing = ", ".join(f"{name} (pid {pid})" for pid, name in leftovers)
    sys.stderr.write(f"\nERROR: tests left processes behind: {listing}\n")
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
