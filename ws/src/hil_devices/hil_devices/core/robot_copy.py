"""A new robot folder made from another robot (``hil_robot new``): the place to start your own.

The copy is the source robot's folder without its build outputs, renamed for the new
robot and made self-contained:

* ``robot.yaml``: ``name`` is the new folder's name; every firmware path is moved with
  the files. A sketch folder (in the robot's folder or outside it, as the demo robot's)
  becomes ``firmware/<name>/`` with its main tab ``<name>.ino``, as the Arduino IDE
  names a sketch after its folder. A library folder or an ELF outside the robot's
  folder is named by its absolute path, as the copy no longer sits beside it.
* Each scenario names the robot as ``..`` (its folder, seen from ``scenarios/``).
* ``README.md`` says where the robot came from and how to check, build and run it.

The edits are made in the text, each value replaced where its YAML node stands, so
the comments of the files stay as they were. The new profile is
read back and checked (:func:`load_profile`); a copy that would not load is removed and
the error names the file and the field. This module never imports rclpy.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

from hil_devices.core.profile import NAME_PATTERN, PROFILE_FILE, RobotProfile, load_profile, profile_path
from hil_devices.core.sketch_files import sketch_folder
from hil_devices.errors import HilDevicesError

#: The files of an Arduino sketch's folder (its tabs and the code beside them).
_SKETCH_SUFFIXES = (".ino", ".pde", ".h", ".hh", ".hpp", ".c", ".cpp", ".cc", ".S", ".tpp", ".ipp")
#: Build outputs the copy leaves out (``hil_sketch``'s ``firmware/build``, caches).
_LEFT_OUT = ("build", "__pycache__", ".pytest_cache")


@dataclass(frozen=True)
class RobotCopy:
    """What :func:`copy_robot` made."""

    #: The new robot folder.
    folder: Path
    #: The new robot's profile, read back from its folder.
    profile: RobotProfile
    #: The scenario files it has, in ``scenarios/``.
    scenarios: tuple[Path, ...]


def copy_robot(source: str | Path, target: Path) -> RobotCopy:
    """Make the robot folder ``target`` from the robot ``source`` (module docstring).

    Args:
        source: a shipped robot's name, a robot folder or its robot.yaml.
        target: the new folder; must not exist. Its name is the new robot's name.

    Raises:
        HilDevicesError: ``target`` exists or its name is not a robot name, the source
            is no robot, or the copy does not load (naming the file and the field).
    """
    name = target.name
    if not NAME_PATTERN.fullmatch(name):
        raise HilDevicesError(
            f"{target}: {name!r} is not a robot name (letters, digits, _; the folder names the robot)"
        )
    if target.exists():
        raise HilDevicesError(f"{target}: already exists (hil_robot new makes a new folder)")
    profile_file = profile_path(source).resolve()
    old = load_profile(profile_file)
    old_folder = profile_file.parent
    shutil.copytree(old_folder, target, ignore=shutil.ignore_patterns(*_LEFT_OUT))
    try:
        text = (target / PROFILE_FILE).read_text(encoding="utf-8")
        text = _with_top_key(text, "name", name)
        text = _with_firmware(text, old, old_folder, target, name)
        (target / PROFILE_FILE).write_text(text, encoding="utf-8")
        scenarios = tuple(sorted((target / "scenarios").glob("*.yaml")))
        for scenario in scenarios:
            try:
                here = _with_top_key(scenario.read_text(encoding="utf-8"), "robot", "..")  # its folder
            except yaml.YAMLError as exc:
                named = old_folder / scenario.relative_to(target)
                raise HilDevicesError(f"{named}: cannot read scenario: invalid YAML: {exc}") from exc
            scenario.write_text(here, encoding="utf-8")
        profile = load_profile(target / PROFILE_FILE)
        (target / "README.md").write_text(_readme(profile, str(source)), encoding="utf-8")
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    return RobotCopy(target, profile, scenarios)


def _with_firmware(text: str, old: RobotProfile, old_folder: Path, target: Path, name: str) -> str:
    """The profile's text with its firmware paths where the copy's files are."""
    if old.firmware.sketch is not None:
        _place_sketch(old.firmware.sketch, old_folder, target, name)
    edits = []
    for key, node in _firmware_values(text):
        if key == "sketch":
            edits.append((node, f"firmware/{name}"))
            continue
        path = (old_folder / Path(node.value).expanduser()).resolve()
        if not path.is_relative_to(old_folder):
            edits.append((node, str(path)))
    return _edited(text, [(node.start_mark.index, node.end_mark.index, now) for node, now in edits])


def _edited(text: str, edits: list[tuple[int, int, str]]) -> str:
    """The text with each span ``(start, end)`` replaced by its new text (spans do not overlap)."""
    for start, end, now in sorted(edits, reverse=True):
        text = text[:start] + now + text[end:]
    return text


def _firmware_values(text: str) -> list[tuple[str, yaml.ScalarNode]]:
    """The path values of the profile's ``firmware`` section as written: (sketch | elf | libraries, node).

    The nodes carry where each value stands in the text, so an edit changes nothing else.
    """
    top = yaml.compose(text)
    found: list[tuple[str, yaml.ScalarNode]] = []
    if not isinstance(top, yaml.MappingNode):
        return found
    for key, value in top.value:
        if key.value != "firmware" or not isinstance(value, yaml.MappingNode):
            continue
        for field, entry in value.value:
            entries = entry.value if isinstance(entry, yaml.SequenceNode) else [entry]
            for item in entries:
                if (
                    field.value in ("sketch", "elf", "libraries")
                    and isinstance(item, yaml.ScalarNode)
                    and item.value
                ):
                    found.append((field.value, item))
    return found


def _place_sketch(sketch: Path, old_folder: Path, target: Path, name: str) -> None:
    """The sketch as the copy's own ``firmware/<name>/``, its main tab ``<name>.ino``."""
    folder, main = sketch_folder(sketch)
    new_folder = target / "firmware" / name
    if folder == old_folder:  # the profile in the sketch folder: the sketch's files move down
        new_folder.mkdir(parents=True)
        for path in sorted(target.iterdir()):
            if path.is_file() and path.suffix in _SKETCH_SUFFIXES:
                path.rename(new_folder / path.name)
    elif folder.is_relative_to(old_folder):
        copied = target / folder.relative_to(old_folder)
        if copied != new_folder:  # by a name aside, as the new place may be inside the old
            aside = copied.rename(target / f".{name}.sketch")
            new_folder.parent.mkdir(parents=True, exist_ok=True)
            aside.rename(new_folder)
    else:
        shutil.copytree(folder, new_folder, ignore=shutil.ignore_patterns(*_LEFT_OUT))
    if main.name != f"{name}.ino":
        if (new_folder / f"{name}.ino").exists():
            raise HilDevicesError(
                f"{folder / (name + '.ino')}: the sketch has a tab of the new robot's name, which"
                f" its main tab {main.name} would become; choose another name"
            )
        (new_folder / main.name).rename(new_folder / f"{name}.ino")


