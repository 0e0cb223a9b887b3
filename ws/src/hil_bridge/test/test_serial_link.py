"""SerialLink over real pseudo-terminals (PtyPair) with real pyserial; nothing is mocked.

Data is awaited with generous polling loops, never with fixed sleeps; backoff timing
is checked with an injected fake clock.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hil_bridge.core import serial_link
from hil_bridge.core.pty_link import PtyPair, pty_pairs
from hil_bridge.core.serial_link import LinkState, SerialLink
from hil_common.errors import HilError

WAIT_S = 5.0
ALL_BYTES = bytes(range(256))

LinkFactory = Callable[..., SerialLink]


class FakeClock:
    """Time that moves only when a test sets it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def wait_until(condition: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.001)


def receive(poll: Callable[[], bytes], count: int, timeout: float = WAIT_S) -> bytes:
    """Poll until ``count`` bytes have arrived (or fail after ``timeout``)."""
    got = bytearray()

    def have_all() -> bool:
        got.extend(poll())
        return len(got) >= count

    wait_until(have_all, f"{count} bytes", timeout)
    return bytes(got)


def open_link(link: SerialLink) -> None:
    wait_until(lambda: (link.poll(), link.state is LinkState.OPEN)[1], f"{link.port} to open")


@pytest.fixture
def pty(tmp_path: Path) -> Iterator[PtyPair]:
    pair = PtyPair(tmp_path / "ttyHIL0")
    try:
        yield pair
    finally:
        pair.close()


@pytest.fixture
def make_link() -> Iterator[LinkFactory]:
    """Builds SerialLinks and closes every one of them after the test."""
    links: list[SerialLink] = []

    def make(port: str, **kwargs: Any) -> SerialLink:
        link = SerialLink(port, **kwargs)
        links.append(link)
        return link

    try:
        yield make
    finally:
        for link in links:
            link.close()


def test_bytes_pass_both_ways_unchanged_without_echo(pty: PtyPair, make_link: LinkFactory) -> None:
    link = make_link(pty.path, baud=115200)
    open_link(link)
    assert link.generation == 1
    payload = ALL_BYTES + b"\r\n\n\r\r" + ALL_BYTES[::-1]

    assert pty.write(payload) == len(payload)
    assert receive(link.poll, len(payload)) == payload

    # Were the tty echoing, the master would read its own bytes back before these.
    assert link.write(payload) is True
    assert receive(pty.read, len(payload)) == payload

    # Nothing extra turns up in either direction: a marker is the next thing each side reads.
    assert link.write(b"\x00END")
    assert receive(pty.read, 4) == b"\x00END"
    assert pty.write(b"\x00END") == 4
    assert receive(link.poll, 4) == b"\x00END"
    assert link.bytes_in == len(payload) + 4
    assert link.bytes_out == len(payload) + 4
    assert link.state is LinkState.OPEN
    assert not link.errors


def test_poll_returns_nothing_when_no_data_has_arrived(pty: PtyPair, make_link: LinkFactory) -> None:
    link = make_link(pty.path)
    open_link(link)
    assert link.poll() == b""
    assert link.state is LinkState.OPEN
    assert link.fileno() is not None


