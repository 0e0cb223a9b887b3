"""Reading a pty in lockstep: everything the peer wrote, not what the kernel passed on yet.

A pty hands bytes from its writer to its reader in deferred kernel work. A reader that
finds nothing at all waits for that work, but one that still has older unread bytes
gets only those: under load, a line written in this period can reach the reader a
frame late, and a lockstep run stops repeating. In a lockstep run both ends of every
pty are in one process and count their bytes, so a reader that knows how many bytes
it is owed reads until it has them (:func:`read_rest`).
"""

from __future__ import annotations

import errno
import os
import select
import time

#: How long a lockstep read waits for owed bytes before it gives up on them (counted).
OWED_TIMEOUT_S = 0.5


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
