"""hil_sim_runner's pin trace (``--trace-pins``): named in the last lines and the metrics, repeatable."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from vcd.reader import TokenKind, tokenize


def run(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "hil_bringup.hil_sim_runner", "--headless", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


def changes_per_pin(path: Path) -> dict[str, int]:
    """How many changes each traced name has (pyvcd reads the whole file)."""
    names: dict[str, list[str]] = {}
    scopes: list[str] = []
    counts: dict[str, int] = {}
    with path.open("rb") as stream:
        for token in tokenize(stream):
            if token.kind is TokenKind.SCOPE:
                scopes.append(token.scope.ident)
            elif token.kind is TokenKind.UPSCOPE:
                scopes.pop()
            elif token.kind is TokenKind.VAR:
                name = ".".join([*scopes[1:], token.var.reference])
                names.setdefault(token.var.id_code, []).append(name)
                counts[name] = 0
            elif token.kind is TokenKind.CHANGE_SCALAR:
                for name in names[token.scalar_change.id_code]:
                    counts[name] += 1
    return counts


@pytest.mark.ros
def test_a_traced_run_names_its_trace_in_the_last_lines_and_metrics_and_repeats(tmp_path: Path) -> None:
    files = []
    for name in ("first", "second"):
        report = tmp_path / name
        args = ("--mcu", "simavr", "--rtf", "0", "--duration", "2", "--report-dir", str(report))
        result = run(*args, "--trace-pins", "motor_left, led.active, uart0.tx")
        assert result.returncode == 0, result.stderr[-2000:]
        trace = report / "pins.vcd"
        assert result.stdout.strip().splitlines()[-1] == f"pins: {trace}"
        metrics = json.loads((report / "metrics.json").read_text())
        assert metrics["pin_traces"] == [
            {
                "robot": 0,
                "file": str(trace),
                "pins": {
                    "motor_left.enable": 5,
                    "motor_left.a": 7,
                    "motor_left.b": 8,
                    "led.active": 13,
                    "uart0.tx": 1,
                },
                "bytes": trace.stat().st_size,
                "cut_at_s": None,
            }
        ]
        files.append(trace.read_bytes())
    counts = changes_per_pin(tmp_path / "first" / "pins.vcd")
    assert counts["motor_left.enable"] > 1000  # the firmware's analogWrite: Timer0's PWM, 976 Hz
    assert counts["uart0.tx"] > 1000  # its telemetry at 38400 baud
    assert files[0] == files[1]  # lockstep: the same run, the same file


@pytest.mark.ros
@pytest.mark.parametrize(
    ("args", "words"),
    [
        (
            ("--mcu", "simavr", "--trace-pins", "bogus"),
            ["no pin named 'bogus'", "motor_left.enable", "uart0.tx"],
        ),
        (("--trace-pins", "D9"), ["trace_pins needs mcu = simavr"]),
        (("--mcu", "simavr", "--trace-pins", "D9", "--trace-limit-mb", "0"), ["--trace-limit-mb"]),
    ],
)
def test_a_bad_trace_exits_2_naming_it(tmp_path: Path, args: tuple[str, ...], words: list[str]) -> None:
    result = run(*args, "--rtf", "0", "--duration", "1", "--report-dir", str(tmp_path / "report"))
    assert result.returncode == 2, result.stderr[-2000:]
    for word in words:
        assert word in result.stderr
    assert "Traceback" not in result.stderr
