"""``hil_side`` refuses a robot side whose link folder another user could change, before it starts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support.unsafe_folders import MAIN_KINDS, Make, snapshot


@pytest.mark.parametrize("make", MAIN_KINDS)
def test_robot_side_with_a_link_dir_another_user_could_change_exits_2_naming_it(
    tmp_path: Path, make: Make
) -> None:
    folder, words = make(tmp_path)
    before = snapshot(tmp_path)
    result = subprocess.run(
        ["hil_side", "robot", "--link-dir", str(folder)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert f"hil_side: link_dir {folder}: folder " in result.stderr
    for word in words:
        assert word in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""  # no process was started
    assert snapshot(tmp_path) == before
