"""Fault model and fault channel of a link, on fake time (the channel is pure)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_bridge.core.faults import BITS_PER_BYTE, FaultChannel, FaultModel
from hil_bridge.errors import HilBridgeError

ALL_BYTES = bytes(range(256))
FAR_FUTURE = 1e9


def drain(channel: FaultChannel) -> bytes:
    """Everything the channel will ever deliver."""
    return channel.pop_ready(FAR_FUTURE)


def test_without_faults_or_baud_bytes_pass_unchanged_and_at_once() -> None:
    channel = FaultChannel(FaultModel(seed=1))
    assert not channel.model.injects_faults
    assert channel.next_due() is None
    channel.push(ALL_BYTES, now=5.0)
    assert channel.next_due() == 5.0
    assert channel.pop_ready(5.0) == ALL_BYTES
    assert channel.next_due() is None
    assert channel.pop_ready(FAR_FUTURE) == b""
    stats = channel.stats
    assert (stats.bytes_in, stats.bytes_out) == (256, 256)
    assert (stats.dropped, stats.corrupted, stats.duplicated, stats.delayed) == (0, 0, 0, 0)


def test_pushing_nothing_changes_nothing() -> None:
    channel = FaultChannel(FaultModel(drop=0.5, baud=9600, seed=3))
    channel.push(b"", now=1.0)
    assert channel.next_due() is None
    assert channel.stats.bytes_in == 0


@pytest.mark.parametrize("count", [1, 10, 64, 1000])
def test_baud_emulation_delivers_n_bytes_at_n_byte_times(count: int) -> None:
    baud = 38400
    byte_time = BITS_PER_BYTE / baud
    all_out = count * byte_time
    channel = FaultChannel(FaultModel(baud=baud))
    data = bytes(i % 251 for i in range(count))
    channel.push(data, now=0.0)
    assert channel.pop_ready(0.0) == b""
    assert channel.next_due() == pytest.approx(byte_time, rel=1e-9)
    # Just before the last byte has been shifted out, every byte but the last one is there.
    assert channel.pop_ready(all_out * (1 - 1e-9)) == data[:-1]
    assert channel.pop_ready(all_out * (1 + 1e-9)) == data[-1:]
    assert channel.next_due() is None


def test_baud_emulation_each_byte_arrives_one_byte_time_after_the_one_before() -> None:
    byte_time = BITS_PER_BYTE / 38400
    channel = FaultChannel(FaultModel(baud=38400))
    channel.push(b"0123456789", now=2.0)
    for k in range(1, 11):
        assert channel.pop_ready(2.0 + (k - 0.5) * byte_time) == b""
        assert channel.pop_ready(2.0 + (k + 0.01) * byte_time) == b"0123456789"[k - 1 : k]


def test_baud_emulation_last_byte_is_out_exactly_at_n_byte_times() -> None:
    count, baud = 64, 38400
    channel = FaultChannel(FaultModel(baud=baud))
    channel.push(bytes(count), now=0.0)
    assert len(channel.pop_ready(count * BITS_PER_BYTE / baud)) == count


def test_baud_emulation_queues_a_second_push_behind_a_busy_line() -> None:
    byte_time = BITS_PER_BYTE / 9600
    channel = FaultChannel(FaultModel(baud=9600))
    channel.push(b"abcd", now=0.0)
    channel.push(b"ef", now=2 * byte_time)  # the line is busy until 4 byte times
    assert channel.pop_ready(5.5 * byte_time) == b"abcde"
    assert channel.pop_ready(6.5 * byte_time) == b"f"
    # An idle line starts a new push at its own time.
    channel.push(b"g", now=100.0)
    assert channel.pop_ready(100.0 + 0.5 * byte_time) == b""
    assert channel.pop_ready(100.0 + 1.5 * byte_time) == b"g"


def test_drop_one_drops_every_byte() -> None:
    channel = FaultChannel(FaultModel(drop=1.0, seed=4))
    channel.push(ALL_BYTES * 4, now=0.0)
    assert channel.next_due() is None
    assert drain(channel) == b""
    assert channel.stats.dropped == 1024
    assert channel.stats.bytes_in == 1024
    assert channel.stats.bytes_out == 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_corrupt_one_flips_exactly_one_bit_of_every_byte(seed: int) -> None:
    data = ALL_BYTES * 4
    channel = FaultChannel(FaultModel(corrupt=1.0, seed=seed))
    channel.push(data, now=0.0)
    out = drain(channel)
    assert len(out) == len(data)
    assert all((a ^ b).bit_count() == 1 for a, b in zip(data, out, strict=True))
    assert channel.stats.corrupted == len(data)
    # Every bit position gets hit: the flipped bit is random, not always the same one.
    assert {a ^ b for a, b in zip(data, out, strict=True)} == {1 << bit for bit in range(8)}


def test_duplicate_one_doubles_every_byte_in_order() -> None:
    channel = FaultChannel(FaultModel(duplicate=1.0, seed=5))
    channel.push(ALL_BYTES, now=0.0)
    assert drain(channel) == bytes(b for b in ALL_BYTES for _ in range(2))
    assert channel.stats.duplicated == 256
    assert channel.stats.bytes_out == 512


def test_delay_one_holds_bytes_back_and_keeps_their_order() -> None:
    delay_s = 0.5
    channel = FaultChannel(FaultModel(delay=1.0, delay_s=delay_s, seed=6))
    channel.push(b"abc", now=10.0)
    assert channel.pop_ready(10.0) == b""
    assert channel.pop_ready(10.0 + 0.99 * delay_s) == b""
    assert channel.next_due() == pytest.approx(10.0 + delay_s)
    # Each delayed byte also holds back the ones behind it, as a stalled line would.
    assert channel.pop_ready(10.0 + 1.01 * delay_s) == b"a"
    assert channel.pop_ready(10.0 + 2.01 * delay_s) == b"b"
    assert channel.pop_ready(10.0 + 3.01 * delay_s) == b"c"
    assert channel.stats.delayed == 3


def test_delay_one_with_many_bytes_delivers_all_of_them_in_order() -> None:
    channel = FaultChannel(FaultModel(delay=1.0, delay_s=0.001, baud=115200, seed=7))
    channel.push(ALL_BYTES, now=0.0)
    assert drain(channel) == ALL_BYTES


def test_same_seed_gives_the_same_faults() -> None:
    model = FaultModel(drop=0.2, corrupt=0.2, duplicate=0.2, delay=0.2, delay_s=0.003, seed=42)
    outputs = []
    for _ in range(2):
        channel = FaultChannel(model)
        channel.push(ALL_BYTES * 8, now=0.0)
        outputs.append(drain(channel))
    assert outputs[0] == outputs[1]
    assert outputs[0] != ALL_BYTES * 8


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c for c in cuts if 0 < c < len(data)})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


probability = st.floats(min_value=0.0, max_value=0.5, allow_nan=False)


@settings(deadline=None, derandomize=True, max_examples=200)
@given(
    data=st.binary(min_size=0, max_size=300),
    cuts=st.lists(st.integers(min_value=0, max_value=300), max_size=40),
    model=st.builds(
        FaultModel,
        drop=probability,
        corrupt=probability,
        duplicate=probability,
        delay=probability,
        delay_s=st.just(0.01),
        seed=st.integers(min_value=0, max_value=2**32 - 1),
    ),
)
def test_seeded_faults_do_not_depend_on_how_the_stream_is_chunked(
    data: bytes, cuts: list[int], model: FaultModel
) -> None:
    whole = FaultChannel(model)
    whole.push(data, now=0.0)
    chunked = FaultChannel(model)
    for chunk in split(data, cuts):
        chunked.push(chunk, now=0.0)
    one_by_one = FaultChannel(model)
    for byte in data:
        one_by_one.push(bytes([byte]), now=0.0)
    expected = drain(whole)
    assert drain(chunked) == expected
    assert drain(one_by_one) == expected
    assert chunked.stats == whole.stats
    assert one_by_one.stats == whole.stats


@settings(deadline=None, derandomize=True, max_examples=200)
@given(
    data=st.binary(min_size=0, max_size=300),
    cuts=st.lists(st.integers(min_value=0, max_value=300), max_size=40),
    baud=st.sampled_from([None, 9600, 38400, 115200]),
)
def test_without_faults_chunking_changes_neither_bytes_nor_arrival_times(
    data: bytes, cuts: list[int], baud: int | None
) -> None:
    model = FaultModel(baud=baud, seed=9)
    whole = FaultChannel(model)
    whole.push(data, now=0.0)
    chunked = FaultChannel(model)
    for chunk in split(data, cuts):
        chunked.push(chunk, now=0.0)
    while whole.next_due() is not None:
        due = whole.next_due()
        assert chunked.next_due() == due
        assert due is not None
        assert chunked.pop_ready(due) == whole.pop_ready(due)
    assert chunked.next_due() is None
    assert whole.stats.bytes_out == len(data)


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({"drop": -0.1}, "drop"),
        ({"drop": 1.5}, "drop"),
        ({"drop": math.nan}, "drop"),
        ({"corrupt": -0.1}, "corrupt"),
        ({"corrupt": 1.5}, "corrupt"),
        ({"corrupt": math.nan}, "corrupt"),
        ({"duplicate": -0.1}, "duplicate"),
        ({"duplicate": 1.5}, "duplicate"),
        ({"duplicate": math.nan}, "duplicate"),
        ({"delay": -0.1}, "delay"),
        ({"delay": 1.5}, "delay"),
        ({"delay": math.nan}, "delay"),
        ({"delay_s": -0.01}, "delay_s"),
        ({"delay_s": math.nan}, "delay_s"),
        ({"delay_s": math.inf}, "delay_s"),
        ({"baud": 0}, "baud"),
        ({"baud": -9600}, "baud"),
        ({"baud": math.nan}, "baud"),
    ],
)
def test_invalid_fault_model_names_the_bad_field(fields: dict[str, Any], name: str) -> None:
    with pytest.raises(HilBridgeError, match=rf"\b{name} = "):
        FaultModel(**fields)
