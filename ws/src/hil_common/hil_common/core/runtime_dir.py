"""Where a user's runtime files live (pty links, lock files, run folders), and who may touch them.

A pty link is a symlink that a control loop opens as its robot's serial port: whoever
can replace it can feed that loop a fake MCU or read its commands. So runtime files
live only in folders that nobody but their user (and root) can change:

* :func:`runtime_root`: the user's own folder for them, ``$XDG_RUNTIME_DIR/hil`` when
  ``XDG_RUNTIME_DIR`` is usable (an absolute path to a real folder, not a symlink,
  owned by this user and writable by nobody else: a ``su`` shell keeps the previous
  user's, which is not), else ``<temp folder>/hil-<uid>`` (``/tmp/hil-1000``).
* :func:`private_dir`: makes a folder and the folders on its way that are missing
  (mode 0700) and checks all of them, from ``/`` down, walking by descriptor
  (``O_PATH | O_DIRECTORY | O_NOFOLLOW``, ``mkdir`` relative to its parent's
  descriptor), so a symlink is never followed, not even one put there between the
  check and the use. A folder on the way must be no symlink, owned by this user or
  root, and writable by group or others only with the sticky bit (``/tmp``: they may
  add entries but not rename or remove ours). The folder itself, and every folder
  made here, must be owned by this user and writable by nobody else. Anything else
  is refused with an error naming the folder and what is wrong with it. Once a folder
  passed, nobody else can change what is in it or on the way to it, so plain paths
  into it are safe to use.
* :func:`runtime_dir`: :func:`private_dir` of the runtime root (and a folder in it).
* :func:`link_path`: what a link parameter names: a bare name (``mcu_command``, no
  ``/``) is the link of that name in :func:`runtime_root`; anything else is a path as
  given (``/dev/ttyACM0``; ``./mcu_command`` in the current folder), made absolute so
  that naming it again names the same file.
"""

from __future__ import annotations

import errno
import os
import pwd
import stat
import tempfile
from pathlib import Path

from hil_common.errors import HilError

#: The folder of this project's runtime files in ``$XDG_RUNTIME_DIR``.
XDG_SUBDIR = "hil"
#: The per-user folder in the temp folder when ``XDG_RUNTIME_DIR`` is not usable: ``hil-<uid>``.
FALLBACK_PREFIX = "hil-"
#: Mode of the folders made here.
MODE = 0o700

# O_PATH opens a folder that is searchable but not readable (mode 0711), and is enough
# to fstat it and to make folders in it (Linux); elsewhere a read-only open does.
_OPEN_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _name(uid: int) -> str | None:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return None  # a uid no account has


def _writable_by(mode: int) -> str:
    """Who else may change a folder of ``mode``: "its group", "others", both, or ""."""
    who = [name for bit, name in ((stat.S_IWGRP, "its group"), (stat.S_IWOTH, "others")) if mode & bit]
    return " and ".join(who)


def _usable_xdg(value: str) -> bool:
    """Whether ``$XDG_RUNTIME_DIR`` = ``value`` is this user's own runtime folder."""
    if not Path(value).is_absolute():
        return False
    try:
        info = os.lstat(value)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not _writable_by(info.st_mode)


def runtime_root() -> Path:
    """The user's folder of runtime files: ``$XDG_RUNTIME_DIR/hil``, else ``<tmp>/hil-<uid>``.

    Nothing is made or checked here beyond ``XDG_RUNTIME_DIR`` itself (see the module's
    text); :func:`runtime_dir` makes and checks the folder.
    """
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if xdg and _usable_xdg(xdg):
        return Path(xdg, XDG_SUBDIR)
    return Path(tempfile.gettempdir(), f"{FALLBACK_PREFIX}{os.geteuid()}")


def _problem(info: os.stat_result, *, own: bool) -> str:
    """What makes a folder (its ``fstat``) unsafe, or "" if nothing does.

    Args:
        info: the folder's status.
        own: the folder must be this user's (the folder itself, or one made here);
            else a folder on the way, which root may own and the sticky bit may open.
    """
    me = os.geteuid()
    if info.st_uid != me and (own or info.st_uid != 0):
        owner, mine = _name(info.st_uid), _name(me)
        them = f"{owner} (uid {info.st_uid})" if owner else f"uid {info.st_uid}"
        return f"is owned by {them}, not by you ({f'{mine}, ' if mine else ''}uid {me})"
    others = _writable_by(info.st_mode)
    if others and (own or not info.st_mode & stat.S_ISVTX):
        return f"is writable by {others} (mode {stat.S_IMODE(info.st_mode):04o})"
    return ""


