"""Pseudo-terminals with a stable path: the serial ports of a simulated link.

A :class:`PtyPair` is a real tty. The simulated device (virtual MCU, fault proxy,
test peer) holds the master end; whoever would open a USB serial port opens the
slave end through a symlink with a stable name, e.g. ``/tmp/hil/mcu_command``, with
pyserial, exactly as it would open ``/dev/ttyUSB0``.

The pair keeps its own slave descriptor open, so the master never sees EIO while
the user closes and reopens the port, and data written before anyone opened the
port waits in the tty (pyserial flushes it when it opens the port, as a real
serial port would lose it). Closing the pair hangs the port up: the user's reads
fail, and a new pair at the same path is what a reconnect finds.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tty
from pathlib import Path
from types import TracebackType

from hil_bridge.errors import HilBridgeError


def replace_symlink(link: Path, target: str) -> None:
    """Point ``link`` at ``target`` atomically (readers never see it missing)."""
    link.parent.mkdir(parents=True, exist_ok=True)
    temporary = link.with_name(f".{link.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    temporary.symlink_to(target)
    temporary.replace(link)


class PtyPair:
    """A pty whose slave end is reachable at ``link`` (optional)."""

    def __init__(self, link: str | Path | None = None) -> None:
        self.master_fd, self._slave_fd = os.openpty()
        # Raw mode: no echo, no CR/LF translation, no line buffering: bytes pass as-is.
        tty.setraw(self._slave_fd)
        os.set_blocking(self.master_fd, False)
        self.slave_name = os.ttyname(self._slave_fd)
        self.link = Path(link) if link is not None else None
        if self.link is not None:
            try:
                replace_symlink(self.link, self.slave_name)
            except OSError as exc:
                self.close()
                raise HilBridgeError(f"cannot create pty link {self.link}: {exc.strerror}") from exc
        self.closed = False

    @property
    def path(self) -> str:
        """The path a user opens: the stable link if there is one, else the slave device."""
        return str(self.link) if self.link is not None else self.slave_name

    def read(self, size: int = 65536) -> bytes:
        """Whatever the user has written, without blocking (``b""`` if nothing)."""
        try:
            return os.read(self.master_fd, size)
        except BlockingIOError:
            return b""
        except OSError as exc:
            if exc.errno == errno.EIO:
                return b""
            raise

    def write(self, data: bytes) -> int:
        """Write to the user without blocking; returns how many bytes the tty took."""
        try:
            return os.write(self.master_fd, data)
        except BlockingIOError:
            return 0

    def close(self) -> None:
        """Hang the port up and remove the link if it still points at this pty."""
        if getattr(self, "closed", False):
            return
        self.closed = True
        if self.link is not None:
            with contextlib.suppress(OSError):
                if str(self.link.readlink()) == self.slave_name:
                    self.link.unlink()
        for fd in (self.master_fd, self._slave_fd):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> PtyPair:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def pty_pairs(*links: str | Path) -> tuple[PtyPair, ...]:
    """One :class:`PtyPair` per link path; if one cannot be made, the ones made are closed.

    Raises:
        HilBridgeError: a link cannot be created.
    """
    pairs: list[PtyPair] = []
    try:
        for link in links:
            pairs.append(PtyPair(link))
    except BaseException:
        for pair in pairs:
            pair.close()
        raise
    return tuple(pairs)
