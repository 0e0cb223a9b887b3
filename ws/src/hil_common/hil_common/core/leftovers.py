"""Files a killed process leaves behind, found and removed by the next one.

A SIGKILL gives no process a chance to clean up, so the next start does it, and it
removes only what a dead process owned: ownership is an exclusive ``flock`` that the
owner holds as long as it lives (the kernel drops it when the process dies, however
it dies), so a lock that can be taken means the owner is gone.

* :func:`owned_dir`: a private temporary folder (the runner's pty links) in the user's
  runtime folder (:func:`~hil_common.core.runtime_dir.runtime_dir`) holding such a lock
  in its ``.owner`` file; dead owners' folders are removed first.
* :func:`remove_dead_dds_segments`: Fast DDS's shared-memory segments in ``/dev/shm``
  of dead processes. Fast DDS 2.14 (Jazzy) removes its own at a clean exit but not a
  killed process's, and does not look for them on the next start (only its
  ``fastdds shm clean`` command does, by the same rule: the segment's ``_el`` lock
  file is not locked). Its port files are shared by every process on the port; Fast
  DDS reopens those and the last user removes them, so they are left to it.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from hil_common.core.runtime_dir import runtime_dir

#: The lock file of an :func:`owned_dir`, holding the owner's pid for people to read.
OWNER_FILE = ".owner"
#: Where Fast DDS keeps its shared memory on Linux.
SHM_DIR = Path("/dev/shm")
#: A segment's lock file (``fastdds shm clean`` matches the same names).
_SEGMENT_LOCK = re.compile(r"fastrtps_[0-9a-z]{16}_el")
#: Files younger than this are never judged: between creating a lock file and taking
#: the lock its maker holds nothing, and a test lock then could make its own fail.
MIN_AGE_S = 2.0
#: A folder without an owner file (made before owner files existed) counts as dead
#: only when older than this and every entry in it is a dangling link.
LEGACY_AGE_S = 10.0


def _lock_is_free(path: Path) -> bool:
    """True if nobody holds an exclusive flock on ``path`` (taken and dropped again)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)  # closing drops the test lock too
    return True


def _old_and_ours(path: Path, min_age_s: float) -> bool:
    try:
        status = path.lstat()
    except OSError:
        return False
    return status.st_uid == os.getuid() and time.time() - status.st_mtime >= min_age_s


def remove_dead_dds_segments(shm_dir: Path = SHM_DIR, *, min_age_s: float = MIN_AGE_S) -> list[Path]:
    """Remove this user's Fast DDS segments whose owner died; returns the files removed."""
    try:
        locks = sorted(path for path in shm_dir.iterdir() if _SEGMENT_LOCK.fullmatch(path.name))
    except OSError:
        return []
    removed = []
    for lock in locks:
        if not _old_and_ours(lock, min_age_s) or not _lock_is_free(lock):
            continue
        for path in (lock.with_name(lock.name[: -len("_el")]), lock):
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed


def _legacy_dir_is_dead(path: Path) -> bool:
    if not _old_and_ours(path, LEGACY_AGE_S):
        return False
    with contextlib.suppress(OSError):
        return all(entry.is_symlink() and not entry.exists() for entry in path.iterdir())
    return False


def owner_pid(folder: Path) -> int | None:
    """The pid in an :func:`owned_dir`'s owner file (None: none, or not written yet)."""
    try:
        return int((folder / OWNER_FILE).read_text())
    except (OSError, ValueError):
        return None


def _owner_is_dead(folder: Path) -> bool:
    # The owner writes its pid after taking the lock: a pid and a free lock is a dead
    # owner; an empty file may be one being made this very moment.
    owner = folder / OWNER_FILE
    written = owner_pid(folder) is not None
    return (written or _old_and_ours(owner, MIN_AGE_S)) and _lock_is_free(owner)


def remove_dead_dirs(prefix: str, *, parent: Path | None = None) -> list[Path]:
    """Remove the folders ``<parent>/<prefix>*`` of dead owners; returns them.

    ``parent`` None: the user's runtime folder (:func:`~hil_common.core.runtime_dir.runtime_dir`).

    Raises:
        HilError: the runtime folder is one another user could change.
    """
    parent = runtime_dir() if parent is None else parent
    removed = []
    for path in sorted(parent.glob(f"{glob.escape(prefix)}*")):
        if path.is_symlink() or not path.is_dir() or not _old_and_ours(path, 0.0):
            continue
        dead = _owner_is_dead(path) if (path / OWNER_FILE).exists() else _legacy_dir_is_dead(path)
        if dead:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


class OwnedDir:
    """A temporary folder owned by this process while :attr:`path` exists."""

    def __init__(self, path: Path, lock_fd: int) -> None:
        self.path = path
        self._lock_fd: int | None = lock_fd

    def remove(self) -> None:
        """Remove the folder and give up its lock (again: nothing)."""
        if self._lock_fd is None:
            return
        shutil.rmtree(self.path, ignore_errors=True)
        os.close(self._lock_fd)
        self._lock_fd = None


def owned_dir(prefix: str, *, parent: Path | None = None) -> OwnedDir:
    """A new folder ``<parent>/<prefix>XXXXXXXX`` (mode 0700) locked by this process.

    ``parent`` None: the user's runtime folder (:func:`~hil_common.core.runtime_dir.runtime_dir`).
    Folders with the same prefix whose owner died are removed first. The lock lives as
    long as the returned object's descriptor (not inherited by child processes).

    Raises:
        HilError: the runtime folder is one another user could change.
    """
    parent = runtime_dir() if parent is None else parent
    remove_dead_dirs(prefix, parent=parent)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    fd = os.open(path / OWNER_FILE, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a new file: nobody else has it
    os.write(fd, f"{os.getpid()}\n".encode())
    return OwnedDir(path, fd)
