"""hil_msgs: every type crosses a process boundary over real DDS with fields intact."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor

from support.msg_samples import SAMPLES

MSG_DIR = Path(__file__).resolve().parent.parent / "ws" / "src" / "hil_msgs" / "msg"
TYPES = sorted(p.stem for p in MSG_DIR.glob("*.msg"))
FIELD_LINE = re.compile(r"^\s*[A-Za-z][\w/]*(\[\d*\])?\s+[a-z]\w*(\s*=.*|\s+\S.*)?$")


def test_every_hil_msgs_type_has_a_sample() -> None:
    assert TYPES, f"no .msg files in {MSG_DIR}"
    assert sorted(SAMPLES) == TYPES


@pytest.mark.parametrize("type_name", TYPES)
def test_every_msg_field_is_documented(type_name: str) -> None:
    lines = (MSG_DIR / f"{type_name}.msg").read_text().splitlines()
    undocumented = []
    for index, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        assert FIELD_LINE.match(line), f"{type_name}.msg: not a field line: {line!r}"
        # A field is documented by the comment block right above it, or shares the
        # block of the field lines directly above it.
        above = index - 1
        while above >= 0 and lines[above].strip() and not lines[above].lstrip().startswith("#"):
            above -= 1
        if above < 0 or not lines[above].lstrip().startswith("#"):
            undocumented.append(line.strip())
    assert not undocumented, f"{type_name}.msg: fields without a comment: {undocumented}"


@pytest.fixture(scope="module")
def received(spawn_module: Any) -> dict[str, Any]:
    """Run the sample publisher in another process and collect one of each type."""
    test_dir = str(Path(__file__).resolve().parent)
    pythonpath = os.pathsep.join(p for p in (test_dir, os.environ.get("PYTHONPATH", "")) if p)
    spawn_module(
        [sys.executable, "-m", "support.sample_publisher"], name="publisher", env={"PYTHONPATH": pythonpath}
    )

    context = rclpy.Context()
    rclpy.init(context=context)
    got: dict[str, Any] = {}
    try:
        node = rclpy.create_node("hil_msgs_sample_checker", context=context)
        for name, factory in SAMPLES.items():
            node.create_subscription(
                type(factory()), f"hil_test/{name}", lambda msg, name=name: got.setdefault(name, msg), 10
            )
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        deadline = time.monotonic() + 30.0
        while len(got) < len(SAMPLES) and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        executor.shutdown()
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
    return got


@pytest.mark.ros
@pytest.mark.parametrize("type_name", TYPES)
def test_hil_msgs_type_arrives_intact_from_another_process(type_name: str, received: dict[str, Any]) -> None:
    assert type_name in received, f"no {type_name} received within 30 s (got {sorted(received)})"
    assert received[type_name] == SAMPLES[type_name]()
