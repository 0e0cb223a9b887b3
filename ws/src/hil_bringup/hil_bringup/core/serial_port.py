"""A firmware's command UART as a program sees it in a lockstep run (brain none).

With brain ``none`` no control loop talks to the firmware: its command UART is the
user's program's. In real time that program opens the pty at the printed path; in a
lockstep run the runner offers a :class:`SerialPort` instead (``GraphRunner.serial``),
for a scenario's serial steps and the pytest plugin: :meth:`SerialPort.write` queues
bytes, :meth:`SerialPort.read` returns what the firmware sent, both taken at the
lockstep period. The runner calls :meth:`SerialPort.deliver` before the MCU's step
(the queued bytes reach the MCU in that step) and :meth:`SerialPort.collect` after it
(what the MCU wrote in the step, all of it: the MCU's side counts the bytes it writes
and reads, :mod:`hil_bridge.core.lockstep_io`), so a run repeats exactly.

The port is the pty's own user side (:meth:`hil_bridge.core.pty_link.PtyPair.user_end`),
connected since power-on: it is no open, so it resets no MCU (``auto_reset`` is about a
program that opens the port later; :meth:`hil_mcu.simavr_mcu_node.SimavrMcuNode.reset_mcu`
resets it on purpose). This module never imports rclpy.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable

from hil_bridge.core.lockstep_io import OwedBytes, passed_on
from hil_bringup.errors import HilBringupError


class SerialPort:
    """The user's end of a HIL robot's command UART in lockstep (module docstring).

    Args:
        fd: the pty's user side (non-blocking; the port closes it).
        path: the pty's path (what a program would open).
        baud: the firmware's baud rate on it (the profile's command UART).
        mcu_written: how many bytes the MCU has written to the pty in all.
        mcu_read: how many bytes the MCU has taken from the pty in all; None: the MCU
            waits for the bytes itself (the virtual MCU, paired by :meth:`sent`).
        mcu_fd: the MCU's side of the pty, to see the bytes arrive (with ``mcu_read``).
    """

    def __init__(
        self,
        fd: int,
        *,
        path: str,
        baud: int,
        mcu_written: Callable[[], int],
        mcu_read: Callable[[], int] | None = None,
        mcu_fd: int | None = None,
    ) -> None:
        self.fd = fd
        self.path = path
        self.baud = baud
        self._mcu_read = mcu_read
        self._mcu_fd = mcu_fd
        self._queued = bytearray()
        self._received = bytearray()
        #: Bytes written to and read from the pty so far.
        self.sent = 0
        self.received = 0
        self._owed = OwedBytes(mcu_written, 0)
        self.closed = False

    def write(self, data: bytes) -> None:
        """Queue ``data`` for the firmware: it reaches the MCU in the next lockstep period."""
        self._queued += data

    def read(self) -> bytes:
        """Everything the firmware sent up to the last period, taken (the next read starts after it)."""
        data = bytes(self._received)
        self._received.clear()
        return data

    # --- the runner's side ---------------------------------------------------------------

    def deliver(self) -> None:
        """Before the MCU's step: write the queued bytes and wait until the MCU's side has them.

        Raises:
            HilBringupError: the pty is gone (the MCU hung up).
        """
        while self._queued:
            try:
                written = os.write(self.fd, self._queued)
            except BlockingIOError:
                break  # the tty is full: the rest goes in the next period, as a real port's would
            except OSError as exc:
                raise HilBringupError(f"serial port {self.path}: cannot write: {exc.strerror}") from None
            del self._queued[:written]
            self.sent += written
        if self._mcu_read is not None and self._mcu_fd is not None:
            passed_on(self._mcu_fd, self.sent - self._mcu_read())

    def collect(self) -> None:
        """After the MCU's step: read everything it wrote (waited for, bounded)."""
        self._owed.wait_ready(self.fd, self.received)
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            data = b""
        except OSError as exc:
            if exc.errno != errno.EIO:
                raise
            data = b""  # hung up (the MCU stopped): nothing more comes
        self.received += len(data)
        rest = self._owed.take_rest(self.fd, self.received)
        self.received += len(rest)
        self._received += data + rest

    def close(self) -> None:
        """Close the descriptor (again: nothing)."""
        if not self.closed:
            self.closed = True
            with contextlib.suppress(OSError):
                os.close(self.fd)
