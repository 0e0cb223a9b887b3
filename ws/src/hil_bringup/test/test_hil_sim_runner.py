"""hil_sim_runner (``make sim``): runs, reports, and stops cleanly."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hil_bringup.graph_runner import LINK_DIR_PREFIX
from hil_bringup.hil_sim_runner import link_state, render
from hil_common.core.leftovers import owner_pid
from hil_common.core.runtime_dir import runtime_root
from robot_control.core.heartbeat import LinkHealth


def runner_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "hil_bringup.hil_sim_runner", *args]


@pytest.mark.ros
def test_headless_lockstep_run_writes_metrics_and_picture_and_names_them(tmp_path: Path) -> None:
    report = tmp_path / "report"
    result = subprocess.run(
        runner_command("--headless", "--rtf", "0", "--duration", "2", "--report-dir", str(report)),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    assert lines[-2] == f"metrics: {report / 'metrics.json'}"
    assert lines[-1] == f"picture: {report / 'report.png'}"
    metrics = json.loads((report / "metrics.json").read_text())
    for key in ("boards_down", "sim_duration_s", "wall_duration_s", "rtf", "mcu_rtt_ms", "failsafe_events"):
        assert key in metrics
    assert metrics["sim_duration_s"] >= 2.0
    assert metrics["cpu_latency"].startswith("CPU wake-up latency ")  # held, or why not
    assert f"hil_sim_runner: {metrics['cpu_latency']} (cpu_latency)" in lines
    assert (report / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def run_folders(pid: int) -> list[Path]:
    """The private pty folders (``<runtime folder>/hil-links-*``) whose owner is ``pid``."""
    return [d for d in runtime_root().glob(f"{LINK_DIR_PREFIX}*") if owner_pid(d) == pid]


@pytest.mark.ros
def test_ctrl_c_stops_a_real_time_run_cleanly_without_leaving_pty_links(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        runner_command("--headless", "--report-dir", str(tmp_path / "report")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "started" in first
        (folder,) = run_folders(proc.pid)
        assert (folder / "mcu_command").is_symlink()
        time.sleep(1.0)  # let it run a little; the assertions below do not depend on how long
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err[-2000:]
    assert "picture:" in out
    assert not folder.exists(), "the run's pty links were left behind"


def test_bad_option_exits_2_with_the_reason(tmp_path: Path) -> None:
    result = subprocess.run(
        runner_command(
            "--headless", "--world", str(tmp_path / "missing.yaml"), "--report-dir", str(tmp_path)
        ),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert "missing.yaml" in result.stderr


ONE_BOARD_WORLD = """\
arena: {width: 4.0, height: 4.0}
start: {x: 0.0, y: 0.0, yaw: 0.0}
boards:
  items:
    - {x: 0.4, y: 0.0, yaw: 3.14159}
