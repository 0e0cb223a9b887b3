"""Motion platform emulator: a UDP process that behaves like the Stewart platform.

It answers every datagram with the reply of :class:`PlatformStateMachine` (protocol
in :mod:`hil_platform.core.motion_platform`), sent back to the datagram's sender.
One platform serves every host, as the real one would.

Usage::

    hil_platform_emulator [--host 127.0.0.1] [--port 0] [--ready-file PATH]
    python -m hil_platform.platform_emulator ...

When it is listening it prints ``hil_platform_emulator: listening on HOST:PORT``
(and, with ``--ready-file``, first writes the bound port number to that file). It
exits 0 on SIGINT or SIGTERM (:mod:`hil_common.core.shutdown`: the handler only notes
the request, which ends the select at once and never interrupts the handling of a
datagram half way) and 1 if it cannot bind or write the ready file.
"""

from __future__ import annotations

import argparse
import os
import selectors
import sys
from pathlib import Path

from hil_common.core.shutdown import ShutdownSignals, shutdown_signals
from hil_platform.core.motion_platform import PlatformStateMachine
from hil_platform.core.udp_link import UdpLink
from hil_platform.errors import HilPlatformError

PROG = "hil_platform_emulator"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(prog=PROG, description="Emulates the Stewart motion platform over UDP.")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="UDP port (default: 0, any free port)")
    parser.add_argument("--ready-file", type=Path, help="write the bound port number here once listening")
    return parser.parse_args(argv)


def write_ready_file(path: Path, port: int) -> None:
    """Write ``port`` to ``path`` atomically, so a reader never sees a partial file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(f"{port}\n")
    tmp.replace(path)


def serve(link: UdpLink, machine: PlatformStateMachine, signals: ShutdownSignals) -> None:
    """Answer datagrams on ``link`` until a stop is requested."""
    with selectors.DefaultSelector() as selector:
        selector.register(link.fileno(), selectors.EVENT_READ, "link")
        selector.register(signals.fileno(), selectors.EVENT_READ, "stop")
        while not signals.requested:
            for key, _ in selector.select():
                if key.data == "stop":
                    return
                for data, sender in link.poll():
                    link.send(machine.handle(data), sender)


def main(argv: list[str] | None = None) -> int:
    """Run the emulator until SIGINT or SIGTERM; return the exit status."""
    args = parse_args(argv)
    machine = PlatformStateMachine()
    try:
        link = UdpLink((args.host, args.port))
    except HilPlatformError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    signals = shutdown_signals()  # installed already when started as hil_platform_emulator
    with link:
        host, port = link.local_address
        if args.ready_file is not None:
            try:
                write_ready_file(args.ready_file, port)
            except OSError as exc:
                print(f"{PROG}: cannot write --ready-file {args.ready_file}: {exc}", file=sys.stderr)
                return 1
        print(f"{PROG}: listening on {host}:{port}", flush=True)
        serve(link, machine, signals)
        accepted = {c.name: n for c, n in machine.accepted.items()}
        rejected = {e.name: n for e, n in machine.rejected.items()}
        print(
            f"{PROG}: stopped in state {machine.state.name}; accepted {accepted}, rejected {rejected}, "
            f"send errors {link.send_errors}, receive errors {link.receive_errors}",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
