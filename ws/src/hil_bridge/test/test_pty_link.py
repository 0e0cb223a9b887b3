"""A pty link replaces only what a pair could have made: never a user's file, folder or link."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from hil_bridge.core.pty_link import PtyPair, lock_path, pty_pairs, same_path
from hil_common.errors import HilError
from support import unsafe_folders
from support.unsafe_folders import MAIN_KINDS, UNSAFE_FOLDERS, Make


def regular_file(path: Path) -> str:
    path.write_text("my notes\n")
    return "a regular file"


def folder(path: Path) -> str:
    path.mkdir()
    (path / "inside.txt").write_text("kept\n")
    return "a folder"


def named_pipe(path: Path) -> str:
    os.mkfifo(path)
    return "a named pipe"


def unix_socket(path: Path) -> str:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
    return "a socket"


def symlink_to_a_file(path: Path) -> str:
    target = path.with_name("target.txt")
    target.write_text("my notes\n")
    path.symlink_to(target)
    return f"a symlink to {target}"


def symlink_to_a_serial_port(path: Path) -> str:
    path.symlink_to("/dev/ttyUSB7")  # a udev-style name for a real port, dangling here
    return "a symlink to /dev/ttyUSB7"


def snapshot(path: Path) -> tuple[object, ...]:
    """What is at ``path`` (without following it), to compare before and after."""
    info = os.lstat(path)
    content = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    target = path.readlink() if path.is_symlink() else None
    listing = sorted(path.iterdir()) if path.is_dir() and not path.is_symlink() else None
    return (info.st_mode, info.st_ino, content, target, listing)


@pytest.mark.parametrize(
    "make",
    [regular_file, folder, named_pipe, unix_socket, symlink_to_a_file, symlink_to_a_serial_port],
)
def test_a_path_that_is_not_a_pty_link_is_refused_and_left_as_it_was(
    tmp_path: Path, make: Callable[[Path], str]
) -> None:
    link = tmp_path / "notes.txt"
    what = make(link)
    before = snapshot(link)
    with pytest.raises(HilError) as info:
        PtyPair(link)
    assert str(info.value) == (
        f"cannot create pty link {link}: it exists and is {what}, not a pty link; "
        "remove it or give another path"
    )
    assert snapshot(link) == before
    assert not lock_path(link).exists(), "the lock file made for the attempt was left behind"


@pytest.mark.parametrize("make", UNSAFE_FOLDERS)
def test_a_link_in_a_folder_another_user_could_change_is_refused_naming_the_folder(
    tmp_path: Path, make: Make
) -> None:
    folder, words = make(tmp_path)
    before = unsafe_folders.snapshot(tmp_path)
    with pytest.raises(HilError) as info:
        PtyPair(folder / "mcu_command")
    assert str(info.value).startswith(f"cannot create pty link {folder / 'mcu_command'}: folder ")
    for word in words:
        assert word in str(info.value)
    assert unsafe_folders.snapshot(tmp_path) == before, "no link, lock file or folder is made there"


@pytest.mark.parametrize("make", MAIN_KINDS)
def test_pty_pairs_in_an_unsafe_folder_leave_no_link_in_the_safe_one(tmp_path: Path, make: Make) -> None:
    folder, words = make(tmp_path)
    with pytest.raises(HilError, match=re.escape(words[0])):
        pty_pairs(tmp_path / "safe" / "command", folder / "signal")
    assert list((tmp_path / "safe").iterdir()) == []


def test_a_refused_path_in_pty_pairs_closes_the_pair_made_before(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    with pytest.raises(HilError, match="a regular file"):
        pty_pairs(tmp_path / "command", notes)
    assert notes.read_text() == "my notes\n"
    assert not (tmp_path / "command").is_symlink()


@pytest.mark.parametrize(
    ("content", "what"),
    [
        (b"my notes\n", "holds something else"),
        (b"1234 virtual_mcu\nand more\n", "holds something else"),
        (b"1" * 600, "holds something else"),
    ],
)
def test_a_lock_file_that_is_not_ours_is_refused_and_kept(tmp_path: Path, content: bytes, what: str) -> None:
    link = tmp_path / "notes"
    lock_path(link).write_bytes(content)
    with pytest.raises(HilError) as info:
        PtyPair(link)
    assert str(info.value) == (
        f"cannot create pty link {link}: {lock_path(link)} {what}, not a pty link's lock file; "
        "remove it or give another path"
    )
    assert lock_path(link).read_bytes() == content
    assert not link.exists() and not link.is_symlink()


def test_a_symlink_at_the_lock_files_path_is_not_written_through(tmp_path: Path) -> None:
    link = tmp_path / "notes"
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    lock_path(link).symlink_to(target)
    with pytest.raises(HilError, match=rf"its lock file {lock_path(link)}: it is a symlink"):
        PtyPair(link)
    assert target.read_text() == "keep me\n"


def test_a_stale_link_with_its_dead_owners_lock_file_is_replaced(tmp_path: Path) -> None:
    link = tmp_path / "mcu_command"
    link.symlink_to("/dev/pts/nonexistent")
    lock_path(link).write_text("999999 virtual_mcu\n")
    with PtyPair(link) as pair:
        assert str(link.readlink()) == pair.slave_name
        assert lock_path(link).read_text().startswith(f"{os.getpid()} ")
    assert not link.is_symlink() and not lock_path(link).exists()


@pytest.mark.parametrize(
    ("second", "same"),
    [("a", True), ("sub/../a", True), ("./a", True), ("b", False), ("sub/a", False)],
)
def test_same_path_sees_through_folder_spellings_but_not_the_last_link(
    tmp_path: Path, second: str, same: bool
) -> None:
    (tmp_path / "sub").mkdir()
    assert same_path(tmp_path / "a", tmp_path / second) is same


def test_same_path_resolves_a_symlinked_folder(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    assert same_path(tmp_path / "real" / "port", tmp_path / "alias" / "port")


def test_two_pairs_at_one_path_are_refused_naming_both(tmp_path: Path) -> None:
    port, again = tmp_path / "port", tmp_path / "sub" / ".." / "port"
    with pytest.raises(HilError) as info:
        pty_pairs(port, again, names=("command_port", "signal_port"))
    assert str(info.value) == f"command_port and signal_port are the same path {again}: each needs its own"
    assert not port.exists() and not lock_path(port).exists()