def _check(fd: int, here: Path, *, own: bool) -> None:
    """Refuse the folder ``here`` (open as ``fd``) if it is unsafe (:func:`_problem`)."""
    problem = _problem(os.fstat(fd), own=own)
    if problem:
        raise HilError(
            f"folder {here} {problem}; another user could swap the links in it: "
            "choose a folder only you can change"
        )


def _open_step(parent_fd: int, name: str, here: Path) -> tuple[int, bool]:
    """Open folder ``name`` in ``parent_fd`` (made, mode :data:`MODE`, if missing).

    Returns:
        The descriptor and whether the folder was made here.

    Raises:
        HilError: it is a symlink or no folder, or cannot be made or opened.
    """
    made = False
    for _ in range(2):
        try:
            return os.open(name, _OPEN_FLAGS, dir_fd=parent_fd), made
        except FileNotFoundError:
            try:
                os.mkdir(name, MODE, dir_fd=parent_fd)
                made = True
            except FileExistsError:
                continue  # made by someone else meanwhile: opened and checked as found
            except OSError as exc:
                raise HilError(f"folder {here} cannot be made: {exc.strerror}") from None
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise HilError(f"folder {here} cannot be opened: {exc.strerror}") from None
            try:
                mode = os.lstat(name, dir_fd=parent_fd).st_mode
            except OSError:
                mode = 0
            if stat.S_ISLNK(mode):
                target = os.readlink(name, dir_fd=parent_fd)
                raise HilError(
                    f"folder {here} is a symlink (to {target}); runtime files are never made through "
                    "a symlink: give the folder it points to, or remove it"
                ) from None
            raise HilError(f"folder {here} is not a folder") from None
    raise HilError(f"folder {here} keeps vanishing while it is opened")


def private_dir(path: str | Path) -> Path:
    """Make ``path`` and the folders on its way that are missing (0700), and check them all.

    See the module's text for the rules.

    Returns:
        ``path``, absolute (a ``..`` in it is walked as the kernel walks it).

    Raises:
        HilError: naming the first folder that is unsafe and why.
    """
    absolute = Path(path).absolute()
    parts = absolute.parts[1:]
    fd = os.open("/", _OPEN_FLAGS)
    try:
        _check(fd, Path("/"), own=not parts)
        for i, name in enumerate(parts):
            child, made = _open_step(fd, name, Path("/", *parts[: i + 1]))
            os.close(fd)
            fd = child
            _check(fd, Path("/", *parts[: i + 1]), own=made or i == len(parts) - 1)
    finally:
        os.close(fd)
    return absolute


def runtime_dir(*parts: str) -> Path:
    """:func:`runtime_root` (or ``<root>/<parts>``), made and checked (:func:`private_dir`).

    The root itself must be this user's (root may not own it for them).

    Raises:
        HilError: naming the unsafe folder and why.
    """
    root = private_dir(runtime_root())
    return private_dir(root.joinpath(*parts)) if parts else root


def is_bare_name(value: str | Path) -> bool:
    """Whether a link parameter is a bare name (no folder): a link in :func:`runtime_root`."""
    text = str(value)
    return bool(text) and "/" not in text and text not in (".", "..")


def link_path(value: str | Path, *, check: bool = False) -> Path:
    """The absolute path a link parameter names: a bare name in the runtime folder, else as given.

    Args:
        value: ``mcu_command`` (the link of that name in :func:`runtime_root`), or a path.
        check: make and check the runtime folder (:func:`runtime_dir`) for a bare name,
            for a process that opens the link rather than makes it.

    Raises:
        HilError: ``check`` and the runtime folder is unsafe.
    """
    if not is_bare_name(value):
        return Path(value).absolute()
    return (runtime_dir() if check else runtime_root()) / str(value)
