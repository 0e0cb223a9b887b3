"""The run's report: metrics and a picture of the arena with its floor markings."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.image
import numpy as np

from hil_bringup.core.report import RunLog, write_report
from hil_sim.core.world import ArcMarking, LineMarking, WorldConfig

#: A 4 m arena with a black line across it (y = 1) and a black ring (radius 0.8) round the middle.
TRACK = WorldConfig(
    width=4.0,
    height=4.0,
    markings=(LineMarking((-1.5, 1.0), (1.5, 1.0), width=0.05), ArcMarking((0.0, -0.5), 0.8, width=0.05)),
)


def pixel(image: np.ndarray, x: float, y: float) -> float:
    """Brightness (0..1) of the picture near world point (x, y) (the axes span the arena +-0.1 m)."""
    # The axes' frame: the outermost rows and columns dark across half the picture.
    grey = image[..., :3].mean(axis=-1)
    dark = grey < 0.2
    rows, cols = (
        np.flatnonzero(dark.sum(axis=1) > 0.5 * dark.shape[1]),
        np.flatnonzero(dark.sum(axis=0) > 0.5 * dark.shape[0]),
    )
    top, bottom, left, right = rows.min(), rows.max(), cols.min(), cols.max()
    col = left + (x + 2.1) / 4.2 * (right - left)
    row = bottom - (y + 2.1) / 4.2 * (bottom - top)
    r, c = round(row), round(col)
    return float(grey[r - 1 : r + 2, c - 1 : c + 2].mean())


def test_the_report_draws_the_floors_markings(tmp_path: Path) -> None:
    log = RunLog(TRACK)
    log.sample(0.0, 0.0, 0.0, False, [])
    metrics, picture = write_report(log, tmp_path)
    assert json.loads(metrics.read_text())["led_switch_ons"] == 0
    image = matplotlib.image.imread(picture)
    assert pixel(image, 0.5, 1.0) < 0.3  # on the line
    assert pixel(image, 0.5, 1.3) > 0.9  # bare floor
    assert pixel(image, 0.8, -0.5) < 0.3  # on the ring
    assert pixel(image, 1.0, -0.5) > 0.9
