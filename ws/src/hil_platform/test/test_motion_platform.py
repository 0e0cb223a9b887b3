"""Motion platform: datagram codec, inverse kinematics, state machine and the emulator process."""

from __future__ import annotations

import contextlib
import math
import os
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_platform.core.motion_platform import (
    DATAGRAM_SIZE,
    Command,
    Datagram,
    ErrorCode,
    PlatformGeometry,
    PlatformState,
    PlatformStateMachine,
    Reply,
    actuator_lengths,
    command_of,
    join_status,
    pack,
    split_status,
    unpack,
)
from hil_platform.core.udp_link import Address, UdpLink
from hil_platform.errors import HilPlatformError
from hil_platform.platform_emulator import main as emulator_main

REPLY_TIMEOUT_S = 5.0
START_TIMEOUT_S = 30.0
GEOMETRY = PlatformGeometry()
#: A small pose inside every limit of the default geometry.
POSE = (0.05, -0.04, 0.01, 0.005, 0.1, -0.005)
#: Legal state changes, written out independently of the module's own table.
LEGAL = {
    (PlatformState.INIT, Command.ENGAGE): PlatformState.ENGAGED,
    (PlatformState.ENGAGED, Command.START): PlatformState.STARTED,
    (PlatformState.ENGAGED, Command.PARK): PlatformState.PARKED,
    (PlatformState.STARTED, Command.PARK): PlatformState.PARKED,
    (PlatformState.PARKED, Command.RESET): PlatformState.INIT,
}
#: The commands that walk INIT to each state.
PATH_TO = {
    PlatformState.INIT: (),
    PlatformState.ENGAGED: (Command.ENGAGE,),
    PlatformState.STARTED: (Command.ENGAGE, Command.START),
    PlatformState.PARKED: (Command.ENGAGE, Command.PARK),
}

float32s = st.floats(width=32, allow_nan=False)
uint32s = st.integers(min_value=0, max_value=0xFFFF_FFFF)


def command(cmd: int) -> bytes:
    """The datagram of ``cmd`` with in-range values where it is a setpoint."""
    if cmd == Command.DOF:
        return pack(cmd, POSE)
    if cmd == Command.LENGTHS:
        return pack(cmd, (0.17,) * 6)
    return pack(cmd)


def expected_reply(state: PlatformState, cmd: Command) -> tuple[Reply, PlatformState, ErrorCode]:
    """What the protocol says the answer to ``cmd`` in ``state`` is."""
    if cmd == Command.STATUS:
        return Reply.STATE, state, ErrorCode.NONE
    if cmd in (Command.DOF, Command.LENGTHS):
        if state == PlatformState.STARTED:
            return Reply.STATE, state, ErrorCode.NONE
        return Reply.ERROR, state, ErrorCode.BAD_STATE
    if (state, cmd) in LEGAL:
        return Reply.STATE, LEGAL[state, cmd], ErrorCode.NONE
    return Reply.ERROR, state, ErrorCode.BAD_STATE


def status_of(reply: bytes) -> tuple[int, int, int, int]:
    """(type, state, error, offending type) of a reply datagram."""
    datagram = unpack(reply)
    status = split_status(datagram.spare)
    return datagram.type, status.state, status.error, status.offending_type


def machine_in(state: PlatformState) -> PlatformStateMachine:
    machine = PlatformStateMachine()
    for cmd in PATH_TO[state]:
        machine.handle(pack(cmd))
    assert machine.state == state
    return machine


# --- codec --------------------------------------------------------------------------------------


def test_pack_unpack_round_trip() -> None:
    data = pack(Command.DOF, (0.5, -0.25, 0.125, 1.0, -2.0, 0.0), spare=7)
    assert len(data) == DATAGRAM_SIZE == 32
    assert unpack(data) == Datagram(type=Command.DOF, values=(0.5, -0.25, 0.125, 1.0, -2.0, 0.0), spare=7)


def test_datagram_is_eight_big_endian_words() -> None:
    data = pack(0x20, (1.0, 0.0, 0.0, 0.0, 0.0, -1.0), spare=0x01020304)
    assert data[:4] == b"\x00\x00\x00\x20"
    assert data[4:8] == struct.pack(">f", 1.0) == b"\x3f\x80\x00\x00"
    assert data[24:28] == b"\xbf\x80\x00\x00"
    assert data[28:] == b"\x01\x02\x03\x04"


