"""Build Arduino sketches for the UNO, Nano (ATmega328P) and Mega 2560 with avr-gcc, as the IDE does.

The Arduino AVR core comes from Debian's ``arduino-core-avr`` (or ``HIL_ARDUINO_AVR``,
the folder holding ``cores/``, ``variants/`` and ``libraries/``). A build:

1. compiles the core once per flags into ``core.a`` (cached in the build folder);
2. turns the sketch's ``.ino`` files into one C++ file (``#include <Arduino.h>`` first,
   ``#line`` directives so errors name the ``.ino``); the sketch's own ``.c``/``.cpp``
   files and its ``src/`` folder compile beside it. Unlike the IDE it writes no
   function prototypes: a sketch declares what it uses before using it;
3. finds the libraries the sketch includes (in the given library folders first, then
   the core's, like the IDE's sketchbook ``libraries/``), and theirs, and compiles them;
4. links with ``--gc-sections``, writes the ``.hex`` and reports flash and RAM use.

The project's own code (sketch and library folders given) compiles with
``-Wall -Wextra -Werror``; the Arduino core and its libraries with their usual flags.
The board (:mod:`hil_bridge.core.boards`) gives the MCU, the core's variant, the
``ARDUINO_<board>`` define and the flash and RAM the size report is measured against.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from hil_bridge.core.boards import BOARDS
from hil_bridge.core.boards import board as find_board
from hil_bridge.errors import HilBridgeError

#: Where Debian's arduino-core-avr puts the AVR core.
DEBIAN_ARDUINO_AVR = Path("/usr/share/arduino/hardware/arduino/avr")
#: ATmega328P flash left by the UNO/Nano bootloader (optiboot: 512 bytes) and its RAM:
#: the size report's default limits.
FLASH_BYTES = BOARDS["nano"].flash_bytes
RAM_BYTES = BOARDS["nano"].ram_bytes
ARDUINO_VERSION = "10807"
SOURCE_SUFFIXES = (".c", ".cpp", ".S")
_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.MULTILINE)


@dataclass(frozen=True)
class ArduinoAvr:
    """An installed Arduino AVR core: ``cores/arduino``, ``variants/``, ``libraries/``."""

    root: Path

    @property
    def core(self) -> Path:
        """The core's sources (Arduino.h, wiring.c, HardwareSerial.cpp...)."""
        return self.root / "cores" / "arduino"

    def variant(self, board: str) -> Path:
        """The pin map folder of ``board``."""
        return self.root / "variants" / BOARDS[board].variant

    @property
    def libraries(self) -> Path:
        """The core's bundled libraries (Wire, SPI, EEPROM...)."""
        return self.root / "libraries"


