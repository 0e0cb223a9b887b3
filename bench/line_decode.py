"""Line protocol decoding throughput: ``LineDecoder.feed`` in lines per second.

The stream is what the robot MCU sends on the command link during a 30 Hz run: every
frame a TL1 (motor state) and a TL2 (sensors, the fields of the shipped telemetry
schema) line and the echo of the brain's DRV command, a heartbeat twice a second,
now and then an ERR or a COM reply. It is encoded with ``LineEncoder`` (plain, and
checked with sequence numbers and CRC), cut into 64-byte chunks as a non-blocking
serial read would return them, and fed chunk by chunk to a fresh decoder; the figure
is the best of several repeats (garbage collector off while timing). Every run first
checks that every line decodes to the message it was made from.

The baseline, measured in the same run on the same plain bytes, is the parser one
would write without the decoder: ``io.BufferedReader(io.BytesIO(...)).readline()``,
then ``split(",")`` and ``float()`` per field, with no validation at all.

Prints one JSON object (bench/ convention); with ``--plot PATH`` also draws a bar chart.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import Any

import numpy as np
from _benchlib import bar_plot, best_time, emit, progress

from hil_bridge.core.line_protocol import (
    Command,
    Drive,
    ErrorReport,
    Heartbeat,
    LineDecoder,
    LineEncoder,
    Message,
    Telemetry,
)
from hil_devices.core.telemetry import TelemetrySchema

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_PATH = ROOT / "ws" / "src" / "hil_devices" / "config" / "telemetry.yaml"
#: The issue's target for the plain decoder.
TARGET_LINES_PER_S = 50_000
RATE_HZ = 30
COMMANDS = ("STOP", "GO", "VERSION 1.4.2", "RESET")


def make_messages(schema: TelemetrySchema, count: int, seed: int) -> list[Message]:
    """``count`` messages of a 30 Hz run of the robot MCU, in the order it sends them."""
    rng = np.random.default_rng(seed)
    tl1 = schema.lists["TL1"]
    tl2 = schema.lists["TL2"]
    out: list[Message] = []
    frame = 0
    t0 = 1_700_000_000.0
    while len(out) < count:
        right, left = (int(v) for v in rng.integers(-255, 256, 2))
        out.append(Telemetry("TL1", tl1, (float(right), float(left))))
        sensors = (
            round(float(rng.uniform(2.0, 200.0)), 1),  # ultrasonic_cm
            float(rng.integers(80, 600)),  # ir_adc
            *(float(v) for v in rng.integers(0, 1024, 4)),  # light_0..3
            *(float(v) for v in rng.integers(0, 2, 2)),  # bumper_left, bumper_right
            round(float(rng.uniform(0.0, 360.0)), 1),  # heading_deg
        )
        out.append(Telemetry("TL2", tl2, sensors))
        out.append(Drive(left, right))
        if frame % (RATE_HZ // 2) == 0:
            out.append(Heartbeat.at(t0 + frame / RATE_HZ))
        if frame % 97 == 50:
            out.append(ErrorReport(f"DRV value {int(rng.integers(256, 1000))} out of range"))
        if frame % 151 == 75:
            out.append(Command(COMMANDS[frame % len(COMMANDS)]))
        frame += 1
    return out[:count]


def encode(messages: list[Message], *, checked: bool) -> bytes:
    encoder = LineEncoder(checked=checked)
    return b"".join(encoder.encode(message) for message in messages)


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def same(decoded: Message, original: Message) -> bool:
    if isinstance(original, Telemetry):
        if not isinstance(decoded, Telemetry):
            return False
        return (decoded.list_id, decoded.names, decoded.values) == (
            original.list_id,
            original.names,
            original.values,
        )
    return decoded == original


def check_decoder(
    schema: TelemetrySchema, chunks: list[bytes], messages: list[Message], checked: bool
) -> None:
    decoder = LineDecoder(schema=schema, checked=checked)
    decoded = [message for chunk in chunks for message in decoder.feed(chunk)]
    mode = "checked" if checked else "plain"
    if decoder.stats.dropped_total or decoder.stats.lost:
        raise RuntimeError(f"{mode} decoder dropped lines: {decoder.stats}")
    if len(decoded) != len(messages) or not all(map(same, decoded, messages)):
        raise RuntimeError(f"{mode} decoder did not return the messages that were encoded")


def decode_stream(schema: TelemetrySchema, chunks: list[bytes], checked: bool) -> int:
    decoder = LineDecoder(schema=schema, checked=checked)
    feed = decoder.feed
    count = 0
    for chunk in chunks:
        count += len(feed(chunk))
    return count


def naive_parse(data: bytes) -> int:
    """The baseline: readline, split, float; no validation, no partial-line handling."""
    reader = io.BufferedReader(io.BytesIO(data))
    count = 0
    parsed: list[Any] = []
    while line := reader.readline():
        text = line.decode("ascii").rstrip("\r\n")
        ident, payload = text[:3], text[3:].lstrip(",")
        if ident in ("ERR", "COM"):
            parsed.append((ident, payload))
        else:
            parsed.append((ident, [float(field) for field in payload.split(",")]))
        count += 1
    return count


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lines", type=int, default=30_000, help="lines in the stream")
    parser.add_argument("--chunk", type=int, default=64, help="bytes per feed() call")
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per parser; the best counts")
    parser.add_argument("--seed", type=int, default=1, help="seed of the stream's values")
    parser.add_argument("--plot", help="write a PNG bar chart here")
    args = parser.parse_args()

    schema = TelemetrySchema.from_yaml(SCHEMA_PATH)
    messages = make_messages(schema, args.lines, args.seed)
    plain = encode(messages, checked=False)
    checked = encode(messages, checked=True)
    plain_chunks = chunked(plain, args.chunk)
    checked_chunks = chunked(checked, args.chunk)
    count = len(messages)
    progress(
        "line_decode",
        f"{count} lines, plain {len(plain)} B, checked {len(checked)} B, {args.chunk}-byte chunks",
    )
    check_decoder(schema, plain_chunks, messages, checked=False)
    check_decoder(schema, checked_chunks, messages, checked=True)

    plain_s = best_time(
        lambda: decode_stream(schema, plain_chunks, False),
        count,
        repeats=args.repeats,
        name="line_decode",
        label="plain",
        unit="lines",
    )
    checked_s = best_time(
        lambda: decode_stream(schema, checked_chunks, True),
        count,
        repeats=args.repeats,
        name="line_decode",
        label="checked",
        unit="lines",
    )
    naive_s = best_time(
        lambda: naive_parse(plain),
        count,
        repeats=args.repeats,
        name="line_decode",
        label="naive readline",
        unit="lines",
    )

    rates = {"plain": count / plain_s, "checked": count / checked_s, "naive readline": count / naive_s}
    if args.plot:
        bar_plot(
            rates,
            target=TARGET_LINES_PER_S,
            unit="lines",
            title="line protocol decoding, 64-byte chunks",
            path=args.plot,
        )
    kinds = {type(m).__name__ for m in messages}
    emit(
        "line_decode",
        figures={
            "plain_lines_per_s": round(rates["plain"]),
            "checked_lines_per_s": round(rates["checked"]),
            "plain_mb_per_s": round(len(plain) / plain_s / 1e6, 2),
            "checked_mb_per_s": round(len(checked) / checked_s / 1e6, 2),
            "plain_us_per_line": round(plain_s / count * 1e6, 3),
            "checked_us_per_line": round(checked_s / count * 1e6, 3),
        },
        target={"plain_lines_per_s": f">= {TARGET_LINES_PER_S}"},
        baseline={
            "naive_lines_per_s": round(rates["naive readline"]),
            "naive_us_per_line": round(naive_s / count * 1e6, 3),
        },
        notes=(
            f"{count} lines ({', '.join(sorted(kinds))}; TL1/TL2 per config/telemetry.yaml) "
            f"of a {RATE_HZ} Hz MCU stream, {len(plain) / count:.1f} B/line plain, fed in "
            f"{args.chunk}-byte chunks to a fresh LineDecoder, best of {args.repeats}, "
            "gc off while timing; baseline: "
            "io.BufferedReader.readline + split(',') + float() on the same plain bytes, "
            "no validation"
        ),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
