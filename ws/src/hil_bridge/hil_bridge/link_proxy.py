"""``hil_link_proxy``: put a faulty serial line in front of a port.

Example: the virtual MCU serves its command link at ``mcu_command`` in the user's
runtime folder (a bare name is a link there: :mod:`hil_common.core.runtime_dir`); run
``hil_link_proxy --upstream mcu_command --link mcu_command_faulty --drop 0.001
--corrupt 0.001 --baud 38400`` and point the control loop at ``mcu_command_faulty``.
The ``--link`` folder is made and checked as every pty link's is
(:func:`~hil_bridge.core.pty_link.prepare_link_folder`): exit 2 if another user could
change it. Statistics are printed every ``--report`` seconds and at exit, which
SIGINT or SIGTERM ask for (:mod:`hil_common.core.shutdown`).
"""

from __future__ import annotations

import argparse
import sys

from hil_bridge.core.fault_proxy import FaultProxy
from hil_bridge.core.faults import FaultModel
from hil_bridge.core.pty_link import same_path
from hil_common.core.arg_types import finite, integer
from hil_common.core.shutdown import shutdown_signals
from hil_common.errors import HilError


def _report(proxy: FaultProxy) -> str:
    down, up = proxy.down.stats, proxy.up.stats
    return (
        f"down {down.bytes_in}->{down.bytes_out} B (drop {down.dropped}, corrupt {down.corrupted}, "
        f"dup {down.duplicated}, delay {down.delayed}); up {up.bytes_in}->{up.bytes_out} B "
        f"(drop {up.dropped}, corrupt {up.corrupted}, dup {up.duplicated}, delay {up.delayed}); "
        f"upstream {proxy.upstream.state.value}"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the proxy until SIGINT or SIGTERM."""
    parser = argparse.ArgumentParser(prog="hil_link_proxy", description=__doc__)
    parser.add_argument(
        "--upstream",
        required=True,
        help="port to connect to (device or pty path; a bare name: runtime folder)",
    )
    parser.add_argument(
        "--link",
        required=True,
        help="path of the faulty port to create (symlink; a bare name: runtime folder)",
    )
    parser.add_argument(
        "--upstream-baud", type=integer(minimum=1), default=115200, help="baud rate to open upstream with"
    )
    parser.add_argument(
        "--baud", type=integer(minimum=1), default=None, help="emulate this line speed (10 bits per byte)"
    )
    parser.add_argument("--drop", type=float, default=0.0, help="probability a byte is lost")
    parser.add_argument("--corrupt", type=float, default=0.0, help="probability a byte gets one bit flipped")
    parser.add_argument("--duplicate", type=float, default=0.0, help="probability a byte arrives twice")
    parser.add_argument("--delay", type=float, default=0.0, help="probability a byte is held back")
    parser.add_argument(
        "--delay-ms", type=finite(minimum=0.0), default=10.0, help="how long a held-back byte waits"
    )
    parser.add_argument("--seed", type=int, default=None, help="random seed for reproducible faults")
    parser.add_argument(
        "--report", type=finite(above=0.0), default=5.0, help="seconds between statistics lines (> 0)"
    )
    args = parser.parse_args(argv)
    if same_path(args.link, args.upstream):
        parser.error(f"--link and --upstream are the same path {args.link}: the proxy would serve itself")
    try:
        model = FaultModel(
            drop=args.drop,
            corrupt=args.corrupt,
            duplicate=args.duplicate,
            delay=args.delay,
            delay_s=args.delay_ms / 1000.0,
            baud=args.baud,
            seed=args.seed,
        )
        proxy = FaultProxy(args.upstream, args.link, model, upstream_baud=args.upstream_baud)
    except HilError as exc:
        print(f"hil_link_proxy: {exc}", file=sys.stderr)
        return 2
    # Installed already when started as hil_link_proxy. The handlers only note the
    # request (an Event.set in a handler deadlocks when a second signal lands in it).
    signals = shutdown_signals()
    proxy.start()
    print(f"hil_link_proxy: {args.upstream} <-> {proxy.path}", flush=True)
    try:
        while not signals.wait(args.report):
            print(f"hil_link_proxy: {_report(proxy)}", flush=True)
    finally:
        proxy.stop()
        print(f"hil_link_proxy: {_report(proxy)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
