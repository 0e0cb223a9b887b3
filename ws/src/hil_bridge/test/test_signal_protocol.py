"""Signal protocol: Arduino map() to the bit, frames, resynchronisation, checked mode."""

from __future__ import annotations

import ctypes
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_bridge.core.sequence import RESYNC_AFTER
from hil_bridge.core.signal_protocol import (
    MAX_SIGNALS,
    RAW_MAX,
    RAW_MIN,
    FrameDecoder,
    FrameEncoder,
    SignalLayout,
    SignalSlot,
    arduino_map,
    rounding_map,
)
from hil_bridge.core.vectors import load_vectors
from hil_common.errors import HilError
from hil_devices.core.devices import (
    DeviceConfig,
    DeviceInstance,
    Direction,
    PinMode,
    SignalSpec,
    SignalType,
    load_device_set,
)
from hil_devices.core.library import load_device_library
from hil_devices.errors import HilDevicesError

CONFIG = Path(__file__).resolve().parents[2] / "hil_devices" / "config"
VECTORS = load_vectors("signal_protocol")
SETTINGS = settings(deadline=None, derandomize=True, max_examples=300)


def c_map(x: int, in_min: int, in_max: int, out_min: int, out_max: int) -> int:
    """Arduino's map() evaluated with C's 32-bit longs (ctypes), an independent oracle."""
    long = ctypes.c_int32
    numerator = long(long(x - in_min).value * long(out_max - out_min).value).value
    denominator = long(in_max - in_min).value
    quotient = int(numerator / denominator)  # C division truncates toward zero
    return long(quotient + out_min).value


def spec(
    name: str, low: float, high: float, *, kind: SignalType = SignalType.INTEGER, out: bool = True
) -> SignalSpec:
    return SignalSpec(
        name=name,
        direction=Direction.OUTPUT if out else Direction.INPUT,
        type=kind,
        min=low,
        max=high,
        mode=PinMode.DIGITAL,
        default=low,
    )


def layout_of(*specs: SignalSpec) -> SignalLayout:
    return SignalLayout([DeviceInstance("dev", DeviceConfig("dev", tuple(specs)))])


def raw_slots(ids: list[int]) -> list[SignalSlot]:
    """Slots with the given ids whose codes are their values (full int16 range)."""
    return [SignalSlot(i, "dev", spec(f"s{k}", RAW_MIN, RAW_MAX - 1)) for k, i in enumerate(ids)]


DEMO = SignalLayout(
    load_device_set(CONFIG / "demo_robot_devices.yaml", load_device_library([CONFIG / "devices"]))
)


# --- value mapping ------------------------------------------------------------------


@pytest.mark.parametrize("vector", VECTORS["plain"], ids=lambda v: f"{v['x']}_in_{v['min']}..{v['max']}")
def test_plain_mapping_is_arduino_map_to_the_bit(vector: dict[str, Any]) -> None:
    raw = arduino_map(vector["x"], vector["min"], vector["max"], RAW_MIN, RAW_MAX)
    assert raw == vector["raw"]
    assert arduino_map(raw, RAW_MIN, RAW_MAX, vector["min"], vector["max"]) == vector["back"]


@pytest.mark.parametrize("vector", VECTORS["checked"], ids=lambda v: f"{v['x']}_in_{v['min']}..{v['max']}")
def test_checked_mapping_rounds(vector: dict[str, Any]) -> None:
    raw = rounding_map(vector["x"], vector["min"], vector["max"], RAW_MIN, RAW_MAX)
    assert raw == vector["raw"]
    assert rounding_map(raw, RAW_MIN, RAW_MAX, vector["min"], vector["max"]) == vector["back"]


@pytest.mark.parametrize(
    ("low", "high"), [(0, 1), (0, 1023), (0, 1024), (-100, 100), (-32768, -1), (5, 32772)]
)
def test_decode_converters_equal_the_reference_maps_for_every_code(low: int, high: int) -> None:
    slot = layout_of(spec("s", low, high)).slots[0]
    plain, checked = slot.converter(checked=False), slot.converter(checked=True)
    for raw in range(RAW_MIN, RAW_MAX + 1):
        assert plain(raw) == arduino_map(raw, RAW_MIN, RAW_MAX, low, high)
        assert checked(raw) == rounding_map(raw, RAW_MIN, RAW_MAX, low, high)