def test_a_byte_arriving_just_after_an_empty_read_is_not_taken_for_a_hangup(
    pty: PtyPair, make_link: LinkFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The race made deterministic: the peer's byte lands between the link's empty
    # read and its hang-up check. Taking that for an unplug reopened the port, which
    # flushed what had arrived (a flaky CI run lost a whole burst this way).
    link = make_link(pty.path)
    open_link(link)
    fd = link.fileno()
    real_read = os.read

    def read_then_the_peer_writes(descriptor: int, size: int) -> bytes:
        data = real_read(descriptor, size)
        if descriptor == fd and not data:
            assert pty.write(b"x") == 1
            select.select([descriptor], [], [], WAIT_S)
        return data

    monkeypatch.setattr(serial_link.os, "read", read_then_the_peer_writes)
    assert link.poll() == b""
    monkeypatch.undo()
    assert link.state is LinkState.OPEN and link.generation == 1 and not link.errors
    assert receive(link.poll, 1) == b"x"


def test_missing_port_reports_reconnecting_with_the_path_and_never_raises(
    tmp_path: Path, make_link: LinkFactory
) -> None:
    port = str(tmp_path / "ttyUSB_missing")
    link = make_link(port, backoff_min=0.001, backoff_max=0.002)
    for _ in range(5):
        assert link.poll() == b""
        assert link.state is LinkState.RECONNECTING
        assert not link.is_open
    assert port in link.detail
    assert "cannot open" in link.detail
    assert link.errors["open"] >= 1
    assert link.write(b"lost") is False
    assert link.fileno() is None


@pytest.mark.parametrize("kind", ["directory", "regular_file", "dev_null"])
def test_port_that_is_not_a_tty_reports_reconnecting_and_never_raises(
    tmp_path: Path, make_link: LinkFactory, kind: str
) -> None:
    if kind == "directory":
        port = str(tmp_path)
    elif kind == "regular_file":
        path = tmp_path / "not_a_tty"
        path.write_bytes(b"hello\n")
        port = str(path)
    else:
        port = "/dev/null"
    link = make_link(port, clock=FakeClock())
    assert link.poll() == b""
    assert link.state is LinkState.RECONNECTING
    assert "cannot open" in link.detail
    assert link.errors["open"] == 1


def test_retry_delay_doubles_up_to_backoff_max(tmp_path: Path, make_link: LinkFactory) -> None:
    clock = FakeClock()
    link = make_link(str(tmp_path / "ttyACM_missing"), backoff_min=0.125, backoff_max=1.0, clock=clock)
    # Attempts at t = 0, then after 0.125, 0.25, 0.5 and from then on every 1.0 s (the cap).
    attempts = [0.0, 0.125, 0.375, 0.875, 1.875, 2.875, 3.875]
    for count, due in enumerate(attempts, start=1):
        if count > 1:
            clock.now = due - 1e-6
            assert link.poll() == b""
            assert link.errors["open"] == count - 1, f"tried again before t={due}"
        clock.now = due
        assert link.poll() == b""
        assert link.errors["open"] == count, f"did not try again at t={due}"
        assert link.state is LinkState.RECONNECTING
    assert "retrying in 1.00 s" in link.detail


def test_use_clock_moves_the_backoff_onto_the_new_clock(tmp_path: Path, make_link: LinkFactory) -> None:
    wall = FakeClock()
    wall.now = 5000.0
    link = make_link(str(tmp_path / "ttyACM_missing"), backoff_min=0.125, backoff_max=1.0, clock=wall)
    assert link.poll() == b"" and link.errors["open"] == 1  # next try due at 5000.125 on the wall
    simulated = FakeClock()
    link.use_clock(simulated)
    assert link.poll() == b"" and link.errors["open"] == 2, "the wall-clock deadline was kept"
    simulated.now = 0.25 - 1e-6
    assert link.poll() == b"" and link.errors["open"] == 2
    simulated.now = 0.25
    assert link.poll() == b"" and link.errors["open"] == 3


def test_link_opens_when_the_port_appears_later(tmp_path: Path, make_link: LinkFactory) -> None:
    path = tmp_path / "ttyLATE"
    link = make_link(str(path), backoff_min=0.005, backoff_max=0.02)
    assert link.poll() == b""
    assert link.state is LinkState.RECONNECTING
    with PtyPair(path) as pair:
        open_link(link)
        assert link.generation == 1
        assert pair.write(b"ready\n") == 6
        assert receive(link.poll, 6) == b"ready\n"
        link.close()


def test_peer_hangup_then_new_pty_at_the_same_path_reconnects_by_itself(
    tmp_path: Path, make_link: LinkFactory
) -> None:
    path = tmp_path / "ttyHIL_reconnect"
    first = PtyPair(path)
    second: PtyPair | None = None
    try:
        link = make_link(str(path), backoff_min=0.005, backoff_max=0.02)
        open_link(link)
        assert link.generation == 1
        assert first.write(b"one") == 3
        assert receive(link.poll, 3) == b"one"

        first.close()
        assert not path.exists()
        wait_until(lambda: (link.poll(), link.state is LinkState.RECONNECTING)[1], "the hangup to be seen")
        assert link.errors["read"] == 1
        assert "read failed" in link.detail
        for _ in range(3):
            assert link.poll() == b""
            assert link.state is LinkState.RECONNECTING
        assert link.write(b"nobody") is False
        assert link.generation == 1

        second = PtyPair(path)
        open_link(link)
        assert link.generation == 2
        assert link.errors["read"] == 1
        assert second.write(b"two") == 3
        assert receive(link.poll, 3) == b"two"
        assert link.write(b"back") is True
        assert receive(second.read, 4) == b"back"
    finally:
        first.close()
        if second is not None:
            second.close()


def test_close_makes_the_link_closed_for_good(pty: PtyPair, make_link: LinkFactory) -> None:
    link = make_link(pty.path, backoff_min=0.001, backoff_max=0.001)
    open_link(link)
    link.close()
    assert link.state is LinkState.CLOSED
    assert not link.is_open
    assert link.detail == "closed"
    assert pty.write(b"still here") == 10
    for _ in range(20):
        assert link.poll() == b""
        time.sleep(0.002)
    assert link.state is LinkState.CLOSED
    assert link.generation == 1
    assert link.write(b"x") is False
    link.close()  # twice is fine
    assert link.state is LinkState.CLOSED


def test_close_before_the_port_ever_opened_stops_the_retries(tmp_path: Path, make_link: LinkFactory) -> None:
    clock = FakeClock()
    link = make_link(str(tmp_path / "ttyNEVER"), backoff_min=0.125, backoff_max=1.0, clock=clock)
    assert link.poll() == b""
    assert link.errors["open"] == 1
    link.close()
    clock.now = 100.0
    assert link.poll() == b""
    assert link.errors["open"] == 1
    assert link.state is LinkState.CLOSED


def test_second_link_on_a_port_in_use_waits_instead_of_sharing_it(
    pty: PtyPair, make_link: LinkFactory
) -> None:
    owner = make_link(pty.path)
    open_link(owner)
    intruder = make_link(pty.path, clock=FakeClock())
    assert intruder.poll() == b""
    assert intruder.state is LinkState.RECONNECTING
    assert intruder.errors["open"] == 1
    assert pty.write(b"mine") == 4
    assert receive(owner.poll, 4) == b"mine"


WRITE_FULL_SCRIPT = textwrap.dedent(
    """
    import json
    import sys
    from hil_bridge.core.pty_link import PtyPair
    from hil_bridge.core.serial_link import SerialLink

    with PtyPair(sys.argv[1]) as pair:
        link = SerialLink(pair.path)
        link.poll()
        assert link.is_open, link.detail
        for _ in range(4096):  # 4 MiB: far more than any tty buffer
            if not link.write(b"x" * 1024):
                break
        print(json.dumps({"drops": link.write_drops, "state": link.state.value}))
        link.close()
    """
)


def test_write_to_a_peer_that_stops_reading_returns_false_without_blocking(tmp_path: Path) -> None:
    # In a child process: the failure mode is a busy loop that cannot be interrupted in-process.
    try:
        proc = subprocess.run(
            [sys.executable, "-c", WRITE_FULL_SCRIPT, str(tmp_path / "ttyFULL")],
            capture_output=True,
            text=True,
            timeout=10.0,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("SerialLink.write did not return within 10 s once the tty buffer was full")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["drops"] > 0
    assert result["state"] == "open"


@pytest.mark.parametrize(
    ("port", "options"),
    [
        ("", {}),
        ("/dev/ttyUSB0", {"baud": 12345}),
        ("/dev/ttyUSB0", {"baud": 0}),
        ("/dev/ttyUSB0", {"backoff_min": 2.0, "backoff_max": 0.5}),
        ("/dev/ttyUSB0", {"backoff_min": 0.0}),
        ("/dev/ttyUSB0", {"backoff_min": -0.1}),
        ("/dev/ttyUSB0", {"backoff_min": float("nan")}),
    ],
)
def test_invalid_construction_is_rejected(port: str, options: dict[str, Any]) -> None:
    with pytest.raises(HilError, match="serial port"):
        SerialLink(port, **options)


def test_pty_pairs_close_the_ones_made_when_a_later_link_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")  # a link under a regular file cannot be made
    with pytest.raises(HilError, match="cannot create pty link"):
        pty_pairs(tmp_path / "first", blocker / "second")
    assert not (tmp_path / "first").exists()
    first, second = pty_pairs(tmp_path / "a", tmp_path / "b")
    assert {first.path, second.path} == {str(tmp_path / "a"), str(tmp_path / "b")}
    first.close()
    second.close()
