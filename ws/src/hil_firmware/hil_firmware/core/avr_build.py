"""Build Arduino sketches as the Arduino IDE does, with the IDE's own command-line builder.

Debian's ``arduino-builder`` (the builder the Arduino IDE runs) with Debian's Arduino
AVR core (``arduino-core-avr``, or ``HIL_ARDUINO_AVR``: a ``<hardware>/arduino/avr``
folder holding ``boards.txt``, ``platform.txt``, ``cores/``, ``variants/``,
``libraries/``) does the whole build:

1. the sketch's ``.ino`` tabs joined in the IDE's order (the tab named after the
   folder first, then the others alphabetically), with the function prototypes the IDE
   generates (arduino-ctags) and ``#line`` directives, so errors name the ``.ino`` tab
   and line; the sketch's own ``.c``/``.cpp`` files and its ``src/`` folder beside it;
2. the libraries the sketch includes, found in the given library folders (like the
   IDE's sketchbook ``libraries/``), then in the core's (Wire, SPI, EEPROM,
   SoftwareSerial);
3. the core (its ``core.a`` cached per user, by board and flags), the link with the
   platform's flags (``-Os``, LTO, ``--gc-sections``), the ``.hex``.

Warnings are on (``-Wall -Wextra``) and shown; ``strict`` makes a warning in the sketch
or in a given library folder an error (the project's own code builds so), while the
core's and its libraries' warnings stay warnings. ``-D`` defines reach every file,
the core's too. The size report measures flash and static RAM of the ELF against the
board's (:mod:`hil_devices.core.boards`: the IDE's board name, flash and RAM).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hil_devices.core.boards import BOARDS
from hil_devices.core.boards import board as find_board
from hil_devices.core.sketch_files import sketch_folder
from hil_firmware.errors import HilFirmwareError

#: Where Debian's arduino-core-avr puts the AVR core.
DEBIAN_ARDUINO_AVR = Path("/usr/share/arduino/hardware/arduino/avr")
#: The ``ARDUINO`` macro (the IDE release whose core Debian ships: 1.8.7).
ARDUINO_VERSION = "10807"
#: How long one build may take before it counts as hung.
BUILD_TIMEOUT_S = 600.0
#: The compiler's warning level: -Wall -Wextra, as the IDE's "All".
WARNING_LEVEL = "all"


#: The size report's default limits: the ATmega328P's (the UNO's and Nano's, with optiboot).
FLASH_BYTES = BOARDS["nano"].flash_bytes
RAM_BYTES = BOARDS["nano"].ram_bytes

#: ``file:line:column: warning|error: text``, as gcc reports.
_DIAGNOSTIC = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:\d+:)? (?P<kind>warning|(?:fatal )?error): ")
_MISSING_HEADER = re.compile(r"fatal error: (?P<header>[^:\s]+): No such file or directory")
#: How much of a failed build's output the error shows.
ERROR_LINES = 60


@dataclass(frozen=True)
class Toolchain:
    """The installed builder, its ctags settings, and the Arduino AVR platform."""

    builder: Path
    #: arduino-builder's own ``platform.txt`` (how to run arduino-ctags).
    builder_platform: Path
    #: ``<hardware>/arduino/avr``.
    platform: Path

    @property
    def hardware(self) -> Path:
        """The ``hardware`` folder holding ``arduino/avr``."""
        return self.platform.parents[1]


def find_toolchain() -> Toolchain:
    """The builder and the Arduino AVR core to build with.

    Raises:
        HilFirmwareError: something missing (naming the Debian package to install).
    """
    platform = Path(os.environ.get("HIL_ARDUINO_AVR", DEBIAN_ARDUINO_AVR))
    if (
        not (platform / "cores" / "arduino" / "Arduino.h").is_file()
        or not (platform / "boards.txt").is_file()
    ):
        raise HilFirmwareError(
            f"no Arduino AVR core at {platform} (install Debian's arduino-core-avr, or set HIL_ARDUINO_AVR)"
        )
    if (platform.parent.name, platform.name) != ("arduino", "avr"):
        raise HilFirmwareError(f"HIL_ARDUINO_AVR={platform}: expected a <hardware>/arduino/avr folder")
    builder = shutil.which("arduino-builder")
    ctags = shutil.which("arduino-ctags")
    if builder is None or ctags is None:
        raise HilFirmwareError(
            "arduino-builder not found (install Debian's arduino-builder; make bootstrap does)"
        )
    for tool in ("avr-gcc", "avr-g++", "avr-gcc-ar", "avr-objcopy", "avr-size"):
        if shutil.which(tool) is None:
            raise HilFirmwareError(f"{tool} not found (install Debian's gcc-avr, binutils-avr and avr-libc)")
    builder_path = Path(builder).resolve()
    builder_platform = builder_path.parents[1] / "share" / "arduino-builder"
    if not (builder_platform / "platform.txt").is_file():
        raise HilFirmwareError(f"no {builder_platform / 'platform.txt'} (reinstall Debian's arduino-builder)")
    return Toolchain(builder_path, builder_platform, platform)


@dataclass(frozen=True)
class SizeReport:
    """Flash and static RAM of a linked program, against the board's (default: the ATmega328P's)."""

    flash: int
    ram: int
    flash_max: int = FLASH_BYTES
    ram_max: int = RAM_BYTES

    def check(self, *, flash_margin: float = 0.1, ram_margin: float = 0.25) -> None:
        """Fail unless flash and static RAM leave the margins free.

        The RAM margin is for the stack, which the static figure does not include.

        Raises:
            HilFirmwareError: naming what is over and by how much.
        """
        if self.flash > self.flash_max * (1 - flash_margin):
            raise HilFirmwareError(
                f"flash {self.flash} bytes exceeds {1 - flash_margin:.0%} of {self.flash_max}"
            )
        if self.ram > self.ram_max * (1 - ram_margin):
            raise HilFirmwareError(
                f"static RAM {self.ram} bytes exceeds {1 - ram_margin:.0%} of {self.ram_max}"
            )

    def __str__(self) -> str:
        return (
            f"flash {self.flash} of {self.flash_max} bytes ({self.flash / self.flash_max:.0%}), "
            f"RAM {self.ram} of {self.ram_max} bytes ({self.ram / self.ram_max:.0%})"
        )


@dataclass(frozen=True)
class BuildResult:
    """What a build produced."""

    elf: Path
    hex: Path
    size: SizeReport
    #: The libraries the sketch used (folder names).
    libraries: tuple[str, ...] = field(default=())
    #: The compiler's warnings, as it printed them (empty when it printed none).
    warnings: str = ""


@dataclass(frozen=True)
class Diagnostic:
    """One ``file:line: warning|error:`` line of the compiler's output."""

    file: Path
    line: int
    kind: str
    text: str


