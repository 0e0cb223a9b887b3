"""A lockstep run's fingerprint: one hash of the world's state after every period.

A lockstep run (``rtf`` 0) is the same for the same options, bit for bit
(DESIGN.md "Run modes"). :func:`lockstep_digest` runs one and hashes, after every
5 ms period, each robot's pose, velocities, wheel angles and motor speeds and which
boards stand, then the counters of every link end (lines and frames decoded, sent):
two runs that differ in one bit of one period, or in one message on a link, differ
in their digest. A change that must leave the runs alone (a faster period, another
way to step the nodes) is checked by comparing the digests before and after it
(``bench/lockstep.py --digest``); ``test_run_digest.py`` checks that a run repeats.
"""

from __future__ import annotations

import hashlib

import numpy as np

from hil_bringup.core.graph import GraphOptions
from hil_bringup.graph_runner import GraphRunner


def lockstep_digest(options: GraphOptions, *, seconds: float, ahead: bool = False) -> str:
    """The SHA-256 (hex) of a lockstep run of ``options`` over ``seconds`` simulated.

    ``ahead``: stepped with ``step(ahead=True)``, which must not change the digest.

    Raises:
        HilBringupError: a part of the graph failed (naming it).
    """
    runner = GraphRunner(options)
    digest = hashlib.sha256()
    try:
        runner.start()
        sim = runner.sim.sim
        while sim.time < seconds - 1e-9:
            runner.step(ahead=ahead)
            state = (sim.x, sim.y, sim.yaw, sim.v, sim.w, sim.wheel_angle, sim.motors.speed)
            digest.update(np.float64(sim.time).tobytes())
            for array in state:
                digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
            digest.update(np.ascontiguousarray(sim.geometry.standing).tobytes())
        for chain in runner.chains:
            counts = [chain.bridge.exchange.frames_received, chain.bridge.exchange.frames_sent]
            if chain.loop is not None:
                stats = chain.loop.loop.decoder.stats
                counts += [stats.messages, chain.loop.link.bytes_in, chain.loop.link.bytes_out]
            digest.update(repr(counts).encode())
    finally:
        runner.stop()
    return digest.hexdigest()
