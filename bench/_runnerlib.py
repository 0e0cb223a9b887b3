"""Timing the one-process runner in lockstep, for the benches that measure a whole loop.

Apart from ``_benchlib`` so that benches which do not run the graph need not import it
(the runner skips files starting with ``_``).
"""

from __future__ import annotations

import time

from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner


def lockstep_rtf(
    options: GraphOptions, seconds: float, *, warmup: int = 20, ahead: bool = True
) -> tuple[float, float]:
    """Simulated s per wall s and per CPU s of this process, over ``seconds`` simulated.

    ``warmup`` periods run first, untimed (ptys opened, first frames). ``ahead``:
    stepped as ``hil_sim_runner`` steps (``step(ahead=True)``).
    """
    runner = GraphRunner(options)
    runner.start()
    try:
        for _ in range(warmup):
            runner.step()
        start_sim, start, cpu = runner.sim.sim.time, time.perf_counter(), time.process_time()
        while runner.sim.sim.time - start_sim < seconds:
            runner.step(ahead=ahead)
        simulated = runner.sim.sim.time - start_sim
        return simulated / (time.perf_counter() - start), simulated / (time.process_time() - cpu)
    finally:
        runner.stop()
