"""Lockstep reads take everything the peer wrote (hil_bridge.core.lockstep_io).

The kernel passes pty bytes on in deferred work; these tests stand in for a late
kernel with a writer thread that writes the owed bytes a little later.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from hil_bridge.core.lockstep_io import OWED_TIMEOUT_S, Handover, passed_on, read_rest
from hil_bridge.core.pty_link import PtyPair
from hil_bridge.core.serial_link import SerialLink


@pytest.fixture
def pair(tmp_path: object) -> Iterator[tuple[PtyPair, SerialLink]]:
    pty = PtyPair()
    link = SerialLink(pty.path, baud=115200)
    deadline = time.monotonic() + 5.0
    while not link.is_open and time.monotonic() < deadline:
        link.poll()
        time.sleep(0.01)
    assert link.is_open
    yield pty, link
    link.close()
    pty.close()


def later(delay: float, action: object) -> threading.Thread:
    thread = threading.Thread(target=lambda: (time.sleep(delay), action()))  # type: ignore[operator]
    thread.start()
    return thread


def test_a_lockstep_poll_waits_for_owed_bytes_the_kernel_has_not_passed_on(
    pair: tuple[PtyPair, SerialLink],
) -> None:
    pty, link = pair
    claimed = [0]  # the peer counts 6 bytes written; the kernel passes on the last 3 late
    link.owe(lambda: claimed[0])
    pty.write(b"abc")
    claimed[0] = 6
    writer = later(0.05, lambda: pty.write(b"def"))
    data = b""
    deadline = time.monotonic() + 2.0
    while len(data) < 3 and time.monotonic() < deadline:  # the first bytes, as a plain poll gets them
        data += link.poll()
    data += link.poll()
    writer.join()
    assert data == b"abcdef"
    assert link.owed is not None
    assert link.owed.short_reads == 0


def test_a_lockstep_pty_read_waits_for_what_the_user_wrote(pair: tuple[PtyPair, SerialLink]) -> None:
    pty, link = pair
    pty.owe(lambda: link.bytes_out)
    link.write(b"DRV1,2\n")
    writer = later(0.05, lambda: link.write(b"HBB,1.5\n"))
    time.sleep(0.02)
    first = pty.read()
    writer.join()
    rest = pty.read()
    assert first + rest == b"DRV1,2\nHBB,1.5\n"


def test_owed_bytes_that_never_come_are_given_up_once_and_counted(pair: tuple[PtyPair, SerialLink]) -> None:
    pty, link = pair
    claimed = [0]  # what the peer says it wrote: 8 bytes, of which only 4 ever come
    link.owe(lambda: claimed[0])
    pty.write(b"abcd")
    claimed[0] = 8
    start = time.monotonic()
    data = b""
    while len(data) < 4 and time.monotonic() - start < 3.0:
        data += link.poll()
    assert data == b"abcd"
    assert link.owed is not None
    assert link.owed.short_reads == 1
    assert time.monotonic() - start < 3.0  # bounded (0.5 s), not forever
    again = time.monotonic()
    assert link.poll() == b""
    assert time.monotonic() - again < 0.2  # the lost bytes are not waited for again


def test_read_rest_returns_what_came_when_time_runs_out(pair: tuple[PtyPair, SerialLink]) -> None:
    pty, link = pair
    link.write(b"xy")
    assert read_rest(pty.master_fd, 5, timeout=0.1) == b"xy"


def test_wait_ready_returns_once_the_owed_bytes_are_readable(pair: tuple[PtyPair, SerialLink]) -> None:
    pty, link = pair
    claimed = [0]
    link.owe(lambda: claimed[0])
    pty.write(b"frame")
    claimed[0] = 5
    assert link.owed is not None
    start = time.monotonic()
    while link.owed.late_reads == 0 and time.monotonic() - start < 2.0:
        link.owed.wait_ready(link._serial.fileno(), link.bytes_in)  # type: ignore[union-attr]
        if link.poll() == b"frame":
            break
    # The spin saw the bytes arrive, so the read had them all and never fell back to waiting.
    assert link.bytes_in == 5
    assert link.owed.late_reads == 0


def test_wait_ready_gives_up_after_its_spin_when_the_bytes_never_come(
    pair: tuple[PtyPair, SerialLink],
) -> None:
    _, link = pair
    link.owe(lambda: 7)  # 7 bytes claimed, none ever written
    assert link.owed is not None
    start = time.monotonic()
    link.owed.wait_ready(link._serial.fileno(), link.bytes_in)  # type: ignore[union-attr]
    assert time.monotonic() - start < 0.5  # SPIN_S is 0.2 ms; a generous bound


def test_a_handover_waits_until_the_other_process_side_has_every_byte_written(
    pair: tuple[PtyPair, SerialLink],
) -> None:
    """The reader (a harness) takes nothing meanwhile; its side has the late bytes once the wait ends."""
    pty, link = pair
    claimed = [0]  # as if the writer had put in 3 bytes more that the kernel passes on late
    handover = Handover(lambda: link.bytes_out, lambda: pty.bytes_read, pty.master_fd)
    late = Handover(lambda: link.bytes_out + claimed[0], lambda: pty.bytes_read, pty.master_fd)
    link.write(b"abc")
    claimed[0] = 3
    writer = later(0.05, lambda: link.write(b"def"))
    late.wait()
    assert passed_on(pty.master_fd, 6, timeout=0.0) == 6  # the late ones came before the wait ended
    writer.join()
    claimed[0] = 0
    handover.wait()
    assert pty.read() == b"abcdef"  # none read meanwhile
    assert (handover.short_waits, late.short_waits) == (0, 0)


def test_a_handover_that_gives_up_counts_it_and_never_waits_for_those_bytes_again(
    pair: tuple[PtyPair, SerialLink],
) -> None:
    pty, link = pair
    claimed = [0]
    handover = Handover(lambda: link.bytes_out + claimed[0], lambda: pty.bytes_read, pty.master_fd)
    claimed[0] = 5  # counted as written, never written (lost)
    start = time.monotonic()
    handover.wait()
    assert handover.short_waits == 1 and time.monotonic() - start >= OWED_TIMEOUT_S * 0.9
    start = time.monotonic()
    handover.wait()
    assert handover.short_waits == 1 and time.monotonic() - start < OWED_TIMEOUT_S / 2
