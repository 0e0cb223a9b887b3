#!/usr/bin/env python3
"""Run every bench/*.py and collect their results (``make bench``).

Each benchmark prints one JSON object as its last line of stdout:
``{"name", "figures": {...}, "target": {...}, "baseline": {...}}`` (optional
``"notes"``). A target is ``"<= x"`` or ``">= x"`` on the figure of the same key,
or free text. The runner writes ``bench/results/latest.json`` and
``bench/results/latest.md`` (a table per benchmark, targets marked met or missed)
and gives each benchmark ``--plot bench/results/<name>.png`` when it accepts one.

Usage: ``python tools/run_bench.py [NAME ...]`` runs only the named benchmarks.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
REQUIRED = ("name", "figures", "target", "baseline")
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
    return result


def verdict(target: Any, value: Any) -> str:
    if not isinstance(target, str) or not isinstance(value, (int, float)):
        return ""
    op, _, bound = target.partition(" ")
    try:
        limit = float(bound)
    except ValueError:
        return ""
    if op == "<=":
        return "met" if value <= limit else "missed"
    if op == ">=":
        return "met" if value >= limit else "missed"
    return ""


def markdown(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    out = [
        "# Benchmark results",
        "",
        f"{meta['date']} · commit `{meta['commit']}` · {meta['machine']} · {meta['cpus']} CPUs · "
        f"Python {meta['python']}",
        "",
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
                out.append(f"| {key} | | {target} | |")
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


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help="benchmark names (file stems); default: all")
    args = parser.parse_args()
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
