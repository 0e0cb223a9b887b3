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


class McuWithPins(McuUnderTest, Protocol):
    """An MCU whose time can pass idle and whose motor pins can be seen."""

    def wait(self, seconds: float) -> list[str]:
        """Let ``seconds`` pass with no input; every line the MCU wrote meanwhile."""

    def motor_enables(self) -> tuple[float, float]:
        """The enable duty of both wheels as the signal link shows them (0 = off)."""


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


def check_heartbeat_loss(mcu: McuWithPins, *, timeout: float = 1.5, margin: float = 0.2) -> None:
    """The heartbeat watchdog, seen from outside: motors stop after ``timeout`` without HBB.

    Running motors keep running while heartbeats are recent; ``timeout`` (+ ``margin``)
    after the last one the motor pins are off, one ``ERR,heartbeat lost`` was sent and
    TL1 reports zero; a DRV is then refused until the next HBB, after which it drives.
    """
    assert replies(mcu.exchange(["HBB,0", "DRV200,200"])) == ["HBB,0"]
    mcu.wait(0.1)
    assert min(mcu.motor_enables()) > 0, "the motors did not start"
    before = mcu.wait(timeout - 0.3)
    assert "ERR,heartbeat lost" not in before, "the watchdog fired early"
    assert min(mcu.motor_enables()) > 0, "the motors stopped before the timeout"
    after = mcu.wait(0.3 + margin)
    assert replies(after) == ["ERR,heartbeat lost"], f"no heartbeat-loss error: {replies(after)}"
    assert mcu.motor_enables() == (0, 0), f"motors still driven: {mcu.motor_enables()}"
    assert [line for line in after if line.startswith("TL1")][-1] == "TL10,0"
    mcu.exchange(["DRV100,100"])
    mcu.wait(0.1)
    assert mcu.motor_enables() == (0, 0), "a DRV drove the motors with the heartbeat lost"
    assert replies(mcu.exchange(["HBB,1", "DRV100,100"])) == ["HBB,1"]
    mcu.wait(0.1)
    assert min(mcu.motor_enables()) > 0, "the motors did not come back after a heartbeat"
