"""``hil_replay``: play a bag's operator inputs into a fresh simulation and compare.

Reads ``cmd_vel`` and ``robotCommand`` from a bag recorded by ``hil_sim_runner
--record`` (or ``record:=`` in the launch file), rebuilds the same graph with the
same options (seed, world, behaviour; kept in the bag) in lockstep on simulated time,
feeds those inputs to the control loop at the simulated times they were recorded,
and compares the resulting ``odom`` trajectory with the recorded one. With the same
seed and rtf 0 the two agree within ``--tolerance`` (default 1 cm).

Only a lockstep recording (rtf 0) replays exactly: there every part stepped in one
fixed order and each input reached the loop in the simulated period it is stamped
with. In real time the simulator, the MCU and the loop ran on their own threads
against the wall clock, so an input's stamp does not say in which period the loop
acted on it (and off ``use_sim_time`` the stamps are wall-clock times). Before
replaying such a bag, ``hil_replay`` says so (:func:`exactness_note`).

    hil_replay /tmp/run1              # exit 0 if they agree, 1 if not, 2 on a bad bag
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from geometry_msgs.msg import Twist
from std_msgs.msg import String

from hil_bringup.core.bag import RUN_KEY, read_bag, run_options
from hil_bringup.core.graph import GraphOptions
from hil_bringup.errors import HilBringupError
from hil_bringup.graph_runner import GraphRunner
from hil_common.errors import HilError
from hil_sim.core.build import world_path
from hil_sim.errors import HilSimError

INPUT_TOPICS = ("/cmd_vel", "/robotCommand")
#: Largest step (s) between two odom stamps of a sound bag: the simulator publishes
#: odom every few milliseconds of simulated time.
STAMP_GAP_S = 10.0


@dataclass(frozen=True)
class Comparison:
    """How a replay's trajectory matched the recorded one."""

    samples: int
    max_deviation_m: float
    mean_deviation_m: float
    inputs: int
    duration_s: float

    def within(self, tolerance: float) -> bool:
        """True if every sample is within ``tolerance`` metres."""
        return self.samples > 0 and self.max_deviation_m <= tolerance


def replay(bag: str | Path) -> Comparison:
    """Replay ``bag``'s inputs in a fresh lockstep run and compare odom.

    Raises:
        HilBringupError: the bag is unreadable or damaged, was not recorded from a HIL
            run, or its run cannot be rebuilt (a recorded file is missing or refused).
    """
    options = recorded_options(bag)
    inputs: list[tuple[float, str, Any]] = []
    trajectory: list[tuple[float, float, float]] = []
    prefix = f"/{options.chain_namespace}" if options.chain_namespace else ""
    odom_topic = f"{prefix}/odom"
    previous = 0.0
    for topic, stamp, message in read_bag(bag, (*(prefix + t for t in INPUT_TOPICS), odom_topic)):
        if topic == odom_topic:
            sec, nanosec = message.header.stamp.sec, message.header.stamp.nanosec
            t = sec + nanosec * 1e-9
            x, y = message.pose.pose.position.x, message.pose.pose.position.y
            # Simulated time goes forward a period at a time: a stamp that jumps is damage
            # (a flipped bit in the last one would have the replay run for ages).
            sound = nanosec < 1_000_000_000 and previous <= t <= previous + STAMP_GAP_S
            if not (sound and math.isfinite(x) and math.isfinite(y)):
                raise HilBringupError(
                    f"{bag}: the bag is damaged: the {odom_topic} message after t = {previous:.3f} s "
                    f"says t = {t:.6g} s, x = {x:.6g} m, y = {y:.6g} m"
                )
            trajectory.append((t, x, y))
            previous = t
        else:
            inputs.append((stamp * 1e-9, topic, message))
    if not trajectory:
        raise HilBringupError(f"{bag}: no {odom_topic} messages to compare with")
    return _run(bag, options, inputs, trajectory)


def recorded_options(bag: str | Path) -> GraphOptions:
    """The options ``bag``'s run was recorded with, for a lockstep replay.

    Raises:
        HilBringupError: no run options in the bag, a value of the wrong type or out
            of range, or a file they name (world, firmware) that is not there.
    """
    recorded = run_options(bag)
    metadata = Path(bag) / "metadata.yaml"
    if not recorded:
        raise HilBringupError(
            f"{bag}: no HIL run options in the bag's metadata (not recorded by hil_sim_runner?)"
        )
    known = {f.name for f in fields(GraphOptions)}
    values = {k: v for k, v in recorded.items() if k in known} | {"rtf": 0.0, "record": ""}
    try:  # GraphOptions checks each value's type, choice and range
        options = GraphOptions(**values)
    except HilBringupError as exc:
        raise HilBringupError(f"{metadata}: custom_data.{RUN_KEY}: {exc}") from None
    try:
        world = world_path(options.world) if options.world else None
    except HilSimError as exc:
        raise HilBringupError(f"{metadata}: custom_data.{RUN_KEY}.world: {exc}") from None
    files = (
        ("world", "world file", world),
        ("firmware", "firmware", options.firmware),
        ("params_file", "parameter file", options.params_file),
    )
    for name, what, path in files:
        if path and not Path(path).is_file():
            raise HilBringupError(
                f"{bag}: the run's {what} {path} is missing (recorded as {name} in "
                f"{metadata}); the replay rebuilds the run from it"
            )
    return options