@settings(deadline=None)
@given(msg_type=uint32s, values=st.tuples(*[float32s] * 6), spare=uint32s)
def test_unpack_inverts_pack_for_float32_values(msg_type: int, values: tuple[float, ...], spare: int) -> None:
    assert unpack(pack(msg_type, values, spare=spare)) == Datagram(msg_type, values, spare)


def test_non_finite_values_survive_the_codec() -> None:
    values = unpack(pack(Command.DOF, (math.nan, math.inf, -math.inf, 0.0, 0.0, 0.0))).values
    assert math.isnan(values[0])
    assert values[1:3] == (math.inf, -math.inf)


@pytest.mark.parametrize(
    ("msg_type", "values", "spare", "field"),
    [
        (Command.DOF, (0.0,) * 5, 0, "values"),
        (-1, (0.0,) * 6, 0, "type"),
        (Command.DOF, (0.0,) * 6, 1 << 32, "spare"),
        (Command.DOF, (1e39, 0.0, 0.0, 0.0, 0.0, 0.0), 0, "values"),
    ],
)
def test_pack_refuses_what_does_not_fit_and_names_it(
    msg_type: int, values: tuple[float, ...], spare: int, field: str
) -> None:
    with pytest.raises(HilPlatformError, match=field):
        pack(msg_type, values, spare=spare)


@pytest.mark.parametrize("size", [0, 31, 33, 64])
def test_unpack_refuses_wrong_length(size: int) -> None:
    with pytest.raises(HilPlatformError, match="length"):
        unpack(bytes(size))


def test_status_word_layout() -> None:
    spare = join_status(PlatformState.STARTED, ErrorCode.OUT_OF_RANGE, Command.DOF)
    assert spare == 0x02_04_0020
    status = split_status(spare)
    assert (status.state, status.error, status.offending_type) == (2, 4, 0x20)


# --- inverse kinematics -------------------------------------------------------------------------


def test_all_six_lengths_are_equal_at_the_neutral_pose() -> None:
    lengths = actuator_lengths((0.0,) * 6, GEOMETRY)
    assert lengths.shape == (6,)
    np.testing.assert_allclose(lengths, lengths[0], rtol=0, atol=1e-12)
    assert GEOMETRY.min_length < lengths[0] < GEOMETRY.max_length


def test_neutral_length_matches_the_joint_circles() -> None:
    # Actuator 1: base joint at -10 deg, platform joint at -50 deg (default spacings).
    gap = math.radians(40.0)
    r_b, r_p, h = GEOMETRY.base_radius, GEOMETRY.platform_radius, GEOMETRY.neutral_height
    expected = math.sqrt(h**2 + r_b**2 + r_p**2 - 2 * r_b * r_p * math.cos(gap))
    assert GEOMETRY.neutral_length() == pytest.approx(expected, abs=1e-12)


def test_heave_up_lengthens_all_six_equally() -> None:
    neutral = actuator_lengths((0.0,) * 6, GEOMETRY)
    raised = actuator_lengths((0.0, 0.0, 0.02, 0.0, 0.0, 0.0), GEOMETRY)
    growth = raised - neutral
    assert np.all(growth > 0)
    np.testing.assert_allclose(growth, growth[0], rtol=0, atol=1e-12)


def test_positive_roll_lengthens_the_left_side_and_shortens_the_right() -> None:
    neutral = actuator_lengths((0.0,) * 6, GEOMETRY)
    rolled = actuator_lengths((0.1, 0.0, 0.0, 0.0, 0.0, 0.0), GEOMETRY)
    left = GEOMETRY.platform_joints()[:, 1] > 0
    assert left.sum() == 3
    assert np.all(rolled[left] > neutral[left])
    assert np.all(rolled[~left] < neutral[~left])


def test_yaw_keeps_the_platform_symmetric_in_pairs() -> None:
    # A pure yaw turns the top plate; by the three-fold symmetry the actuators split
    # into two groups of three equal lengths, one longer and one shorter.
    rolled = np.sort(actuator_lengths((0.0, 0.0, 0.0, 0.0, 0.2, 0.0), GEOMETRY))
    np.testing.assert_allclose(rolled[:3], rolled[0], atol=1e-12)
    np.testing.assert_allclose(rolled[3:], rolled[5], atol=1e-12)
    assert rolled[0] < GEOMETRY.neutral_length() < rolled[5]


