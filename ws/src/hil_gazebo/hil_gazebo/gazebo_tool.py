"""``hil_gazebo``: the Gazebo (gz sim, Harmonic) files of a world and the robot.

    hil_gazebo export --world demo --out /tmp/hil_gazebo            # world.sdf, robot.sdf, bridge.yaml
    hil_gazebo export --world my_world.yaml --out gz --drive velocity --check

``--world`` is a world YAML file or the name of one of hil_sim's worlds (demo,
empty); the robot is the demo robot's URDF (generated from its model) unless ``--urdf`` names another. A
world.sdf, robot.sdf or bridge.yaml already in ``--out`` that the export did not
write is left alone (exit 2) unless ``--force``. ``--check``
runs SDFormat's own checker (``gz sdf -k`` or ``ign sdf -k``) on both SDF files.
Then, with Gazebo and ros_gz installed, ``ros2 launch hil_bringup gazebo.launch.py``
runs the HIL chain against them (it exports again at every launch). Exit status: 0
done, 2 a bad input (the message names the file and the element).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hil_common.errors import HilError
from hil_gazebo.core.gz_adapter import DRIVES
from hil_gazebo.core.sdf import check_sdf, export


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hil_gazebo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    command = sub.add_parser("export", help="write world.sdf, robot.sdf and bridge.yaml")
    command.add_argument("--world", default="demo", help="world YAML file or hil_sim world name (demo)")
    command.add_argument("--out", type=Path, required=True, help="folder to write into (made if missing)")
    command.add_argument("--urdf", type=Path, help="robot URDF (default: generated from the robot model)")
    command.add_argument(
        "--drive", choices=DRIVES, default="torque", help="how the adapter drives the wheels"
    )
    command.add_argument(
        "--rtf", type=float, default=1.0, help="Gazebo's real-time factor (0: as fast as possible)"
    )
    command.add_argument("--physics-rate", type=float, default=1000.0, help="Gazebo physics steps per second")
    command.add_argument("--check", action="store_true", help="check both SDF files with gz/ign sdf -k")
    command.add_argument(
        "--force", action="store_true", help="overwrite files in --out that hil_gazebo export did not write"
    )
    return parser


def run(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    args = _parser().parse_args(argv)
    files = export(
        args.world,
        args.out,
        force=args.force,
        urdf=args.urdf,
        drive=args.drive,
        rtf=args.rtf,
        physics_rate=args.physics_rate,
    )
    for path in (files.world_sdf, files.robot_sdf, files.bridge_yaml):
        print(path)
    if args.check:
        for path in (files.world_sdf, files.robot_sdf):
            print(f"{path}: {check_sdf(path)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: errors in the inputs exit 2 with the message."""
    try:
        return run(argv)
    except HilError as exc:
        print(f"hil_gazebo: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
