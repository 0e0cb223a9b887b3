"""``hil_robot``: list the shipped robots, make your own from one, check a profile, show what it derives.

    hil_robot list                                        # the shipped robots, a line each
    hil_robot new ~/my_robot --from rab_style             # your robot's folder, from the closest one
    hil_robot check demo                                  # a shipped robot, by name
    hil_robot check ~/my_robot                            # a robot folder (its robot.yaml)
    hil_robot show ws/src/hil_robots/robots/rab_style/robot.yaml

``list`` prints each shipped robot's name, board and description. ``new`` makes a
robot folder from another robot (:mod:`hil_devices.core.robot_copy`): its profile,
sketch and scenarios, renamed for the new folder's name, checked. ``check`` reads
the profile (:func:`hil_devices.core.profile.load_profile`: every pin,
parameter, pose, mount, wheel, baud rate and the firmware) and makes everything the
runs derive from it: the signal link's device set and ids, the simavr coupling of its
pins, the DC motor model's parameters and the telemetry schema; it prints the warnings
and ``ok``. ``show`` prints them: the pins, the devices and their signal ids, the
coupling file, the simulator's view of each device, and a bridge-board wiring for the
real-board path. Exit status: 0 good, 2 a bad profile or a ``new`` that cannot be
made (the message names the file and the field).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from hil_bridge.core.signal_protocol import SignalLayout, profile_layout
from hil_common.errors import HilError
from hil_devices.core.handler_template import handler_dirs, load_templates, needs_of
from hil_devices.core.profile import (
    PROFILE_FILE,
    RobotProfile,
    load_profile,
    mcu_pins,
    model_devices,
    shipped_robots,
    telemetry_schema,
)
from hil_devices.core.robot_copy import copy_robot
from hil_devices.core.wiring import describe
from hil_firmware.core.sketch_gen import profile_sketch_inputs
from hil_mcu.core.simavr import profile_coupling
from hil_sim.core.devices import check_model
from hil_sim.core.robot_model import robot_model_from_profile


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hil_robot", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the shipped robots: name, board, description")
    new = sub.add_parser("new", help="make a robot folder from another robot")
    new.add_argument(
        "folder", type=Path, help="the new robot's folder (must not exist); its name names the robot"
    )
    new.add_argument(
        "--from",
        dest="source",
        required=True,
        help="the robot to start from: a shipped robot's name (hil_robot list), a robot folder or robot.yaml",
    )
    for name, text in (("check", "check a robot profile"), ("show", "show what a profile derives")):
        command = sub.add_parser(name, help=text)
        command.add_argument("robot", help="a robot.yaml, a robot folder, or a shipped robot's name (demo)")
    return parser


def derive(profile: RobotProfile) -> tuple[SignalLayout, str]:
    """Everything a run derives from ``profile`` that can be wrong: layout, coupling, robot model.

    Raises:
        HilBridgeError, HilMcuError, HilSimError: naming the profile and what is wrong.
    """
    layout = profile_layout(profile)
    coupling = profile_coupling(profile)
    check_model(robot_model_from_profile(profile))
    return layout, coupling


def _show(profile: RobotProfile, layout: SignalLayout, coupling: str) -> None:
    port = profile.command
    firmware = profile.firmware.sketch or profile.firmware.elf
    print(f"robot {profile.name}: {profile.description}")
    print(f"  file: {profile.source}")
    print(f"  board: {profile.board}, firmware: {firmware}, brain: {profile.brain}")
    print(
        f"  command UART {port.uart} at {port.baud} baud, auto reset: {'on' if profile.auto_reset else 'off'}"
    )
    for other in profile.serial:
        if other.role != "command":
            print(f"  UART {other.uart} at {other.baud} baud ({other.role}, a pty of its own)")
    for soft in profile.soft_serial:
        print(f"  SoftwareSerial RX {soft.rx} TX {soft.tx} at {soft.baud} baud")
    print("pins (MCU pin  device.signal or device.pin):")
    for key, pin in mcu_pins(profile).items():
        print(f"  {pin:>3}  {key}")
    for entry in profile.devices:
        for pin, level in entry.ties.items():
            print(f"  {level:>4}  {entry.name}.{pin} (tied)")
    print("signal link (id  device.signal  direction):")
    for slot in layout.slots:
        print(f"  {slot.id:>3}  {slot.device}.{slot.name}  {slot.spec.direction.value}")
    print("simulator (device  model kind  params):")
    for device in model_devices(profile):
        extra = f" on {device.mount}" if device.mount else ""
        wheel = f" wheel {device.wheel}" if device.wheel else ""
        params = ", ".join(f"{k}={v}" for k, v in device.params.items())
        print(f"  {device.name}  {device.kind}{wheel}{extra}  {params}")
    if profile.brain == "control_loop":
        print("telemetry:")
        for key, names in telemetry_schema(profile).lists.items():
            print(f"  {key}: {', '.join(names)}")
    print("simavr coupling:")
    print("".join(f"  {line}\n" for line in coupling.splitlines()), end="")
    templates = load_templates(handler_dirs())
    try:
        devices, wiring = profile_sketch_inputs(profile, templates)
        needs = needs_of(devices, templates)
        pins = mcu_pins(profile)
        print("bridge board (nano): its pin, the signal, the robot MCU's pin:")
        for need, line in zip(needs, describe(needs, wiring), strict=True):
            print(f"  {line}  <->  MCU {pins.get(need.key, '-')}")
    except HilError as exc:
        print(f"bridge board: none ({exc})")


def _new(folder: Path, source: str) -> None:
    """``hil_robot new``: the folder made, what is in it, what to do next."""
    made = copy_robot(source, folder.expanduser())
    profile = made.profile
    sketch = profile.firmware.sketch
    devices = len(profile.devices)
    print(f"made {made.folder} from {source}: robot {profile.name} on a {profile.board}, {devices} devices")
    print(f"  {PROFILE_FILE:22} the profile (name: {profile.name})")
    if sketch is not None:
        tabs = sorted(p.name for p in sketch.glob("*.ino"))
        print(f"  {'firmware/' + profile.name + '/':22} the sketch: {', '.join(tabs)}")
    if made.scenarios:
        print(f"  {'scenarios/':22} {len(made.scenarios)} scenario(s), each on this robot (robot: ..)")
    print(f"  {'README.md':22} how to check, build and run it")
    print(f"next: edit robot.yaml and the sketch for your robot, then: hil_robot check {made.folder}")
    for warning in profile.warnings:
        print(f"hil_robot: warning: {warning}", file=sys.stderr)


def run(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.command == "new":
        _new(args.folder, args.source)
        return 0
    if args.command == "list":
        for name in shipped_robots():
            robot = load_profile(name)
            print(f"{name:22} {robot.board:9} {robot.description}")
        return 0
    profile = load_profile(args.robot)
    layout, coupling = derive(profile)
    for warning in profile.warnings:
        print(f"hil_robot: warning: {warning}", file=sys.stderr)
    if args.command == "show":
        _show(profile, layout, coupling)
        return 0
    inputs, outputs = len(layout.inputs), len(layout.outputs)
    print(
        f"ok: {profile.source}: robot {profile.name} on a {profile.board}, {len(profile.devices)} devices,"
        f" {inputs} signals from the MCU and {outputs} to it"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: a bad profile exits 2 with the message."""
    try:
        return run(argv)
    except HilError as exc:
        print(f"hil_robot: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader left (hil_robot list | head): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