def test_actuator_lengths_wants_six_values() -> None:
    with pytest.raises(HilPlatformError, match="pose"):
        actuator_lengths((0.0,) * 5, GEOMETRY)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("base_radius", 0.0),
        ("platform_radius", -0.1),
        ("neutral_height", math.nan),
        ("base_pair_spacing", 2.5),
        ("min_length", 0.3),
        ("dof_limits", (0.1,) * 5),
        ("dof_limits", (0.1, 0.1, -0.1, 0.1, 0.1, 0.1)),
    ],
)
def test_bad_geometry_is_refused_naming_the_field(field: str, value: object) -> None:
    with pytest.raises(HilPlatformError, match=field):
        PlatformGeometry(**{field: value})  # type: ignore[arg-type]


def test_unreachable_neutral_pose_is_refused() -> None:
    with pytest.raises(HilPlatformError, match="neutral_height"):
        PlatformGeometry(neutral_height=0.5)


# --- state machine ------------------------------------------------------------------------------


@pytest.mark.parametrize("state", list(PlatformState))
@pytest.mark.parametrize("cmd", list(Command))
def test_state_machine_follows_the_transition_table(state: PlatformState, cmd: Command) -> None:
    machine = machine_in(state)
    reply = machine.handle(command(cmd))
    want_type, want_state, want_error = expected_reply(state, cmd)
    assert status_of(reply) == (want_type, want_state, want_error, cmd)
    assert machine.state == want_state


#: The source project's Start datagram type word.
SOURCE_START = 0x0000_00AF


@pytest.mark.parametrize("state", list(PlatformState))
def test_source_start_word_0xaf_is_start_and_the_reply_names_it(state: PlatformState) -> None:
    machine = machine_in(state)
    reply = machine.handle(pack(SOURCE_START))
    want_type, want_state, want_error = expected_reply(state, Command.START)
    assert status_of(reply) == (want_type, want_state, want_error, SOURCE_START)
    assert machine.state == want_state
    if want_error == ErrorCode.NONE:
        assert machine.accepted[Command.START] == 1
    assert command_of(SOURCE_START) is Command.START
    assert command_of(Reply.STATE) is None


def test_a_full_session_walks_every_state() -> None:
    machine = PlatformStateMachine()
    for cmd, state in [
        (Command.ENGAGE, PlatformState.ENGAGED),
        (Command.START, PlatformState.STARTED),
        (Command.DOF, PlatformState.STARTED),
        (Command.LENGTHS, PlatformState.STARTED),
        (Command.PARK, PlatformState.PARKED),
        (Command.RESET, PlatformState.INIT),
    ]:
        assert status_of(machine.handle(command(cmd)))[:3] == (Reply.STATE, state, ErrorCode.NONE)
    assert machine.accepted == {c: 1 for c in Command if c is not Command.STATUS}
    assert machine.rejected == {}


def test_replies_carry_the_actuator_lengths() -> None:
    machine = PlatformStateMachine()
    at_rest = unpack(machine.handle(pack(Command.STATUS))).values
    assert at_rest == pytest.approx((GEOMETRY.min_length,) * 6, abs=1e-6)
    engaged = unpack(machine.handle(pack(Command.ENGAGE))).values
    assert engaged == pytest.approx((GEOMETRY.neutral_length(),) * 6, abs=1e-6)
    machine.handle(pack(Command.START))
    wire_pose = unpack(pack(Command.DOF, POSE)).values
    moved = unpack(machine.handle(pack(Command.DOF, POSE))).values
    assert moved == pytest.approx(tuple(actuator_lengths(wire_pose, GEOMETRY)), abs=1e-6)
    lengths = (0.15, 0.16, 0.17, 0.18, 0.19, 0.2)
    assert unpack(machine.handle(pack(Command.LENGTHS, lengths))).values == pytest.approx(lengths, abs=1e-6)
    # A refused setpoint leaves the actuators where they were.
    refused = machine.handle(pack(Command.LENGTHS, (1.0,) * 6))
    assert unpack(refused).values == pytest.approx(lengths, abs=1e-6)


def test_setpoints_exactly_at_the_limits_are_accepted() -> None:
    machine = machine_in(PlatformState.STARTED)
    for lengths in ((GEOMETRY.min_length,) * 6, (GEOMETRY.max_length,) * 6):
        assert status_of(machine.handle(pack(Command.LENGTHS, lengths)))[2] == ErrorCode.NONE
    roll_limit = (GEOMETRY.dof_limits[0], 0.0, 0.0, 0.0, 0.0, 0.0)
    assert status_of(machine.handle(pack(Command.DOF, roll_limit)))[2] == ErrorCode.NONE


