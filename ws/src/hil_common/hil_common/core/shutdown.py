"""SIGINT and SIGTERM as a request to stop, noted and nothing more.

Every HIL executable stops the same way on either signal (DESIGN.md, "Timing and
failure rules"): the handler only notes the request (plain attribute assignments and
one ``os.write`` to a pipe, safe however often and wherever the signal lands), the
main thread sees it at its next look and stops in its own time. Nothing is raised
in the middle of a stop, and a second signal, however close behind, changes nothing.

Why not rclpy's handlers or ``KeyboardInterrupt``: rclpy's shut the context down under
the running node (its thread saw the shutdown, the executor did not, and the process
ran on until a second SIGTERM), and an exception raised wherever the main thread
happens to be left ``stop()`` half done; a ``threading.Event.set`` in a handler
deadlocks when a second signal interrupts the first inside it (its lock is not
re-entrant).

* :func:`shutdown_signals`: the process's :class:`ShutdownSignals`, installed on first
  use (from the main thread).
* :func:`console_main`: a console script's entry that installs them before importing
  the node's module, so a signal during the imports (rclpy alone takes a quarter of a
  second) is a clean stop too.
* :func:`ignore_further_stop_signals`: after ``main()``, so a signal during the
  interpreter's teardown is not a death by signal.
* :func:`deferred_signals`: a block that a signal cannot interrupt, where someone
  else's handlers are in place (the signal is delivered again after it).
* :func:`leave_to_wakeup_fd`: in someone else's event loop that reads its signals
  from the wakeup fd (``ros2 launch``), a signal raises nothing in the middle of it.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import select
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

#: The signals that ask a HIL process to stop.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_Handler = Callable[[int, FrameType | None], object] | int | None


class ShutdownSignals:
    """SIGINT/SIGTERM noted in :attr:`requested` and on a pipe that turns readable."""

    def __init__(self) -> None:
        #: True once a stop signal arrived.
        self.requested = False
        #: The first signal that arrived (None before).
        self.signum: int | None = None
        #: Signals seen (a second one is counted, nothing else).
        self.count = 0
        self._read_fd, self._write_fd = os.pipe()
        for fd in (self._read_fd, self._write_fd):
            os.set_blocking(fd, False)
        self.installed = False

    def note(self, signum: int, frame: FrameType | None = None) -> None:
        """The handler: note the request and make :meth:`fileno` readable, nothing else."""
        del frame
        if self.signum is None:
            self.signum = signum
        self.requested = True
        self.count += 1
        with contextlib.suppress(OSError):  # a full pipe is readable already
            os.write(self._write_fd, b"\x00")

    def fileno(self) -> int:
        """A descriptor that is readable once a stop was requested (for select loops)."""
        return self._read_fd

    def wait(self, timeout: float | None = None) -> bool:
        """Sleep until a stop is requested or ``timeout`` s passed; True if requested."""
        if not self.requested:
            with contextlib.suppress(InterruptedError):
                select.select([self._read_fd], [], [], timeout)
        return self.requested

    def close(self) -> None:
        """Close the pipe (for an instance that is no longer installed)."""
        for fd in (self._read_fd, self._write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)

    def install(self) -> ShutdownSignals:
        """Handle SIGINT and SIGTERM with :meth:`note` from now on (main thread only)."""
        for signum in STOP_SIGNALS:
            signal.signal(signum, self.note)
        self.installed = True
        return self


_process_signals: ShutdownSignals | None = None


def shutdown_signals() -> ShutdownSignals:
    """The process's stop signals, installed on the first call.

    Call it first from the main thread (``signal.signal`` works only there); later
    calls from any thread return the same object.
    """
    global _process_signals  # noqa: PLW0603 - signal handlers are per process
    if _process_signals is None:
        _process_signals = ShutdownSignals()
    if not _process_signals.installed and threading.current_thread() is threading.main_thread():
        _process_signals.install()
    return _process_signals


def ignore_further_stop_signals() -> None:
    """On the way out, once ``main()`` has returned: SIGINT/SIGTERM change nothing more.

    The stop is done, so a later request has nothing left to stop. Left to itself,
    Python's finalisation puts SIG_DFL back for every handler it installed except
    "ignore", so the second of two signals sent back to back, landing while the
    interpreter tore down, killed a process that had stopped cleanly (exit -2 after
    "stopped", seen under load when the sender was preempted between its two kills).
    Main thread only; elsewhere it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


def console_main(module: str) -> Callable[[], int]:
    """A console script's entry point: stop signals first, then ``module``'s ``main()``."""

    def main() -> int:
        shutdown_signals()
        try:
            status: int = importlib.import_module(module).main()
        finally:
            ignore_further_stop_signals()
        return status

    main.__doc__ = f"Run {module}.main() with SIGINT/SIGTERM handled from the first moment."
    return main


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Run a block that SIGINT/SIGTERM cannot interrupt.

    With :func:`shutdown_signals` installed this changes nothing (they never interrupt).
    Where other handlers are in place (a library caller's, Python's KeyboardInterrupt),
    a signal during the block is noted and delivered again once the block is done.
    Outside the main thread it changes nothing either: handlers run only there; nor
    for a signal whose handler Python does not know (``getsignal`` None), which could
    not be put back. A handler set in C behind Python's back (rclpy's, with the default
    context) is not seen: Python's own is back in its place after the block.
    """
    if threading.current_thread() is not threading.main_thread() or (
        _process_signals is not None and _process_signals.installed
    ):
        yield
        return
    held = ShutdownSignals()
    previous: dict[int, _Handler] = {}
    try:
        for signum in STOP_SIGNALS:
            if signal.getsignal(signum) is not None:
                previous[signum] = signal.signal(signum, held.note)
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        held.close()
        if held.signum is not None:
            signal.raise_signal(held.signum)


def _left_to_wakeup_fd(signum: int, frame: FrameType | None) -> None:
    """The handler of :func:`leave_to_wakeup_fd`: nothing (the wakeup fd has the signal)."""


def leave_to_wakeup_fd(signum: int = signal.SIGINT) -> None:
    """``signum`` raises nothing in this process: only the wakeup fd (``signal.set_wakeup_fd``) sees it.

    ``ros2 launch`` takes SIGINT from the wakeup fd and shuts down in its own time, while
    Python's default handler also raises KeyboardInterrupt wherever the main thread is.
    launch catches that around its event loop, but one raised inside a task ends the
    task half way: a TimerAction (a process's SIGTERM escalation) then never completes,
    and launch waited for it forever after every process had stopped, with a
    "KeyboardInterrupt" traceback from the timer. A handler that does nothing keeps
    the wakeup fd written (Python writes it for every signal it handles; SIG_IGN would
    hide the signal from launch too). Main thread only; elsewhere it does nothing.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signum, _left_to_wakeup_fd)