def exactness_note(bag: str | Path) -> str | None:
    """Why ``bag``'s replay cannot be exact (a real-time recording), or None (lockstep).

    Raises:
        HilBringupError: not a readable bag.
    """
    recorded = run_options(bag)
    rtf = recorded.get("rtf", 0.0)
    if not isinstance(rtf, (int, float)) or isinstance(rtf, bool) or rtf == 0:
        return None  # lockstep, or an rtf the replay refuses with its own message
    if recorded.get("use_sim_time") is False:
        stamps = "its inputs are stamped on the wall clock (use_sim_time false), not in simulated time"
    else:
        stamps = (
            "its simulator, MCU and control loop ran on their own threads against the wall clock, so "
            "an input's stamp does not say in which simulated period the loop acted on it"
        )
    return (
        f"{bag} was recorded in real time (rtf {rtf:g}): only a lockstep recording (rtf 0) replays "
        f"exactly; {stamps}. The replay feeds each input at its stamp in lockstep, so expect it to "
        "disagree. Record with rtf 0 (hil_sim_runner --rtf 0) for a run that replays."
    )


def _run(
    bag: str | Path,
    options: GraphOptions,
    inputs: list[tuple[float, str, Any]],
    trajectory: list[tuple[float, float, float]],
) -> Comparison:
    try:
        runner = GraphRunner(options)
    except HilError as exc:
        raise HilBringupError(f"{bag}: cannot rebuild the recorded run: {exc}") from None
    pending, expected = list(inputs), list(trajectory)
    loop = runner.loop

    def feed(now: float) -> None:
        # Inputs recorded by now go to the loop where and as its callbacks took them.
        while pending and pending[0][0] <= now + 1e-9:
            _, topic, message = pending.pop(0)
            if topic.endswith("cmd_vel"):
                loop.on_cmd_vel(_twist(message))
            else:
                loop.on_robot_command(String(data=message.data))

    runner.input_feeds.append(feed)
    runner.start()
    deviations: list[float] = []
    try:
        sim = runner.sim.sim
        end = trajectory[-1][0]
        while sim.time <= end + 1e-9 and expected:
            while expected and expected[0][0] <= sim.time + 1e-9:
                _, x, y = expected.pop(0)
                deviations.append(math.hypot(float(sim.x[0]) - x, float(sim.y[0]) - y))
            runner.step(ahead=True)  # between two periods the run is only looked at
    except HilError as exc:  # the physics went unstable in the recorded world, say
        raise HilBringupError(f"{bag}: the replayed run failed at {sim.time:.3f} s: {exc}") from None
    finally:
        runner.stop()
    return Comparison(
        samples=len(deviations),
        max_deviation_m=max(deviations, default=math.inf),
        mean_deviation_m=sum(deviations) / len(deviations) if deviations else math.inf,
        inputs=len(inputs),
        duration_s=trajectory[-1][0],
    )


def _twist(message: Any) -> Twist:
    twist = Twist()
    twist.linear.x, twist.linear.y, twist.linear.z = message.linear.x, message.linear.y, message.linear.z
    twist.angular.x, twist.angular.y, twist.angular.z = (
        message.angular.x,
        message.angular.y,
        message.angular.z,
    )
    return twist


def main(argv: list[str] | None = None) -> int:
    """Replay a bag; exit 0 if the trajectories agree, 1 if not, 2 on a bad bag."""
    parser = argparse.ArgumentParser(
        prog="hil_replay", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("bag", help="bag folder recorded by hil_sim_runner --record")
    parser.add_argument("--tolerance", type=float, default=0.01, help="largest allowed deviation, m")
    args = parser.parse_args(argv)
    try:
        note = exactness_note(args.bag)
        if note is not None:
            print(f"hil_replay: {note}", file=sys.stderr, flush=True)  # before the replay, not after
        result = replay(args.bag)
    except HilError as exc:
        print(f"hil_replay: {exc}", file=sys.stderr)
        return 2
    agree = result.within(args.tolerance)
    print(
        json.dumps({**result.__dict__, "tolerance_m": args.tolerance, "agree": agree, "exact": note is None})
    )
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
