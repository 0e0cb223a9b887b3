"""Signal protocol decoding throughput: ``FrameDecoder.feed`` in frames per second.

The layout has exactly 8 signals per frame: the OUTPUT signals (simulator -> MCU) of
a device set built in code from the shipped device library (config/devices/*.json):
two limit switches, an HC-SR04, a Sharp IR ranger and four photoresistors, INTEGER
and FLOAT signals mixed. Frames carrying random values inside each signal's range are
encoded with ``FrameEncoder`` (plain: 25 bytes a frame; checked, with sequence number
and CRC: 28 bytes), cut into 64-byte chunks as a non-blocking serial read would return
them, and fed chunk by chunk to a fresh decoder, which also maps every code back to
its physical value. The figure is the best of several repeats (garbage collector off
while timing); every run first checks that every frame decodes to the codes it was
encoded from.

The baseline, measured in the same run on the same plain chunks, is a naive
byte-at-a-time state machine in Python: wait for 0xFF, collect 3*N bytes, unpack the
values with ``int.from_bytes``; no id check, no resynchronisation, no physical values.

Prints one JSON object (bench/ convention); with ``--plot PATH`` also draws a bar chart.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from _benchlib import bar_plot, best_time, emit, progress

from hil_bridge.core.signal_protocol import FrameDecoder, FrameEncoder, SignalLayout, SignalSlot
from hil_devices.core.devices import Direction, device_set_from_mapping
from hil_devices.core.library import load_device_library

ROOT = Path(__file__).resolve().parent.parent
DEVICE_DIR = ROOT / "ws" / "src" / "hil_devices" / "config" / "devices"
#: The issue's target for the plain decoder.
TARGET_FRAMES_PER_S = 5_000
SIGNALS = 8
DEVICE_SET = {
    "devices": [
        {"name": "bumper_left", "device": "limit_switch"},
        {"name": "bumper_right", "device": "limit_switch"},
        {"name": "ultrasonic", "device": "hc_sr04"},
        {"name": "ir", "device": "sharp_ir"},
        {"name": "light_0", "device": "photoresistor"},
        {"name": "light_1", "device": "photoresistor"},
        {"name": "light_2", "device": "photoresistor"},
        {"name": "light_3", "device": "photoresistor"},
    ]
}


def layout_slots() -> list[SignalSlot]:
    """The 8 OUTPUT slots of the benchmark's device set."""
    library = load_device_library([DEVICE_DIR])
    devices = device_set_from_mapping(DEVICE_SET, library, source="bench/signal_decode.py")
    slots = SignalLayout(devices).outputs
    if len(slots) != SIGNALS or any(s.spec.direction is not Direction.OUTPUT for s in slots):
        raise RuntimeError(f"expected {SIGNALS} OUTPUT signals, got {[s.key for s in slots]}")
    return slots


def make_stream(
    slots: list[SignalSlot], frames: int, seed: int, *, checked: bool
) -> tuple[bytes, list[tuple[int, ...]]]:
    """``frames`` frames of random in-range values, and the codes each one carries."""
    rng = np.random.default_rng(seed)
    encoder = FrameEncoder(slots, checked=checked)
    lows = np.array([s.spec.min for s in slots])
    highs = np.array([s.spec.max for s in slots])
    values = rng.uniform(lows, highs, size=(frames, len(slots)))
    parts: list[bytes] = []
    codes: list[tuple[int, ...]] = []
    for row in values:
        raw = encoder.raw_codes([float(v) for v in row])
        codes.append(tuple(raw))
        parts.append(encoder.encode_raw(raw))
    return b"".join(parts), codes


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


class NaiveFrameParser:
    """Baseline: one byte at a time; 0xFF starts a frame, then 3*N bytes, no checks."""

    def __init__(self, signals: int) -> None:
        self.need = 3 * signals
        self.waiting = True
        self.buffer = bytearray()

    def feed(self, data: bytes) -> list[list[int]]:
        out: list[list[int]] = []
        buffer = self.buffer
        need = self.need
        for byte in data:
            if self.waiting:
                if byte == 0xFF:
                    self.waiting = False
                    buffer.clear()
            else:
                buffer.append(byte)
                if len(buffer) == need:
                    out.append(
                        [int.from_bytes(buffer[i + 1 : i + 3], "big", signed=True) for i in range(0, need, 3)]
                    )
                    self.waiting = True
        return out


