"""Serial transport that never blocks and never gives up.

:class:`SerialLink` opens a real device (``/dev/ttyUSB0``) or a pty path with pyserial
(a bare name, ``mcu_command``, is the link in the user's runtime folder:
:func:`~hil_common.core.runtime_dir.link_path`),
reads with ``timeout=0`` (a poll returns what has arrived, possibly nothing) and
writes with ``write_timeout=0`` straight to the OS, without user-space buffering.
It deliberately does not call ``flush()`` (tcdrain): that waits until the UART has
shifted every byte out, milliseconds at 38400 baud, and the loops that own a link
must not block. Writes go straight to the port's non-blocking descriptor with
``os.write``: pyserial 3.5's own ``write`` with ``write_timeout=0`` retries forever
when the tty buffer is full (the peer stopped reading), which would hang the loop.

When the device disappears (USB unplugged, MCU reset, pty closed) the read or write
fails; the link closes the port, says so in :attr:`state` and :attr:`detail`, and
reopens it with exponential backoff on later polls. A pty link whose owner was killed
is not reopened until a new owner has made it again
(:func:`~hil_bridge.core.pty_link.stale_link`): its old pty number may be another
program's pty by then. :attr:`generation` counts
successful opens, so a user can reset its decoder after a reconnect.

Every method holds the link's lock for the few microseconds it needs, so one thread
may read (e.g. :class:`~hil_bridge.core.serial_reader.SerialReader`) while another
writes.
"""

from __future__ import annotations

import os
import select
import threading
import time
from collections import Counter
from collections.abc import Callable
from enum import Enum

import serial

from hil_bridge.core.lockstep_io import OwedBytes
from hil_bridge.core.pty_link import stale_link
from hil_bridge.errors import HilBridgeError
from hil_common.core.runtime_dir import link_path

#: Baud rates the links use (DESIGN.md: 38400 default on the command link, 115200
#: allowed; the signal link needs 115200 for 200 Hz frames).
STANDARD_BAUDS = (9600, 19200, 38400, 57600, 115200, 230400, 250000, 500000, 1000000)


def _hung_up(fd: int) -> bool:
    """After an empty read: was the port hung up, or was there simply nothing yet?

    With VMIN 0 a tty read returns nothing both when no byte has come and when the
    device is gone. pyserial tells the two apart by whether the descriptor is readable,
    which races with a byte arriving between the read and the check (a writer on
    another core, or the tty's deferred work finishing): a live port would be taken
    for unplugged and reopened, and reopening flushes what it had received. Only a
    hung-up tty reports POLLHUP/POLLERR.
    """
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return any(events & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _, events in poller.poll(0))


class LinkState(str, Enum):
    """Connection state of a :class:`SerialLink`."""

    OPEN = "open"
    RECONNECTING = "reconnecting"
    CLOSED = "closed"


