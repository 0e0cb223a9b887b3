"""The runner is honest about what it can run."""

import pytest

from hil_bringup import sim_runner


def test_runner_reports_missing_graph_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert sim_runner.main([]) == 1
    assert "not built yet" in capsys.readouterr().err
