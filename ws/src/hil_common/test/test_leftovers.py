"""What a killed process leaves is removed by the next one; what a live one holds is not.

Ownership is a flock held by a real child process (alive: sleeping; dead: killed).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hil_common.core.leftovers import (
    LEGACY_AGE_S,
    MIN_AGE_S,
    owned_dir,
    owner_pid,
    remove_dead_dds_segments,
    remove_dead_dirs,
)

SEGMENT = "fastrtps_0123456789abcdef"


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then), follow_symlinks=False)


class Holder:
    """A child process holding an exclusive flock on a file (or making an owned folder)."""

    def __init__(self, code: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        self.line = self.proc.stdout.readline().strip()  # printed once it holds the lock

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture
def holders() -> Iterator[list[Holder]]:
    made: list[Holder] = []
    yield made
    for holder in made:
        holder.kill()


def hold_lock(path: Path, holders: list[Holder]) -> Holder:
    holder = Holder(
        f"""
        import fcntl, os, time
        fd = os.open({str(path)!r}, os.O_RDONLY | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("held", flush=True)
        time.sleep(600)
        """
    )
    holders.append(holder)
    return holder


def make_owned_dir(parent: Path, holders: list[Holder]) -> tuple[Holder, Path]:
    holder = Holder(
        f"""
        import time
        from pathlib import Path
        from hil_common.core.leftovers import owned_dir
        made = owned_dir("hil-links-", parent=Path({str(parent)!r}))
        (made.path / "mcu_command").symlink_to("/dev/pts/nothing-here")
        print(made.path, flush=True)
        time.sleep(600)
        """
    )
    holders.append(holder)
    return holder, Path(holder.line)


def test_folder_of_a_killed_owner_goes_at_the_next_start_a_live_ones_stays(
    tmp_path: Path, holders: list[Holder]
) -> None:
    killed, dead_folder = make_owned_dir(tmp_path, holders)
    _, live_folder = make_owned_dir(tmp_path, holders)
    assert owner_pid(dead_folder) == killed.proc.pid
    killed.kill()
    assert dead_folder.is_dir()  # SIGKILL: nobody cleaned up
    mine = owned_dir("hil-links-", parent=tmp_path)
    try:
        assert not dead_folder.exists()
        assert live_folder.is_dir() and (live_folder / "mcu_command").is_symlink()
        assert mine.path.is_dir()
    finally:
        mine.remove()
        mine.remove()  # again: nothing
    assert not mine.path.exists()


def test_folder_without_owner_goes_only_when_old_and_its_links_dangle(tmp_path: Path) -> None:
    dangling, live, young = (tmp_path / f"hil-links-{n}" for n in ("dangling", "live", "young"))
    for folder in (dangling, live, young):
        folder.mkdir()
    (dangling / "mcu_command").symlink_to(tmp_path / "gone")
    (live / "mcu_command").symlink_to(tmp_path)
    (young / "mcu_command").symlink_to(tmp_path / "gone")
    for folder in (dangling, live):
        age(folder, LEGACY_AGE_S + 1)
    assert remove_dead_dirs("hil-links-", parent=tmp_path) == [dangling]
    assert live.is_dir() and young.is_dir()


def test_dead_processes_dds_segments_go_live_young_and_port_files_stay(
    tmp_path: Path, holders: list[Holder]
) -> None:
    names = {
        "dead": SEGMENT,
        "live": "fastrtps_fedcba9876543210",
        "young": "fastrtps_00000000000000aa",
        "port": "fastrtps_port7411",
    }
    for name in names.values():
        (tmp_path / name).write_bytes(b"\0" * 64)
        (tmp_path / f"{name}_el").touch()
    (tmp_path / "unrelated_el").touch()
    hold_lock(tmp_path / f"{names['live']}_el", holders)
    for key in ("dead", "live", "port"):
        age(tmp_path / f"{names[key]}_el", MIN_AGE_S + 1)
    removed = remove_dead_dds_segments(tmp_path)
    assert sorted(p.name for p in removed) == [SEGMENT, f"{SEGMENT}_el"]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert SEGMENT not in left and f"{SEGMENT}_el" not in left
    for key in ("live", "young", "port"):
        assert names[key] in left and f"{names[key]}_el" in left
    assert "unrelated_el" in left


def test_missing_shm_folder_removes_nothing(tmp_path: Path) -> None:
    assert remove_dead_dds_segments(tmp_path / "none") == []
