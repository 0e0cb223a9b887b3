"""tools/bootstrap.py: idempotent, and its change detection is right."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOOTSTRAP = ROOT / "tools" / "bootstrap.py"


def _load_bootstrap() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hil_bootstrap", BOOTSTRAP)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bootstrap = _load_bootstrap()


def _run_bootstrap() -> tuple[subprocess.CompletedProcess[str], float]:
    # The interpreter the venv was made from, as a user's `make` would call it.
    python = getattr(sys, "_base_executable", sys.executable)
    start = time.monotonic()
    proc = subprocess.run([python, str(BOOTSTRAP)], capture_output=True, text=True, timeout=1200, check=False)
    return proc, time.monotonic() - start


def test_second_bootstrap_run_changes_nothing_and_is_quick() -> None:
    first, _ = _run_bootstrap()
    assert first.returncode == 0, first.stdout + first.stderr
    second, took = _run_bootstrap()
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"0 of {len(bootstrap.STEPS)} steps changed something" in second.stdout, second.stdout
    assert "pip install" not in second.stdout
    assert "Starting >>>" not in second.stdout
    assert took < 10.0, f"no-op bootstrap took {took:.1f} s:\n{second.stdout}"


def test_every_step_reports_progress_on_its_own_line() -> None:
    proc, _ = _run_bootstrap()
    for index, (title, _) in enumerate(bootstrap.STEPS, start=1):
        assert f"[{index}/{len(bootstrap.STEPS)}] {title}" in proc.stdout


def test_ros_lines_are_skipped_when_a_ros_install_is_sourced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HIL_ROS_FROM_WHEELS", raising=False)
    monkeypatch.setenv("ROS_DISTRO", "jazzy")
    lines = bootstrap.requirement_lines()
    assert not [line for line in lines if line.lower().startswith(("ros-", "colcon-", "catkin", "empy"))]
    assert any(line.startswith("numpy==") for line in lines)


def test_ros_wheels_are_installed_without_a_ros_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ROS_DISTRO", raising=False)
    lines = bootstrap.requirement_lines()
    assert "ros-jazzy-rclpy==7.1.6" in lines
    assert all("==" in line for line in lines), "every requirement is pinned"


def test_fingerprint_ignores_caches_and_python_edits_but_not_build_inputs(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "pkg").mkdir(parents=True)
    (pkg / "package.xml").write_text("<package/>")
    (pkg / "pkg" / "mod.py").write_text("A = 1\n")
    base = bootstrap.source_fingerprint(tmp_path)

    (pkg / "pkg" / "mod.py").write_text("A = 2\n")
    (pkg / "pkg" / "__pycache__").mkdir()
    (pkg / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / ".pytest_cache").mkdir()
    assert bootstrap.source_fingerprint(tmp_path) == base, "symlink install needs no rebuild for these"

    (pkg / "pkg" / "new.py").write_text("")
    with_new_module = bootstrap.source_fingerprint(tmp_path)
    assert with_new_module != base

    (pkg / "package.xml").write_text("<package format='3'/>")
    assert bootstrap.source_fingerprint(tmp_path) != with_new_module


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("Collecting numpy==2.4.6 (from -r req.txt (line 3))", "Collecting numpy==2.4.6"),
        ("Collecting tzdata (from python-dateutil>=2.7->matplotlib)", None),
        (
            "Installing collected packages: a, b, c",
            "installing 3 packages (resolved with their dependencies) ...",
        ),
        ("Successfully installed a-1 b-2", "successfully installed 2 packages"),
        ("ERROR: No matching distribution found for x==9", "ERROR: No matching distribution found for x==9"),
        ("  Downloading x.whl (1 kB)", None),
    ],
)
def test_pip_output_is_condensed_to_progress_lines(line: str, shown: str | None) -> None:
    assert bootstrap.pip_progress(line) == shown


def test_failed_command_names_itself_and_shows_its_last_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bootstrap, "LOG_DIR", tmp_path)
    with pytest.raises(bootstrap.BootstrapError) as info:
        bootstrap.run_logged(
            "echo first; echo 'the reason' >&2; exit 3", log_name="failing", show=lambda _: None
        )
    message = str(info.value)
    assert "exited with status 3" in message
    assert "the reason" in message
    assert str(tmp_path / "failing.log") in message
    assert "the reason" in (tmp_path / "failing.log").read_text()


def test_links_to_deleted_sources_are_dropped_and_live_ones_kept(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "kept.yaml").write_text("a: 1\n")
    build = tmp_path / "build" / "pkg"
    build.mkdir(parents=True)
    (build / "kept.yaml").symlink_to(source / "kept.yaml")
    (build / "deleted.yaml").symlink_to(source / "deleted.yaml")
    assert bootstrap.drop_dangling_links(tmp_path / "build", tmp_path / "missing") == 1
    assert sorted(p.name for p in build.iterdir()) == ["kept.yaml"]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"PYTHONDONTWRITEBYTECODE": "1"}, ("", str(ROOT / ".cache" / "pycache"))),
        ({}, ("", "")),
        ({"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/elsewhere"}, ("1", "/elsewhere")),
    ],
    ids=["no-bytecode-asked", "default", "own-prefix"],
)
def test_setup_bash_keeps_bytecode_out_of_the_tree_where_none_is_to_be_written(
    given: dict[str, str], expected: tuple[str, str]
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    shown = subprocess.run(
        ["bash", "-c", f'source "{ROOT}/setup.bash" && echo "$PYTHONDONTWRITEBYTECODE|$PYTHONPYCACHEPREFIX"'],
        env=env | given,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    assert tuple(shown.split("|")) == expected
