"""The root conftest.py in a parallel run: a domain per worker, leftovers per worker, serial tests apart.

Each case runs an inner pytest on a few tests written to ``tmp_path`` beside a copy of
the root conftest.py, and reads what they saw (a file per test).
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
#: Writes what the test saw to <pid>-<name>.json beside it.
RECORD = """
import json, os
from pathlib import Path

def record(name, **extra):
    seen = {"name": name, "pid": os.getpid(), "domain": os.environ["ROS_DOMAIN_ID"],
            "worker": os.environ.get("PYTEST_XDIST_WORKER", ""), **extra}
    Path(__file__).with_name(f"{os.getpid()}-{name}.json").write_text(json.dumps(seen))
"""
SERIAL_AND_PLAIN = """
import pytest
from record import record

def test_plain():
    record("plain")

@pytest.mark.serial
def test_serial():
    record("serial")
"""


def run_inner(
    folder: Path, tests: str, *args: str, name: str = "test_inner.py", cache: bool = False
) -> subprocess.CompletedProcess[str]:
    shutil.copy(ROOT_CONFTEST, folder / "conftest.py")
    (folder / "pytest.ini").write_text(INI)
    (folder / "record.py").write_text(RECORD)
    (folder / name).write_text(tests)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", *([] if cache else ["-p", "no:cacheprovider"]), "-q", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def seen(folder: Path) -> list[dict[str, str]]:
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))]


def test_a_parallel_run_gives_each_worker_a_domain_fails_on_a_workers_leftover_and_skips_serial(
    tmp_path: Path,
) -> None:
    tests = SERIAL_AND_PLAIN + "".join(
        f"\ndef test_{i}():\n    import time; time.sleep(0.2); record('t{i}')\n" for i in range(4)
    )
    tests += """
def test_leaves_a_process():
    import subprocess
    record("leak", child=subprocess.Popen(["sleep", "600"]).pid)
"""
    result = run_inner(tmp_path, tests, "-n", "2")
    output = result.stdout + result.stderr
    records = {r["name"]: r for r in seen(tmp_path)}
    assert "serial" not in records and "plain" in records, output
    domains = {r["worker"]: r["domain"] for r in records.values()}
    assert sorted(domains) == ["gw0", "gw1"], records
    assert len(set(domains.values())) == 2, records
    assert all(domains[r["worker"]] == r["domain"] for r in records.values()), records  # one each throughout
    assert result.returncode == 1, output  # the leftover, not a failed test
    leak = records["leak"]
    message = f"tests left processes behind: {leak['worker']}: sleep (pid {leak['child']})"
    assert message in result.stderr, output
    status = Path(f"/proc/{leak['child']}/stat")
    assert not status.exists() or status.read_text().split(")")[1].split()[0] == "Z", "the leftover runs on"


@pytest.mark.parametrize(("args", "ran"), [(["--only-serial"], ["serial"]), ([], ["plain", "serial"])])
def test_only_serial_runs_just_the_serial_tests_and_a_plain_run_all(
    tmp_path: Path, args: list[str], ran: list[str]
) -> None:
    result = run_inner(tmp_path, SERIAL_AND_PLAIN, *args)
    assert result.returncode == 0, result.stdout + result.stderr  # no leftovers either
    assert sorted(r["name"] for r in seen(tmp_path)) == ran, result.stdout


def test_only_serial_refuses_workers(tmp_path: Path) -> None:
    result = run_inner(tmp_path, SERIAL_AND_PLAIN, "--only-serial", "-n", "2")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.stdout + result.stderr
    assert "--only-serial runs the tests that cannot share the machine: not with -n" in result.stderr
    assert seen(tmp_path) == []


def test_a_parallel_run_starts_the_test_files_that_took_longest_last_time_first(tmp_path: Path) -> None:
    quick = "\nfrom record import record\n" + "".join(
        f"\ndef test_q{i}():\n    record('q{i}', at=__import__('time').monotonic_ns())\n" for i in range(3)
    )
    slow = """
import time
from record import record

def test_slow():
    record("slow", at=time.monotonic_ns())
    time.sleep(0.8)

def test_after_slow():
    record("after_slow", at=time.monotonic_ns())
"""
    (tmp_path / "test_b_slow.py").write_text(slow)
    order = []
    for _ in range(2):  # the first run times the files, the second is ordered by those times
        result = run_inner(tmp_path, quick, "-n", "1", name="test_a_quick.py", cache=True)
        assert result.returncode == 0, result.stdout + result.stderr
        order.append([r["name"] for r in sorted(seen(tmp_path), key=lambda r: int(r["at"]))])
        for path in tmp_path.glob("*.json"):
            path.unlink()
    assert order == [
        ["q0", "q1", "q2", "slow", "after_slow"],  # nothing timed yet: the files' order
        ["slow", "after_slow", "q0", "q1", "q2"],  # the slow file first, its tests in their order
    ]
    cached = json.loads((tmp_path / ".pytest_cache" / "v" / "hil" / "durations").read_text())
    assert list(cached) == ["test_b_slow.py::test_slow"], cached  # only tests of 0.5 s or more
    assert cached["test_b_slow.py::test_slow"] >= 0.8


def test_a_serial_run_keeps_the_order_of_the_files(tmp_path: Path) -> None:
    (tmp_path / "test_b_slow.py").write_text(
        "import time\nfrom record import record\n\ndef test_slow():\n"
        "    record('slow', at=time.monotonic_ns())\n    time.sleep(0.6)\n"
    )
    quick = (
        "from record import record\n\ndef test_q():\n    record('q', at=__import__('time').monotonic_ns())\n"
    )
    for args in (["-n", "1"], []):  # a timed parallel run, then a serial one
        for path in tmp_path.glob("*.json"):
            path.unlink()
        result = run_inner(tmp_path, quick, *args, name="test_a_quick.py", cache=True)
        assert result.returncode == 0, result.stdout + result.stderr
    assert [r["name"] for r in sorted(seen(tmp_path), key=lambda r: int(r["at"]))] == ["q", "slow"]
