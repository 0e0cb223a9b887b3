"""A lockstep run's digest: the same options give the same one, stepped ahead or not; another seed another."""

from __future__ import annotations

import pytest

from hil_bringup.core.graph import GraphOptions
from hil_testing.run_digest import lockstep_digest


@pytest.mark.ros
@pytest.mark.parametrize(
    "options",
    [
        GraphOptions(rtf=0.0, behaviour="boards"),
        GraphOptions(rtf=0.0, behaviour="boards", mcu="simavr"),
        GraphOptions(rtf=0.0, behaviour="swarm", robots=3, hil_robots=2, radio=True, world="swarm"),
        GraphOptions(
            rtf=0.0, behaviour="swarm", robots=2, hil_robots=2, radio=True, world="swarm", mcu="simavr"
        ),
        GraphOptions(rtf=0.0, behaviour="boards", mcu="simavr", faults=True, fault_drop=0.01),
    ],
    ids=[
        "virtual MCU",
        "firmware in simavr",
        "two HIL robots with radio",
        "two in simavr with radio",
        "firmware in simavr behind faulty links",
    ],
)
def test_a_lockstep_run_repeats_bit_for_bit_also_when_stepped_ahead(options: GraphOptions) -> None:
    """``step(ahead=True)`` begins the firmwares' next steps early; what the run does stays the same."""
    assert lockstep_digest(options, seconds=2.0) == lockstep_digest(options, seconds=2.0, ahead=True)


@pytest.mark.ros
def test_the_digest_sees_a_different_run() -> None:
    options = GraphOptions(rtf=0.0, behaviour="boards", faults=True, fault_drop=0.01)
    assert lockstep_digest(options, seconds=2.0) != lockstep_digest(
        GraphOptions(rtf=0.0, behaviour="boards", faults=True, fault_drop=0.01, seed=1), seconds=2.0
    )