@pytest.mark.parametrize(
    ("cmd", "values"),
    [
        (Command.DOF, (0.3, 0.0, 0.0, 0.0, 0.0, 0.0)),  # roll beyond its limit
        (Command.DOF, (0.0, 0.0, 0.0, 0.0, 0.0, -0.031)),  # lateral beyond its limit
        (Command.DOF, (0.0, 0.0, math.nan, 0.0, 0.0, 0.0)),
        (Command.DOF, (0.0, 0.0, 0.0, math.inf, 0.0, 0.0)),
        # Every axis within its limit, but together they stretch an actuator too far.
        (Command.DOF, (0.26, 0.26, 0.03, 0.03, 0.35, 0.03)),
        (Command.LENGTHS, (0.17, 0.17, 0.17, 0.17, 0.17, 0.25)),
        (Command.LENGTHS, (0.12, 0.17, 0.17, 0.17, 0.17, 0.17)),
        (Command.LENGTHS, (0.17, -math.inf, 0.17, 0.17, 0.17, 0.17)),
    ],
)
def test_out_of_range_setpoint_is_refused_and_counted(cmd: Command, values: tuple[float, ...]) -> None:
    machine = machine_in(PlatformState.STARTED)
    before = machine.lengths
    reply = machine.handle(pack(cmd, values))
    assert status_of(reply) == (Reply.ERROR, PlatformState.STARTED, ErrorCode.OUT_OF_RANGE, cmd)
    assert machine.lengths == before
    assert machine.rejected == {ErrorCode.OUT_OF_RANGE: 1}


@pytest.mark.parametrize("size", [0, 1, 31, 33, 1500])
def test_wrong_length_datagram_gets_bad_length_with_no_offending_type(size: int) -> None:
    machine = machine_in(PlatformState.ENGAGED)
    reply = machine.handle(b"\x00\x00\x00\x10" + bytes(max(size - 4, 0)) if size >= 4 else bytes(size))
    assert status_of(reply) == (Reply.ERROR, PlatformState.ENGAGED, ErrorCode.BAD_LENGTH, 0)
    assert machine.rejected == {ErrorCode.BAD_LENGTH: 1}


@pytest.mark.parametrize("msg_type", [0, 0x14, Reply.STATE, Reply.ERROR, 0x0001_0010, 0xFFFF_FFFF])
def test_unknown_type_gets_unknown_type_naming_its_low_16_bits(msg_type: int) -> None:
    machine = PlatformStateMachine()
    reply = machine.handle(pack(msg_type))
    assert status_of(reply) == (Reply.ERROR, PlatformState.INIT, ErrorCode.UNKNOWN_TYPE, msg_type & 0xFFFF)
    assert machine.state == PlatformState.INIT


def test_counters_sort_rejections_by_reason() -> None:
    machine = PlatformStateMachine()
    for data in (pack(Command.START), pack(Command.DOF), b"short", pack(0x99), pack(Command.STATUS)):
        machine.handle(data)
    assert machine.accepted == {Command.STATUS: 1}
    assert machine.rejected == {ErrorCode.BAD_STATE: 2, ErrorCode.BAD_LENGTH: 1, ErrorCode.UNKNOWN_TYPE: 1}


#: Arbitrary bytes, plus 32-byte datagrams (random, and with a real command type) that
#: plain ``st.binary()`` would rarely produce.
any_datagram = st.one_of(
    st.binary(),
    st.binary(min_size=DATAGRAM_SIZE, max_size=DATAGRAM_SIZE),
    st.builds(
        lambda cmd, rest: struct.pack(">I", cmd) + rest,
        st.sampled_from(Command),
        st.binary(min_size=DATAGRAM_SIZE - 4, max_size=DATAGRAM_SIZE - 4),
    ),
)


@settings(deadline=None)
@given(data=any_datagram, state=st.sampled_from(PlatformState))
def test_state_machine_never_raises_and_always_answers_32_bytes(data: bytes, state: PlatformState) -> None:
    reply = machine_in(state).handle(data)
    assert len(reply) == DATAGRAM_SIZE
    assert unpack(reply).type in (Reply.STATE, Reply.ERROR)


