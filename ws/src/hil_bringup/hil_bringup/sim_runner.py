"""One-process runner of the HIL simulation (``make sim``).

The graph it starts (virtual MCU, signal bridge, simulator, control loop) lands with
the bringup issue; until then it says so and exits with status 1, so a script that
calls it does not mistake it for a finished run.
"""

import argparse
import sys

NOT_BUILT = (
    "hil_sim_runner: the simulation graph is not built yet "
    "(virtual MCU, bridge, sim and control loop land with the bringup issue)."
)


def main(argv: list[str] | None = None) -> int:
    """Parse the runner's options and report that the graph is not available yet."""
    parser = argparse.ArgumentParser(prog="hil_sim_runner", description=__doc__)
    parser.parse_args(argv)
    print(NOT_BUILT, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
