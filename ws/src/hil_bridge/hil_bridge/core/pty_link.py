"""Pseudo-terminals with a stable path: the serial ports of a simulated link.

A :class:`PtyPair` is a real tty. The simulated device (virtual MCU, fault proxy,
test peer) holds the master end; whoever would open a USB serial port opens the
slave end through a symlink with a stable name, e.g. ``mcu_command`` in the user's
runtime folder (:mod:`~hil_common.core.runtime_dir`), with pyserial, exactly as it
would open ``/dev/ttyUSB0``.

The pair keeps its own slave descriptor open, so the master never sees EIO while
the user closes and reopens the port, and data written before anyone opened the
port waits in the tty (pyserial flushes it when it opens the port, as a real
serial port would lose it). Closing the pair hangs the port up: the user's reads
fail, and a new pair at the same path is what a reconnect finds.

A pair owns its link: it holds an exclusive ``flock`` on ``<link>.lock`` (which
names its pid and program) for as long as it is open. A second pair at the same
path, in any process, fails loudly while the first is open instead of silently
taking the port away from it; once the owner is gone (closed, crashed or killed:
the kernel drops the lock with the process), the stale link is replaced.

A link's folder, and every folder on the way to it, is made and checked by
:func:`~hil_common.core.runtime_dir.private_dir`: a folder another user could change
(theirs, writable by others, a symlink) is refused, as they could swap the link for
one to a pty of their own. A bare name (no folder) is a link in the runtime folder.

A link whose owner was killed still points at its old pty number, and the kernel
hands the lowest free number to the next pty anyone opens: the stale link then leads
to some other program's pty. :func:`stale_link` tells such a link (its lock file is
there and nobody holds it); a :class:`~hil_bridge.core.serial_link.SerialLink` does
not open one and waits for a new owner instead.

A pair only ever replaces what it could have made: a missing path, or a symlink into
the pty folder (``/dev/pts``) whose owner is gone. Anything else at the path (a
regular file, a folder, a device, a symlink elsewhere, a lock file holding something
else) is refused with an error naming it, and left as it was.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import re
import stat
import sys
import time
import tty
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType

from hil_bridge.core.lockstep_io import OwedBytes
from hil_bridge.errors import HilBridgeError
from hil_common.core.runtime_dir import link_path, private_dir
from hil_common.errors import HilError

_log = logging.getLogger(__name__)

#: What a lock file holds: ``<pid> <program>`` (see :func:`_claim`), and at most how much.
_OWNER = re.compile(rb"\d+ [^\n]*\n?")
MAX_OWNER_BYTES = 512
_KINDS = (
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
)


def lock_path(link: Path) -> Path:
    """The lock file that says who owns the pty link ``link``."""
    return link.with_name(f"{link.name}.lock")


def _owner_text(fd: int) -> str:
    return os.pread(fd, 256, 0).decode(errors="replace").strip() or "(pid not written yet)"


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "something else")


#: How long :func:`_claim` keeps trying a lock that :func:`stale_link` may be testing.
CLAIM_RETRY_S = 0.25


def stale_link(link: str | Path) -> str:
    """Why the pty link ``link`` must not be opened, or "" if it may be.

    A link is stale when it is a symlink whose lock file (:func:`lock_path`) exists and
    nobody holds: its owner died without removing it. Anything else (a device, a link
    without a lock file, a live owner's link) may be opened.
    """
    path = Path(link)
    if not path.is_symlink():
        return ""
    lock = lock_path(path)
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        # Taken only if its owner is gone, and given back at once (_claim retries it).
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return ""
    else:
        owner = _owner_text(fd)
    finally:
        os.close(fd)
    return f"its owner ({owner}) is gone; the pty it names may be another program's now"


def _check_replaceable(link: Path, pty_folder: Path) -> None:
    """Refuse ``link`` unless it is missing or a pty link (a symlink into ``pty_folder``).

    Raises:
        HilBridgeError: naming the path and what is there.
    """
    try:
        mode = os.lstat(link).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        target = link.readlink()
        if target.parent == pty_folder:
            return
        what = f"a symlink to {target}"
    else:
        what = _kind(mode)
    raise HilBridgeError(
        f"cannot create pty link {link}: it exists and is {what}, not a pty link; "
        "remove it or give another path"
    )


def _check_lock_file(fd: int, path: Path, link: Path) -> bytes:
    """What the lock file at ``path`` (open as ``fd``) holds, if it is one of ours.

    Raises:
        HilBridgeError: it is no regular file, or holds something but ``<pid> <program>``.
    """
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        what = f"is {_kind(info.st_mode)}"
    elif info.st_size > MAX_OWNER_BYTES:
        what = "holds something else"
    else:
        previous = os.pread(fd, MAX_OWNER_BYTES, 0)
        if not previous or _OWNER.fullmatch(previous):
            return previous
        what = "holds something else"
    raise HilBridgeError(
        f"cannot create pty link {link}: {path} {what}, not a pty link's lock file; "
        "remove it or give another path"
    )


def prepare_link_folder(link: str | Path) -> Path:
    """Make and check the folder of the pty link ``link`` (:func:`private_dir`); returns the link's path.

    Raises:
        HilBridgeError: the folder (or one on its way) is one another user could change.
    """
    path = link_path(link)
    try:
        private_dir(path.parent)
    except HilError as exc:
        raise HilBridgeError(f"cannot create pty link {path}: {exc}") from None
    return path


def _claim(link: Path, pty_folder: Path) -> int:
    """Take ownership of ``link``: an open descriptor of its lock file, locked.

    ``link`` must be missing or a pty link (into ``pty_folder``); see the module's text.

    Raises:
        HilBridgeError: a live pair (this process or another) holds the link, or
            something that is not a pty link or its lock file is in the way.
        OSError: the lock file cannot be written.
    """
    path = lock_path(link)
    prepare_link_folder(link)
    while True:
        # O_NOFOLLOW: a symlink at the lock's path is not ours to write through.
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            reason = "it is a symlink" if exc.errno == errno.ELOOP else exc.strerror
            raise HilBridgeError(f"cannot create pty link {link}: its lock file {path}: {reason}") from None
        try:
            _lock_soon(fd)
        except BlockingIOError:
            holder = _owner_text(fd)
            os.close(fd)
            pid, _, program = holder.partition(" ")
            if pid == str(os.getpid()):
                program = f"{program}, this process" if program else "this process"
            raise HilBridgeError(
                f"link {link} is held by live process {pid}"
                + (f" ({program})" if program else "")
                + "; pick another link_dir/namespace, or stop that process"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        # The previous owner may have removed the file between our open and our lock:
        # a lock on a removed file protects nothing, so start again on the new one.
        try:
            same = os.path.samestat(os.fstat(fd), path.stat())
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        owner = _check_lock_file(fd, path, link)
    except BaseException:
        os.close(fd)  # someone else's file: left as it was
        raise
    try:
        _check_replaceable(link, pty_folder)
    except BaseException:
        _release(link, fd)
        raise
    previous = owner.decode(errors="replace").strip()
    if previous and os.path.lexists(link):
        _log.info("pty link %s: its owner (%s) is gone, replacing the stale link", link, previous)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()} {_program()}\n".encode(), 0)
    return fd


def _lock_soon(fd: int) -> None:
    """Lock ``fd`` exclusively, trying for :data:`CLAIM_RETRY_S`: a reader's test lock is brief.

    Raises:
        BlockingIOError: a live owner holds it.
    """
    deadline = time.monotonic() + CLAIM_RETRY_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.002)


def _program() -> str:
    """This process's program, as a user would recognise it (``virtual_mcu``, ``sim_runner.py``)."""
    argv0 = sys.argv[0] if sys.argv else ""
    return Path(argv0).name if argv0 not in ("", "-c") else Path(sys.executable).name


def _release(link: Path, fd: int) -> None:
    """Give ``link``'s lock up, removing the lock file while it is still ours."""
    path = lock_path(link)
    with contextlib.suppress(OSError):
        if os.path.samestat(os.fstat(fd), path.stat()):
            path.unlink()
    with contextlib.suppress(OSError):
        os.close(fd)  # drops the lock


def replace_symlink(link: Path, target: str) -> None:
    """Point ``link`` at ``target`` atomically (readers never see it missing).

    ``link``'s folder must exist (:func:`~hil_common.core.runtime_dir.private_dir`).
    """
    temporary = link.with_name(f".{link.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    temporary.symlink_to(target)
    temporary.replace(link)


class PtyPair:
    """A pty whose slave end is reachable at ``link`` (optional; a bare name: in the runtime folder)."""

    def __init__(self, link: str | Path | None = None) -> None:
        self.master_fd, self._slave_fd = os.openpty()
        # Raw mode: no echo, no CR/LF translation, no line buffering: bytes pass as-is.
        tty.setraw(self._slave_fd)
        os.set_blocking(self.master_fd, False)
        self.slave_name = os.ttyname(self._slave_fd)
        self.link = link_path(link) if link is not None else None
        self._lock_fd: int | None = None
        if self.link is not None:
            try:
                self._lock_fd = _claim(self.link, Path(self.slave_name).parent)
                replace_symlink(self.link, self.slave_name)
            except OSError as exc:
                self.close()
                raise HilBridgeError(f"cannot create pty link {self.link}: {exc.strerror}") from exc
            except BaseException:
                self.close()
                raise
        self.closed = False
        #: Bytes read from / written to the user.
        self.bytes_read = 0
        self.bytes_written = 0
        #: Lockstep: what the user has written and reads are owed (:meth:`owe`).
        self.owed: OwedBytes | None = None
        # Since pairing, the last read emptied the pty (it returned less than it asked for).
        self._emptied = False

    @property
    def path(self) -> str:
        """The path a user opens: the stable link if there is one, else the slave device."""
        return str(self.link) if self.link is not None else self.slave_name

    def read(self, size: int = 65536) -> bytes:
        """Whatever the user has written, without blocking (``b""`` if nothing).

        With :attr:`owed` set (lockstep), also whatever else the user has written by
        now that the kernel has not passed on yet (:mod:`~hil_bridge.core.lockstep_io`).
        """
        if self.owed is not None:
            if self._emptied and self.owed.missing(self.bytes_read) <= 0:
                # Paired, every byte the user writes is counted: after a read that emptied
                # the pty, none owed means none there (an MCU's command link, most periods).
                return b""
            self.owed.wait_ready(self.master_fd, self.bytes_read)
        try:
            data = os.read(self.master_fd, size)
        except BlockingIOError:
            data = b""
        except OSError as exc:
            if exc.errno != errno.EIO:
                raise
            data = b""
        self._emptied = len(data) < size
        self.bytes_read += len(data)
        if self.owed is not None:
            rest = self.owed.take_rest(self.master_fd, self.bytes_read)
            self.bytes_read += len(rest)
            data += rest
        return data

    def owe(self, written: Callable[[], int]) -> None:
        """Lockstep: reads take all the user writes from now on; ``written`` counts them all."""
        self.owed = OwedBytes(written, self.bytes_read)
        self._emptied = False  # bytes written before the pairing are not counted: read them

    def user_end(self) -> int:
        """A new descriptor of the user's side (the slave), non-blocking, that is no new open.

        It shares the pty's own slave descriptor, opened before any watch of opens
        (:class:`hil_mcu.core.simavr.OpenWatch`): the user it serves counts as connected
        since power-on, so it resets no MCU. The caller closes it.
        """
        fd = os.dup(self._slave_fd)
        os.set_blocking(fd, False)
        return fd

    def write(self, data: bytes) -> int:
        """Write to the user without blocking; returns how many bytes the tty took."""
        try:
            written = os.write(self.master_fd, data)
        except BlockingIOError:
            return 0
        self.bytes_written += written
        return written

    def close(self) -> None:
        """Hang the port up and remove the link if it still points at this pty."""
        if getattr(self, "closed", False):
            return
        self.closed = True
        if self.link is not None:
            with contextlib.suppress(OSError):
                if str(self.link.readlink()) == self.slave_name:
                    self.link.unlink()
            lock_fd = getattr(self, "_lock_fd", None)
            if lock_fd is not None:
                self._lock_fd = None
                _release(self.link, lock_fd)
        for fd in (self.master_fd, self._slave_fd):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> PtyPair:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def same_path(first: str | Path, second: str | Path) -> bool:
    """Whether two paths name one file: absolute, their folders' symlinks resolved.

    The last part is compared as it is: a pty link is a symlink, and two links to one
    pty are still two links. A bare name is the link in the runtime folder (:func:`link_path`).
    """

    def canonical(path: str | Path) -> Path:
        absolute = link_path(path).absolute()
        return absolute.parent.resolve() / absolute.name

    return canonical(first) == canonical(second)


def check_distinct(*links: str | Path, names: Sequence[str] = ()) -> None:
    """Check that no two of ``links`` are one path (:func:`same_path`).

    Args:
        links: the link paths.
        names: what each link is (a parameter's name), for the error.

    Raises:
        HilBridgeError: naming both links and the path.
    """
    for i, first in enumerate(links):
        for j in range(i + 1, len(links)):
            if same_path(first, links[j]):
                what = f"{names[i]} and {names[j]}" if len(names) == len(links) else "two links"
                raise HilBridgeError(f"{what} are the same path {links[j]}: each needs its own")


def pty_pairs(*links: str | Path, names: Sequence[str] = ()) -> tuple[PtyPair, ...]:
    """One :class:`PtyPair` per link path; if one cannot be made, the ones made are closed.

    Args:
        links: the link paths, all different (:func:`check_distinct`).
        names: what each link is (a parameter's name), for the errors.

    Raises:
        HilBridgeError: two links at one path, or a link cannot be created.
    """
    check_distinct(*links, names=names)
    pairs: list[PtyPair] = []
    try:
        for link in links:
            pairs.append(PtyPair(link))
    except BaseException:
        for pair in pairs:
            pair.close()
        raise
    return tuple(pairs)