@settings(deadline=None)
@given(st.lists(any_datagram, max_size=20))
def test_state_machine_survives_any_sequence_in_a_legal_state(datagrams: list[bytes]) -> None:
    machine = PlatformStateMachine()
    for data in datagrams:
        reply = unpack(machine.handle(data))
        assert reply.type in (Reply.STATE, Reply.ERROR)
        assert split_status(reply.spare).state == machine.state
    assert sum(machine.accepted.values()) + sum(machine.rejected.values()) == len(datagrams)


@settings(deadline=None)
@given(
    cmd=st.sampled_from([Command.DOF, Command.LENGTHS]),
    values=st.tuples(*[st.floats(width=32)] * 6),
)
def test_any_setpoint_is_answered_and_never_leaves_the_limits(
    cmd: Command, values: tuple[float, ...]
) -> None:
    machine = machine_in(PlatformState.STARTED)
    reply = unpack(machine.handle(pack(cmd, values)))
    assert reply.type in (Reply.STATE, Reply.ERROR)
    low, high = np.float32(GEOMETRY.min_length), np.float32(GEOMETRY.max_length)
    assert all(low <= np.float32(v) <= high for v in reply.values)


# --- UDP link -----------------------------------------------------------------------------------


def test_udp_link_sends_and_polls_on_loopback() -> None:
    with UdpLink() as a, UdpLink(remote=("127.0.0.1", 0)) as b:
        assert a.local_address[1] != 0
        assert a.poll() == []
        b.remote = a.local_address
        assert b.send(b"one") and b.send(b"two", a.local_address)
        assert a.wait(REPLY_TIMEOUT_S)
        received: list[tuple[bytes, Address]] = []
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while len(received) < 2 and time.monotonic() < deadline:
            a.wait(0.1)
            received += a.poll()
        assert [data for data, _ in received] == [b"one", b"two"]
        assert {sender for _, sender in received} == {b.local_address}
        assert (a.received, b.sent) == (2, 2)


def test_udp_link_counts_send_errors_instead_of_raising() -> None:
    link = UdpLink()
    assert not link.send(b"nowhere")  # no remote and no address
    assert not link.send(b"x" * 70000, ("127.0.0.1", 9))  # larger than any UDP datagram
    link.close()
    assert not link.send(b"closed", ("127.0.0.1", 9))
    assert link.poll() == []
    assert link.send_errors == 3
    assert link.closed


def test_udp_link_bind_failure_names_the_address() -> None:
    with UdpLink() as taken, pytest.raises(HilPlatformError, match=f"127.0.0.1:{taken.local_address[1]}"):
        UdpLink(taken.local_address)


# --- the emulator process -----------------------------------------------------------------------


class Emulator:
    """A running emulator process and a link to talk to it."""

    def __init__(self, proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.proc = proc
        self.address: Address = ("127.0.0.1", port)
        self.log = log
        self.link = UdpLink(remote=self.address)

    def request(self, data: bytes) -> bytes:
        """Send one datagram and return the reply (one in flight, generous timeout)."""
        self.link.poll()  # nothing stale may be taken for this reply
        assert self.link.send(data)
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while time.monotonic() < deadline:
            self.link.wait(deadline - time.monotonic())
            for reply, sender in self.link.poll():
                if sender == self.address:
                    return reply
        raise AssertionError(f"no reply within {REPLY_TIMEOUT_S} s; emulator log:\n{self.log.read_text()}")

    def state(self) -> int:
        return status_of(self.request(pack(Command.STATUS)))[1]

    def drive_to(self, state: PlatformState) -> None:
        """Walk the platform from wherever it is back to INIT, then on to ``state``."""
        current = self.state()
        back = {
            PlatformState.INIT: (),
            PlatformState.ENGAGED: (Command.PARK, Command.RESET),
            PlatformState.STARTED: (Command.PARK, Command.RESET),
            PlatformState.PARKED: (Command.RESET,),
        }[PlatformState(current)]
        for cmd in (*back, *PATH_TO[state]):
            assert status_of(self.request(pack(cmd)))[0] == Reply.STATE
        assert self.state() == state


def start_emulator(tmp: Path) -> tuple[subprocess.Popen[bytes], int, Path]:
    """Start the emulator process and wait for its ready file."""
    ready, log = tmp / "port", tmp / "emulator.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hil_platform.platform_emulator",
                "--port",
                "0",
                "--ready-file",
                str(ready),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while not ready.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            pytest.fail(f"the emulator did not become ready (exit {proc.returncode}):\n{log.read_text()}")
        time.sleep(0.02)
    return proc, int(ready.read_text()), log


def stop(proc: subprocess.Popen[bytes], sig: signal.Signals = signal.SIGINT) -> int | None:
    """Stop the emulator: ``sig``, wait, then kill its process group. Returns the clean exit status."""
    status = None
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, sig)
    with contextlib.suppress(subprocess.TimeoutExpired):
        status = proc.wait(timeout=REPLY_TIMEOUT_S)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return status


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    proc, port, log = start_emulator(tmp_path_factory.mktemp("emulator"))
    emu = Emulator(proc, port, log)
    try:
        yield emu
    finally:
        emu.link.close()
        stop(proc)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_emulator_announces_its_port_and_exits_cleanly_on_signal(tmp_path: Path, sig: signal.Signals) -> None:
    proc, port, log = start_emulator(tmp_path)
    try:
        emu = Emulator(proc, port, log)
        assert emu.state() == PlatformState.INIT
        emu.link.close()
    finally:
        status = stop(proc, sig)
    assert status == 0
    assert f"hil_platform_emulator: listening on 127.0.0.1:{port}" in log.read_text().splitlines()


