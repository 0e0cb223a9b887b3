"""The host's side of a platform session, against the platform's own state machine (no sockets)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hil_platform.core.motion_platform import (
    Command,
    ErrorCode,
    PlatformGeometry,
    PlatformState,
    PlatformStateMachine,
    Reply,
    join_status,
    pack,
)
from hil_platform.core.platform_session import Goal, PlatformSession
from hil_platform.errors import HilPlatformError

PERIOD = 0.02
TIMEOUT = 0.25
POSE = (0.05, -0.04, 0.01, 0.005, 0.1, -0.005)


class Bench:
    """A session and a platform in fake time; the wire can drop or delay replies."""

    def __init__(self, machine: PlatformStateMachine | None = None) -> None:
        self.machine = machine if machine is not None else PlatformStateMachine()
        self.session = PlatformSession(self.machine.geometry, reply_timeout=TIMEOUT)
        self.now = 0.0
        self.answering = True
        self.delay_frames = 0
        self.queue: list[tuple[int, bytes]] = []
        self.sent: list[int] = []
        self.frame = 0

    def step(self, pose: tuple[float, ...] = POSE) -> None:
        due = [data for at, data in self.queue if at <= self.frame]
        self.queue = [(at, data) for at, data in self.queue if at > self.frame]
        for data in due:
            self.session.on_reply(self.now, data)
        data = self.session.next_datagram(self.now, pose)
        if data is not None:
            self.sent.append(int.from_bytes(data[:4], "big"))
            if self.answering:
                self.queue.append((self.frame + self.delay_frames, self.machine.handle(data)))
        self.frame += 1
        self.now += PERIOD

    def run(self, seconds: float) -> None:
        for _ in range(round(seconds / PERIOD)):
            self.step()

    def run_until(self, condition: Callable[[], bool], seconds: float = 5.0) -> None:
        for _ in range(round(seconds / PERIOD)):
            if condition():
                return
            self.step()
        raise AssertionError("not within the time given")


def test_session_engages_starts_streams_and_parks() -> None:
    bench = Bench()
    bench.run_until(lambda: bench.session.streaming)
    assert bench.sent[:3] == [Command.STATUS, Command.ENGAGE, Command.START]
    bench.run(1.0)
    assert bench.machine.state == PlatformState.STARTED
    assert bench.machine.accepted[Command.DOF] >= 45
    assert bench.machine.lengths != (bench.machine.geometry.min_length,) * 6
    session = bench.session
    assert session.rtt.count == sum(session.sent.values()) - len(bench.queue)  # replies on the wire
    assert session.lost_setpoints == session.timeouts == session.bad_replies == session.unmatched == 0
    assert session.alive(bench.now)

    session.park()
    bench.run_until(lambda: session.parked)
    assert bench.machine.state == PlatformState.PARKED
    sent_before = len(bench.sent)
    bench.run(0.5)
    assert len(bench.sent) == sent_before  # parked: nothing more to send


@pytest.mark.parametrize(
    ("found", "commands"),
    [
        (PlatformState.INIT, [Command.ENGAGE, Command.START]),
        (PlatformState.ENGAGED, [Command.START]),
        (PlatformState.STARTED, []),
        (PlatformState.PARKED, [Command.RESET, Command.ENGAGE, Command.START]),
    ],
)
def test_session_takes_the_platform_from_whatever_state_it_finds(
    found: PlatformState, commands: list[Command]
) -> None:
    machine = PlatformStateMachine()
    path = {
        PlatformState.INIT: [],
        PlatformState.ENGAGED: [Command.ENGAGE],
        PlatformState.STARTED: [Command.ENGAGE, Command.START],
        PlatformState.PARKED: [Command.ENGAGE, Command.PARK],
    }[found]
    for command in path:
        machine.handle(pack(command))
    bench = Bench(machine)
    bench.run_until(lambda: bench.session.streaming)
    assert bench.sent == [Command.STATUS, *commands, Command.DOF]
    assert bench.session.errors == {}


def test_silent_platform_is_retried_once_per_timeout_and_picked_up_when_it_answers() -> None:
    bench = Bench()
    bench.answering = False
    bench.run(2.0)
    session = bench.session
    assert session.state is None and not session.alive(bench.now)
    # One STATUS per reply timeout, each counted.
    assert set(bench.sent) == {Command.STATUS}
    assert 2.0 / TIMEOUT - 2 <= len(bench.sent) <= 2.0 / TIMEOUT + 1
    assert session.timeouts >= len(bench.sent) - 1
    bench.answering = True
    bench.run_until(lambda: session.streaming)
    assert bench.machine.state == PlatformState.STARTED


def test_platform_going_silent_while_streaming_counts_lost_setpoints_and_recovers() -> None:
    bench = Bench()
    bench.run_until(lambda: bench.session.streaming)
    bench.run(0.5)
    bench.answering = False
    bench.run(1.0)
    session = bench.session
    assert session.state is None
    assert session.timeouts >= 1
    assert session.lost_setpoints >= TIMEOUT / PERIOD - 1
    bench.answering = True
    bench.run_until(lambda: session.streaming)
    bench.run(0.2)
    assert bench.machine.state == PlatformState.STARTED


def test_setpoint_replies_are_matched_with_several_in_flight() -> None:
    bench = Bench()
    bench.run_until(lambda: bench.session.streaming)
    bench.delay_frames = 3
    rtts_before = bench.session.rtt.count

    def pose(k: int) -> tuple[float, ...]:
        return (0.001 * (k % 50), 0.0, 0.0, 0.0, 0.0, 0.0)

    for k in range(100):
        bench.step(pose(k))
    session = bench.session
    assert session.unmatched == 0 and session.lost_setpoints == 0
    assert session.rtt.count - rtts_before >= 95
    assert session.rtt.last == pytest.approx(3 * PERIOD)


def test_platform_parked_by_someone_else_gets_bad_state_and_is_restarted() -> None:
    bench = Bench()
    bench.run_until(lambda: bench.session.streaming)
    bench.machine.handle(pack(Command.PARK))  # another host, or the operator
    bench.run(0.2)
    session = bench.session
    assert session.errors[ErrorCode.BAD_STATE] >= 1
    assert "BAD_STATE" in session.last_error
    assert session.streaming
    assert bench.machine.state == PlatformState.STARTED
    assert bench.machine.accepted[Command.RESET] == 1


def test_out_of_range_setpoint_is_counted_and_the_stream_goes_on() -> None:
    bench = Bench()
    bench.run_until(lambda: bench.session.streaming)
    bench.step((1.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    bench.run(0.2)
    session = bench.session
    assert session.errors == {ErrorCode.OUT_OF_RANGE: 1}
    assert session.streaming and session.lost_setpoints == 0


@pytest.mark.parametrize(
    "data",
    [
        b"",
        bytes(33),
        pack(Command.DOF),  # a command, not a reply
        pack(Reply.STATE, spare=join_status(7, 0, Command.STATUS)),  # no such state
    ],
)
def test_bad_replies_are_counted_and_ignored(data: bytes) -> None:
    session = PlatformSession(PlatformGeometry())
    session.on_reply(0.0, data)
    assert session.bad_replies == 1
    assert session.state is None and session.last_heard is None


def test_park_without_ever_hearing_the_platform_sends_park_and_retries() -> None:
    bench = Bench()
    bench.answering = False
    bench.session.park()
    bench.run(1.0)
    assert set(bench.sent) == {Command.PARK}
    assert 2 <= len(bench.sent) <= 1.0 / TIMEOUT + 1
    assert bench.session.goal is Goal.PARK and not bench.session.parked


def test_bad_options_are_refused_naming_them() -> None:
    with pytest.raises(HilPlatformError, match="reply_timeout"):
        PlatformSession(PlatformGeometry(), reply_timeout=0.0)
    with pytest.raises(HilPlatformError, match="max_in_flight"):
        PlatformSession(PlatformGeometry(), max_in_flight=0)
