"""A robot's path over a whole run in bounded memory (:class:`Track`).

The runners' reports (``hil_bringup.core.report``) and the simulator's live scene
(:mod:`hil_sim.core.scene`) keep paths this way: however long a run goes, a path
holds at most ``capacity`` samples, more coarsely the longer the run. A track of
another ``width`` keeps other timed values the same way (a scenario check's signal:
``width=1``).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

#: Samples a :class:`Track` keeps at most (about 400 s of a run at the 20 Hz of the
#: runners' samples before it first thins out; 200 KB).
TRACK_CAPACITY = 8192


class Track:
    """Timed positions (t, x, y) over a whole run, in bounded memory (``width`` values per sample).

    Once ``capacity`` samples are kept, every other one is dropped and from then on
    only every other sample offered is kept (the stride doubles): a run of any length
    keeps its whole path, more coarsely the longer it is, in ``capacity`` rows. The
    latest sample offered is always there too, so a path ends where the robot is.
    """

    def __init__(self, capacity: int = TRACK_CAPACITY, *, width: int = 2) -> None:
        if capacity < 2 or capacity % 2:
            raise ValueError(f"capacity = {capacity}: need an even number >= 2")
        if width < 1:
            raise ValueError(f"width = {width}: need at least one value per sample")
        self._rows: npt.NDArray[np.float64] = np.empty((capacity, 1 + width))
        self._kept = 0
        self._offered = 0
        self._stride = 1
        self._latest: tuple[float, ...] | None = None

    @property
    def stride(self) -> int:
        """One sample in ``stride`` offered is kept."""
        return self._stride

    def add(self, t: float, *values: float) -> None:
        """Offer a sample (``x, y``: ``width`` values); it is kept if it falls on the stride."""
        offered, self._offered = self._offered, self._offered + 1
        self._latest = (t, *values)
        if offered % self._stride:
            return
        if self._kept == len(self._rows):
            half = self._kept // 2
            self._rows[:half] = self._rows[: self._kept : 2].copy()
            self._kept, self._stride = half, self._stride * 2
            if offered % self._stride:
                return
        self._rows[self._kept] = self._latest
        self._kept += 1

    @property
    def rows(self) -> npt.NDArray[np.float64]:
        """(n, 1 + width) t, x, y of the samples kept, and the latest one offered at the end."""
        kept: npt.NDArray[np.float64] = self._rows[: self._kept].copy()
        latest = self._latest
        if latest is None or (self._kept > 0 and float(kept[-1, 0]) == latest[0]):
            return kept
        return np.vstack([kept, np.array([latest])])

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[tuple[float, ...]]:
        for row in self.rows:
            yield tuple(float(v) for v in row)