def check_decoder(
    slots: list[SignalSlot], chunks: list[bytes], codes: list[tuple[int, ...]], checked: bool
) -> None:
    decoder = FrameDecoder(slots, checked=checked)
    frames = [frame for chunk in chunks for frame in decoder.feed(chunk)]
    stats = decoder.stats
    mode = "checked" if checked else "plain"
    if stats.bad_ids or stats.bad_crc or stats.lost or stats.duplicates or stats.skipped_bytes:
        raise RuntimeError(f"{mode} decoder rejected bytes of a clean stream: {stats}")
    if [frame.raw for frame in frames] != codes:
        raise RuntimeError(f"{mode} decoder did not return the codes that were encoded")


def check_naive(chunks: list[bytes], codes: list[tuple[int, ...]]) -> None:
    parser = NaiveFrameParser(SIGNALS)
    frames = [tuple(frame) for chunk in chunks for frame in parser.feed(chunk)]
    if frames != codes:
        raise RuntimeError("the naive baseline parser did not return the codes that were encoded")


def decode_stream(slots: list[SignalSlot], chunks: list[bytes], checked: bool) -> int:
    decoder = FrameDecoder(slots, checked=checked)
    feed = decoder.feed
    count = 0
    for chunk in chunks:
        count += len(feed(chunk))
    return count


def naive_stream(chunks: list[bytes]) -> int:
    parser = NaiveFrameParser(SIGNALS)
    feed = parser.feed
    count = 0
    for chunk in chunks:
        count += len(feed(chunk))
    return count


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--frames", type=int, default=40_000, help="frames in the stream")
    parser.add_argument("--chunk", type=int, default=64, help="bytes per feed() call")
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per parser; the best counts")
    parser.add_argument("--seed", type=int, default=1, help="seed of the frames' values")
    parser.add_argument("--plot", help="write a PNG bar chart here")
    args = parser.parse_args()

    slots = layout_slots()
    plain, plain_codes = make_stream(slots, args.frames, args.seed, checked=False)
    checked, checked_codes = make_stream(slots, args.frames, args.seed, checked=True)
    plain_chunks = chunked(plain, args.chunk)
    checked_chunks = chunked(checked, args.chunk)
    count = args.frames
    progress(
        "signal_decode",
        f"{count} frames of {SIGNALS} signals, plain {len(plain)} B, "
        f"checked {len(checked)} B, {args.chunk}-byte chunks",
    )
    check_decoder(slots, plain_chunks, plain_codes, checked=False)
    check_decoder(slots, checked_chunks, checked_codes, checked=True)
    check_naive(plain_chunks, plain_codes)

    plain_s = best_time(
        lambda: decode_stream(slots, plain_chunks, False),
        count,
        repeats=args.repeats,
        name="signal_decode",
        label="plain",
        unit="frames",
    )
    checked_s = best_time(
        lambda: decode_stream(slots, checked_chunks, True),
        count,
        repeats=args.repeats,
        name="signal_decode",
        label="checked",
        unit="frames",
    )
    naive_s = best_time(
        lambda: naive_stream(plain_chunks),
        count,
        repeats=args.repeats,
        name="signal_decode",
        label="naive byte-at-a-time",
        unit="frames",
    )

    rates = {"plain": count / plain_s, "checked": count / checked_s, "naive byte-at-a-time": count / naive_s}
    if args.plot:
        bar_plot(
            rates,
            target=TARGET_FRAMES_PER_S,
            unit="frames",
            title=f"signal frame decoding, {SIGNALS} signals, 64-byte chunks",
            path=args.plot,
        )
    emit(
        "signal_decode",
        figures={
            "plain_frames_per_s": round(rates["plain"]),
            "checked_frames_per_s": round(rates["checked"]),
            "plain_signals_per_s": round(rates["plain"] * SIGNALS),
            "plain_us_per_frame": round(plain_s / count * 1e6, 3),
            "checked_us_per_frame": round(checked_s / count * 1e6, 3),
        },
        target={"plain_frames_per_s": f">= {TARGET_FRAMES_PER_S}"},
        baseline={
            "naive_frames_per_s": round(rates["naive byte-at-a-time"]),
            "naive_us_per_frame": round(naive_s / count * 1e6, 3),
        },
        notes=(
            f"{count} frames of {SIGNALS} OUTPUT signals (2 limit_switch, hc_sr04, sharp_ir, "
            f"4 photoresistor from config/devices), {len(plain) // count} B plain / "
            f"{len(checked) // count} B checked, fed in {args.chunk}-byte chunks to a fresh "
            f"FrameDecoder (codes and physical values), best of {args.repeats}, gc off while "
            "timing; baseline: byte-at-a-time Python state machine, int.from_bytes, "
            "raw codes only, no validation"
        ),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
