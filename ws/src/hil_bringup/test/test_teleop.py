"""Keyboard teleop: keys to twists and station commands."""

import pytest

from hil_bringup.core.teleop import Teleop


def test_keys_step_the_speed_up_to_the_limits_and_space_stops() -> None:
    teleop = Teleop()
    for _ in range(100):
        teleop.key("w")
        teleop.key("a")
    assert (teleop.linear, teleop.angular) == (teleop.max_linear, teleop.max_angular)
    teleop.key(" ")
    assert (teleop.linear, teleop.angular) == (0.0, 0.0)
    teleop.key("s")
    teleop.key("d")
    assert teleop.linear < 0 and teleop.angular < 0


@pytest.mark.parametrize(
    ("key", "command"),
    [
        ("x", "STOP"),
        ("g", "GO"),
        ("b", "AUTO boards"),
        ("l", "AUTO light"),
        ("m", "MANUAL"),
        ("q", "quit"),
        ("z", None),
    ],
)
def test_command_keys_return_station_commands(key: str, command: str | None) -> None:
    assert Teleop().key(key) == command
