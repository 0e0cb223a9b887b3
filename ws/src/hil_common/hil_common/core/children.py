"""Child processes that die with their parent, however the parent dies.

A parent that is stopped by a signal it handles stops its children itself; one killed
by SIGKILL (or by a crash) cannot, and its children run on, reparented to init: a
robot side's MCU, bridge and loop kept driving and held the pty links, so a new
side could not start. On Linux the kernel can tell a child its parent died:
``prctl(PR_SET_PDEATHSIG, SIGTERM)`` in the child, which survives ``exec``, and the
child stops on SIGTERM as on any stop request.

:func:`die_with_parent` gives the ``preexec_fn`` that does it (between ``fork`` and
``exec``, so it works for any program, the C harness too): the signal is asked for,
then the child looks at its parent's pid, because a parent that died before the
request took effect sends nothing (the child then ends at once).

Two rules of the kernel's, for callers:

* "parent" is the *thread* that started the child: start children from a thread that
  lives as long as they should (the main thread); a child started from a worker
  thread gets its signal when that thread ends.
* elsewhere than Linux there is no such signal: :func:`die_with_parent` returns None
  (no ``preexec_fn``), and only an orderly stop stops the children.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
from collections.abc import Callable

#: prctl option number (linux/prctl.h).
PR_SET_PDEATHSIG = 1
#: Exit status of a child whose parent was already gone when it started.
ORPHAN_EXIT_STATUS = 128 + signal.SIGTERM


def _prctl() -> Callable[..., int] | None:
    """The C library's prctl, looked up in the parent (the child must not load anything)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        function: Callable[..., int] = libc.prctl
    except (OSError, AttributeError):
        return None
    return function


def die_with_parent(signum: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` for :class:`subprocess.Popen`: the child gets ``signum`` when we die.

    Call it in the process (and thread, see the module's text) that starts the child.

    Returns:
        The function, or None where the kernel has no parent-death signal.
    """
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def request() -> None:
        prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
        if os.getppid() != parent:  # died before the request took effect: no signal will come
            os._exit(ORPHAN_EXIT_STATUS)

    return request
