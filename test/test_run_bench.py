"""tools/run_bench.py: the bench/ result convention is enforced and reported."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hil_run_bench", ROOT / "tools" / "run_bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


run_bench = _load()


@pytest.mark.parametrize(
    ("target", "value", "expected"),
    [("<= 5000", 608.9, "met"), ("<= 1", 1.5, "missed"), (">= 50000", 80000, "met"), (">= 10", 9, "missed")],
)
def test_target_verdict_compares_the_figure_of_the_same_key(target: str, value: float, expected: str) -> None:
    assert run_bench.verdict(target, value) == expected


def test_free_text_target_gets_no_verdict() -> None:
    assert run_bench.verdict("as fast as possible", 3.0) == ""


def test_last_json_line_is_the_result(tmp_path: Path) -> None:
    script = tmp_path / "fake.py"
    result = {"name": "fake", "figures": {"x": 1}, "target": {"x": "<= 2"}, "baseline": {"y": 3}}
    script.write_text(f"print('progress')\nprint({json.dumps(json.dumps(result))})\n")
    assert run_bench.run_one(script) == result


def test_result_without_baseline_is_rejected(tmp_path: Path) -> None:
    script = tmp_path / "bad.py"
    script.write_text("import json; print(json.dumps({'name': 'bad', 'figures': {}, 'target': {}}))\n")
    with pytest.raises(run_bench.BenchError, match="baseline"):
        run_bench.run_one(script)


def test_markdown_marks_targets_and_lists_baselines() -> None:
    meta = {"date": "d", "commit": "c", "machine": "m", "cpus": 2, "python": "3.11"}
    text = run_bench.markdown(
        [
            {"name": "a", "figures": {"p99": 4}, "target": {"p99": "<= 5"}, "baseline": {"naive_p99": 9}},
            {"name": "b", "error": "b.py exited with status 1"},
        ],
        meta,
    )
    assert "| p99 | 4 | <= 5 | met |" in text
    assert "| naive_p99 | 9 |" in text
    assert "**failed:** b.py exited with status 1" in text


def test_running_some_benchmarks_keeps_the_others_with_their_date(tmp_path: Path) -> None:
    latest = tmp_path / "latest.json"
    old = {"name": "a", "figures": {"x": 1}, "target": {}, "baseline": {}}
    replaced = {"name": "b", "figures": {"x": 2}, "target": {}, "baseline": {}}
    meta = {"date": "2026-01-01T00:00:00+00:00", "commit": "abc1234"}
    latest.write_text(json.dumps({"meta": meta, "results": [old, replaced]}))
    fresh = {
        "name": "b",
        "figures": {"x": 3},
        "target": {},
        "baseline": {},
        "measured": {"date": "now", "commit": "def"},
    }
    results = run_bench.merged([fresh], latest)
    assert [r["name"] for r in results] == ["a", "b"]
    assert results[0]["measured"] == meta
    assert results[1]["figures"] == {"x": 3}


def test_merging_into_a_missing_or_broken_file_keeps_only_the_fresh(tmp_path: Path) -> None:
    fresh = [{"name": "b", "figures": {}, "target": {}, "baseline": {}}]
    assert run_bench.merged(fresh, tmp_path / "none.json") == fresh
    (tmp_path / "bad.json").write_text("{")
    assert run_bench.merged(fresh, tmp_path / "bad.json") == fresh