def diagnostics(output: str) -> list[Diagnostic]:
    """The compiler's warning and error lines in ``output``, in order."""
    found = []
    for text in output.splitlines():
        match = _DIAGNOSTIC.match(text)
        if match:
            found.append(Diagnostic(Path(match["file"]), int(match["line"]), match["kind"], text))
    return found


def _define_flags(defines: Mapping[str, str | int]) -> list[str]:
    flags = []
    for name, value in defines.items():
        text = str(value)
        if not name.isidentifier() or isinstance(value, bool) or any(c in text for c in "\"'\\\n"):
            raise HilFirmwareError(f"define {name}={value!r}: expected NAME=<integer or text without quotes>")
        flags.append(f'"-D{name}={text}"' if " " in text else f"-D{name}={text}")
    return flags


def _cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hil" / "arduino-core"


@contextlib.contextmanager
def _core_cache(toolchain: Toolchain, fqbn: str, prefs: Sequence[str]) -> Iterator[Path | None]:
    """arduino-builder's ``-build-cache`` folder for this board and these flags (None: no cache).

    arduino-builder names a cached ``core.a`` by the board and the core's folder only,
    so each set of flags gets its own folder. The first build of a folder holds its
    lock until the archive is written, so a parallel build never reads half of one.
    Without a writable cache folder the core is built in the build folder.
    """
    core = toolchain.platform / "cores" / "arduino"
    newest = max(p.stat().st_mtime_ns for p in core.iterdir())
    key = json.dumps([str(toolchain.platform), fqbn, ARDUINO_VERSION, sorted(prefs), newest])
    folder = _cache_root() / hashlib.sha256(key.encode()).hexdigest()[:16]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = (folder / ".lock").open("w")
    except OSError:
        yield None
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if any((folder / "core").glob("core_*.a")):  # where arduino-builder keeps it
            fcntl.flock(lock, fcntl.LOCK_UN)
        yield folder


