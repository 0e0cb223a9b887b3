#!/usr/bin/env python3
"""Run every bench/*.py and collect their results (``make bench``).

Each benchmark prints one JSON object as its last line of stdout:
``{"name", "figures": {...}, "target": {...}, "baseline": {...}}`` (optional
``"notes"``). A target is ``"<= x"``, ``">= x"``, ``"< x"`` or ``"> x"`` on the figure
of the same key, or free text (no operator first; never marked). A target that starts
with an operator and does not read as one is refused, so no target goes unmarked by a
typo. The runner writes ``bench/results/latest.json`` and ``bench/results/latest.md``:
first every target of every benchmark, marked met or missed from the figure the
benchmark printed (missed when it printed none), with the tally; then a table per
benchmark. It gives each benchmark ``--plot bench/results/<name>.png`` when it accepts
one.

Usage: ``python tools/run_bench.py [NAME ...]`` runs only the named benchmarks;
``--render`` only rewrites ``latest.md`` from ``latest.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
REQUIRED = ("name", "figures", "target", "baseline")
# A target starting with one of these is meant as a comparison: it must parse as one.
OPERATOR_START = ("<", ">", "=", "\u2264", "\u2265")
# An operator, then a number; anything else starting with an operator is a broken target.
TARGET = re.compile(r"^(<=|>=|<|>)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)$")
NO_FIGURE = "missed (no figure)"
TIMEOUT_S = 1800


class BenchError(Exception):
    """A benchmark did not run or did not print a valid result."""


def run_one(path: Path) -> dict[str, Any]:
    cmd = [sys.executable, str(path)]
    if "--plot" in path.read_text():
        cmd += ["--plot", str(RESULTS / f"{path.stem}.png")]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=TIMEOUT_S, check=False)
    if proc.returncode != 0:
        raise BenchError(f"{path.name} exited with status {proc.returncode}")
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if not lines:
        raise BenchError(f"{path.name} printed nothing")
    try:
        result = json.loads(lines[-1])
    except json.JSONDecodeError as exc:
        raise BenchError(f"{path.name}: last line is not JSON ({exc}): {lines[-1][:200]}") from exc
    missing = [key for key in REQUIRED if key not in result]
    if missing:
        raise BenchError(f"{path.name}: result lacks {missing}")
    for key, target in result["target"].items():
        meant_as_comparison = isinstance(target, str) and target.strip().startswith(OPERATOR_START)
        if meant_as_comparison and parse_target(target) is None:
            raise BenchError(
                f"{path.name}: target {key!r} is {target!r}; a target reads '<= x', '>= x', '< x' or '> x'"
            )
    return result


def parse_target(target: Any) -> tuple[str, float] | None:
    """``(operator, limit)`` of a comparison target, None for free text or a broken one."""
    if not isinstance(target, str):
        return None
    match = TARGET.match(target.strip())
    if match is None:
        return None
    return match.group(1), float(match.group(2))


def verdict(target: Any, value: Any) -> str:
    """``met`` or ``missed`` for a comparison target, ``""`` for free text.

    A comparison target whose figure is missing or not a number is missed: a benchmark
    that stopped printing the figure must not look like it met the target.
    """
    parsed = parse_target(target)
    if parsed is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return NO_FIGURE
    op, limit = parsed
    met = {"<=": value <= limit, ">=": value >= limit, "<": value < limit, ">": value > limit}[op]
    return "met" if met else "missed"


def target_rows(results: list[dict[str, Any]], meta: dict[str, Any]) -> list[str]:
    """Every comparison target of every benchmark, marked, with the tally first."""
    rows: list[str] = []
    tally = {"met": 0, "missed": 0}
    for result in results:
        if "error" in result:
            continue
        measured = result.get("measured")
        when = "" if not measured or measured.get("commit") == meta["commit"] else f"`{measured['commit']}`"
        for key, target in result["target"].items():
            mark = verdict(target, result["figures"].get(key))
            if not mark:
                continue
            tally["missed" if mark.startswith("missed") else "met"] += 1
            value = result["figures"].get(key, "")
            rows.append(f"| {result['name']} | {key} | {value} | {target} | {mark} | {when} |")
    failed = [result["name"] for result in results if "error" in result]
    head = [f"{tally['met']} met, {tally['missed']} missed"]
    if failed:
        head.append(f"not measured (failed): {', '.join(failed)}")
    return [
        "## Targets",
        "",
        "; ".join(head),
        "",
        "| benchmark | figure | value | target | | measured at |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
    ]


def markdown(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    out = [
        "# Benchmark results",
        "",
        f"{meta['date']} · commit `{meta['commit']}` · {meta['machine']} · {meta['cpus']} CPUs · "
        f"Python {meta['python']}",
        "",
        *target_rows(results, meta),
    ]
    for result in results:
        out += [f"## {result['name']}", ""]
        measured = result.get("measured")
        if measured and measured != {"date": meta["date"], "commit": meta["commit"]}:
            out += [f"measured {measured['date']} at commit `{measured['commit']}`", ""]
        if "error" in result:
            out += [f"**failed:** {result['error']}", ""]
            continue
        out += ["| figure | value | target | |", "|---|---|---|---|"]
        for key, value in result["figures"].items():
            target = result["target"].get(key, "")
            out.append(f"| {key} | {value} | {target} | {verdict(target, value)} |")
        for key, target in result["target"].items():
            if key not in result["figures"]:
                out.append(f"| {key} | | {target} | {verdict(target, None)} |")
        out += ["", "| baseline | value |", "|---|---|"]
        out += [f"| {key} | {value} |" for key, value in result["baseline"].items()]
        if result.get("notes"):
            out += ["", result["notes"]]
        out.append("")
    return "\n".join(out)


def merged(fresh: list[dict[str, Any]], latest: Path) -> list[dict[str, Any]]:
    """``fresh`` results in place of the same benchmarks in ``latest``; the others kept.

    Running a few benchmarks (``make bench ARGS="name"``) must not drop the rest of the
    table; each kept result says when and at which commit it was measured.
    """
    try:
        previous = json.loads(latest.read_text())
    except (OSError, json.JSONDecodeError):
        return fresh
    old_meta = previous.get("meta", {})
    by_name: dict[str, dict[str, Any]] = {}
    for result in previous.get("results", []):
        result.setdefault(
            "measured", {"date": old_meta.get("date", "?"), "commit": old_meta.get("commit", "?")}
        )
        by_name[result["name"]] = result
    by_name.update({result["name"]: result for result in fresh})
    return [by_name[name] for name in sorted(by_name)]


def render(latest: Path) -> int:
    """Rewrite ``latest.md`` beside ``latest`` from it (the marking without a bench run)."""
    try:
        saved = json.loads(latest.read_text())
        text = markdown(saved["results"], saved["meta"])
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        print(f"run_bench: cannot render {latest}: {exc}", file=sys.stderr)
        return 2
    (latest.parent / "latest.md").write_text(text)
    print(f"results: {latest.parent / 'latest.md'}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help="benchmark names (file stems); default: all")
    parser.add_argument(
        "--render", action="store_true", help="only rewrite latest.md from latest.json; run no benchmark"
    )
    args = parser.parse_args()
    if args.render:
        return render(RESULTS / "latest.json")
    paths = sorted(p for p in BENCH.glob("*.py") if not p.name.startswith("_"))
    if args.names:
        paths = [p for p in paths if p.stem in args.names]
    if not paths:
        print("run_bench: no benchmarks selected", file=sys.stderr)
        return 1
    RESULTS.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    failed = 0
    for index, path in enumerate(paths, start=1):
        print(f"[{index}/{len(paths)}] {path.name} ...", flush=True)
        start = time.monotonic()
        try:
            result = run_one(path)
        except (BenchError, subprocess.TimeoutExpired) as exc:
            failed += 1
            result = {"name": path.stem, "error": str(exc)}
            print(f"[{index}/{len(paths)}] {path.name}: FAILED: {exc}", flush=True)
        else:
            print(f"[{index}/{len(paths)}] {path.name}: done ({time.monotonic() - start:.0f} s)", flush=True)
            print(f"      {json.dumps(result['figures'])}", flush=True)
        results.append(result)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.strip()
    meta = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit or "unknown",
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    for result in results:
        result["measured"] = {"date": meta["date"], "commit": meta["commit"]}
    if args.names:
        results = merged(results, RESULTS / "latest.json")
    (RESULTS / "latest.json").write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    (RESULTS / "latest.md").write_text(markdown(results, meta))
    print(f"results: {RESULTS / 'latest.json'}\n         {RESULTS / 'latest.md'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
