"""An Arduino sketch's files: its folder and main tab, by the IDE's rule."""

from __future__ import annotations

from pathlib import Path

from hil_devices.errors import HilDevicesError


def sketch_folder(path: Path) -> tuple[Path, Path]:
    """The sketch folder and its main tab for a sketch folder (or its main ``.ino`` file).

    Raises:
        HilDevicesError: no such folder, no ``.ino`` in it, or no tab named after the
            folder (the IDE's rule).
    """
    folder = path.parent if path.suffix == ".ino" and path.is_file() else path
    if not folder.is_dir():
        raise HilDevicesError(f"{path}: no such sketch folder")
    tabs = sorted(p.name for p in folder.glob("*.ino"))
    if not tabs:
        raise HilDevicesError(f"{folder}: no .ino file (not a sketch folder)")
    main = folder / f"{folder.name}.ino"
    if not main.is_file():
        raise HilDevicesError(
            f"{folder}: no {main.name}: the Arduino IDE names a sketch's main tab after its folder"
            f" (found {', '.join(tabs)})"
        )
    return folder.resolve(), main.resolve()