def test_plain_mapping_is_not_invertible_as_documented() -> None:
    slot = layout_of(spec("enable", 0, 1024)).slots[0]
    assert slot.from_raw(slot.to_raw(512)) == 511
    assert slot.from_raw(slot.to_raw(1)) == 0


@SETTINGS
@given(
    st.integers(-40000, 40000), st.integers(-40000, 40000), st.integers(1, 70000), st.integers(-40000, 40000)
)
def test_arduino_map_matches_c_long_arithmetic_even_when_it_overflows(
    x: int, low: int, span: int, out: int
) -> None:
    assert arduino_map(x, low, low + span, out, out + 65535) == c_map(x, low, low + span, out, out + 65535)


@SETTINGS
@given(st.integers(-32768, 32767 - 1), st.integers(1, 32767), st.data())
def test_checked_mapping_round_trips_every_integer_in_range(low: int, span: int, data: st.DataObject) -> None:
    high = min(low + span, 32767)
    x = data.draw(st.integers(low, high))
    raw = rounding_map(x, low, high, RAW_MIN, RAW_MAX)
    assert RAW_MIN <= raw <= RAW_MAX
    assert rounding_map(raw, RAW_MIN, RAW_MAX, low, high) == x


def test_checked_mapping_round_trips_all_of_0_to_1024_exhaustively() -> None:
    slot = layout_of(spec("enable", 0, 1024)).slots[0]
    assert all(slot.from_raw(slot.to_raw(x, checked=True), checked=True) == x for x in range(1025))


@pytest.mark.parametrize("checked", [False, True])
def test_float_signal_maps_ends_exactly_and_inside_within_one_code(checked: bool) -> None:
    slot = layout_of(spec("distance", 0.0, 200.0, kind=SignalType.FLOAT)).slots[0]
    assert slot.to_raw(0.0, checked=checked) == RAW_MIN
    assert slot.to_raw(200.0, checked=checked) == RAW_MAX
    assert slot.from_raw(RAW_MIN) == 0.0
    assert slot.from_raw(RAW_MAX) == 200.0
    for value in (0.001, 12.34, 99.99, 150.0, 199.999):
        assert abs(slot.from_raw(slot.to_raw(value, checked=checked)) - value) <= 200.0 / 65535


# --- layout ---------------------------------------------------------------------------


def test_signal_ids_count_from_zero_in_device_order_and_split_by_direction() -> None:
    assert [s.id for s in DEMO.slots] == list(range(len(DEMO.slots)))
    assert [s.key for s in DEMO.inputs][:3] == [
        ("motor_left", "enable"),
        ("motor_left", "a"),
        ("motor_left", "b"),
    ]
    assert all(s.spec.direction is Direction.OUTPUT for s in DEMO.outputs)


def test_id_0xff_is_never_assigned() -> None:
    specs = tuple(spec(f"s{i}", 0, 1) for i in range(255))
    assert max(s.id for s in layout_of(*specs).slots) == 254
    with pytest.raises(HilError, match="at most 255"):
        layout_of(*(spec(f"s{i}", 0, 1) for i in range(256)))


# --- frames -----------------------------------------------------------------------------


def values_for(slots: list[Any]) -> st.SearchStrategy[list[float]]:
    def one(slot: Any) -> st.SearchStrategy[float]:
        if slot.spec.type is SignalType.INTEGER:
            return st.integers(int(slot.spec.min), int(slot.spec.max)).map(float)
        return st.floats(slot.spec.min, slot.spec.max)

    return st.tuples(*(one(s) for s in slots)).map(list)


def test_documented_plain_frame_layout() -> None:
    layout = layout_of(spec("a", 0, 1), spec("b", 0, 1024))
    assert FrameEncoder(layout.outputs).encode([1, 512]) == bytes([0xFF, 0, 0x7F, 0xFF, 1, 0xFF, 0xFF])


def test_documented_checked_frame_layout() -> None:
    layout = layout_of(spec("a", 0, 1))
    frame = FrameEncoder(layout.outputs, checked=True).encode([1])
    assert frame[:5] == bytes([0xFF, 0x00, 0x00, 0x7F, 0xFF])
    assert int.from_bytes(frame[5:], "big") == __import__("binascii").crc_hqx(frame[1:5], 0xFFFF)