def _with_top_key(text: str, key: str, value: str) -> str:
    """The text with the top-level ``key: value``, in place of the key's value or before the first key.

    The key's colon and value are replaced, so a comment after the value stays.

    Raises:
        yaml.YAMLError: the text is not YAML.
    """
    top = yaml.compose(text)
    pairs = top.value if isinstance(top, yaml.MappingNode) else []
    for name, node in pairs:
        if name.value == key:
            start, end = name.end_mark.index, node.end_mark.index
            # A block scalar's span ends with its last line's break, which the next key needs.
            tail = "\n" if text[start:end].endswith("\n") else ""
            return _edited(text, [(start, end, f": {value}{tail}")])
    at = pairs[0][0].start_mark.index if pairs else len(text)  # after the leading comments
    return text[:at] + f"{key}: {value}\n" + text[at:]


def _readme(profile: RobotProfile, source: str) -> str:
    """The new robot's README: where it came from, and the commands to check, build and run it."""
    lines = [
        f"# {profile.name}",
        "",
        f"Made with `hil_robot new` from the robot `{source}`: its profile, firmware and",
        "scenarios, renamed for this robot. Change `robot.yaml` to your robot's board, body",
        "and wiring, and the sketch to your firmware. From this folder:",
        "",
        "```bash",
        "hil_robot check .                  # the profile: every pin, device and the firmware",
        "hil_robot show .                   # its pins, signals and simavr coupling",
    ]
    if profile.firmware.sketch is not None:
        libraries = "".join(f" --libraries {library}" for library in profile.firmware.libraries)
        lines.append(f"hil_sketch build firmware/{profile.name} --board {profile.board}{libraries}")
    lines += [
        "hil_sim_runner --robot . --mcu simavr   # the firmware in simavr in the demo world",
        "hil_scenario run scenarios             # the scenarios, in lockstep",
        "```",
        "",
    ]
    return "\n".join(lines)