"""


@pytest.mark.ros
def test_until_done_ends_a_run_a_settle_second_after_the_last_board_falls(tmp_path: Path) -> None:
    world = tmp_path / "one_board.yaml"
    world.write_text(ONE_BOARD_WORLD)
    report = tmp_path / "report"
    result = subprocess.run(
        runner_command(
            "--headless", "--rtf", "0", "--until-done", "--duration", "60",
            "--world", str(world), "--report-dir", str(report),
        ),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    metrics = json.loads((report / "metrics.json").read_text())
    assert metrics["done"] is True and metrics["boards_down"] == metrics["boards"] == 1
    assert metrics["done_at_s"] < 60.0
    # Settled for one second of simulated time, ended within a signal period (5 ms) of it
    # (both figures are rounded to the millisecond).
    assert 1.0 - 0.001 <= metrics["sim_duration_s"] - metrics["done_at_s"] <= 1.0 + 0.006
    assert f"task done at {metrics['done_at_s']:.1f} s" in result.stdout


@pytest.mark.ros
def test_until_done_exits_1_when_the_duration_runs_out_first(tmp_path: Path) -> None:
    report = tmp_path / "report"
    result = subprocess.run(
        runner_command(
            "--headless", "--rtf", "0", "--until-done", "--duration", "1", "--report-dir", str(report)
        ),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 1, result.stderr[-2000:]
    metrics = json.loads((report / "metrics.json").read_text())
    assert metrics["done"] is False and metrics["done_at_s"] is None
    assert metrics["boards_down"] < metrics["boards"]
    assert result.stdout.strip().splitlines()[-1] == f"picture: {report / 'report.png'}"


def test_until_done_without_a_task_exits_2_naming_it(tmp_path: Path) -> None:
    result = subprocess.run(
        runner_command("--headless", "--behaviour", "", "--until-done", "--report-dir", str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert "--until-done" in result.stderr and "MANUAL" in result.stderr


#: An MJCF world MuJoCo cannot simulate: a stiff spring on a tiny mass.
UNSTABLE_MJCF = """<mujoco><worldbody><geom type='plane' size='3 3 0.1'/>
<body name='spring' pos='1 1 0.5'><joint type='slide' stiffness='1e15' springref='0.1'/>
<geom size='0.05' mass='1e-6' contype='0' conaffinity='0'/></body></worldbody></mujoco>
"""


@pytest.mark.ros
def test_a_world_that_goes_unstable_fails_the_run_naming_it_and_still_reports(tmp_path: Path) -> None:
    (tmp_path / "unstable.xml").write_text(UNSTABLE_MJCF)
    world = tmp_path / "unstable.yaml"
    world.write_text("arena: {width: 4.0, height: 4.0}\nmjcf: unstable.xml\n")
    report = tmp_path / "report"
    result = subprocess.run(
        runner_command(
            "--headless", "--rtf", "0", "--duration", "60", "--physics", "mujoco",
            "--world", str(world), "--report-dir", str(report),
        ),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("hil_sim_runner: sim failed: ")]
    assert f"world {world}" in line and "numerically unstable" in line and "QACC" in line
    metrics = json.loads((report / "metrics.json").read_text())
    assert "numerically unstable" in metrics["failure"]
    assert metrics["sim_duration_s"] < 1.0  # stopped at once, not after the 60 s


@pytest.mark.ros
def test_a_run_in_a_world_without_boards_prints_no_boards_and_names_its_task(tmp_path: Path) -> None:
    report = tmp_path / "report"
    result = subprocess.run(
        runner_command(
            "--headless", "--rtf", "0", "--world", "empty", "--behaviour", "light",
            "--duration", "1", "--report-dir", str(report),
        ),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert "  t " in result.stdout  # a progress line was printed
    assert "boards" not in result.stdout
    metrics = json.loads((report / "metrics.json").read_text())
    assert metrics["boards"] == 0 and metrics["task"] == "light" and metrics["done"] is False


@pytest.mark.parametrize(
    ("alive", "heard", "shown"),
    [
        (False, False, "never heard"),  # the first moments of a run, before the first heartbeat
        (True, True, "alive"),
        (False, True, "LOST"),
    ],
)
def test_the_status_tells_an_mcu_not_heard_yet_from_a_lost_one(alive: bool, heard: bool, shown: str) -> None:
    since = (0.1 if alive else 2.0) if heard else -1.0
    health = LinkHealth(alive, 4e-4, 4e-4, 4e-4, sent=3, received=3 * heard, lost=0, since_last_heard=since)
    assert link_state(health) == shown
    assert link_state(health, alive="ok", lost="lost") == {"alive": "ok", "LOST": "lost"}.get(shown, shown)
    status = {
        "sim_time": 0.0, "wall_time": 0.1, "rtf": 0.0, "pose": (0.0, 0.0, 0.0), "boards_down": 0, "boards": 0,
        "mode": "AUTO", "held_by": "-", "mcu_link": shown, "mcu_rtt_ms": 0.4, "station": "never heard",
        "jitter_p99_us": 0.0, "frames": 0,
    }  # fmt: skip
    cells = list(render(status).columns[1].cells)
    assert any(cell.startswith(shown) for cell in cells)
    assert any("HBB round trip" in cell for cell in cells) == (shown == "alive")