class SerialLink:
    """A serial port polled without blocking, reopened with backoff when it fails."""

    def __init__(
        self,
        port: str,
        *,
        baud: int = 115200,
        backoff_min: float = 0.05,
        backoff_max: float = 2.0,
        read_size: int = 4096,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not port:
            raise HilBridgeError("serial port: empty path")
        if baud not in STANDARD_BAUDS:
            raise HilBridgeError(f"serial port {port}: baud {baud} is not one of {STANDARD_BAUDS}")
        if not 0 < backoff_min <= backoff_max:
            raise HilBridgeError(f"serial port {port}: need 0 < backoff_min <= backoff_max")
        if read_size < 1:
            raise HilBridgeError(f"serial port {port}: read_size must be at least 1, got {read_size}")
        self.port = str(link_path(port, check=True))
        self.baud = baud
        self.backoff_min = backoff_min
        self.backoff_max = backoff_max
        self.read_size = read_size
        self._clock = clock
        self._serial: serial.Serial | None = None
        self._lock = threading.RLock()
        self._backoff = backoff_min
        self._next_attempt = clock()
        self.state = LinkState.RECONNECTING
        self.detail = "not opened yet"
        self.generation = 0
        self.bytes_in = 0
        self.bytes_out = 0
        #: Bytes the OS would not take without blocking (peer not reading).
        self.write_drops = 0
        #: Lockstep: what the peer has written and polls are owed (:meth:`owe`); a poll
        #: then waits, bounded, for the ones the kernel has not passed on yet.
        self.owed: OwedBytes | None = None
        self.errors: Counter[str] = Counter()

    def use_clock(self, clock: Callable[[], float]) -> None:
        """Time the reconnect backoff on ``clock`` from now on (simulated time in lockstep).

        A reopen already waiting is then due at once: its deadline was on the old clock.
        """
        with self._lock:
            self._clock = clock
            self._next_attempt = clock()

    @property
    def is_open(self) -> bool:
        """True while the port is open."""
        return self._serial is not None

    def fileno(self) -> int | None:
        """The open port's descriptor (for select), or None."""
        with self._lock:
            return self._serial.fileno() if self._serial is not None else None

    def _try_open(self) -> None:
        now = self._clock()
        if now < self._next_attempt:
            return
        stale = stale_link(self.port)
        if stale:
            self._schedule_retry(f"{self.port}: not opened: {stale}")
            return
        try:
            port = serial.Serial()
            port.port = self.port
            port.baudrate = self.baud
            port.timeout = 0
            port.write_timeout = 0
            port.exclusive = True
            port.open()
        except (serial.SerialException, OSError, ValueError) as exc:
            self.errors["open"] += 1
            self._schedule_retry(f"{self.port}: cannot open: {exc}")
            return
        self._serial = port
        self._backoff = self.backoff_min
        self.generation += 1
        if self.owed is not None:
            self.owed.rebase(self.bytes_in)  # opening flushed what the peer had written before
        self.state = LinkState.OPEN
        self.detail = f"{self.port}: open at {self.baud} baud"

    def _schedule_retry(self, why: str) -> None:
        delay = self._backoff
        self._backoff = min(self._backoff * 2, self.backoff_max)
        self._next_attempt = self._clock() + delay
        self.state = LinkState.RECONNECTING
        self.detail = f"{why}; retrying in {delay:.2f} s"

    def _close_port(self) -> None:
        if self._serial is not None:
            try:
                self._serial.close()
            except (serial.SerialException, OSError):
                self.errors["close"] += 1
            self._serial = None

    def _fail(self, kind: str, exc: Exception) -> None:
        self.errors[kind] += 1
        self._close_port()
        self._backoff = self.backoff_min
        self._schedule_retry(f"{self.port}: {kind} failed: {exc}")

    def poll(self) -> bytes:
        """Everything received since the last poll (``b""`` if nothing or not open)."""
        with self._lock:
            if self._serial is None:
                if self.state is LinkState.CLOSED:
                    return b""
                self._try_open()
                if self._serial is None:
                    return b""
            # The descriptor is non-blocking (pyserial opens it so): read first, and select
            # only when nothing came. pyserial's read(timeout=0) selects before every read,
            # which was most of a poll's cost in a lockstep run.
            fd = self._serial.fileno()
            if self.owed is not None:
                self.owed.wait_ready(fd, self.bytes_in)
            try:
                data = os.read(fd, self.read_size)
                if not data and _hung_up(fd):
                    raise OSError("the device hung up (unplugged, or its pty was closed)")
            except BlockingIOError:
                data = b""
            except OSError as exc:
                self._fail("read", exc)
                return b""
            self.bytes_in += len(data)
            if self.owed is not None:
                rest = self.owed.take_rest(fd, self.bytes_in)
                self.bytes_in += len(rest)
                data += rest
            return data

    def owe(self, written: Callable[[], int]) -> None:
        """Lockstep: polls take all the peer writes from now on; ``written`` counts them all."""
        with self._lock:
            self.owed = OwedBytes(written, self.bytes_in)

    def write(self, data: bytes) -> bool:
        """Write ``data`` now; False if the port is down or the OS took only part of it."""
        with self._lock:
            if self._serial is None:
                return False
            try:
                written = os.write(self._serial.fileno(), data)
            except BlockingIOError:
                written = 0
            except OSError as exc:
                self._fail("write", exc)
                return False
            self.bytes_out += written
            if written < len(data):
                # The tty buffer is full: the peer is not reading. The rest is lost, as on
                # a UART whose receiver is gone; the port itself is fine.
                self.write_drops += len(data) - written
                self.errors["write_full"] += 1
                return False
            return True

    def close(self) -> None:
        """Close the port for good (no reconnects)."""
        with self._lock:
            self._close_port()
            self.state = LinkState.CLOSED
            self.detail = "closed"
