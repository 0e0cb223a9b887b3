"""Two users on one machine: each one's links in a runtime folder of their own, none swappable.

Runs as root only: it makes a throwaway user (``useradd``), runs a ``virtual_mcu`` as
root and one as that user with the default links, in a temp folder of the test's own
(``TMPDIR``, root's and sticky like ``/tmp``) with no ``XDG_RUNTIME_DIR``, so both
runtime folders are ``<temp>/hil-<uid>``. The user is removed at the end.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [
    pytest.mark.ros,
    # One worker of a parallel run makes (and removes) the module's one throwaway user.
    pytest.mark.xdist_group("system_users"),
    pytest.mark.skipif(
        os.geteuid() != 0 or shutil.which("useradd") is None,
        reason="needs root and useradd to make a second user",
    ),
]

#: Seconds a node has to make its links: an interpreter, rclpy and DDS starting on a
#: busy machine take a few; a node that cannot start never makes them.
READY_TIMEOUT_S = 60.0
MCU = [sys.executable, "-m", "hil_mcu.virtual_mcu_node"]


def mcu_command_for(user: pwd.struct_passwd) -> list[str]:
    """:data:`MCU` as ``user`` can run it.

    A venv's interpreter may live in root's home (pyenv), which no other user may enter:
    then the system's Python of the same version runs it, with the venv's packages.
    """
    try:
        subprocess.run(
            [sys.executable, "-c", ""], user=user.pw_uid, group=user.pw_gid, extra_groups=[], check=True
        )
        return MCU
    except PermissionError:
        pass
    system = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if not system.is_file():
        pytest.skip(f"{user.pw_name} can run neither {sys.executable} nor {system}")
    packages = sysconfig.get_paths()["purelib"]
    return [
        str(system),
        "-c",
        f"import runpy, site; site.addsitedir({packages!r}); "
        "runpy.run_module('hil_mcu.virtual_mcu_node', run_name='__main__', alter_sys=True)",
    ]


@pytest.fixture(scope="module")
def other_user() -> Iterator[pwd.struct_passwd]:
    """A throwaway system user with a group of its own, removed afterwards."""
    name = f"hiltest-{uuid.uuid4().hex[:8]}"
    subprocess.run(
        ["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        check=True,
        capture_output=True,
    )
    try:
        yield pwd.getpwnam(name)
    finally:
        subprocess.run(["userdel", name], check=False, capture_output=True)


@pytest.fixture
def shared_temp() -> Iterator[Path]:
    """A temp folder both users share, as ``/tmp`` is: root's, world-writable and sticky.

    Not under ``tmp_path``: pytest's folders are root's alone (0700).
    """
    folder = Path(tempfile.mkdtemp(prefix="hil-two-users-"))
    folder.chmod(0o1777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def environment(temp: Path, uid: int) -> dict[str, str]:
    """The node's environment: the shared temp folder, no XDG_RUNTIME_DIR, a home of its own."""
    home = temp / f"home-{uid}"
    home.mkdir(exist_ok=True)
    os.chown(home, uid, -1)
    return {
        "TMPDIR": str(temp),
        "XDG_RUNTIME_DIR": "",
        "HOME": str(home),
        "ROS_HOME": str(home / ".ros"),
        "ROS_LOG_DIR": str(home / "log"),
    }


def wait_for(condition: Callable[[], bool], *, what: str, procs: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not condition():
        ended = [p.args for p in procs if p.poll() is not None]
        assert not ended, f"{what}: a node ended first: {ended}"
        assert time.monotonic() < deadline, f"{what}: not within {READY_TIMEOUT_S} s"
        time.sleep(0.1)


def test_two_users_run_a_virtual_mcu_with_the_default_links_side_by_side(
    tmp_path: Path, spawn: Any, shared_temp: Path, other_user: pwd.struct_passwd
) -> None:
    uid = other_user.pw_uid
    mine = spawn(MCU, name="root", env=environment(shared_temp, 0))
    theirs = spawn(mcu_command_for(other_user), name="other", env=environment(shared_temp, uid), user=uid)
    folders = {0: shared_temp / "hil-0", uid: shared_temp / f"hil-{uid}"}
    links = [folder / name for folder in folders.values() for name in ("mcu_command", "signal_link")]
    wait_for(lambda: all(link.is_symlink() for link in links), what="both users' links", procs=[mine, theirs])
    for owner, folder in folders.items():
        info = folder.lstat()
        assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (owner, 0o700), folder
        for name in ("mcu_command", "signal_link"):
            # The link leads to a pty its user's node opened: theirs, not the other's.
            assert (folder / name).stat().st_uid == owner, folder / name
    time.sleep(1.0)
    assert mine.poll() is None and theirs.poll() is None, (
        (tmp_path / "root.log").read_text(),
        (tmp_path / "other.log").read_text(),
    )


def _their_folder(temp: Path, victim: Path, user: pwd.struct_passwd) -> str:
    victim.mkdir(mode=0o755)
    os.chown(victim, user.pw_uid, user.pw_gid)
    return f"folder {victim} is owned by {user.pw_name} (uid {user.pw_uid}), not by you (root, uid 0)"


def _their_symlink(temp: Path, victim: Path, user: pwd.struct_passwd) -> str:
    lure = temp / "lure"
    lure.mkdir(mode=0o700)
    os.chown(lure, user.pw_uid, user.pw_gid)
    victim.symlink_to(lure)
    os.lchown(victim, user.pw_uid, user.pw_gid)
    return f"folder {victim} is a symlink (to {lure})"


def _open_to_all(temp: Path, victim: Path, user: pwd.struct_passwd) -> str:
    victim.mkdir()
    victim.chmod(0o777)
    return f"folder {victim} is writable by its group and others (mode 0777)"


@pytest.mark.parametrize("plant", [_their_folder, _their_symlink, _open_to_all])
def test_a_runtime_folder_another_user_made_first_is_refused_naming_it(
    shared_temp: Path, other_user: pwd.struct_passwd, plant: Callable[[Path, Path, pwd.struct_passwd], str]
) -> None:
    victim = shared_temp / "hil-0"
    words = plant(shared_temp, victim, other_user)
    result = subprocess.run(
        MCU,
        env={**os.environ, **environment(shared_temp, 0)},
        capture_output=True,
        text=True,
        timeout=READY_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert f"virtual_mcu: cannot create pty link {victim}/mcu_command: {words}" in result.stderr
    assert "Traceback" not in result.stderr
    target = victim.resolve()
    assert not (target / "mcu_command").exists() and not (target / "mcu_command.lock").exists()
