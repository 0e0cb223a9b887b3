"""Shared pieces of the benchmarks (the runner skips files starting with ``_``).

Every benchmark prints one JSON object with :func:`emit`; throughput benchmarks time
with :func:`best_time` and draw :func:`bar_plot`; latency benchmarks summarise with
:func:`latency_stats` and draw :func:`latency_histogram`; ROS benchmarks call
:func:`private_ros_domain` first so they never talk to a user's running graph.
"""

from __future__ import annotations

import gc
import json
import os
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np


def private_ros_domain() -> None:
    """A random ROS_DOMAIN_ID in 100..232 and localhost discovery, unless already set."""
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.randrange(100, 233)))
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


def progress(name: str, text: str) -> None:
    """A progress line on stderr (stdout carries only the result)."""
    print(f"{name}: {text}", file=sys.stderr, flush=True)


def emit(
    name: str,
    *,
    figures: Mapping[str, Any],
    target: Mapping[str, Any],
    baseline: Mapping[str, Any],
    notes: str = "",
    details: Mapping[str, Any] | None = None,
) -> None:
    """Print the one JSON result line of the bench/ convention.

    ``details`` go into the result as they are (kept in ``latest.json``, not in the table).
    """
    result = {"name": name, "figures": dict(figures), "target": dict(target), "baseline": dict(baseline)}
    if notes:
        result["notes"] = notes
    if details:
        result.update(details)
    print(json.dumps(result))


def best_time(
    run: Callable[[], int], expected: int, *, repeats: int, name: str, label: str, unit: str
) -> float:
    """Shortest of ``repeats`` timed runs (gc off); each must handle ``expected`` items."""
    best = float("inf")
    for repeat in range(repeats):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            count = run()
            elapsed = time.perf_counter() - start
        finally:
            gc.enable()
        if count != expected:
            raise RuntimeError(f"{label}: {count} {unit} decoded, expected {expected}")
        best = min(best, elapsed)
        progress(name, f"{label} repeat {repeat + 1}/{repeats}: {expected / elapsed:,.0f} {unit}/s")
    return best


def interleaved_round_trips(
    kinds: Sequence[str],
    once: Callable[[str, int], float | None],
    *,
    samples: int,
    block: int,
    name: str,
) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Time ``samples`` round trips per kind, alternating kinds in blocks of ``block``.

    Interleaving puts the measured thing and its baseline under the same machine load.
    ``once(kind, n)`` does round trip ``n`` and returns seconds, or None if it was lost.
    """
    rtts: dict[str, list[float]] = {kind: [] for kind in kinds}
    lost = dict.fromkeys(kinds, 0)
    done = 0
    progress_at = time.monotonic()
    while done < samples:
        for kind in kinds:
            for n in range(done, done + block):
                rtt = once(kind, n)
                if rtt is None:
                    lost[kind] += 1
                else:
                    rtts[kind].append(rtt)
        done += block
        if time.monotonic() - progress_at > 2.0:
            progress(name, f"{done}/{samples} round trips per kind")
            progress_at = time.monotonic()
    return rtts, lost


def latency_stats(seconds: Sequence[float], *, prefix: str, lost: int) -> dict[str, float]:
    """p50/p99/max/mean in microseconds and the lost count, keys starting with ``prefix``."""
    us = np.array(seconds) * 1e6
    return {
        f"{prefix}rtt_p50_us": round(float(np.percentile(us, 50)), 1),
        f"{prefix}rtt_p99_us": round(float(np.percentile(us, 99)), 1),
        f"{prefix}rtt_max_us": round(float(us.max()), 1),
        f"{prefix}rtt_mean_us": round(float(us.mean()), 1),
        f"{prefix}lost": lost,
    }


def _pyplot() -> Any:
    import matplotlib  # noqa: PLC0415 - only when a picture is asked for

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt


def bar_plot(
    rates: Mapping[str, float],
    *,
    target: float,
    unit: str,
    title: str,
    path: str,
    thousands: bool = True,
    target_label: str = "target",
) -> None:
    """Bars of a rate (thousands of ``unit`` per second, or as given) with the target as a line."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    labels = list(rates)
    scale = 1000.0 if thousands else 1.0
    colours = ["tab:blue", "tab:cyan", "tab:gray", "tab:olive"]
    bars = ax.bar(labels, [rates[k] / scale for k in labels], color=colours[: len(labels)])
    ax.bar_label(bars, fmt="%.0f" if thousands else "%.1f")
    shown = f"{target / scale:.0f}k {unit}/s" if thousands else f"{target:g} {unit}"
    ax.axhline(target / scale, color="tab:red", linestyle="--", label=f"{target_label} {shown}")
    ax.set_ylabel(f"thousand {unit} / s" if thousands else unit)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def latency_histogram(series: Mapping[str, Sequence[float]], *, title: str, path: str) -> None:
    """Step histograms of round trips (seconds in, microseconds drawn), one per series."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    top = max(float(np.percentile(np.array(v) * 1e6, 99.5)) for v in series.values())
    for label, values in series.items():
        ax.hist(np.array(values) * 1e6, bins=100, range=(0, top), histtype="step", label=label)
    ax.set_xlabel("round trip (µs)")
    ax.set_ylabel("count")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
