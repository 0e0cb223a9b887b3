"""Fixtures shared by every test in the repository.

* A private ``ROS_DOMAIN_ID`` claimed with a lock file when pytest starts (so parallel
  test runs on one machine never hear each other), and localhost-only discovery, set
  before anything is collected: launch_testing's items, which get no fixtures, and the
  processes they launch are in it too. ``ros_domain`` (session fixture) gives its id.
* Hypothesis examples have no deadline and no too_slow health check (profile ``hil``):
  both measure the machine's load, not the code.
* ``spawn``: starts helper processes in their own process group (as another user if
  asked) and kills the whole group at teardown.
* At the end of the session any process the tests left behind is reported, killed,
  and fails the run.
* Parallel runs (pytest-xdist, ``make test``): every worker is a pytest session of its
  own, so each claims its own domain (the controller too, though it runs nothing) and
  checks its own children at the end; a worker's leftovers reach the controller in its
  ``workeroutput`` and fail the run there. Tests marked ``serial`` cannot share the
  machine with a neighbour: a parallel run leaves them out (its header says so) and
  ``--only-serial`` runs just them, as the second pass of ``make test`` does. The
  controller keeps each test's duration in pytest's cache (``hil/durations``) and the
  workers collect the slowest test files first: xdist hands tests out in collection
  order, so the long runs start at once and the short ones fill in beside them, instead
  of one long test started last holding the run while the other worker idles.
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
from hypothesis import HealthCheck, settings

# Hypothesis's per-example deadline (200 ms) and its too_slow health check time the
# machine, not the code under test: on a loaded machine (a parallel run, a busy
# neighbour) they would fail tests that are right.
settings.register_profile("hil", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("hil")

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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--only-serial",
        action="store_true",
        help="run only the tests marked serial (the ones a parallel run leaves out)",
    )


def _is_worker(config: pytest.Config) -> bool:
    """True in a pytest-xdist worker."""
    return hasattr(config, "workerinput")


def _is_controller(config: pytest.Config) -> bool:
    """True in the pytest-xdist controller of a parallel run (it runs no test itself)."""
    return config.pluginmanager.get_plugin("dsession") is not None


def pytest_configure(config: pytest.Config) -> None:
    """Claim this session's private ROS_DOMAIN_ID before anything is collected."""
    parallel = getattr(config.option, "numprocesses", None) or _is_worker(config)
    if config.getoption("only_serial") and parallel:
        raise pytest.UsageError("--only-serial runs the tests that cannot share the machine: not with -n")
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


def pytest_report_header(config: pytest.Config) -> list[str]:
    if not _is_controller(config):
        return [f"ROS_DOMAIN_ID {config.stash[_DOMAIN][0]} (localhost discovery)"]
    return [
        "ROS_DOMAIN_ID: one per worker (localhost discovery)",
        "tests marked serial are left out of a parallel run: `pytest --only-serial` runs them",
    ]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave the serial tests out of a parallel run; with ``--only-serial`` run only them.

    A worker orders the test files slowest first by the durations of earlier runs
    (every worker reads the same cache, so all collect the same order, as xdist
    requires); a file's tests keep their order (its module fixtures are set up once
    per worker), files never timed come last in their order.
    """
    only_serial = config.getoption("only_serial")
    if not only_serial and not _is_worker(config):
        return
    keep, drop = [], []
    for item in items:
        (keep if (item.get_closest_marker("serial") is not None) == only_serial else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    if _is_worker(config):
        module_s: dict[str, float] = {}
        for nodeid, seconds in _cached_durations(config).items():
            module = nodeid.split("::", 1)[0]
            module_s[module] = module_s.get(module, 0.0) + seconds
        items.sort(key=lambda item: -module_s.get(item.nodeid.split("::", 1)[0], 0.0))


#: Tests shorter than this are left out of the duration cache: their order does not matter.
DURATION_KEPT_S = 0.5
_DURATIONS_KEY = "hil/durations"


def _cached_durations(config: pytest.Config) -> dict[str, float]:
    cache = getattr(config, "cache", None)  # None with -p no:cacheprovider
    saved = cache.get(_DURATIONS_KEY, {}) if cache is not None else {}
    if not isinstance(saved, dict):
        return {}
    return {k: float(v) for k, v in saved.items() if isinstance(k, str) and isinstance(v, (int, float))}


class _DurationLog:
    """Controller of a parallel run: each test's time (setup, call, teardown) into the cache."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.times: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.times[report.nodeid] = self.times.get(report.nodeid, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        cache = getattr(self.config, "cache", None)
        if cache is None or not self.times:
            return
        kept = _cached_durations(self.config)
        kept.update(self.times)
        cache.set(_DURATIONS_KEY, {k: round(v, 2) for k, v in sorted(kept.items()) if v >= DURATION_KEPT_S})


def pytest_sessionstart(session: pytest.Session) -> None:
    if _is_controller(session.config):
        session.config.pluginmanager.register(_DurationLog(session.config), "hil_duration_log")


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


_LEFTOVERS = "hil_leftover_processes"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if a test left a child process behind (and kill it).

    Each process checks its own children: a worker its tests' processes, a serial run
    likewise; the controller of a parallel run, whose children are the workers, only
    reports what the workers found (:func:`pytest_testnodedown`).
    """
    config = session.config
    if _is_controller(config):
        found = config.stash.get(_WORKER_LEFTOVERS, [])
    else:
        leftovers = _children_of(os.getpid())
        for pid, _name in leftovers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        found = [", ".join(f"{name} (pid {pid})" for pid, name in leftovers)] if leftovers else []
        if _is_worker(config):
            config.workeroutput[_LEFTOVERS] = found  # type: ignore[attr-defined]
    if not found:
        return
    sys.stderr.write(f"\nERROR: tests left processes behind: {'; '.join(found)}\n")
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


_WORKER_LEFTOVERS = pytest.StashKey[list[str]]()


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook
def pytest_testnodedown(node: Any, error: object) -> None:
    """Controller: note the leftover processes a worker found (sent in its workeroutput)."""
    found = getattr(node, "workeroutput", {}).get(_LEFTOVERS)
    if found:
        node.config.stash.setdefault(_WORKER_LEFTOVERS, []).extend(f"{node.gateway.id}: {x}" for x in found)
