"""Is a file an AVR program? The ELF header check shared by robot profiles and simavr.

An AVR program as avr-gcc links it is a 32-bit little-endian ELF executable for
machine EM_AVR (83). :func:`check_avr_elf` reads the first 20 bytes and says what the
file is instead (not an ELF, an object, an x86-64 or ARM build...), so a wrong firmware
file is refused when a profile or a run is read, not when the emulator starts.
"""

from __future__ import annotations

from pathlib import Path

from hil_devices.errors import HilDevicesError

#: What an AVR program's ELF header holds (e_ident, e_type, e_machine).
ELF_MAGIC = b"\x7fELF"
ELFCLASS32, ELFDATA2LSB, ET_EXEC, EM_AVR = 1, 1, 2, 83
#: Machines a firmware built for the wrong target is likely to be (e_machine: name).
MACHINES = {3: "x86", 40: "ARM", 62: "x86-64", 183: "AArch64", 243: "RISC-V", 94: "Xtensa (ESP32)"}


def check_avr_elf(path: str | Path, *, error: type[Exception] = HilDevicesError) -> Path:
    """``path``, once its ELF header says it is an AVR program simavr can load.

    Args:
        path: the file.
        error: the exception class to raise (the caller's package's).

    Raises:
        error: no such file, unreadable, or not a 32-bit little-endian executable ELF
            for the AVR (EM_AVR, 83); names the file and what it is instead.
    """
    elf = Path(path)
    if not elf.exists():
        raise error(f"firmware {elf}: no such file")
    try:
        with elf.open("rb") as file:
            head = file.read(20)
    except OSError as exc:
        raise error(f"firmware {elf}: cannot read it: {exc.strerror or exc}") from exc
    if len(head) < 20 or head[:4] != ELF_MAGIC:
        raise error(f"firmware {elf}: not an ELF file (it begins {head[:4]!r})")
    machine = int.from_bytes(head[18:20], "little" if head[5] == ELFDATA2LSB else "big")
    if machine != EM_AVR:
        name = MACHINES.get(machine, "not AVR")
        raise error(f"firmware {elf}: an ELF for machine {machine} ({name}), not AVR ({EM_AVR})")
    if head[4] != ELFCLASS32 or head[5] != ELFDATA2LSB:
        raise error(f"firmware {elf}: not a 32-bit little-endian ELF, as avr-gcc makes")
    if int.from_bytes(head[16:18], "little") != ET_EXEC:
        raise error(f"firmware {elf}: an ELF object, not a linked program (link it with avr-gcc)")
    return elf
