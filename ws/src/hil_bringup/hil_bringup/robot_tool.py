"""``hil_robot``: list the shipped robots, check a robot profile, show what is derived from it.

    hil_robot list                                        # the shipped robots, a line each
    hil_robot check demo                                  # a shipped robot, by name
    hil_robot check ~/my_robot                            # a robot folder (its robot.yaml)
    hil_robot show ws/src/hil_robots/robots/rab_style/robot.yaml

``list`` prints each shipped robot's name, board and description. ``check`` reads
the profile (:func:`hil_devices.core.profile.load_profile`: every pin,
parameter, pose, mount, wheel, baud rate and the firmware) and makes everything the
runs derive from it: the signal link's device set and ids, the simavr coupling of its
pins, the DC motor model's parameters and the telemetry schema; it prints the warnings
and ``ok``. ``show`` prints them: the pins, the devices and their signal ids, the
coupling file, the simulator's view of each device, and a bridge-board wiring for the
real-board path. Exit status: 0 good, 2 a bad profile (the message names the file and
the field).
"""

from __future__ import annotations

import argparse
import os
import sys

from hil_bridge.core.signal_protocol import SignalLayout, profile_layout
from hil_common.errors import HilError
from hil_devices.core.handler_template import handler_dirs, load_templates, needs_of
from hil_devices.core.profile import (
    RobotProfile,
    load_profile,
    mcu_pins,
    model_devices,
    shipped_robots,
    telemetry_schema,
)
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


def run(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    args = _parser().parse_args(argv)
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