def _inside(path: Path, folders: Sequence[Path]) -> bool:
    resolved = path.resolve()
    return any(resolved.is_relative_to(folder) for folder in folders)


def _used_libraries(out: Path) -> tuple[str, ...]:
    """The libraries arduino-builder found for the sketch (its ``includes.cache``)."""
    try:
        entries = json.loads((out / "includes.cache").read_text())
    except (OSError, ValueError):
        return ()
    names = set()
    for entry in entries:
        if isinstance(entry, dict) and entry.get("Include") and entry.get("Includepath"):
            include = Path(entry["Includepath"])
            names.add(include.parent.name if include.name == "src" else include.name)
    return tuple(sorted(names))


def _failure(output: str, what: str, libraries: Sequence[Path], board: str) -> HilFirmwareError:
    lines = [line for line in output.strip().splitlines() if line != "exit status 1"]
    shown = lines[:ERROR_LINES]
    if len(lines) > ERROR_LINES:
        shown.append(f"... ({len(lines) - ERROR_LINES} more lines)")
    for region, memory, size in (
        ("text", "flash", BOARDS[board].flash_bytes),
        ("data", "static RAM", BOARDS[board].ram_bytes),
    ):
        if f"region `{region}'" in output:
            shown.append(f"(the program needs more {memory} than the {board}'s {size} bytes)")
    missing = _MISSING_HEADER.search(output)
    if missing:
        header = missing["header"]
        misplaced = next((p for folder in libraries for p in sorted(folder.glob(f"*/**/{header}"))), None)
        if misplaced is not None:
            shown.append(
                f"({header} is at {misplaced}, where the IDE does not look: a library's headers are"
                " in its folder, or in its src/ folder beside a library.properties)"
            )
        else:
            searched = ", ".join(str(p) for p in libraries) or "none given"
            shown.append(
                f"({header} is in no library of the given folders ({searched}) nor of the"
                " Arduino core: add the folder holding its library with --libraries)"
            )
    return HilFirmwareError(f"{what} failed:\n" + "\n".join(shown))


