"""Reading a bag's run options: a bad metadata file is a clear error, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from hil_bringup.core.bag import RUN_KEY, run_options
from hil_bringup.errors import HilBringupError


def bag_with(tmp_path: Path, metadata: bytes) -> Path:
    (tmp_path / "metadata.yaml").write_bytes(metadata)
    return tmp_path


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        (b"rosbag2_bagfile_information:\n  x: \xe9\n", "byte 0xe9"),
        (b"- a list\n", "no rosbag2_bagfile_information"),
        (b"rosbag2_bagfile_information: 3\n", "no rosbag2_bagfile_information"),
        (b"rosbag2_bagfile_information:\n  custom_data:\n    hil_run: '{not json'\n", "not JSON"),
        (b"rosbag2_bagfile_information:\n  custom_data:\n    hil_run: '[1, 2]'\n", "not a mapping"),
        (b"[" * 100 + b"]" * 100, "nested"),
    ],
)
def test_bad_bag_metadata_is_an_error_naming_the_file(tmp_path: Path, metadata: bytes, message: str) -> None:
    with pytest.raises(HilBringupError, match=message) as caught:
        run_options(bag_with(tmp_path, metadata))
    assert "metadata.yaml" in str(caught.value)


def test_missing_metadata_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(HilBringupError, match=r"metadata\.yaml"):
        run_options(tmp_path)


def test_run_options_are_read_from_custom_data(tmp_path: Path) -> None:
    text = f"rosbag2_bagfile_information:\n  custom_data:\n    {RUN_KEY}: '{{\"seed\": 4}}'\n"
    assert run_options(bag_with(tmp_path, text.encode())) == {"seed": 4}
    assert run_options(bag_with(tmp_path, b"rosbag2_bagfile_information: {}\n")) == {}
