"""Reading a pty in lockstep: everything the peer wrote, not what the kernel passed on yet.

A pty hands bytes from its writer to its reader in deferred kernel work. A reader that
finds nothing at all waits for that work, but one that still has older unread bytes
gets only those: under load, a line written in this period can reach the reader a
frame late, and a lockstep run stops repeating. In a lockstep run both ends of every
pty are in one process and count their bytes, so a reader that knows how many bytes
it is owed reads until it has them (:class:`OwedBytes`, :func:`read_rest`). A pty
whose reader is another process (a firmware's harness) cannot be read for it: before
that process's step the writer waits until the kernel has passed every byte on to the
reader's side (:class:`Handover`, :func:`passed_on`), so the step finds them all.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import sys
import termios
import time
from collections.abc import Callable

#: How long a lockstep read waits for owed bytes before it gives up on them (counted).
OWED_TIMEOUT_S = 0.5
#: How long a lockstep read spins for owed bytes before it sleeps for them instead
#: (the kernel passes bytes on in tens of microseconds when a core is free).
SPIN_S = 200e-6


def read_rest(fd: int, missing: int, *, timeout: float = OWED_TIMEOUT_S) -> bytes:
    """Up to ``missing`` more bytes from non-blocking ``fd``, waiting at most ``timeout``.

    Returns what came: ``missing`` bytes, or fewer if the time ran out or the port
    went away (the caller counts the shortfall).
    """
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while missing > 0:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            break
        try:
            chunk = os.read(fd, max(missing, 4096))
        except BlockingIOError:
            continue
        except OSError as exc:
            if exc.errno == errno.EIO:
                break  # hung up: the shortfall is counted by the caller
            raise
        if not chunk:
            break
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)


class OwedBytes:
    """What a lockstep reader is owed: every byte its peer writes from the pairing on.

    ``written`` counts everything the peer has ever written; what it wrote before the
    pairing (or before :meth:`rebase`, when a reopened port flushed it) is not owed.
    """

    def __init__(self, written: Callable[[], int], have: int) -> None:
        self.written = written
        #: Reads that waited for the kernel, and that gave up waiting.
        self.late_reads = 0
        self.short_reads = 0
        self._offset = 0
        self.rebase(have)

    def rebase(self, have: int) -> None:
        """Owe only what the peer writes from now on (``have``: bytes read so far)."""
        self._offset = self.written() - have

    def missing(self, have: int) -> int:
        """Owed bytes not read yet (``have`` read so far); 0 or less when none."""
        return self.written() - have - self._offset

    def wait_ready(self, fd: int, have: int) -> None:
        """Before a read: spin, at most SPIN_S, until the kernel has passed on the owed bytes.

        A read that finds nothing sleeps until the kernel's deferred work has run, and
        that sleep and the wake-up after it cost more than the work itself: spinning
        on the byte count (FIONREAD does not wait for that work) let the bridge's read
        of the MCU's fresh frame take a fifth of the time in a lockstep period. Bytes
        not there by then are left to :meth:`take_rest`.
        """
        passed_on(fd, self.missing(have), timeout=SPIN_S, yielding=False)

    def take_rest(self, fd: int, have: int) -> bytes:
        """The owed bytes not read yet (``have`` read so far), waited for at most OWED_TIMEOUT_S."""
        missing = self.missing(have)
        if missing <= 0:
            return b""
        self.late_reads += 1
        rest = read_rest(fd, missing)
        if len(rest) < missing:
            self.short_reads += 1
            self.give_up(missing - len(rest))
        return rest

    def give_up(self, count: int) -> None:
        """``count`` owed bytes are lost for good: never wait for them again."""
        self._offset += count


def passed_on(fd: int, count: int, *, timeout: float = OWED_TIMEOUT_S, yielding: bool = True) -> int:
    """Spin until ``fd`` (a pty's reading side) has ``count`` bytes to read, at most ``timeout``.

    ``yielding``: give the core away between looks; a wait of microseconds does not, as
    each give-away costs more than that. Returns how many bytes ``fd`` has then
    (``count`` if it is gone: nobody waits for it, and the read that follows finds out).
    """
    if count <= 0:
        return count
    ready = bytearray(4)
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.ioctl(fd, termios.FIONREAD, ready)
        except OSError:
            return count
        have = int.from_bytes(ready, sys.byteorder, signed=True)
        if have >= count or time.monotonic() >= deadline:
            return have
        if yielding:
            time.sleep(0)


class Handover:
    """Lockstep: what is written to a pty whose reader is another process, handed over in full.

    ``written`` counts every byte the writer has put in, ``taken`` every byte the reader
    has taken out (as it last reported), ``fd`` is the reader's side (a descriptor of
    the same open pty). What the reader is owed is an :class:`OwedBytes` whose bytes
    read so far are ``taken``; bytes written before the pairing are not waited for.
    """

    def __init__(self, written: Callable[[], int], taken: Callable[[], int], fd: int) -> None:
        self.taken = taken
        self.fd = fd
        self.owed = OwedBytes(written, taken())
        #: Waits that gave up: those bytes are lost for good and never waited for again.
        self.short_waits = 0

    def wait(self) -> None:
        """Before the reader's step: wait, bounded, until every byte written is there to read."""
        missing = self.owed.missing(self.taken())
        if missing <= 0:
            return
        have = passed_on(self.fd, missing)
        if have < missing:
            self.short_waits += 1
            self.owed.give_up(missing - max(have, 0))
