"""Seeded noise, one independent stream per robot.

Robot ``r`` of a simulation seeded ``s`` draws from ``numpy.random.default_rng((s, r))``
and nothing else, always in the same pattern (per sensor update: the same number of
uniforms and normals, in the same order). So robot 3 gets the same noise whether
it runs alone or in a swarm of 100, and a run is reproducible from its seed.

Streams are drawn ahead in blocks: one call per robot every ``block`` updates keeps
the per-update cost vectorised over robots.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]


class NoiseBank:
    """Per-robot uniform and standard-normal draws, ``uniforms``/``normals`` per update."""

    def __init__(
        self, seed: int, robot_ids: npt.ArrayLike, *, uniforms: int, normals: int, block: int = 256
    ) -> None:
        self.seed = seed
        self.robot_ids = np.asarray(robot_ids, dtype=np.int64)
        self.uniforms = uniforms
        self.normals = normals
        self.block = block
        self._rngs = [np.random.default_rng((seed, int(r))) for r in self.robot_ids]
        self._uniform: Array = np.empty((len(self._rngs), block, uniforms))
        self._normal: Array = np.empty((len(self._rngs), block, normals))
        self._next = block

    def draw(self) -> tuple[Array, Array]:
        """Uniforms (robots, uniforms) in [0, 1) and normals (robots, normals) of the next update."""
        if self._next == self.block:
            for row, rng in enumerate(self._rngs):
                # Uniforms before normals within each block, per robot: a fixed pattern.
                self._uniform[row] = rng.random((self.block, self.uniforms))
                self._normal[row] = rng.standard_normal((self.block, self.normals))
            self._next = 0
        index = self._next
        self._next += 1
        # Copies: the block buffers are refilled in place later.
        return self._uniform[:, index, :].copy(), self._normal[:, index, :].copy()
