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
    [
        ("<= 5000", 608.9, "met"),
        ("<= 1", 1.5, "missed"),
        (">= 50000", 80000, "met"),
        (">= 10", 9, "missed"),
        (">= 2", 2, "met"),
        ("> 2", 2, "missed"),
        ("< 0.5", 0.49, "met"),
        (">=0.75", 0.8, "met"),
        ("<= 1e3", 1001, "missed"),
        ("<= -0.1", -0.215, "met"),
        (">= 10", None, "missed (no figure)"),
        (">= 10", "n/a", "missed (no figure)"),
        (">= 1", True, "missed (no figure)"),
        ("as fast as possible", 3.0, ""),
    ],
)
def test_target_verdict_compares_the_figure_of_the_same_key(
    target: str, value: object, expected: str
) -> None:
    assert run_bench.verdict(target, value) == expected


@pytest.mark.parametrize("target", [">= twice mujoco", "=> 2", "\u2265 2", ">= 2x", "== 3", "<= "])
def test_a_target_that_starts_as_a_comparison_but_is_none_is_refused(tmp_path: Path, target: str) -> None:
    script = tmp_path / "typo.py"
    result = {"name": "typo", "figures": {"x": 3}, "target": {"x": target}, "baseline": {}}
    script.write_text(f"print({json.dumps(json.dumps(result))})\n")
    with pytest.raises(run_bench.BenchError, match=r"typo.py: target 'x'"):
        run_bench.run_one(script)


def _targets_section(text: str) -> list[str]:
    section = text.split("## Targets", 1)[1].split("\n## ", 1)[0]
    lines = section.splitlines()
    return [line for line in lines if line.startswith("| ") and not line.startswith("| benchmark")]


def test_the_targets_section_marks_every_target_of_every_benchmark_with_the_tally() -> None:
    meta = {"date": "d", "commit": "c", "machine": "m", "cpus": 2, "python": "3.11"}
    results = [
        {
            "name": "lockstep",
            "figures": {"whole_loop_over_physics_core": 0.55, "rtf": 20},
            "target": {"whole_loop_over_physics_core": ">= 0.5", "simavr_over_harness": ">= 0.75"},
            "baseline": {},
            "measured": {"date": "d", "commit": "c"},
        },
        {
            "name": "contacts",
            "figures": {"wall_over_mujoco": 1.9},
            "target": {"wall_over_mujoco": ">= 2", "note": "as fast as possible"},
            "baseline": {},
            "measured": {"date": "old", "commit": "abc1234"},
        },
        {"name": "broken", "error": "broken.py exited with status 1"},
    ]
    text = run_bench.markdown(results, meta)
    assert "1 met, 2 missed; not measured (failed): broken" in text
    assert _targets_section(text) == [
        "| lockstep | whole_loop_over_physics_core | 0.55 | >= 0.5 | met |  |",
        "| lockstep | simavr_over_harness |  | >= 0.75 | missed (no figure) |  |",
        "| contacts | wall_over_mujoco | 1.9 | >= 2 | missed | `abc1234` |",
    ]
    assert "| simavr_over_harness | | >= 0.75 | missed (no figure) |" in text


def test_every_comparison_target_of_the_saved_results_is_marked() -> None:
    saved = json.loads((ROOT / "bench" / "results" / "latest.json").read_text())
    text = run_bench.markdown(saved["results"], saved["meta"])
    rows = _targets_section(text)
    expected = [
        (result["name"], key)
        for result in saved["results"]
        if "error" not in result
        for key, target in result["target"].items()
        if run_bench.parse_target(target) is not None
    ]
    assert expected
    assert [tuple(row.split(" | ")[:2]) for row in rows] == [(f"| {name}", key) for name, key in expected]
    assert all(row.split(" | ")[4] in ("met", "missed", "missed (no figure)") for row in rows)


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


@pytest.mark.parametrize(
    ("content", "code", "words"),
    [
        (None, 0, "results:"),
        ("{", 2, "cannot render"),
        ('{"results": []}', 2, "cannot render"),
        ("[]", 2, "cannot render"),
    ],
)
def test_render_rewrites_latest_md_from_latest_json_or_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, code: int, words: str
) -> None:
    latest = tmp_path / "latest.json"
    meta = {"date": "d", "commit": "c", "machine": "m", "cpus": 2, "python": "3.11"}
    result = {"name": "a", "figures": {"x": 1}, "target": {"x": ">= 2"}, "baseline": {}}
    latest.write_text(content if content is not None else json.dumps({"meta": meta, "results": [result]}))
    assert run_bench.render(latest) == code
    out = capsys.readouterr()
    assert words in out.out + out.err
    if code == 0:
        assert "| a | x | 1 | >= 2 | missed |  |" in (tmp_path / "latest.md").read_text()
    else:
        assert str(latest) in out.err
        assert not (tmp_path / "latest.md").exists()