@SETTINGS
@given(st.data(), st.booleans())
def test_frames_round_trip_on_the_demo_layout(data: st.DataObject, checked: bool) -> None:
    for slots in (DEMO.inputs, DEMO.outputs):
        values = data.draw(values_for(slots))
        encoder = FrameEncoder(slots, checked=checked)
        (frame,) = FrameDecoder(slots, checked=checked).feed(encoder.encode(values))
        assert frame.raw == tuple(encoder.raw_codes(values))
        for slot, sent, got in zip(slots, values, frame.values, strict=True):
            if slot.spec.type is SignalType.INTEGER:
                # Truncating map() may lose one unit; the rounding map loses nothing.
                assert sent - got in ((0,) if checked else (0, 1))
            else:
                assert abs(sent - got) <= (slot.spec.max - slot.spec.min) / 65535 * 1.0001


def stream_of(slots: list[Any], rows: list[list[float]], *, checked: bool) -> bytes:
    encoder = FrameEncoder(slots, checked=checked)
    return b"".join(encoder.encode(row) for row in rows)


@SETTINGS
@given(st.lists(values_for(DEMO.outputs), min_size=1, max_size=6), st.booleans(), st.data())
def test_every_split_point_decodes_every_frame(
    rows: list[list[float]], checked: bool, data: st.DataObject
) -> None:
    stream = stream_of(DEMO.outputs, rows, checked=checked)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=5)))
    decoder = FrameDecoder(DEMO.outputs, checked=checked)
    frames = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        frames += decoder.feed(stream[start:end])
    assert len(frames) == len(rows)
    assert decoder.stats.skipped_bytes == 0


def test_byte_at_a_time_decoding() -> None:
    stream = stream_of(DEMO.outputs, [[v.spec.default for v in DEMO.outputs]] * 3, checked=True)
    decoder = FrameDecoder(DEMO.outputs, checked=True)
    assert sum(len(decoder.feed(bytes([b]))) for b in stream) == 3


@pytest.mark.parametrize("checked", [False, True])
@pytest.mark.parametrize("lost_index", [0, 1, 2, 5, 20])
def test_lost_byte_costs_one_frame_and_decoding_resumes(checked: bool, lost_index: int) -> None:
    rows = [[float(i % 2), 0, 100.0, 2.5, 500, 500, 500, 500, 90.0] for i in range(6)]
    stream = bytearray(stream_of(DEMO.outputs, rows, checked=checked))
    size = len(stream) // len(rows)
    del stream[size + lost_index]  # a byte of the second frame
    frames = FrameDecoder(DEMO.outputs, checked=checked).feed(bytes(stream))
    assert len(frames) == len(rows) - 1


@pytest.mark.parametrize("checked", [False, True])
def test_start_in_mid_frame_resynchronises_at_the_next_start(checked: bool) -> None:
    rows = [[1, 0, 100.0, 2.5, 500, 500, 500, 500, 90.0]] * 4
    stream = stream_of(DEMO.outputs, rows, checked=checked)
    size = len(stream) // 4
    for offset in range(1, size):
        assert len(FrameDecoder(DEMO.outputs, checked=checked).feed(stream[offset:])) == 3


@SETTINGS
@given(st.binary(max_size=300), st.booleans(), st.lists(st.integers(1, 40), max_size=10))
def test_garbage_never_raises_and_checked_decodes_the_first_frame_after_it(
    garbage: bytes, checked: bool, chunks: list[int]
) -> None:
    slots = DEMO.outputs
    rows = [[1, 1, 33.0, 1.0, 10, 20, 30, 40, 180.0], [0, 1, 44.0, 2.0, 50, 60, 70, 80, 270.0]]
    tail = stream_of(slots, rows, checked=checked)
    stream = garbage + tail
    decoder = FrameDecoder(slots, checked=checked)
    frames = []
    position = 0
    for size in chunks:
        frames += decoder.feed(stream[position : position + size])
        position += size
    frames += decoder.feed(stream[position:])
    expected = FrameDecoder(slots, checked=checked).feed(tail)
    if checked:
        # The CRC rejects every false start, so both frames after the garbage decode.
        assert [f.raw for f in frames[-2:]] == [f.raw for f in expected]
    else:
        # Plain mode has no CRC: a false start in the garbage can swallow the first
        # frame if its bytes line up with the ids; the frame after is decoded.
        assert frames[-1].raw == expected[-1].raw


