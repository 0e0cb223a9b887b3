"""Folders another user could change, for the tests of where runtime files may go.

:data:`UNSAFE_FOLDERS` is a table of ``pytest.param(make, id=...)``: ``make(base)``
builds one such folder under ``base`` (a test's ``tmp_path``) and returns
``(folder, words)``: the folder to give as a link folder, and the words the refusal
must contain (naming the folder at fault). Cases that need another user's folder
chown to :data:`OTHER_UID` and run only as root.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

#: A uid no account has: "another user" for the folders chowned to it.
OTHER_UID = 54321
#: Cases that chown need root.
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="making another user's folder needs root")

Make = Callable[[Path], tuple[Path, list[str]]]


def _folder(path: Path, mode: int = 0o700, *, uid: int | None = None) -> Path:
    path.mkdir()
    path.chmod(mode)  # not the umask's
    if uid is not None:
        os.chown(path, uid, -1)
    return path


def _theirs(base: Path) -> tuple[Path, list[str]]:
    folder = _folder(base / "theirs", uid=OTHER_UID)
    return folder, [f"folder {folder} is owned by uid {OTHER_UID}, not by you"]


def _writable(mode: int, who: str) -> Make:
    def make(base: Path) -> tuple[Path, list[str]]:
        folder = _folder(base / "shared", mode)
        return folder, [f"folder {folder} is writable by {who} (mode {mode:04o})"]

    return make


def _symlinked(base: Path) -> tuple[Path, list[str]]:
    real = _folder(base / "real")
    alias = base / "alias"
    alias.symlink_to(real)
    return alias, [f"folder {alias} is a symlink (to {real})"]


def _symlink_on_the_way(base: Path) -> tuple[Path, list[str]]:
    real = _folder(base / "real")
    alias = base / "alias"
    alias.symlink_to(real)
    return alias / "links", [f"folder {alias} is a symlink (to {real})"]


def _theirs_on_the_way(base: Path) -> tuple[Path, list[str]]:
    theirs = _folder(base / "theirs", 0o755, uid=OTHER_UID)
    return theirs / "links", [f"folder {theirs} is owned by uid {OTHER_UID}"]


def _writable_on_the_way(base: Path) -> tuple[Path, list[str]]:
    shared = _folder(base / "shared", 0o777)
    return shared / "links", [f"folder {shared} is writable by its group and others (mode 0777)"]


def _file_on_the_way(base: Path) -> tuple[Path, list[str]]:
    notes = base / "notes.txt"
    notes.write_text("my notes\n")
    return notes / "links", [f"folder {notes} is not a folder"]


UNSAFE_FOLDERS = [
    pytest.param(_theirs, id="owned-by-another-user", marks=needs_root),
    pytest.param(_writable(0o770, "its group"), id="group-writable"),
    pytest.param(_writable(0o757, "others"), id="world-writable"),
    pytest.param(_writable(0o1777, "its group and others"), id="sticky-world-writable"),
    pytest.param(_symlinked, id="symlinked"),
    pytest.param(_symlink_on_the_way, id="symlink-on-the-way"),
    pytest.param(_theirs_on_the_way, id="another-users-on-the-way", marks=needs_root),
    pytest.param(_writable_on_the_way, id="world-writable-on-the-way"),
    pytest.param(_file_on_the_way, id="file-on-the-way"),
]
#: The three kinds every entry point is checked against (the whole table: the core's tests).
MAIN_KINDS = [p for p in UNSAFE_FOLDERS if p.id in ("owned-by-another-user", "world-writable", "symlinked")]


def snapshot(base: Path) -> dict[str, tuple[int, int, int]]:
    """Every path under ``base`` (symlinks not followed): mode, owner, size; to see nothing changed."""
    found = {}
    for folder, dirs, files in os.walk(base):
        for name in dirs + files:
            path = Path(folder, name)
            info = path.lstat()
            found[str(path.relative_to(base))] = (info.st_mode, info.st_uid, info.st_size)
    return found
