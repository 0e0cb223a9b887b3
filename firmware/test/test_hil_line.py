"""The firmware line codec (hil_line.c, host build) against the shared vectors and the Python codec."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    _number,
)
from hil_bridge.core.vectors import load_vectors
from hil_devices.core.telemetry import TelemetrySchema
from support.firmware_host import HostLineDecoder, HostMessage, format_fixed, line_finish
from support.mcu_vectors import SOURCE_VECTORS

VECTORS = load_vectors("line_protocol", directory=SOURCE_VECTORS)
SCHEMA = TelemetrySchema.from_mapping(VECTORS["schema"])
ARITY = {list_id: len(names) for list_id, names in SCHEMA.lists.items()}
INT32 = (-(2**31), 2**31 - 1)


def host(*, checked: bool = False) -> HostLineDecoder:
    return HostLineDecoder(checked=checked, schema=ARITY)


def expected_record(fields: dict[str, Any]) -> tuple[str, str | tuple[float, ...]]:
    kind = fields["type"]
    if kind == "DRV":
        return "DRV", f"{fields['left']},{fields['right']}"
    if kind == "HBB":
        return "HBB", str(fields["stamp"])
    if kind in ("COM", "ERR"):
        return kind, str(fields["text"])
    values = tuple(float(v) for v in fields["values"])
    return (fields["list_id"] if kind == "TL" else "ARM"), values


def record(message: HostMessage) -> tuple[str, str | tuple[float, ...]]:
    if message.type == "ARM" or message.type.startswith("TL"):
        return message.type, message.numbers
    return message.type, message.text


def python_record(message: Message) -> tuple[str, str | tuple[float, ...]]:
    """What the C decoder reports for the message the Python decoder made of the same line."""
    if isinstance(message, Drive):
        left, right = (min(max(v, INT32[0]), INT32[1]) for v in (message.left, message.right))
        return "DRV", f"{left},{right}"
    if isinstance(message, Heartbeat):
        return "HBB", message.stamp
    if isinstance(message, Command):
        return "COM", message.text
    if isinstance(message, ErrorReport):
        return "ERR", message.text
    if isinstance(message, Arm):
        return "ARM", message.values
    assert isinstance(message, Telemetry)
    return message.list_id, message.values


# --- the shared vectors ----------------------------------------------------------------


@pytest.mark.parametrize("vector", VECTORS["decode"], ids=lambda v: v["line"])
def test_decode_vector(vector: dict[str, Any]) -> None:
    messages = host().feed(vector["line"].encode() + b"\n")
    assert [record(m) for m in messages] == [expected_record(vector["message"])]


@pytest.mark.parametrize("vector", VECTORS["drop"], ids=lambda v: v["line"] or "<empty>")
def test_drop_vector_is_counted_by_its_reason(vector: dict[str, Any]) -> None:
    decoder = host()
    assert decoder.feed(vector["line"].encode() + b"\n") == []
    stats = decoder.stats()
    assert stats[vector["reason"]] == 1
    assert sum(v for k, v in stats.items() if k not in ("messages", "lost", "resyncs")) == 1


@pytest.mark.parametrize("vector", VECTORS["encode"], ids=lambda v: v["line"])
def test_encode_vector_fields_are_formatted_as_the_python_encoder_does(vector: dict[str, Any]) -> None:
    fields = vector["message"]
    line: str = vector["line"]
    if fields["type"] in ("TL", "ARM"):
        # The firmware writes numbers from fixed point: tenths are enough for every vector.
        head = fields["list_id"] if fields["type"] == "TL" else "ARM"
        text = ",".join(format_fixed(round(float(v) * 1000), 3) for v in fields["values"])
        assert head + text == line
    assert line_finish(line.encode()) == line.encode() + b"\n"


@pytest.mark.parametrize("vector", VECTORS["checked"], ids=lambda v: v["line"])
def test_checked_vector_suffix(vector: dict[str, Any]) -> None:
    line = vector["line"].encode()
    assert line_finish(line[:-9], checked=True, seq=vector["seq"]) == line + b"\n"
    decoder = host(checked=True)
    assert [record(m) for m in decoder.feed(line + b"\n")] == [expected_record(vector["message"])]


# --- behaviour beyond the vectors -----------------------------------------------------------


def test_decoder_resyncs_after_an_overlong_line_and_counts_it_once() -> None:
    decoder = host()
    messages = decoder.feed(b"DRV" + b"1" * 300 + b",2\nDRV1,2\n")
    assert [record(m) for m in messages] == [("DRV", "1,2")]
    assert decoder.stats()["too_long"] == 1


def test_crlf_and_split_lines_decode() -> None:
    decoder = host()
    assert decoder.feed(b"HBB,1.5\r") == []
    assert [record(m) for m in decoder.feed(b"\nCOM,ST")] == [("HBB", "1.5")]
    assert [record(m) for m in decoder.feed(b"OP\n")] == [("COM", "STOP")]


def test_checked_decoder_counts_gaps_and_drops_repeats() -> None:
    encoder = LineEncoder(checked=True)
    lines = [encoder.encode(Command(f"C{i}")) for i in range(5)]
    decoder = host(checked=True)
    messages = decoder.feed(lines[0] + lines[3] + lines[3] + lines[4])
    assert [m.text for m in messages] == ["C0", "C3", "C4"]
    stats = decoder.stats()
    assert (stats["lost"], stats["duplicate"]) == (2, 1)


@pytest.mark.parametrize("vector", VECTORS["sequence"], ids=lambda v: v["name"])
def test_sequence_vector(vector: dict[str, Any]) -> None:
    data = b"".join(
        line_finish(f"COM,N{position}".encode(), checked=True, seq=seq)
        for position, seq in enumerate(vector["seqs"])
    )
    decoder = host(checked=True)
    assert [int(m.text[1:]) for m in decoder.feed(data)] == vector["taken"]
    assert {key: decoder.stats()[key] for key in vector["stats"]} == vector["stats"]


def test_encoder_refuses_a_body_the_receiver_would_drop() -> None:
    assert line_finish(b"X" * 128) == b"X" * 128 + b"\n"
    assert line_finish(b"X" * 129) == b""
    assert line_finish(b"X" * 120, checked=True) == b""  # 120 + 9 > 128


@pytest.mark.parametrize(
    ("scaled", "decimals", "text"),
    [
        (1875, 1, "187.5"),
        (2000, 1, "200"),
        (-25, 2, "-0.25"),
        (0, 1, "0"),
        (1005, 3, "1.005"),
        (-(2**31), 0, "-2147483648"),
    ],
)
def test_format_fixed(scaled: int, decimals: int, text: str) -> None:
    assert format_fixed(scaled, decimals) == text


# --- properties: the C decoder is the Python decoder --------------------------------------

#: Bytes that make interesting lines: ids, digits, signs, separators, line endings, junk.
PIECES = st.sampled_from(
    [b"DRV", b"HBB", b"COM", b"ERR", b"ARM", b"TL1", b"TL2", b"TL3", b"TLx", b"DR", b",", b",,", b"-", b".",
     b"e", b"E+", b"1", b"42", b"007", b"99999999999", b"1.5", b".5", b"1e400", b"nan", b"inf", b"STOP", b" ",
     b"\r", b"\n", b"\n", b"\n", b"\xff", b"\x00", b"*", b"*0001", b"A" * 60]
)  # fmt: skip


def same_as_python(data: bytes, *, checked: bool = False) -> None:
    python = LineDecoder(schema=SCHEMA, checked=checked)
    c = host(checked=checked)
    # The C decoder takes the bytes in one call, Python in two: chunking must not matter.
    middle = len(data) // 2
    expected = [python_record(m) for m in python.feed(data[:middle]) + python.feed(data[middle:])]
    assert [record(m) for m in c.feed(data)] == expected
    stats = c.stats()
    assert stats["messages"] == python.stats.messages
    assert stats["lost"] == python.stats.lost
    assert stats["resyncs"] == python.stats.resyncs
    for reason, count in stats.items():
        if reason not in ("messages", "lost", "resyncs"):
            assert count == python.stats.dropped[reason], reason


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=40).map(b"".join))
def test_decoder_matches_the_python_decoder_on_any_bytes(data: bytes) -> None:
    same_as_python(data)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["DRV5,-5", "HBB,1.25", "COM,GO", "TL11,2", "ARM1"]), st.integers(0, 5)),
        max_size=16,
    ),
    st.integers(0, 2**16 - 1),
)
def test_checked_decoder_matches_the_python_decoder_under_loss_corruption_and_restarts(
    plan: list[tuple[str, int]], start: int
) -> None:
    encoder = LineEncoder(checked=True)
    encoder.seq = start
    data = b""
    for body, fault in plan:
        if fault == 4:
            encoder.seq = 0  # the sender restarted
        elif fault == 5:
            encoder.seq = (encoder.seq - 2) & 0xFFFF  # it sends its last two numbers again
        line = line_finish(body.encode(), checked=True, seq=encoder.seq)
        encoder.seq = (encoder.seq + 1) & 0xFFFF
        if fault == 1:
            continue  # lost
        if fault == 2:
            line = line[:2] + bytes([line[2] ^ 0x01]) + line[3:]  # corrupted
        data += line * (2 if fault == 3 else 1)  # 3: repeated
    same_as_python(data, checked=True)


@settings(max_examples=300, deadline=None)
@given(st.integers(-(10**8), 10**8), st.integers(0, 3))
def test_fixed_point_numbers_read_as_the_python_encoder_writes_them(scaled: int, decimals: int) -> None:
    assert format_fixed(scaled, decimals) == _number(scaled / 10**decimals)