@SETTINGS
@given(st.binary(max_size=300).map(lambda b: b.replace(b"\xff", b"")))
def test_plain_decodes_the_first_frame_after_garbage_without_start_bytes(garbage: bytes) -> None:
    row = [1, 1, 33.0, 1.0, 10, 20, 30, 40, 180.0]
    frames = FrameDecoder(DEMO.outputs).feed(garbage + stream_of(DEMO.outputs, [row], checked=False))
    assert len(frames) == 1


@SETTINGS
@given(st.data())
def test_checked_mode_detects_every_single_bit_flip(data: st.DataObject) -> None:
    rows = [data.draw(values_for(DEMO.outputs)) for _ in range(3)]
    stream = bytearray(stream_of(DEMO.outputs, rows, checked=True))
    size = len(stream) // 3
    bit = data.draw(st.integers(8 * size, 16 * size - 1))  # a bit of the middle frame
    stream[bit // 8] ^= 1 << (bit % 8)
    decoder = FrameDecoder(DEMO.outputs, checked=True)
    frames = decoder.feed(bytes(stream))
    sent = FrameDecoder(DEMO.outputs, checked=True).feed(stream_of(DEMO.outputs, rows, checked=True))
    assert [f.raw for f in frames] == [sent[0].raw, sent[2].raw]
    # Whether the flip hit the start byte (frame skipped) or anything after it (CRC
    # or id check fails), the sequence gap reports the frame as lost.
    assert decoder.stats.lost == 1


def test_checked_sequence_gap_counts_lost_frames() -> None:
    slots = DEMO.outputs
    row = [s.spec.default for s in slots]
    encoder = FrameEncoder(slots, checked=True)
    frames = [encoder.encode(row) for _ in range(5)]
    decoder = FrameDecoder(slots, checked=True)
    assert len(decoder.feed(frames[0] + frames[3] + frames[4])) == 3
    assert decoder.stats.lost == 2


def numbered_frames(seqs: list[int], *, first_position: int = 0) -> bytes:
    """One checked frame of the single id 0 per sequence number, carrying its position."""
    encoder = FrameEncoder(raw_slots([0]), checked=True)
    data = b""
    for position, seq in enumerate(seqs, start=first_position):
        encoder.seq = seq
        data += encoder.encode_raw([position])
    return data


@pytest.mark.parametrize("vector", VECTORS["sequence"], ids=lambda v: v["name"])
def test_sequence_vector(vector: dict[str, Any]) -> None:
    decoder = FrameDecoder(raw_slots([0]), checked=True)
    frames = decoder.feed(numbered_frames(vector["seqs"]))
    assert [f.raw[0] for f in frames] == vector["taken"]
    assert {key: getattr(decoder.stats, key) for key in vector["stats"]} == vector["stats"]


@SETTINGS
@given(st.integers(0, 255), st.lists(st.integers(0, 300), min_size=1, max_size=6))
def test_each_restart_of_the_sending_side_costs_at_most_two_frames(first: int, lives: list[int]) -> None:
    """A sender (the virtual MCU, a bridge board) that starts at ``first``, then resets to 0."""
    data, starts, position = b"", [], 0
    for life, length in enumerate(lives):
        start = first if life == 0 else 0
        data += numbered_frames([(start + k) & 0xFF for k in range(length)], first_position=position)
        starts.append(position)
        position += length
    taken = [f.raw[0] for f in FrameDecoder(raw_slots([0]), checked=True).feed(data)]
    for life, (start, length) in enumerate(zip(starts, lives, strict=True)):
        got = [p for p in taken if start <= p < start + length]
        skipped = length - len(got)
        assert skipped <= (0 if life == 0 else RESYNC_AFTER - 1)
        assert got == list(range(start + skipped, start + length))


def test_a_repeated_frame_is_dropped_and_never_resyncs() -> None:
    encoder = FrameEncoder(raw_slots([0]), checked=True)
    frames = [encoder.encode_raw([k]) for k in range(4)]
    decoder = FrameDecoder(raw_slots([0]), checked=True)
    got = decoder.feed(frames[0] + frames[1] * 4 + frames[2] + frames[3] * 2)
    assert [f.raw[0] for f in got] == [0, 1, 2, 3]
    assert (decoder.stats.duplicates, decoder.stats.resyncs) == (4, 0)


# --- how many signals a frame carries: as many as ids, 255, as in the firmware -----------------


@pytest.mark.parametrize("checked", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("count", [84, 85, 255])
def test_frames_of_up_to_255_signals_round_trip(count: int, checked: bool) -> None:
    # 84 checked and 85 plain are the first frames longer than 255 bytes.
    slots = raw_slots(list(range(count)))
    codes = [k * 97 - 12345 for k in range(count)]
    frame = FrameEncoder(slots, checked=checked).encode_raw(codes)
    assert len(frame) == 1 + 3 * count + (3 if checked else 0)
    assert [list(f.raw) for f in FrameDecoder(slots, checked=checked).feed(frame)] == [codes]


@pytest.mark.parametrize("codec", [FrameEncoder, FrameDecoder])
def test_a_frame_of_256_signals_is_refused(codec: Any) -> None:
    many = [SignalSlot(k % MAX_SIGNALS, "dev", spec(f"s{k}", 0, 1)) for k in range(MAX_SIGNALS + 1)]
    with pytest.raises(HilError, match="256 signals in one frame; at most 255"):
        codec(many)


@pytest.mark.parametrize("codec", [FrameEncoder, FrameDecoder])
def test_a_slot_id_outside_a_byte_below_0xff_is_refused(codec: Any) -> None:
    with pytest.raises(HilError, match=r"signal dev\.s0: id 255 is outside 0\.\.254"):
        codec(raw_slots([255]))


def bank_config(folder: Path, name: str, count: int) -> Path:
    signals = [
        {"name": f"pin{k}", "direction": "INPUT", "type": "INTEGER", "min": 0, "max": 1, "mode": "DIGITAL"}
        for k in range(count)
    ]
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"name": name, "signals": signals}))
    return path


