"""Non-blocking UDP transport for datagram links (the motion platform's, for one).

A :class:`UdpLink` owns one IPv4 UDP socket bound to a local address. Sending and
polling never block and never raise: a datagram that cannot be sent or received is
counted (``send_errors``, ``receive_errors``) and dropped, as UDP would drop it
anyway, so a control loop can call them every frame. Only binding, in the
constructor, raises.
"""

from __future__ import annotations

import select
import socket
from types import TracebackType

from hil_platform.errors import HilPlatformError

#: An IPv4 socket address: (host, port).
Address = tuple[str, int]

#: Largest UDP payload over IPv4; a receive buffer this big never truncates.
MAX_DATAGRAM = 65507


class UdpLink:
    """A non-blocking UDP socket bound to a local address.

    Args:
        local: Address to bind; port 0 lets the system pick a free port
            (see :attr:`local_address`).
        remote: Default destination of :meth:`send`, if any.
        max_batch: Most datagrams one :meth:`poll` returns, so a flood cannot
            starve the caller; the rest wait for the next poll.

    Raises:
        HilPlatformError: If the socket cannot be bound; the message names the address.
    """

    def __init__(
        self, local: Address = ("127.0.0.1", 0), *, remote: Address | None = None, max_batch: int = 1024
    ) -> None:
        if max_batch < 1:
            raise HilPlatformError(f"UdpLink: max_batch must be >= 1, got {max_batch}")
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self._sock.bind(local)
            self._sock.setblocking(False)
            bound = self._sock.getsockname()
        except (OSError, OverflowError, TypeError) as exc:
            self._sock.close()
            raise HilPlatformError(f"UdpLink: cannot bind UDP {local[0]}:{local[1]}: {exc}") from exc
        self._local: Address = (str(bound[0]), int(bound[1]))
        self.remote = remote
        self._max_batch = max_batch
        self._closed = False
        self.sent = 0
        self.received = 0
        self.send_errors = 0
        self.receive_errors = 0

    @property
    def local_address(self) -> Address:
        """The bound (host, port), with the port the system picked for port 0."""
        return self._local

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def fileno(self) -> int:
        """The socket's file descriptor, for ``select``/``selectors`` (-1 once closed)."""
        return self._sock.fileno()

    def send(self, data: bytes, addr: Address | None = None) -> bool:
        """Send one datagram to ``addr``, or to :attr:`remote` when ``addr`` is None.

        Returns:
            Whether the datagram was handed to the system; a failure (no
            destination, full buffer, unreachable address, closed link) is counted
            in ``send_errors``.
        """
        dest = addr if addr is not None else self.remote
        if dest is None:
            self.send_errors += 1
            return False
        try:
            self._sock.sendto(data, dest)
        except (OSError, OverflowError, TypeError):
            self.send_errors += 1
            return False
        self.sent += 1
        return True

    def poll(self) -> list[tuple[bytes, Address]]:
        """Every datagram waiting (up to ``max_batch``), with its sender; never blocks."""
        out: list[tuple[bytes, Address]] = []
        if self._closed:
            return out
        for _ in range(self._max_batch):
            try:
                data, sender = self._sock.recvfrom(MAX_DATAGRAM)
            except BlockingIOError:
                break
            except OSError:
                # E.g. an ICMP error queued by an earlier send: count it, keep reading.
                self.receive_errors += 1
                continue
            out.append((data, (str(sender[0]), int(sender[1]))))
        self.received += len(out)
        return out

    def wait(self, timeout: float) -> bool:
        """Block until a datagram is waiting or ``timeout`` seconds pass.

        For callers with nothing else to do (emulators, tests); a control loop
        calls :meth:`poll` instead.

        Returns:
            Whether a datagram is waiting.
        """
        if self._closed:
            return False
        try:
            readable, _, _ = select.select([self._sock], [], [], max(timeout, 0.0))
        except (OSError, ValueError):
            self.receive_errors += 1
            return False
        return bool(readable)

    def close(self) -> None:
        """Close the socket; later sends are counted as errors, polls return nothing."""
        self._closed = True
        self._sock.close()

    def __enter__(self) -> UdpLink:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
