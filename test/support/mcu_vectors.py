"""One runner for the MCU behaviour vectors (``hil_bridge/vectors/mcu_behaviour.yaml``).

Every implementation of the robot MCU (hil_sim's virtual MCU, the firmware's core
built for the host, the firmware in an emulator) is checked by :func:`check_case`
through the small :class:`McuUnderTest` interface, so the vectors mean the same
thing everywhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from hil_bridge.core.vectors import load_vectors

SOURCE_VECTORS = Path(__file__).resolve().parents[2] / "ws" / "src" / "hil_bridge" / "vectors"

# From the source tree: the installed share folder has it only after a rebuild.
VECTORS = load_vectors("mcu_behaviour", directory=SOURCE_VECTORS)
CASES: list[dict[str, Any]] = VECTORS["cases"]


class McuUnderTest(Protocol):
    """An MCU in its power-on state, driven line by line."""

    def exchange(self, lines: list[str]) -> list[str]:
        """Send ``lines`` (without line endings) at once; every line the MCU wrote since the last call."""

    def after_telemetry_period(self) -> list[str]:
        """Let one telemetry period pass; every line the MCU wrote meanwhile."""


def replies(output: list[str]) -> list[str]:
    """The lines that answer requests (telemetry is sent on a timer, not as a reply)."""
    return [line for line in output if not line.startswith("TL")]


def check_case(mcu: McuUnderTest, case: dict[str, Any]) -> None:
    """Run one vector case and assert what it expects."""
    assert replies(mcu.exchange(["HBB,0"])) == ["HBB,0"]  # the harness's heartbeat, not part of the case
    got = replies(mcu.exchange(case["send"]))
    if "expect" in case:
        assert got == case["expect"]
    else:
        assert len(got) == len(case["expect_prefix"]), got
        for line, prefix in zip(got, case["expect_prefix"], strict=True):
            assert line.startswith(prefix), (line, prefix)
    sent = mcu.after_telemetry_period()
    for expected in case.get("telemetry", []):
        assert [line for line in sent if line.startswith(expected[:3])] == [expected]
