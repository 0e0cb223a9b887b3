"""hil_sim_runner ends a run whose firmware harness dies: exit 1, the harness named, report written."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from conftest import Spawn


def harness_of(pid: int) -> int | None:
    """The pid of ``pid``'s child ``hil_simavr``, if it has one."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name, fields = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :].split()
        if name == "hil_simavr" and int(fields[1]) == pid and fields[0] != "Z":
            return int(stat.parent.name)
    return None


@pytest.mark.ros
@pytest.mark.parametrize("rtf", ["1", "0"])
def test_a_run_whose_firmware_harness_is_killed_ends_with_status_1_naming_it(
    spawn: Spawn, tmp_path: Path, rtf: str
) -> None:
    report = tmp_path / "report"
    command = [sys.executable, "-m", "hil_bringup.hil_sim_runner", "--headless", "--mcu", "simavr"]
    command += ["--rtf", rtf, "--duration", "600", "--report-dir", str(report)]
    runner = spawn(command, name="runner")
    log = tmp_path / "runner.log"
    deadline = time.monotonic() + 120
    while "started in" not in log.read_text() or harness_of(runner.pid) is None:
        assert runner.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.1)
    time.sleep(1.0)  # the run is under way
    harness = harness_of(runner.pid)
    assert harness is not None
    os.kill(harness, signal.SIGKILL)
    # It ends well within 2 s here; the bound only catches a run that never ends.
    status = runner.wait(timeout=20)
    output = log.read_text()
    assert status == 1, output[-3000:]
    assert "hil_sim_runner: simavr_mcu failed:" in output
    assert "hil_simavr" in output and "killed by SIGKILL" in output
    assert "Traceback" not in output
    metrics = json.loads((report / "metrics.json").read_text())
    assert metrics["failure"].startswith("simavr_mcu failed:")
    assert 0.0 < metrics["sim_duration_s"] < 600.0
