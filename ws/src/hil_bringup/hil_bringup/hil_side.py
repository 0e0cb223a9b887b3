"""``hil_side``: one side of a distributed run as processes, where ``ros2 launch`` is missing.

    hil_side world --robots 5 --hil-robots 5 --radio --rtf 1
    hil_side robot --robot-index 2 --robots 5 --hil-robots 5 --radio
    hil_side robot --robot rab_style --mcu simavr     # brain none: prints the pty your program opens

What ``world.launch.py`` and ``robot.launch.py`` start (the same
:func:`hil_bringup.core.graph.describe_side`), each node as its installed executable
with a parameter file written from the graph (and ``--params-file``'s after it), in its
namespace. The robot side follows
the world's ``/clock`` (``use_sim_time``, true as in every graph). SIGINT/SIGTERM stop every process (SIGINT,
then SIGKILL after 5 s); a process that exits on its own ends the side with status 1,
naming it (status 2 if it exited 2: a configuration error it names). The processes die
with the side however it dies (a SIGKILL too: :mod:`hil_common.core.children`), so
nothing of a killed side drives on or holds its links. Exit 2 on bad options, and on
a robot side whose link folder another user could change
(:func:`hil_bringup.core.graph.prepare_link_folder`). Parameter files go in a private
folder in the user's runtime folder.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from hil_bringup.core.graph import (
    SIDES,
    GraphOptions,
    describe_side,
    params_file,
    prepare_link_folder,
    user_ports,
    your_program,
)
from hil_bringup.core.options import add_arguments, from_namespace
from hil_bringup.errors import HilBringupError
from hil_common.core.arg_types import integer
from hil_common.core.children import die_with_parent
from hil_common.core.paths import share_dir
from hil_common.core.runtime_dir import runtime_dir
from hil_common.core.shutdown import ignore_further_stop_signals, shutdown_signals
from hil_common.errors import HilError

#: Seconds a process has to stop on SIGINT before it is killed.
STOP_GRACE_S = 5.0
#: Exit status of a process (and of the side) on a configuration error.
CONFIG_ERROR_STATUS = 2


def build_parser() -> argparse.ArgumentParser:
    """The command line: its own options and the run options (GraphOptions)."""
    parser = argparse.ArgumentParser(prog="hil_side", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "side", choices=SIDES, help="world (simulator, radio) or robot (one HIL robot's chain)"
    )
    parser.add_argument(
        "--robot-index", type=integer(minimum=0), default=0, help="robot side: which HIL robot (0, 1, ...)"
    )
    # The run's options (GraphOptions), as declared there: give both sides the same ones.
    add_arguments(parser, GraphOptions)
    return parser


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The parsed command line (exit 2 naming a bad option)."""
    return build_parser().parse_args(argv)


def commands(args: argparse.Namespace, folder: Path) -> list[tuple[str, list[str]]]:
    """``(name, command)`` of every process of the side; parameter files go in ``folder``."""
    given = from_namespace(GraphOptions, args)
    if given["mcu"] == "serial":
        raise HilBringupError("--mcu serial: a side with real boards runs with robot.launch.py")
    options = GraphOptions(**given)  # use_sim_time: the robot side follows the world's /clock
    nodes, processes = describe_side(options, args.side, robot=args.robot_index)
    if args.side == "robot":
        prepare_link_folder(options)
        for robot, path, baud in user_ports(options):
            if robot == args.robot_index:
                print(your_program(path, baud), flush=True)
    out = []
    for node in nodes:
        params = folder / f"{node.key.replace('/', '_')}.yaml"
        params.write_text(yaml.safe_dump(params_file([node])))
        ros_args = ["--ros-args", "-r", f"__node:={node.name}", "--params-file", str(params)]
        if options.params_file:  # the user's, after the graph's: its values win
            ros_args += ["--params-file", str(Path(options.params_file).resolve())]
        if node.namespace:
            ros_args[1:1] = ["-r", f"__ns:=/{node.namespace}"]
        out.append((node.key, [str(executable(node.package, node.executable)), *ros_args]))
    out += [(p.name, [str(executable(p.package, p.executable)), *p.arguments]) for p in processes]
    return out


def executable(package: str, name: str) -> Path:
    """Where ``ros2 run <package> <name>`` finds it: ``<prefix>/lib/<package>/<name>``."""
    path = share_dir(package).parent.parent / "lib" / package / name
    if not path.exists():
        raise HilBringupError(f"{package}/{name}: no executable at {path} (is the workspace built?)")
    return path


def run(args: argparse.Namespace) -> int:
    """Start the side's processes and keep them until a stop signal or one of them ends."""
    signals = shutdown_signals()
    with tempfile.TemporaryDirectory(prefix="hil-side-", dir=runtime_dir()) as folder:
        started: list[tuple[str, subprocess.Popen[bytes]]] = []
        status = 0
        try:
            for name, command in commands(args, Path(folder)):
                process = subprocess.Popen(
                    command,
                    start_new_session=True,
                    preexec_fn=die_with_parent(),  # noqa: PLW1509 - the child runs only prctl and getppid
                )
                started.append((name, process))
            print(
                f"hil_side: {args.side} side, {len(started)} process(es): {', '.join(n for n, _ in started)}"
            )
            while not signals.wait(0.2):
                ended = [(n, p.returncode) for n, p in started if p.poll() is not None]
                if ended:
                    print(
                        f"hil_side: {', '.join(f'{n} exited {c}' for n, c in ended)}; stopping",
                        file=sys.stderr,
                    )
                    # A configuration error (exit 2, its message printed) is the side's too.
                    status = CONFIG_ERROR_STATUS if CONFIG_ERROR_STATUS in (c for _, c in ended) else 1
                    break
        finally:
            stop(started)
    return status


def stop(started: list[tuple[str, subprocess.Popen[bytes]]]) -> None:
    """SIGINT to every process, SIGKILL to those still there after STOP_GRACE_S."""
    for _, process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
    deadline = time.monotonic() + STOP_GRACE_S
    for _, process in started:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def main(argv: list[str] | None = None) -> int:
    """Run one side; exit 2 on bad options or a process's configuration error."""
    shutdown_signals()
    try:
        return run(parse(argv))
    except HilError as exc:
        print(f"hil_side: {exc}", file=sys.stderr)
        return 2
    finally:
        ignore_further_stop_signals()


if __name__ == "__main__":
    sys.exit(main())
