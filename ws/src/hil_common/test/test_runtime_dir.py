"""Where runtime files go, and the folders refused for them (another user could change them)."""

from __future__ import annotations

import os
import re
import stat
import tempfile
from pathlib import Path

import pytest

from hil_common.core.runtime_dir import link_path, private_dir, runtime_dir, runtime_root
from hil_common.errors import HilError
from support.unsafe_folders import OTHER_UID, UNSAFE_FOLDERS, Make, needs_root, snapshot

UID = os.geteuid()


@pytest.fixture
def temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp folder of this test's own, as ``tempfile.gettempdir()``, with no XDG_RUNTIME_DIR."""
    folder = tmp_path / "tmp"
    folder.mkdir(mode=0o1777)
    folder.chmod(0o1777)  # as /tmp: everyone may add entries, nobody may take others'
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    return folder


@pytest.mark.parametrize("make", UNSAFE_FOLDERS)
def test_a_folder_another_user_could_change_is_refused_naming_it(tmp_path: Path, make: Make) -> None:
    folder, words = make(tmp_path)
    before = snapshot(tmp_path)
    with pytest.raises(HilError) as refused:
        private_dir(folder)
    for word in words:
        assert word in str(refused.value)
    assert snapshot(tmp_path) == before, "something was made in or through the unsafe folder"


def test_missing_folders_are_made_private_and_a_sticky_folder_on_the_way_is_accepted(
    temp_dir: Path,
) -> None:
    made = private_dir(temp_dir / "a" / "b")
    assert made == temp_dir / "a" / "b"
    for folder in (temp_dir / "a", temp_dir / "a" / "b"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert private_dir(made) == made  # again: nothing to make, still safe


def test_a_dot_dot_is_walked_as_the_kernel_walks_it_through_no_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    with pytest.raises(HilError, match=f"folder {tmp_path / 'alias'} is a symlink"):
        private_dir(tmp_path / "alias" / ".." / "links")
    assert not (tmp_path / "links").exists()
    assert private_dir(tmp_path / "real" / ".." / "links") == tmp_path / "real" / ".." / "links"


def test_without_xdg_runtime_dir_the_runtime_folder_is_hil_uid_in_the_temp_folder(temp_dir: Path) -> None:
    assert runtime_root() == temp_dir / f"hil-{UID}"
    assert not runtime_root().exists()  # only named
    folder = runtime_dir("domain3")
    assert folder == temp_dir / f"hil-{UID}" / "domain3"
    assert stat.S_IMODE(runtime_root().stat().st_mode) == 0o700


def test_a_usable_xdg_runtime_dir_holds_the_runtime_folder(
    temp_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    xdg = tmp_path / "run-user"
    xdg.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    assert runtime_root() == xdg / "hil"
    assert runtime_dir() == xdg / "hil" and (xdg / "hil").is_dir()


def _relative(tmp_path: Path) -> str:
    return "run-user"


def _missing(tmp_path: Path) -> str:
    return str(tmp_path / "nowhere")


def _symlink(tmp_path: Path) -> str:
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "run-user").symlink_to(tmp_path / "real")
    return str(tmp_path / "run-user")


def _mode(mode: int, uid: int = -1) -> object:
    def make(tmp_path: Path) -> str:
        folder = tmp_path / "run-user"
        folder.mkdir()
        folder.chmod(mode)
        os.chown(folder, uid, -1)
        return str(folder)

    return make


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(_relative, id="relative"),
        pytest.param(_missing, id="missing"),
        pytest.param(_symlink, id="symlink"),
        pytest.param(_mode(0o770), id="group-writable"),
        pytest.param(_mode(0o700, OTHER_UID), id="another-users (su)", marks=needs_root),
    ],
)
def test_an_xdg_runtime_dir_that_is_not_this_users_own_is_passed_over(
    temp_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: object
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", make(tmp_path))  # type: ignore[operator]
    assert runtime_root() == temp_dir / f"hil-{UID}"


@pytest.mark.parametrize(
    ("mode", "uid", "words"),
    [
        pytest.param(
            0o700, OTHER_UID, f"is owned by uid {OTHER_UID}, not by you", marks=needs_root, id="theirs"
        ),
        pytest.param(0o777, -1, "is writable by its group and others (mode 0777)", id="world-writable"),
        pytest.param(0o1777, -1, "is writable by its group and others (mode 1777)", id="sticky"),
    ],
)
def test_a_runtime_folder_made_beforehand_by_someone_else_or_open_to_them_is_refused(
    temp_dir: Path, mode: int, uid: int, words: str
) -> None:
    planted = temp_dir / f"hil-{UID}"
    planted.mkdir()
    planted.chmod(mode)
    os.chown(planted, uid, -1)
    with pytest.raises(HilError, match=re.escape(f"folder {planted} {words}")):
        runtime_dir("domain0")
    assert list(planted.iterdir()) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("mcu_command", "<root>/mcu_command"),
        ("/dev/ttyACM0", "/dev/ttyACM0"),
        ("./mcu_command", "<cwd>/mcu_command"),
        ("links/mcu_command", "<cwd>/links/mcu_command"),
        ("..", "<cwd>/.."),
    ],
)
def test_a_bare_link_name_is_in_the_runtime_folder_and_a_path_is_as_given(
    temp_dir: Path, value: str, expected: str
) -> None:
    named = Path(expected.replace("<root>", str(temp_dir / f"hil-{UID}")).replace("<cwd>", str(Path.cwd())))
    assert link_path(value) == named
    assert link_path(str(named)) == named  # naming it again names the same file
    assert not (temp_dir / f"hil-{UID}").exists()
    if value == "mcu_command":
        assert link_path(value, check=True) == temp_dir / f"hil-{UID}" / "mcu_command"
        assert (temp_dir / f"hil-{UID}").is_dir()