def find_arduino_avr() -> ArduinoAvr:
    """The Arduino AVR core to build with.

    Raises:
        HilBridgeError: none installed (naming the Debian package to install).
    """
    root = Path(os.environ.get("HIL_ARDUINO_AVR", DEBIAN_ARDUINO_AVR))
    if not (root / "cores" / "arduino" / "Arduino.h").is_file():
        raise HilBridgeError(
            f"no Arduino AVR core at {root} (install Debian's arduino-core-avr, or set HIL_ARDUINO_AVR)"
        )
    for tool in ("avr-gcc", "avr-g++", "avr-ar", "avr-objcopy", "avr-size"):
        if shutil.which(tool) is None:
            raise HilBridgeError(f"{tool} not found (install Debian's gcc-avr, binutils-avr and avr-libc)")
    return ArduinoAvr(root)


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
            HilBridgeError: naming what is over and by how much.
        """
        if self.flash > self.flash_max * (1 - flash_margin):
            raise HilBridgeError(
                f"flash {self.flash} bytes exceeds {1 - flash_margin:.0%} of {self.flash_max}"
            )
        if self.ram > self.ram_max * (1 - ram_margin):
            raise HilBridgeError(
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
    libraries: tuple[str, ...] = field(default=())


def _run(command: Sequence[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip().splitlines()
        raise HilBridgeError(f"{what} failed:\n" + "\n".join(output[-40:]))


@dataclass
class _Unit:
    source: Path
    object: Path
    flags: list[str]


def _sources(folder: Path, *, recursive: bool) -> list[Path]:
    pattern = "**/*" if recursive else "*"
    return sorted(p for p in folder.glob(pattern) if p.suffix in SOURCE_SUFFIXES and p.is_file())


def _includes(paths: Iterable[Path]) -> set[str]:
    found: set[str] = set()
    for path in paths:
        found.update(_INCLUDE.findall(path.read_text(errors="replace")))
    return found


@dataclass(frozen=True)
class _Library:
    name: str
    root: Path
    include: Path  # src/ (1.5 layout) or the library folder itself
    sources: tuple[Path, ...]
    ours: bool  # compiled with the strict flags


def _library_at(root: Path, *, ours: bool) -> _Library:
    if (root / "src").is_dir():
        return _Library(root.name, root, root / "src", tuple(_sources(root / "src", recursive=True)), ours)
    sources = [*_sources(root, recursive=False), *_sources(root / "utility", recursive=False)]
    return _Library(root.name, root, root, tuple(sources), ours)


def _find_library(header: str, folders: Sequence[tuple[Path, bool]]) -> _Library | None:
    for folder, ours in folders:
        if not folder.is_dir():
            continue
        for root in sorted(p for p in folder.iterdir() if p.is_dir()):
            for include in (root / "src", root):
                if (include / header).is_file():
                    return _library_at(root, ours=ours)
    return None


def build_sketch(
    sketch: Path,
    out: Path,
    *,
    libraries: Sequence[Path] = (),
    defines: Mapping[str, str | int] | None = None,
    board: str = "nano",
    progress: Callable[[str], None] | None = None,
    jobs: int | None = None,
) -> BuildResult:
    """Compile and link the sketch folder ``sketch`` into ``out``.

    Args:
        sketch: the sketch folder (``<name>/<name>.ino`` and friends).
        out: build folder (created; the core archive is cached there).
        libraries: folders holding libraries (like the IDE's sketchbook ``libraries``).
        defines: ``-D`` macros for the sketch and its libraries (e.g. ``HIL_CHECKED=1``).
        board: ``nano``, ``uno`` or ``mega2560``.
        progress: called with a line per step.
        jobs: parallel compilers (default: the CPU count).

    Raises:
        HilBridgeError: no toolchain, a missing library, or a compiler/linker error
            (with its output).
    """
    target = find_board(board)
    ino = sorted(sketch.glob("*.ino"))
    if not ino:
        raise HilBridgeError(f"{sketch}: no .ino file (not a sketch folder)")
    avr = find_arduino_avr()
    say = progress or (lambda _line: None)
    out.mkdir(parents=True, exist_ok=True)
    common = [
        f"-mmcu={target.mcu}",
        f"-DF_CPU={target.frequency_hz}L",
        f"-DARDUINO={ARDUINO_VERSION}",
        f"-DARDUINO_{target.define}",
        "-DARDUINO_ARCH_AVR",
        "-Os",
        "-g",
        "-ffunction-sections",
        "-fdata-sections",
        # Debian's avr-gcc 5.4 defines DECIMAL_DIG for C only; the core's WString.cpp
        # (written for the IDE's avr-gcc 7) needs it in C++11 too.
        "-DDECIMAL_DIG=__DECIMAL_DIG__",
    ]
    # -I, not -isystem: avr-gcc wraps system headers in extern "C", which breaks C++ ones.
    core_includes = ["-I", str(avr.core), "-I", str(avr.variant(board))]
    core_archive = _build_core(avr, board, out, [*common, *core_includes], say=say, jobs=jobs)

    # The sketch: .ino files joined into one C++ file, plus its own sources.
    sketch_cpp = out / "sketch" / f"{sketch.name}.ino.cpp"
    sketch_cpp.parent.mkdir(parents=True, exist_ok=True)
    sketch_cpp.write_text(
        "#include <Arduino.h>\n" + "".join(f'#line 1 "{p}"\n{p.read_text()}\n' for p in ino)
    )
    own_sources = _sources(sketch, recursive=False)
    if (sketch / "src").is_dir():
        own_sources += _sources(sketch / "src", recursive=True)
    found = _discover_libraries(avr, board, sketch, [*ino, *own_sources], libraries)

    extra = [f"-D{k}={v}" for k, v in (defines or {}).items()] + ["-I", str(sketch)]
    for library in found:
        extra += ["-I", str(library.include)]
    units: list[_Unit] = []

    def add(source: Path, folder: str, *, ours: bool) -> None:
        flags = [*common, *extra, *core_includes, *(["-Wall", "-Wextra", "-Werror"] if ours else ["-w"])]
        units.append(_Unit(source, out / folder / (source.name + ".o"), flags))

    for source in [sketch_cpp, *own_sources]:
        add(source, "sketch", ours=True)
    for library in found:
        for source in library.sources:
            add(source, f"libraries/{library.name}", ours=library.ours)
    names = ", ".join(lib.name for lib in found) or "no libraries"
    say(f"compiling {sketch.name} with {names} ({len(units)} files)")
    _compile(units, jobs)

    elf, hex_file = out / f"{sketch.name}.elf", out / f"{sketch.name}.hex"
    objects = [str(u.object) for u in units]
    link = ["avr-gcc", f"-mmcu={target.mcu}", "-Os", "-Wl,--gc-sections", "-o", str(elf), *objects]
    _run([*link, str(core_archive), "-lm"], f"linking {sketch.name}")
    _run(["avr-objcopy", "-O", "ihex", "-R", ".eeprom", str(elf), str(hex_file)], "avr-objcopy")
    size = elf_size(elf, board=board)
    say(f"{sketch.name}: {size}")
    return BuildResult(elf, hex_file, size, tuple(sorted(lib.name for lib in found)))


def _discover_libraries(
    avr: ArduinoAvr, board: str, sketch: Path, sources: list[Path], libraries: Sequence[Path]
) -> list[_Library]:
    """The libraries the sources include, then what those include, until closed."""
    folders = [(Path(f), True) for f in libraries] + [(avr.libraries, False)]
    local = {p.name for p in sketch.rglob("*.h")}
    found: dict[str, _Library] = {}
    scanned: set[Path] = set()
    pending = [*sources, *sketch.glob("*.h")]
    while pending:
        path = pending.pop()
        if path in scanned:
            continue
        scanned.add(path)
        for header in _includes([path]):
            if header in local or (avr.core / header).exists() or (avr.variant(board) / header).exists():
                continue
            if any((lib.include / header).is_file() for lib in found.values()):
                continue
            library = _find_library(header, folders)
            if library is None:
                continue  # a toolchain header (avr/io.h, math.h, ...)
            found[library.name] = library
            pending += [*library.sources, *library.include.rglob("*.h")]
    return list(found.values())


def _compiler(source: Path) -> list[str]:
    if source.suffix == ".c":
        return ["avr-gcc", "-std=gnu11"]
    if source.suffix == ".S":
        return ["avr-gcc", "-x", "assembler-with-cpp"]
    return ["avr-g++", "-std=gnu++11", "-fno-exceptions", "-fno-threadsafe-statics"]


def _compile(units: Sequence[_Unit], jobs: int | None) -> None:
    def one(unit: _Unit) -> None:
        unit.object.parent.mkdir(parents=True, exist_ok=True)
        _run(
            [*_compiler(unit.source), *unit.flags, "-c", str(unit.source), "-o", str(unit.object)],
            f"compiling {unit.source}",
        )

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        for future in [pool.submit(one, unit) for unit in units]:
            future.result()


def _build_core(
    avr: ArduinoAvr,
    board: str,
    out: Path,
    flags: list[str],
    *,
    say: Callable[[str], None],
    jobs: int | None,
) -> Path:
    sources = _sources(avr.core, recursive=False)
    digest = hashlib.sha256(" ".join([str(avr.root), board, *flags]).encode())
    for source in sources:
        digest.update(source.read_bytes())
    archive = out / f"core-{board}-{digest.hexdigest()[:12]}.a"
    if archive.exists():
        return archive
    say(f"compiling the Arduino core for {board} ({len(sources)} files, once)")
    units = [_Unit(s, out / f"core-{board}" / (s.name + ".o"), [*flags, "-w"]) for s in sources]
    _compile(units, jobs)
    partial = archive.with_suffix(f".{os.getpid()}.tmp")
    _run(["avr-ar", "rcs", str(partial), *(str(u.object) for u in units)], "avr-ar")
    partial.replace(archive)
    return archive


def elf_size(elf: Path, *, board: str = "nano") -> SizeReport:
    """Flash (.text + .data) and static RAM (.data + .bss + .noinit) of a linked ELF, against ``board``'s."""
    result = subprocess.run(["avr-size", "-A", str(elf)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise HilBridgeError(f"avr-size {elf}: {result.stderr.strip()}")
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