def test_emulator_exits_1_naming_the_address_it_cannot_bind(capsys: pytest.CaptureFixture[str]) -> None:
    with UdpLink() as taken:
        assert emulator_main(["--port", str(taken.local_address[1])]) == 1
    assert f"127.0.0.1:{taken.local_address[1]}" in capsys.readouterr().err


def test_emulator_walks_every_legal_transition(emulator: Emulator) -> None:
    emulator.drive_to(PlatformState.INIT)
    for cmd, state in [
        (Command.ENGAGE, PlatformState.ENGAGED),
        (Command.PARK, PlatformState.PARKED),
        (Command.RESET, PlatformState.INIT),
        (Command.ENGAGE, PlatformState.ENGAGED),
        (Command.START, PlatformState.STARTED),
        (Command.DOF, PlatformState.STARTED),
        (Command.LENGTHS, PlatformState.STARTED),
        (Command.STATUS, PlatformState.STARTED),
        (Command.PARK, PlatformState.PARKED),
        (Command.RESET, PlatformState.INIT),
    ]:
        assert status_of(emulator.request(command(cmd))) == (Reply.STATE, state, ErrorCode.NONE, cmd)


@pytest.mark.parametrize("state", list(PlatformState))
@pytest.mark.parametrize("cmd", list(Command))
def test_emulator_answers_every_command_in_every_state(
    emulator: Emulator, state: PlatformState, cmd: Command
) -> None:
    emulator.drive_to(state)
    want_type, want_state, want_error = expected_reply(state, cmd)
    assert status_of(emulator.request(command(cmd))) == (want_type, want_state, want_error, cmd)
    assert emulator.state() == want_state


@pytest.mark.parametrize(
    ("data", "error", "offending"),
    [
        (b"", ErrorCode.BAD_LENGTH, 0),
        (pack(Command.ENGAGE)[:31], ErrorCode.BAD_LENGTH, 0),
        (pack(Command.ENGAGE) + b"\x00", ErrorCode.BAD_LENGTH, 0),
        (pack(0x42), ErrorCode.UNKNOWN_TYPE, 0x42),
        (pack(Command.DOF, (1.0, 0.0, 0.0, 0.0, 0.0, 0.0)), ErrorCode.OUT_OF_RANGE, Command.DOF),
    ],
)
def test_emulator_refuses_bad_datagrams_and_keeps_its_state(
    emulator: Emulator, data: bytes, error: ErrorCode, offending: int
) -> None:
    emulator.drive_to(PlatformState.STARTED)
    assert status_of(emulator.request(data)) == (Reply.ERROR, PlatformState.STARTED, error, offending)
    assert emulator.state() == PlatformState.STARTED


def test_emulator_starts_on_the_source_start_word(emulator: Emulator) -> None:
    emulator.drive_to(PlatformState.ENGAGED)
    reply = emulator.request(pack(SOURCE_START))
    assert status_of(reply) == (Reply.STATE, PlatformState.STARTED, ErrorCode.NONE, SOURCE_START)
