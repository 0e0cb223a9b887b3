"""The live view's plain parts: the URL an app opens, the pace of each channel."""

from __future__ import annotations

import pytest

from hil_bringup.core.live import RateGate, live_url
from hil_common.errors import HilError


@pytest.mark.parametrize(
    ("host", "port", "url"),
    [
        ("127.0.0.1", 8765, "ws://127.0.0.1:8765"),
        ("0.0.0.0", 8765, "ws://127.0.0.1:8765"),  # every interface: this machine reaches it as localhost
        ("::", 9000, "ws://[::1]:9000"),
        ("::1", 9000, "ws://[::1]:9000"),
        ("robot-pc.local", 1, "ws://robot-pc.local:1"),
    ],
)
def test_the_url_is_what_an_app_on_this_machine_opens(host: str, port: int, url: str) -> None:
    assert live_url(host, port) == url


def test_a_gate_passes_at_most_its_rate_on_each_topic_and_counts_the_rest() -> None:
    gate = RateGate(10.0)
    passed = [t for t in range(1000) if gate.allow("/odom", t * 0.001)]  # 1 kHz for 1 s
    assert 10 <= len(passed) <= 12  # its rate, and the burst at the start
    assert gate.dropped["/odom"] == 1000 - len(passed)
    assert gate.allow("/tf", 0.5)  # each topic has its own pace


def test_a_gate_of_rate_zero_passes_everything() -> None:
    gate = RateGate(0.0)
    assert all(gate.allow("/odom", 0.0) for _ in range(100))
    with pytest.raises(HilError, match="rate"):
        RateGate(-1.0)
