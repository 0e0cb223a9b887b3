"""The robots of a run: the ``robot`` option's profiles, one per robot.

The option names robot profiles (:mod:`hil_devices.core.profile`): a shipped robot's
name (``demo``, ``rab_style``...) or a robot folder or its ``robot.yaml``; robots of
different profiles in one world are a comma-separated list, one per robot in order,
the last repeated for the rest (``demo,rab_style``: robot 0 the demo robot, every
other robot a rab_style). Paths are resolved once, where the option is read (against
the working folder, a scenario's against its file's), so every node of the run, in
whatever folder it starts, reads the same files. This module never imports rclpy.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from hil_common.errors import HilError
from hil_devices.core.profile import (
    ROBOT_SEPARATOR,
    RobotProfile,
    for_robot,
    load_profile,
    profile_path,
    robot_entries,
)


def resolve_robots(text: str, *, base: Path | None = None) -> str:
    """The option's text with every path made absolute (names of shipped robots stay names).

    Args:
        text: the option's value.
        base: the folder relative paths start in (default: the working folder).

    Raises:
        HilError: an entry that is neither a robot folder, a robot.yaml nor a shipped
            robot (naming it and the shipped robots), or no entry at all.
    """
    found = robot_entries(text)
    if not found:
        raise HilError(f"{text!r}: expected a robot's name or its folder (several: comma-separated)")
    resolved = []
    for entry in found:
        path = Path(entry).expanduser()
        if base is not None and not path.is_absolute() and (base / path).exists():
            path = base / path
        if path.exists():
            resolved.append(str(profile_path(path.resolve())))
        else:
            profile_path(entry)  # a shipped robot's name, or the error naming the shipped ones
            resolved.append(entry)
    return ROBOT_SEPARATOR.join(resolved)


def robot_profiles(text: str) -> tuple[RobotProfile, ...]:
    """The profiles of a resolved ``robot`` option, read and checked (each file once while unchanged).

    Raises:
        HilError: a profile that does not load; names its file and field.
    """
    return tuple(_load(entry, *_stamp(entry)) for entry in robot_entries(text))


def profile_of(profiles: Sequence[RobotProfile], robot: int) -> RobotProfile:
    """Robot ``robot``'s profile: its own entry, or the last for robots past the list."""
    chosen: RobotProfile = for_robot(profiles, robot)
    return chosen


def _stamp(entry: str) -> tuple[int, int]:
    path = profile_path(entry)
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


@functools.lru_cache(maxsize=64)
def _load(entry: str, _mtime: int, _size: int) -> RobotProfile:
    return load_profile(entry)