@pytest.mark.parametrize("extra", [0, 1])
def test_a_device_set_of_255_signals_one_way_loads_and_256_is_refused_naming_it(
    tmp_path: Path, extra: int
) -> None:
    library = load_device_library([bank_config(tmp_path, "bank", 255), bank_config(tmp_path, "one", 1)])
    device_set = tmp_path / "big.yaml"
    device_set.write_text(
        "devices:\n  - {name: b, device: bank}\n" + ("  - {name: o, device: one}\n" if extra else "")
    )
    if extra:
        with pytest.raises(HilDevicesError, match=rf"{device_set}: 256 signals on one link.*at most 255"):
            load_device_set(device_set, library)
        return
    layout = SignalLayout(load_device_set(device_set, library))
    assert len(layout.inputs) == MAX_SIGNALS
    encoder = FrameEncoder(layout.inputs, checked=True)
    (frame,) = FrameDecoder(layout.inputs, checked=True).feed(encoder.encode([1.0] * MAX_SIGNALS))
    assert frame.values == (1.0,) * MAX_SIGNALS


def test_out_of_range_value_is_clamped_and_counted_and_nan_sends_the_default() -> None:
    layout = layout_of(spec("distance", 0.0, 200.0, kind=SignalType.FLOAT))
    encoder = FrameEncoder(layout.outputs)
    decoder = FrameDecoder(layout.outputs)
    (frame,) = decoder.feed(encoder.encode([250.0]))
    assert frame.values == (200.0,)
    assert encoder.stats.clamped == {"dev.distance": 1}
    (frame,) = decoder.feed(encoder.encode([float("nan")]))
    assert frame.values == (0.0,)
    assert encoder.stats.invalid == {"dev.distance": 1}


def test_encoder_refuses_a_wrong_number_of_values() -> None:
    with pytest.raises(HilError, match="expected 9 values, got 2"):
        FrameEncoder(DEMO.outputs).encode([1, 2])


# --- signal ids: explicit, any byte but 0xFF, any order in a frame ----------------------------


