"""Motion platform setpoint round trip over UDP loopback, through the emulator process.

The platform emulator (``python -m hil_platform.platform_emulator``) runs as its own
process; this one engages and starts it, then sends DOF setpoints (a small cycle of
poses inside the limits), one in flight, and times each from send to the arrival of
its STATE reply. Every reply is checked byte for byte against the expected one (the
actuator lengths of that pose), so a late reply is never counted for the next
setpoint. The baseline is the same round trip of the same datagrams against a
trivial raw-socket UDP echo process started the same way, measured in the same run
and interleaved in blocks: the difference is the cost of decoding, the state
machine, the inverse kinematics and the reply.

Prints one JSON object (bench/ convention); with ``--plot PATH`` also draws the two
latency distributions.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _benchlib import emit, interleaved_round_trips, latency_histogram, latency_stats

from hil_platform.core.motion_platform import (
    Command,
    ErrorCode,
    PlatformGeometry,
    PlatformState,
    Reply,
    actuator_lengths,
    join_status,
    pack,
    unpack,
)
from hil_platform.core.udp_link import Address, UdpLink

#: DESIGN.md: the real-time path answers within 15 ms.
TARGET_P99_US = 15000.0
TIMEOUT_S = 1.0
START_TIMEOUT_S = 30.0
POSES = 64
KINDS = ("platform", "echo")


def run_echo(ready_file: Path) -> int:
    """The baseline peer: send every datagram straight back, nothing else."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    tmp = ready_file.with_name(ready_file.name + ".tmp")
    tmp.write_text(f"{sock.getsockname()[1]}\n")
    tmp.replace(ready_file)
    try:
        while True:
            data, sender = sock.recvfrom(65535)
            sock.sendto(data, sender)
    except (KeyboardInterrupt, SystemExit):
        return 0
    finally:
        sock.close()


@contextlib.contextmanager
def peer(args: list[str], ready_file: Path) -> Iterator[Address]:
    """Start a peer process in its own group, yield its address, and stop it."""
    proc = subprocess.Popen(
        [sys.executable, *args, "--ready-file", str(ready_file)],
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready_file.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{args} did not become ready (exit status {proc.returncode})")
            time.sleep(0.02)
        yield ("127.0.0.1", int(ready_file.read_text()))
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def exchange(link: UdpLink, dest: Address, request: bytes, expected: bytes) -> float | None:
    """One round trip: the time until ``expected`` arrives from ``dest``, or None."""
    sent = time.perf_counter()
    link.send(request, dest)
    deadline = sent + TIMEOUT_S
    while True:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            return None
        link.wait(remaining)
        for data, sender in link.poll():
            if sender == dest and data == expected:
                return time.perf_counter() - sent


def setpoints() -> list[tuple[bytes, bytes]]:
    """(DOF setpoint, expected STATE reply) for a cycle of poses inside the limits."""
    geometry = PlatformGeometry()
    out = []
    spare = join_status(PlatformState.STARTED, ErrorCode.NONE, Command.DOF)
    for k in range(POSES):
        phase = 2 * math.pi * k / POSES
        pose = (0.1 * math.sin(phase), 0.08 * math.cos(phase), 0.01 * math.sin(2 * phase), 0.0, 0.05, 0.0)
        request = pack(Command.DOF, pose)
        lengths = actuator_lengths(unpack(request).values, geometry)
        out.append((request, pack(Reply.STATE, tuple(float(v) for v in lengths), spare=spare)))
    return out


def start_platform(link: UdpLink, dest: Address) -> None:
    for command in (Command.ENGAGE, Command.START):
        link.send(pack(command), dest)
        if not link.wait(5.0):
            raise RuntimeError(f"the emulator did not answer {command.name}")
        reply = unpack(link.poll()[0][0])
        if reply.type != Reply.STATE:
            raise RuntimeError(f"the emulator refused {command.name}: spare {reply.spare:#010x}")


def measure(samples: int, block: int) -> dict[str, Any]:
    pairs = setpoints()
    with (
        tempfile.TemporaryDirectory(prefix="platform_udp_") as tmp,
        peer(["-m", "hil_platform.platform_emulator", "--port", "0"], Path(tmp) / "platform") as platform,
        peer([__file__, "--echo"], Path(tmp) / "echo") as echo,
        UdpLink() as link,
    ):
        dests = {"platform": platform, "echo": echo}
        start_platform(link, platform)

        def once(kind: str, n: int) -> float | None:
            request, reply = pairs[n % len(pairs)]
            return exchange(link, dests[kind], request, reply if kind == "platform" else request)

        for kind in KINDS:  # warm-up: caches, allocator, scheduler
            for n in range(200):
                once(kind, n)
        rtts, lost = interleaved_round_trips(KINDS, once, samples=samples, block=block, name="platform_udp")

    return {
        "figures": latency_stats(rtts["platform"], prefix="", lost=lost["platform"]),
        "baseline": latency_stats(rtts["echo"], prefix="echo_", lost=lost["echo"]),
        "rtts": rtts,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--echo", action="store_true", help="run the baseline echo peer (used internally)")
    parser.add_argument("--ready-file", type=Path, help="echo peer: write its port here (used internally)")
    parser.add_argument("--samples", type=int, default=5000, help="round trips per peer")
    parser.add_argument("--plot", help="write a PNG of the latency distributions here")
    args = parser.parse_args()
    if args.echo:
        if args.ready_file is None:
            parser.error("--echo needs --ready-file")
        return run_echo(args.ready_file)
    result = measure(args.samples, block=250)
    if args.plot:
        series = {
            "platform emulator": result["rtts"]["platform"],
            "raw UDP echo (baseline)": result["rtts"]["echo"],
        }
        latency_histogram(series, title="DOF setpoint -> reply over UDP loopback", path=args.plot)
    emit(
        "platform_udp",
        figures=result["figures"],
        target={"rtt_p99_us": f"<= {TARGET_P99_US:g}"},
        baseline=result["baseline"],
        notes=(
            f"{args.samples} DOF setpoints per peer, one in flight, UDP loopback, replies checked "
            "byte for byte; baseline: a raw-socket UDP echo process with the same datagrams"
        ),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
