"""The root conftest.py in a parallel run: a domain per worker, leftovers per worker, serial tests apart.

Each case runs an inner pytest (pytest-xdist, two workers) on a few tests written to
``tmp_path`` beside a copy of the root conftest.py, and reads what they saw.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
INI = """[pytest]
markers =
    serial: cannot share the machine
    ros: DDS traffic
"""
#: Writes what the test saw to <pid>-<test>.json beside it.
RECORD = """
import json, os
from pathlib import Path

def record(name, **extra):
    seen = {"pid": os.getpid(), "domain": os.environ["ROS_DOMAIN_ID"],
            "worker": os.environ.get("PYTEST_XDIST_WORKER", ""), **extra}
    Path(__file__).with_name(f"{os.getpid()}-{name}.json").write_text(json.dumps(seen))
"""


def run_inner(folder: Path, tests: str, *args: str) -> subprocess.CompletedProcess[str]:
    shutil.copy(ROOT_CONFTEST, folder / "conftest.py")
    (folder / "pytest.ini").write_text(INI)
    (folder / "record.py").write_text(RECORD)
    (folder / "test_inner.py").write_text(tests)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


SERIAL_AND_PLAIN = """
import pytest
from record import record

def test_plain():
    record("plain")

@pytest.mark.serial
def test_serial():
    record("serial")
"""


def seen(folder: Path) -> list[dict[str, str]]:
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))]


def test_each_worker_claims_a_ros_domain_of_its_own(tmp_path: Path) -> None:
    tests = "from record import record\n" + "".join(
        f"def test_{i}():\n    import time; time.sleep(0.2); record('t{i}')\n" for i in range(4)
    )
    result = run_inner(tmp_path, tests, "-n", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    records = seen(tmp_path)
    domains = {r["worker"]: r["domain"] for r in records}
    assert sorted(domains) == ["gw0", "gw1"], records
    assert len(set(domains.values())) == 2, records
    for r in records:
        assert domains[r["worker"]] == r["domain"], records  # one domain per worker throughout


def test_a_process_left_behind_in_a_worker_fails_the_run_and_is_killed(tmp_path: Path) -> None:
    tests = """
import subprocess
from record import record

def test_leaves_a_process():
    proc = subprocess.Popen(["sleep", "600"])
    record("leak", child=proc.pid)

def test_clean():
    pass
"""
    result = run_inner(tmp_path, tests, "-n", "2")
    assert result.returncode == 1, result.stdout + result.stderr
    (leak,) = seen(tmp_path)
    child = leak["child"]
    message = f"tests left processes behind: {leak['worker']}: sleep (pid {child})"
    assert message in result.stderr, result.stderr
    status = Path(f"/proc/{child}/stat")
    assert not status.exists() or status.read_text().split(")")[1].split()[0] == "Z", "the leftover runs on"


@pytest.mark.parametrize(
    ("args", "ran"),
    [
        (["-n", "2"], ["plain"]),
        (["--only-serial"], ["serial"]),
        ([], ["plain", "serial"]),
    ],
)
def test_serial_tests_are_left_out_of_a_parallel_run_and_run_alone_with_only_serial(
    tmp_path: Path, args: list[str], ran: list[str]
) -> None:
    result = run_inner(tmp_path, SERIAL_AND_PLAIN, *args)
    assert result.returncode == 0, result.stdout + result.stderr  # the workers are no leftovers
    assert sorted(path.stem.split("-", 1)[1] for path in tmp_path.glob("*.json")) == ran, result.stdout


def test_only_serial_refuses_workers(tmp_path: Path) -> None:
    result = run_inner(tmp_path, SERIAL_AND_PLAIN, "--only-serial", "-n", "2")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.stdout + result.stderr
    assert "--only-serial runs the tests that cannot share the machine: not with -n" in result.stderr
    assert list(tmp_path.glob("*.json")) == []
