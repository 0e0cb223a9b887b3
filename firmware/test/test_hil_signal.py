"""The firmware signal codec (hil_signal.c, host build) against the shared vectors and the Python codec."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hil_bridge.core.crc import crc16
from hil_bridge.core.signal_protocol import (
    FrameDecoder,
    FrameEncoder,
    SignalSlot,
    arduino_map,
    rounding_map,
)
from hil_bridge.core.vectors import load_vectors
from hil_common.errors import HilError
from hil_devices.core.devices import Direction, PinMode, SignalSpec, SignalType
from support.firmware_host import HostFrames, HostInitError, frame_encode_n, library
from support.mcu_vectors import SOURCE_VECTORS

VECTORS = load_vectors("signal_protocol", directory=SOURCE_VECTORS)
INT32 = st.integers(-(2**31), 2**31 - 1)


def slot(index: int, kind: SignalType, low: float, high: float) -> SignalSlot:
    spec = SignalSpec(f"s{index}", Direction.OUTPUT, kind, low, high, PinMode.ANALOG, low)
    return SignalSlot(index, "device", spec)


@pytest.mark.parametrize("mode", ["plain", "checked"])
def test_mapping_vectors(mode: str) -> None:
    lib = library()
    checked = mode == "checked"
    for vector in VECTORS[mode]:
        raw = lib.hil_int_to_raw(vector["x"], vector["min"], vector["max"], checked)
        assert raw == vector["raw"], vector
        assert lib.hil_raw_to_int(raw, vector["min"], vector["max"], checked) == vector["back"], vector


def test_crc_is_ccitt_false() -> None:
    data = b"123456789"
    buffer = (library().hil_crc16.argtypes[0]._type_ * len(data)).from_buffer_copy(data)  # type: ignore[attr-defined]
    assert library().hil_crc16(buffer, len(data)) == 0x29B1 == crc16(data)


@settings(max_examples=500, deadline=None)
@given(INT32, INT32, INT32, INT32, INT32)
def test_arduino_map_is_the_python_model_bit_for_bit(x: int, a: int, b: int, c: int, d: int) -> None:
    assume(((b - a + 2**31) % 2**32 - 2**31) != 0)
    assert library().hil_arduino_map(x, a, b, c, d) == arduino_map(x, a, b, c, d)


@settings(max_examples=500, deadline=None)
@given(st.integers(-32768, 32767), st.integers(1, 32767), st.data())
def test_integer_codes_round_trip_as_in_python(low: int, span: int, data: st.DataObject) -> None:
    high = min(low + span, 32767)
    assume(high > low)
    x = data.draw(st.integers(low - 10, high + 10))
    lib = library()
    spec = slot(0, SignalType.INTEGER, low, high)
    for checked in (False, True):
        raw = lib.hil_int_to_raw(x, low, high, checked)
        assert raw == spec.to_raw(min(max(x, low), high), checked=checked)
        assert lib.hil_raw_to_int(raw, low, high, checked) == spec.from_raw(raw, checked=checked)
    assert lib.hil_rounding_map(min(max(x, low), high), low, high, -32768, 32767) == rounding_map(
        min(max(x, low), high), low, high, -32768, 32767
    )


@settings(max_examples=500, deadline=None)
@given(
    st.floats(-1000, 1000, allow_nan=False),
    st.floats(0.001, 5000, allow_nan=False),
    st.floats(-2000, 7000, allow_nan=False),
)
def test_float_codes_are_the_python_codes_in_double_precision(low: float, span: float, x: float) -> None:
    high = low + span
    lib = library()
    spec = slot(0, SignalType.FLOAT, low, high)
    clamped = min(max(x, low), high)
    for checked in (False, True):
        raw = lib.hil_float_to_raw(x, low, high, checked)
        assert raw == spec.to_raw(clamped, checked=checked)
        assert lib.hil_raw_to_float(raw, low, high) == spec.from_raw(raw, checked=checked)


def test_nan_float_is_sent_as_min() -> None:
    assert library().hil_float_to_raw(float("nan"), 0.0, 5.0, False) == -32768


# --- frames ---------------------------------------------------------------------------------

SLOTS = [slot(i, SignalType.INTEGER, 0, 1023) for i in (3, 4, 7)]
IDS = [s.id for s in SLOTS]


@pytest.mark.parametrize("checked", [False, True])
def test_frames_are_the_python_encoders_bytes(checked: bool) -> None:
    python, c = FrameEncoder(SLOTS, checked=checked), HostFrames(IDS, checked=checked)
    for codes in ([-32768, 0, 32767], [1, -1, 255], [256, -256, 12345]):
        assert c.encode(codes) == python.encode_raw(codes)


def frame_stream(checked: bool, plan: list[tuple[list[int], int, bytes]]) -> bytes:
    encoder = FrameEncoder(SLOTS, checked=checked)
    data = b""
    for codes, fault, noise in plan:
        if fault == 5:
            encoder.seq = 0  # the sender restarted
        frame = encoder.encode_raw(codes)
        if fault == 1:
            frame = frame[: len(frame) // 2]  # cut short
        elif fault == 2:
            frame = frame[:4] + bytes([frame[4] ^ 0x10]) + frame[5:]  # a flipped bit
        elif fault == 3:
            frame = b""  # lost
        elif fault == 4:
            frame = frame * 2  # repeated
        data += noise + frame
    return data


CODES = st.lists(st.integers(-32768, 32767), min_size=3, max_size=3)
PLAN = st.lists(st.tuples(CODES, st.integers(0, 5), st.binary(max_size=4)), max_size=14)


@settings(max_examples=300, deadline=None)
@given(st.booleans(), PLAN)
def test_decoder_matches_the_python_decoder_on_faulty_streams(checked: bool, plan: Any) -> None:
    data = frame_stream(checked, plan)
    python, c = FrameDecoder(SLOTS, checked=checked), HostFrames(IDS, checked=checked)
    middle = len(data) // 3
    expected = [f.raw for f in python.feed(data[:middle]) + python.feed(data[middle:])]
    assert c.feed(data) == expected
    stats = python.stats
    assert c.stats() == {
        "frames": stats.frames,
        "bad_ids": stats.bad_ids,
        "bad_crc": stats.bad_crc,
        "duplicates": stats.duplicates,
        "lost": stats.lost,
        "skipped_bytes": stats.skipped_bytes,
        "resyncs": stats.resyncs,
    }


@pytest.mark.parametrize("vector", VECTORS["sequence"], ids=lambda v: v["name"])
def test_sequence_vector(vector: dict[str, Any]) -> None:
    encoder = FrameEncoder([slot(0, SignalType.INTEGER, 0, 1023)], checked=True)
    data = b""
    for position, seq in enumerate(vector["seqs"]):
        encoder.seq = seq
        data += encoder.encode_raw([position])
    c = HostFrames([0], checked=True)
    assert [frame[0] for frame in c.feed(data)] == vector["taken"]
    assert {key: c.stats()[key] for key in vector["stats"]} == vector["stats"]


def test_decoder_resyncs_after_a_lost_byte() -> None:
    encoder = FrameEncoder(SLOTS)
    first, second = encoder.encode_raw([1, 2, 3]), encoder.encode_raw([4, 5, 6])
    c = HostFrames(IDS)
    assert c.feed(first[:5] + first[6:] + second) == [(4, 5, 6)]
    assert c.stats()["bad_ids"] >= 1


# --- signal ids: any byte but 0xFF, any order in a frame ------------------------------------


@pytest.mark.parametrize("vector", VECTORS["frames"], ids=lambda v: v["name"])
def test_frame_vectors(vector: dict[str, Any]) -> None:
    c = HostFrames(vector["ids"], checked=vector["checked"])
    assert [list(frame) for frame in c.feed(bytes.fromhex(vector["stream"]))] == vector["frames"]
    assert {key: c.stats()[key] for key in vector["stats"]} == vector["stats"]


def any_order_stream(ids: list[int], checked: bool, plan: Any) -> bytes:
    """Frames of ``ids`` (codes, fault, noise, order) with their signals in the drawn order."""
    data = b""
    seq = 0
    for codes, fault, noise, order in plan:
        # order may repeat a signal and leave another out: a frame to refuse.
        encoder = FrameEncoder([SignalSlot(ids[k], "device", SLOTS[0].spec) for k in order], checked=checked)
        encoder.seq = seq
        frame = encoder.encode_raw([codes[k] for k in order])
        seq = encoder.seq
        if fault == 1:
            frame = frame[: len(frame) // 2]
        elif fault == 2:
            frame = frame[:-1] + bytes([frame[-1] ^ 0x01])
        elif fault == 3:
            frame = b""
        data += noise + frame
    return data


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 254), min_size=1, max_size=6, unique=True),
    st.booleans(),
    st.data(),
)
def test_decoder_matches_the_python_decoder_for_any_ids_in_any_order(
    ids: list[int], checked: bool, data: st.DataObject
) -> None:
    n = len(ids)
    orders = st.one_of(st.permutations(range(n)), st.lists(st.integers(0, n - 1), min_size=n, max_size=n))
    plan = data.draw(
        st.lists(
            st.tuples(
                st.lists(st.integers(-32768, 32767), min_size=n, max_size=n),
                st.integers(0, 3),
                st.binary(max_size=4),
                orders,
            ),
            max_size=8,
        )
    )
    stream = any_order_stream(ids, checked, plan)
    slots = [SignalSlot(i, "device", SLOTS[0].spec) for i in ids]
    python, c = FrameDecoder(slots, checked=checked), HostFrames(ids, checked=checked)
    assert c.feed(stream) == [f.raw for f in python.feed(stream)]
    stats = python.stats
    assert c.stats() == {
        "frames": stats.frames,
        "bad_ids": stats.bad_ids,
        "bad_crc": stats.bad_crc,
        "duplicates": stats.duplicates,
        "lost": stats.lost,
        "skipped_bytes": stats.skipped_bytes,
        "resyncs": stats.resyncs,
    }


def test_a_frame_of_255_signals_decodes() -> None:
    # 766 bytes: more than the 8-bit frame length the decoder once had.
    ids = list(range(254, -1, -1))
    codes = [i * 100 - 12000 for i in range(255)]
    frame = FrameEncoder([SignalSlot(i, "device", SLOTS[0].spec) for i in ids]).encode_raw(codes)
    assert HostFrames(sorted(ids)).feed(frame) == [tuple(reversed(codes))]


# --- how many signals a frame carries: 255, as in hil_bridge ---------------------------------


@pytest.mark.parametrize("checked", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("count", [1, 84, 85, 255])
def test_frames_of_up_to_255_signals_are_the_python_encoders_bytes(count: int, checked: bool) -> None:
    # 84 checked and 85 plain are the first frames longer than 255 bytes: an 8-bit size
    # made them empty.
    slots = [slot(k, SignalType.INTEGER, 0, 1) for k in range(count)]
    python = FrameEncoder(slots, checked=checked)
    python.seq = 7
    expected = python.encode_raw(list(range(count)))
    assert len(expected) == 1 + 3 * count + (3 if checked else 0)
    assert frame_encode_n(count, checked=checked, seq=7) == expected
    c = HostFrames(list(range(count)), checked=checked)
    assert c.feed(expected) == [tuple(range(count))]


@pytest.mark.parametrize("checked", [False, True], ids=["plain", "checked"])
def test_encoder_refuses_256_signals_instead_of_truncating(checked: bool) -> None:
    assert frame_encode_n(256, checked=checked) == b""
    assert frame_encode_n(1000, checked=checked) == b""


@pytest.mark.parametrize(
    "ids",
    [[], [*range(255), 0], [3, 3], [0, 255]],
    ids=["none", "256", "an_id_twice", "id_0xff"],
)
def test_decoder_init_refuses_what_python_refuses(ids: list[int]) -> None:
    with pytest.raises(HostInitError):
        HostFrames(ids)
    with pytest.raises(HilError):
        FrameDecoder([slot(i, SignalType.INTEGER, 0, 1) for i in ids])
