"""``hil_sketch``: wire, generate and build the bridge-board sketch of a signal link.

    hil_sketch autowire robot_devices.yaml -o wiring.yaml        # pins for every signal
    hil_sketch generate robot_devices.yaml --wiring wiring.yaml -o firmware/bridge_board
    hil_sketch build firmware/bridge_board --libraries firmware/libraries --strict
    hil_sketch build ~/Arduino/my_robot --board uno --libraries ~/Arduino/libraries
    hil_sketch import thesis/hc_sr04.json -o my_devices    # thesis format -> ours

``generate`` without ``--wiring`` autowires and writes ``wiring.yaml`` beside the
sketch. Device configs come from hil_devices' library (``config/devices``) plus any
``--devices`` folder or file, in our format or the HIL thesis' (recognised by its
handler; its ``.hlr`` file is read too); handler templates from ``config/handlers``
plus ``--handlers``. ``import`` rewrites thesis configs in our format: ``<name>.json``
and, for a handler file, ``<name>.tmpl`` beside it, and names the fields it ignored.
``build`` builds any sketch folder as the Arduino IDE does (its tabs, prototypes,
libraries; ``hil_firmware.core.avr_build``), shows the compiler's warnings, and with
``--strict`` fails on a warning in the sketch or its ``--libraries``. Its size check
(``avr-size`` against the board): a program that does not fit fails; ``--strict``
also keeps 10 % of the flash and 25 % of the static RAM (the stack) free; otherwise a
static RAM above :data:`LOW_MEMORY` of the board's is a warning, as in the IDE.
Exit status: 0 done, 2 a bad input (the message names the file and key).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hil_common.core.paths import share_dir
from hil_common.errors import HilError
from hil_devices.core.boards import BOARDS
from hil_devices.core.devices import DeviceInstance, load_device_set
from hil_devices.core.handler_template import HandlerTemplate, handler_dirs, load_templates, needs_of
from hil_devices.core.library import load_device_library
from hil_devices.core.sketch_files import sketch_folder
from hil_devices.core.thesis_format import load_thesis_device
from hil_devices.core.wiring import BOARDS as BRIDGE_BOARDS
from hil_devices.core.wiring import autowire, check_wiring, describe, load_wiring
from hil_firmware.core.avr_build import build_sketch
from hil_firmware.core.sketch_gen import generate_sketch, write_sketch
from hil_firmware.core.thesis_import import native_device


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hil_sketch", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (
        ("autowire", "assign pins to every signal"),
        ("generate", "write the bridge-board sketch"),
    ):
        command = sub.add_parser(name, help=text)
        command.add_argument("device_set", type=Path, help="device set YAML of the link")
        command.add_argument("--wiring", type=Path, help="wiring YAML (autowire: pins to keep)")
        command.add_argument("--devices", type=Path, action="append", default=[], help="more device configs")
        command.add_argument(
            "--handlers", type=Path, action="append", default=[], help="more handler templates"
        )
        command.add_argument(
            "--board", choices=sorted(BRIDGE_BOARDS), default="nano", help="the bridge board (an ATmega328P)"
        )
        command.add_argument(
            "-o", "--output", type=Path, help="wiring file (autowire) or sketch folder (generate)"
        )
    generate = sub.choices["generate"]
    generate.add_argument("--checked", action="store_true", help="checked frames (sequence + CRC)")
    generate.add_argument("--baud", type=int, default=115200, help="serial speed (the signal bridge's baud)")
    build = sub.add_parser("build", help="build a sketch folder as the Arduino IDE does")
    build.add_argument("sketch", type=Path, help="sketch folder (its .ino tabs), or its main .ino")
    build.add_argument(
        "--libraries",
        type=Path,
        action="append",
        default=[],
        help="a folder of libraries, repeatable (default: the sketchbook's, <sketch>/../libraries)",
    )
    build.add_argument("--board", choices=sorted(BOARDS), default="nano")
    build.add_argument("-D", dest="defines", action="append", default=[], help="NAME=VALUE macro")
    build.add_argument(
        "--strict",
        action="store_true",
        help="a warning in the sketch or its --libraries is an error, and flash and RAM keep"
        " 10 %% and 25 %% free (the project's own firmware builds so)",
    )
    build.add_argument("--out", type=Path, help="build folder (default: <sketch>/../build/<sketch name>)")
    imports = sub.add_parser("import", help="rewrite HIL thesis device configs (+ .hlr) in our format")
    imports.add_argument("configs", type=Path, nargs="+", help="thesis device config JSON files")
    imports.add_argument("-o", "--output", type=Path, required=True, help="folder for the converted files")
    return parser


def _import(configs: list[Path], output: Path) -> int:
    output.mkdir(parents=True, exist_ok=True)
    for path in configs:
        device = load_thesis_device(path)
        name = device.config.name
        handler = device.config.handler
        if handler is not None and handler.text:
            (output / f"{name}.tmpl").write_text(handler.text)
        native = native_device(device, template_file=f"{name}.tmpl")
        (output / f"{name}.json").write_text(json.dumps(native, indent=2) + "\n")
        print(f"{path} -> {output / name}.json" + (f" + {name}.tmpl" if handler and handler.text else ""))
        for field in device.ignored:
            print(f"  ignored: {field}")
    return 0


#: Static RAM above this share of the board's leaves the stack little room (the IDE warns too).
LOW_MEMORY = 0.75


def _build(args: argparse.Namespace) -> int:
    defines = dict(d.split("=", 1) if "=" in d else (d, "1") for d in args.defines)
    folder, _main = sketch_folder(args.sketch)
    sketchbook = folder.parent
    # Like the IDE: a sketch in a sketchbook finds the sketchbook's libraries.
    libraries = args.libraries or [p for p in [sketchbook / "libraries"] if p.is_dir()]
    result = build_sketch(
        args.sketch,
        args.out or sketchbook / "build" / folder.name,
        libraries=libraries,
        defines=defines,
        board=args.board,
        strict=args.strict,
        progress=print,
    )
    if result.warnings:
        print(result.warnings, file=sys.stderr)
    if args.strict:
        result.size.check()
    else:
        result.size.check(flash_margin=0.0, ram_margin=0.0)
        if result.size.ram > result.size.ram_max * LOW_MEMORY:
            print(
                f"hil_sketch: warning: static RAM {result.size.ram} of {result.size.ram_max} bytes"
                " leaves the stack little room",
                file=sys.stderr,
            )
    print(f"elf: {result.elf}")
    print(f"hex: {result.hex}")
    return 0


def _link(args: argparse.Namespace) -> tuple[list[DeviceInstance], dict[str, HandlerTemplate]]:
    library = load_device_library([share_dir("hil_devices") / "config" / "devices", *args.devices])
    devices = load_device_set(args.device_set, library)
    templates = load_templates([*handler_dirs(), *args.handlers])
    return devices, templates


def run(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.command == "build":
        return _build(args)
    if args.command == "import":
        return _import(args.configs, args.output)
    devices, templates = _link(args)
    needs = needs_of(devices, templates)
    if args.command == "autowire":
        fixed = load_wiring(args.wiring).pins if args.wiring else None
        wiring = autowire(needs, fixed=fixed, board=args.board)
        text = wiring.to_yaml(header=f"bridge-board wiring of {args.device_set.name} (hil_sketch autowire)")
        if args.output:
            args.output.write_text(text)
            print(f"wiring: {args.output}")
        else:
            print(text, end="")
        return 0
    if args.wiring:
        wiring = load_wiring(args.wiring)
        check_wiring(needs, wiring)
    else:
        wiring = autowire(needs, board=args.board)
    folder = args.output or Path(args.device_set.stem.replace("-", "_") + "_bridge")
    text = generate_sketch(
        devices,
        wiring,
        templates,
        name=folder.name,
        checked=args.checked,
        baud=args.baud,
        source=f" from {args.device_set.name}",
    )
    path = write_sketch(folder, text)
    if not args.wiring:
        (folder / "wiring.yaml").write_text(wiring.to_yaml(header="autowired by hil_sketch generate"))
    print("\n".join(describe(needs, wiring)))
    print(f"sketch: {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: errors in the inputs exit 2 with the message."""
    try:
        return run(argv)
    except HilError as exc:
        print(f"hil_sketch: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