def build_sketch(
    sketch: Path,
    out: Path,
    *,
    libraries: Sequence[Path] = (),
    defines: Mapping[str, str | int] | None = None,
    board: str = "nano",
    strict: bool = False,
    progress: Callable[[str], None] | None = None,
) -> BuildResult:
    """Build the sketch folder ``sketch`` into ``out`` as the Arduino IDE does.

    Args:
        sketch: the sketch folder (``<name>/<name>.ino`` and its other tabs), or its
            main ``.ino``.
        out: build folder (created; kept between builds, which reuse what did not
            change). Not inside the sketch folder: the builder copies the sketch's
            files into it.
        libraries: folders holding libraries (like the IDE's sketchbook ``libraries``).
        defines: ``-D`` macros for every file (e.g. ``HIL_CHECKED=1``).
        board: ``nano``, ``uno`` or ``mega2560``.
        strict: a warning in the sketch or in a library of ``libraries`` is an error.
        progress: called with a line per step.

    Raises:
        HilFirmwareError: no toolchain, a bad folder or define, or a compiler or linker
            error (with its output, naming the ``.ino`` tab and line).
    """
    target = find_board(board)
    folder, main = sketch_folder(sketch)
    out = out.resolve()
    if out.is_relative_to(folder):
        raise HilFirmwareError(
            f"build folder {out} is inside the sketch folder {folder}: the Arduino builder copies"
            " the sketch's files into its build folder; choose one outside it"
        )
    library_folders = [Path(p).resolve() for p in libraries]
    for library in library_folders:
        if not library.is_dir():
            raise HilFirmwareError(f"library folder {library}: no such folder")
    toolchain = find_toolchain()
    say = progress or (lambda _line: None)
    out.mkdir(parents=True, exist_ok=True)

    flags = _define_flags(defines or {})
    # Debian's avr-gcc 5.4 defines DECIMAL_DIG for C only; the core's WString.cpp
    # (written for the IDE's avr-gcc 7) needs it in C++11 too.
    prefs = [
        f"compiler.c.extra_flags={' '.join(flags)}",
        f"compiler.cpp.extra_flags={' '.join(['-DDECIMAL_DIG=__DECIMAL_DIG__', *flags])}",
        f"compiler.S.extra_flags={' '.join(flags)}",
    ]
    command = [
        str(toolchain.builder),
        "-compile",
        "-logger=human",
        "-warnings",
        WARNING_LEVEL,
        "-hardware",
        str(toolchain.hardware),
        "-hardware",
        str(toolchain.builder_platform),
        "-tools",
        "/usr/bin",
        "-fqbn",
        target.fqbn,
        "-core-api-version",
        ARDUINO_VERSION,
        "-build-path",
        str(out),
        *(arg for library in library_folders for arg in ("-libraries", str(library))),
        *(f"-prefs={pref}" for pref in prefs),
        # Recorded in the build options: switching strict on or off rebuilds everything,
        # so no object compiled without the check is reused by a strict build.
        f"-prefs=hil.strict={int(strict)}",
    ]
    say(f"building {folder.name} for {board} with arduino-builder" + (" (strict)" if strict else ""))
    with _core_cache(toolchain, target.fqbn, prefs) as cache:
        try:
            result = subprocess.run(
                [*command, *(["-build-cache", str(cache)] if cache else []), str(main)],
                capture_output=True,
                text=True,
                check=False,
                timeout=BUILD_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired as exc:
            raise HilFirmwareError(f"building {folder} did not finish in {BUILD_TIMEOUT_S:.0f} s") from exc
    output = result.stderr.strip()
    if result.returncode != 0:
        raise _failure(output or result.stdout, f"building {folder} for {board}", library_folders, board)
    if strict:
        ours = [folder, out / "sketch", *library_folders]
        own = [d.text for d in diagnostics(output) if d.kind == "warning" and _inside(d.file, ours)]
        if own:
            # The objects are there: the next strict build must compile them again.
            for built in ("sketch", "libraries"):
                shutil.rmtree(out / built, ignore_errors=True)
            raise HilFirmwareError(
                f"building {folder} for {board} failed: strict, and the compiler warned:\n" + "\n".join(own)
            )
    elf, hex_file = out / f"{main.name}.elf", out / f"{main.name}.hex"
    size = elf_size(elf, board=board)
    say(f"{folder.name}: {size}")
    return BuildResult(elf, hex_file, size, _used_libraries(out), output)


def elf_size(elf: Path, *, board: str = "nano") -> SizeReport:
    """Flash (.text + .data) and static RAM (.data + .bss + .noinit) of a linked ELF, against ``board``'s."""
    result = subprocess.run(["avr-size", "-A", str(elf)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise HilFirmwareError(f"avr-size {elf}: {result.stderr.strip()}")
    sections: dict[str, int] = {}
    for line in result.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(".") and parts[1].isdigit():
            sections[parts[0]] = int(parts[1])
    data = sections.get(".data", 0)
    target = find_board(board)
    return SizeReport(
        flash=sections.get(".text", 0) + data,
        ram=data + sections.get(".bss", 0) + sections.get(".noinit", 0),
        flash_max=target.flash_bytes,
        ram_max=target.ram_bytes,
    )