def test_explicit_ids_are_kept_and_the_others_take_the_lowest_free_ids() -> None:
    led = DeviceConfig("led", (spec("active", 0, 1, out=False),))
    sonar = DeviceConfig("sonar", (replace(spec("distance", 0, 200), id=1), spec("spare", 0, 1)))
    layout = SignalLayout(
        [DeviceInstance("a", led), DeviceInstance("b", sonar), DeviceInstance("c", led, {"active": 254})]
    )
    assert [(s.key, s.id) for s in layout.slots] == [
        (("a", "active"), 0),
        (("b", "distance"), 1),
        (("b", "spare"), 2),
        (("c", "active"), 254),
    ]


def test_an_id_used_twice_on_a_link_is_refused_naming_both_signals() -> None:
    config = DeviceConfig("sonar", (replace(spec("distance", 0, 200), id=7),))
    with pytest.raises(HilError, match=r"signal back.distance: id 7 is already front.distance's"):
        SignalLayout([DeviceInstance("front", config), DeviceInstance("back", config)])


@pytest.mark.parametrize(
    ("value", "message"), [(255, "start byte"), (256, "outside 0..254"), (-1, "outside")]
)
def test_an_id_that_is_no_byte_below_0xff_is_refused(value: int, message: str) -> None:
    config = DeviceConfig("sonar", (spec("distance", 0, 200),))
    with pytest.raises(HilError, match=f"signal s.distance: field 'id'.*{message}"):
        SignalLayout([DeviceInstance("s", config, {"distance": value})])


@pytest.mark.parametrize("vector", VECTORS["frames"], ids=lambda v: v["name"])
def test_frame_vectors(vector: dict[str, Any]) -> None:
    decoder = FrameDecoder(raw_slots(vector["ids"]), checked=vector["checked"])
    frames = decoder.feed(bytes.fromhex(vector["stream"]))
    assert [list(f.raw) for f in frames] == vector["frames"]
    assert {key: getattr(decoder.stats, key) for key in vector["stats"]} == vector["stats"]


def test_decoder_refuses_slots_with_one_id_twice() -> None:
    with pytest.raises(HilError, match="must differ"):
        FrameDecoder(raw_slots([3, 3]))


DISTINCT_IDS = st.lists(st.integers(0, 254), min_size=1, max_size=12, unique=True)


@SETTINGS
@given(DISTINCT_IDS, st.booleans(), st.data())
def test_signals_in_any_order_decode_to_the_same_frame(
    ids: list[int], checked: bool, data: st.DataObject
) -> None:
    slots = raw_slots(ids)
    rows = data.draw(
        st.lists(
            st.lists(st.integers(RAW_MIN, RAW_MAX - 1), min_size=len(ids), max_size=len(ids)),
            min_size=1,
            max_size=4,
        )
    )
    stream = b""
    sender = FrameEncoder(slots, checked=checked)
    for row in rows:
        order = data.draw(st.permutations(range(len(ids))))
        # The same sequence counter, the signals in another order: another sender's frame.
        shuffled = FrameEncoder([slots[k] for k in order], checked=checked)
        shuffled.seq = sender.seq
        sender.encode_raw(row)
        stream += shuffled.encode_raw([row[k] for k in order])
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=4)))
    decoder = FrameDecoder(slots, checked=checked)
    frames = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        frames += decoder.feed(stream[start:end])
    assert [list(f.raw) for f in frames] == rows
    assert decoder.stats.bad_ids == decoder.stats.skipped_bytes == decoder.stats.lost == 0


@SETTINGS
@given(DISTINCT_IDS.filter(lambda ids: len(ids) >= 2), st.booleans(), st.data())
def test_a_frame_with_an_id_twice_or_a_foreign_id_is_refused(
    ids: list[int], checked: bool, data: st.DataObject
) -> None:
    slots = raw_slots(ids)
    victim = data.draw(st.integers(0, len(ids) - 1))
    other = data.draw(st.integers(0, 254).filter(lambda i: i != ids[victim]))
    wrong = [*ids]
    wrong[victim] = other  # another signal's id (then one is there twice) or a foreign one
    frame = FrameEncoder(raw_slots(wrong), checked=checked).encode_raw([0] * len(ids))
    decoder = FrameDecoder(slots, checked=checked)
    assert decoder.feed(frame) == []
    assert decoder.stats.bad_ids >= 1
