"""Line protocol codec: the shared vectors, robustness, checked mode, schema files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hil_bridge.core.crc import crc16
from hil_bridge.core.line_protocol import (
    Arm,
    Command,
    Drive,
    ErrorReport,
    Heartbeat,
    LineDecoder,
    LineEncoder,
    Message,
    Telemetry,
)
from hil_bridge.core.sequence import RESYNC_AFTER
from hil_bridge.core.vectors import load_vectors, message_from_fields, same_message
from hil_common.errors import HilError
from hil_devices.core.telemetry import TelemetrySchema

VECTORS = load_vectors("line_protocol")
SCHEMA = TelemetrySchema.from_mapping(VECTORS["schema"])
SETTINGS = settings(deadline=None, derandomize=True, max_examples=300)


def decode_all(data: bytes, **options: Any) -> tuple[list[Message], LineDecoder]:
    decoder = LineDecoder(schema=SCHEMA, **options)
    return decoder.feed(data), decoder


@pytest.mark.parametrize("vector", VECTORS["decode"], ids=lambda v: v["line"])
def test_documented_line_decodes_to_its_message(vector: dict[str, Any]) -> None:
    messages, decoder = decode_all(vector["line"].encode() + b"\n")
    assert len(messages) == 1, decoder.stats
    assert same_message(messages[0], message_from_fields(vector["message"], SCHEMA))


@pytest.mark.parametrize("vector", VECTORS["encode"], ids=lambda v: v["line"])
def test_encoder_writes_the_documented_bytes(vector: dict[str, Any]) -> None:
    message = message_from_fields(vector["message"], SCHEMA)
    assert LineEncoder().encode(message) == vector["line"].encode() + b"\n"


@pytest.mark.parametrize("vector", VECTORS["drop"], ids=lambda v: v["line"] or "<empty>")
def test_bad_line_is_dropped_and_counted_by_reason(vector: dict[str, Any]) -> None:
    messages, decoder = decode_all(vector["line"].encode() + b"\nCOM,GO\n")
    assert messages == [Command("GO")], "the line after a bad one must still decode"
    assert decoder.stats.dropped == {vector["reason"]: 1}
    assert vector["reason"] in decoder.stats.last_error


@pytest.mark.parametrize("vector", VECTORS["checked"], ids=lambda v: v["line"])
def test_checked_encoder_writes_the_documented_bytes(vector: dict[str, Any]) -> None:
    encoder = LineEncoder(checked=True)
    encoder.seq = vector["seq"]
    assert encoder.encode(message_from_fields(vector["message"], SCHEMA)) == vector["line"].encode() + b"\n"


def test_crc16_is_ccitt_false() -> None:
    assert crc16(b"123456789") == 0x29B1


def test_carriage_return_before_line_feed_is_ignored() -> None:
    messages, _ = decode_all(b"DRV1,2\r\nHBB,3\r\n")
    assert messages == [Drive(1, 2), Heartbeat("3")]


def test_telemetry_keeps_its_raw_line_and_schema_names() -> None:
    (message,), _ = decode_all(b"TL11500,1438\r\n")
    assert message == Telemetry("TL1", ("right", "left"), (1500.0, 1438.0), "TL11500,1438")


def test_partial_line_is_kept_until_its_end_arrives() -> None:
    decoder = LineDecoder(schema=SCHEMA)
    assert decoder.feed(b"DRV10") == []
    assert decoder.feed(b"0,-1") == []
    assert decoder.feed(b"00\nHB") == [Drive(100, -100)]
    assert decoder.feed(b"B,1\n") == [Heartbeat("1")]


def test_over_long_line_is_dropped_once_even_when_split_and_next_line_decodes() -> None:
    decoder = LineDecoder(schema=SCHEMA, max_line=16)
    out = []
    for chunk in (b"COM," + b"x" * 10, b"y" * 30, b"z" * 30, b"\nCOM,GO\n"):
        out += decoder.feed(chunk)
    assert out == [Command("GO")]
    assert decoder.stats.dropped == {"too_long": 1}


def test_line_at_the_limit_is_accepted() -> None:
    text = "COM," + "x" * 124
    messages, _ = decode_all(text.encode() + b"\n")
    assert messages == [Command("x" * 124)]


def test_non_ascii_line_is_dropped() -> None:
    messages, decoder = decode_all("COM,grüß\nCOM,GO\n".encode())
    assert messages == [Command("GO")]
    assert decoder.stats.dropped == {"not_ascii": 1}


def test_heartbeat_stamp_text_survives_unchanged_for_an_exact_echo() -> None:
    (message,), _ = decode_all(b"HBB,1700000000.123000\n")
    assert LineEncoder().encode(message) == b"HBB,1700000000.123000\n"


def test_encoder_refuses_a_line_the_receiver_would_drop() -> None:
    with pytest.raises(HilError, match="exceeds the limit of 128"):
        LineEncoder().encode(Command("x" * 130))
    with pytest.raises(HilError, match="exceeds the limit of 119"):
        LineEncoder(checked=True).encode(Command("x" * 120))


def test_encoder_refuses_line_breaks_and_non_finite_numbers() -> None:
    with pytest.raises(HilError, match="line break"):
        LineEncoder().encode(Command("GO\nSTOP"))
    with pytest.raises(HilError, match="non-finite"):
        LineEncoder().encode(Arm((float("nan"),)))


# --- checked mode ---------------------------------------------------------------


def checked_stream(messages: list[Message]) -> bytes:
    encoder = LineEncoder(checked=True)
    return b"".join(encoder.encode(m) for m in messages)


def test_checked_round_trip() -> None:
    sent = [Drive(1, -1), Heartbeat("5.5"), Command("STOP")]
    messages, decoder = decode_all(checked_stream(sent), checked=True)
    assert messages == sent
    assert decoder.stats.lost == 0


def test_checked_gap_in_sequence_counts_lost_lines() -> None:
    lines = checked_stream([Command(str(i)) for i in range(6)]).splitlines(keepends=True)
    messages, decoder = decode_all(b"".join(lines[:2] + lines[4:]), checked=True)
    assert [m.text for m in messages if isinstance(m, Command)] == ["0", "1", "4", "5"]
    assert decoder.stats.lost == 2


def test_checked_repeated_line_is_dropped_as_duplicate() -> None:
    line = checked_stream([Command("GO")])
    messages, decoder = decode_all(line + line, checked=True)
    assert messages == [Command("GO")]
    assert decoder.stats.dropped == {"duplicate": 1}


def test_plain_line_in_checked_mode_is_rejected() -> None:
    messages, decoder = decode_all(b"DRV1,2\n", checked=True)
    assert messages == []
    assert decoder.stats.dropped == {"bad_check": 1}


def numbered_lines(seqs: list[int], *, first_position: int = 0) -> bytes:
    """One checked line per sequence number, its body naming its position (``COM,N<i>``)."""
    encoder = LineEncoder(checked=True)
    data = b""
    for position, seq in enumerate(seqs, start=first_position):
        encoder.seq = seq
        data += encoder.encode(Command(f"N{position}"))
    return data


def positions(messages: list[Message]) -> list[int]:
    return [int(m.text[1:]) for m in messages if isinstance(m, Command)]


@pytest.mark.parametrize("vector", VECTORS["sequence"], ids=lambda v: v["name"])
def test_sequence_vector(vector: dict[str, Any]) -> None:
    messages, decoder = decode_all(numbered_lines(vector["seqs"]), checked=True)
    assert positions(messages) == vector["taken"]
    stats = decoder.stats
    assert {"lost": stats.lost, "duplicate": stats.dropped["duplicate"], "resyncs": stats.resyncs} == vector[
        "stats"
    ]


def test_a_peer_restarted_after_thousands_of_lines_is_followed_from_its_third_line() -> None:
    # The issue: an MCU reset after 2200 lines had the receiver drop 2198 as repeats.
    before, after = list(range(2200)), list(range(50))
    messages, decoder = decode_all(numbered_lines(before + after), checked=True)
    assert positions(messages) == [*range(2200), *range(2200 + RESYNC_AFTER - 1, 2250)]
    assert decoder.stats.dropped == {"duplicate": RESYNC_AFTER - 1}
    assert (decoder.stats.resyncs, decoder.stats.lost) == (1, 0)


def test_reset_forgets_a_run_of_repeats() -> None:
    decoder = LineDecoder(checked=True)
    decoder.feed(numbered_lines([500, 0, 1]))
    decoder.reset()
    assert positions(decoder.feed(numbered_lines([2, 3], first_position=3))) == [3, 4]
    assert decoder.stats.resyncs == 0


@SETTINGS
@given(st.integers(0, 2**16 - 1), st.lists(st.integers(0, 120), min_size=1, max_size=6))
def test_each_restart_of_the_sender_costs_at_most_two_lines(first: int, lives: list[int]) -> None:
    """A sender that starts at ``first`` and then restarts at 0, sending ``lives[i]`` lines each time."""
    data, starts, position = b"", [], 0
    for life, length in enumerate(lives):
        start = first if life == 0 else 0
        data += numbered_lines([(start + k) & 0xFFFF for k in range(length)], first_position=position)
        starts.append(position)
        position += length
    taken = positions(decode_all(data, checked=True)[0])
    for life, (start, length) in enumerate(zip(starts, lives, strict=True)):
        got = [p for p in taken if start <= p < start + length]
        skipped = length - len(got)
        assert skipped <= (0 if life == 0 else RESYNC_AFTER - 1)
        assert got == list(range(start + skipped, start + length)), "only the first lines of a life are lost"


@SETTINGS
@given(st.integers(0, 2**16 - 1), st.lists(st.integers(1, 5), min_size=1, max_size=40))
def test_a_repeated_line_is_taken_once_however_often_it_repeats(first: int, copies: list[int]) -> None:
    encoder = LineEncoder(checked=True)
    encoder.seq = first
    data = b"".join(encoder.encode(Command(f"N{i}")) * n for i, n in enumerate(copies))
    messages, decoder = decode_all(data, checked=True)
    assert positions(messages) == list(range(len(copies)))
    assert decoder.stats.dropped["duplicate"] == sum(copies) - len(copies)
    assert decoder.stats.resyncs == decoder.stats.lost == 0


# --- property-based ---------------------------------------------------------------

text = st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=60)
finite = st.floats(allow_nan=False, allow_infinity=False, width=64, min_value=-1e12, max_value=1e12)
messages_st: st.SearchStrategy[Message] = st.one_of(
    st.builds(Drive, st.integers(-(10**6), 10**6), st.integers(-(10**6), 10**6)),
    st.builds(Arm, st.lists(finite, min_size=1, max_size=6).map(tuple)),
    st.builds(Heartbeat.at, st.floats(min_value=0, max_value=4e9)),
    st.builds(ErrorReport, text),
    st.builds(Command, text),
    st.builds(
        lambda v: Telemetry("TL1", ("right", "left"), tuple(v)), st.lists(finite, min_size=2, max_size=2)
    ),
)


def fits(message: Message, *, checked: bool = True) -> bool:
    try:
        LineEncoder(checked=checked).encode(message)
    except HilError:
        return False
    return True


@SETTINGS
@given(st.lists(messages_st, max_size=20), st.booleans())
def test_any_messages_round_trip(sent: list[Message], checked: bool) -> None:
    assume(all(fits(m) for m in sent))
    encoder = LineEncoder(checked=checked)
    data = b"".join(encoder.encode(m) for m in sent)
    decoded, decoder = decode_all(data, checked=checked)
    assert len(decoded) == len(sent), decoder.stats
    assert all(same_message(d, s) for d, s in zip(decoded, sent, strict=True))


@SETTINGS
@given(st.lists(messages_st, min_size=1, max_size=8), st.data())
def test_every_split_point_gives_the_same_messages(sent: list[Message], data: st.DataObject) -> None:
    assume(all(fits(m) for m in sent))
    stream = b"".join(LineEncoder().encode(m) for m in sent)
    cut = data.draw(st.integers(0, len(stream)))
    decoder = LineDecoder(schema=SCHEMA)
    decoded = decoder.feed(stream[:cut]) + decoder.feed(stream[cut:])
    assert len(decoded) == len(sent)


@SETTINGS
@given(st.binary(max_size=600), st.lists(st.integers(1, 64), max_size=20), st.booleans())
def test_garbage_never_raises_and_next_line_after_it_decodes(
    garbage: bytes, chunks: list[int], checked: bool
) -> None:
    good = [Command("AFTER"), Drive(7, -7)]
    encoder = LineEncoder(checked=checked)
    # A corrupted line ends at its line feed; the first line after it must decode.
    stream = garbage + b"\n" + b"".join(encoder.encode(m) for m in good)
    decoder = LineDecoder(schema=SCHEMA, checked=checked)
    decoded: list[Message] = []
    position = 0
    for size in chunks:
        decoded += decoder.feed(stream[position : position + size])
        position += size
    decoded += decoder.feed(stream[position:])
    assert decoded[-2:] == good


@SETTINGS
@given(st.lists(messages_st, min_size=3, max_size=6), st.data())
def test_checked_mode_never_accepts_a_flipped_bit(sent: list[Message], data: st.DataObject) -> None:
    assume(all(fits(m) for m in sent))
    stream = bytearray(checked_stream(sent))
    first_end = stream.index(b"\n")
    bit = data.draw(st.integers(0, 8 * first_end - 1))  # any bit of the first line's body
    stream[bit // 8] ^= 1 << (bit % 8)
    decoded, _ = decode_all(bytes(stream), checked=True)
    assert all(any(same_message(d, s) for s in sent) for d in decoded), "corrupted line accepted"
    assert same_message(decoded[-1], sent[-1])


# --- schema files -------------------------------------------------------------------


def test_shipped_telemetry_schema_loads() -> None:
    schema = TelemetrySchema.from_yaml(
        Path(__file__).resolve().parents[2] / "hil_devices" / "config" / "telemetry.yaml"
    )
    assert schema.lists["TL1"] == ("right", "left")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("- TL1\n", "mapping"),
        ("TX1: [a]\n", "'TX1': list id"),
        ("TL1: []\n", "TL1: expected a non-empty list"),
        ("TL1: [a, 2b]\n", "TL1: field 1 ('2b')"),
        ("TL1: [a, a]\n", "TL1: duplicate"),
        ("TL1: [a\n", "cannot read"),
    ],
)
def test_bad_schema_file_error_names_file_and_key(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "schema.yaml"
    path.write_text(content)
    with pytest.raises(HilError, match=str(path)) as info:
        TelemetrySchema.from_yaml(path)
    assert expected in str(info.value)
