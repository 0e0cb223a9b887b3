"""robotCommand: parsing, heartbeat echo, STOP/GO, AUTO/MANUAL, warnings for anything else."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robot_control.core.behaviours import BoardsBehaviour, Sensors
from robot_control.core.loop import ControlLoop, LoopConfig, StationResult
from robot_control.core.station import Kind, StationCommand, parse_station_command

START = 50.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("STOP", StationCommand(Kind.STOP)),
        ("  stop\n", StationCommand(Kind.STOP)),
        ("Go", StationCommand(Kind.GO)),
        ("MANUAL", StationCommand(Kind.MANUAL)),
        (" manual ", StationCommand(Kind.MANUAL)),
        ("AUTO boards", StationCommand(Kind.AUTO, "boards")),
        ("auto   Light  ", StationCommand(Kind.AUTO, "light")),
        ("HBB,1700000000.123", StationCommand(Kind.HEARTBEAT, "HBB,1700000000.123")),
        ("hbb,42", StationCommand(Kind.HEARTBEAT, "hbb,42")),
    ],
    ids=repr,
)
def test_station_command_is_parsed(text: str, expected: StationCommand) -> None:
    assert parse_station_command(text) == expected


def test_heartbeat_argument_is_the_text_unchanged_spaces_included() -> None:
    assert parse_station_command(" HBB,1.50 ") == StationCommand(Kind.HEARTBEAT, " HBB,1.50 ")


@pytest.mark.parametrize(
    "text", ["", "   ", "STOPP", "GO!", "HBB", "HBB,", "AUTO", "AUTO ", "AUTOboards", "DRV1,2", "COM,STOP"]
)
def test_anything_else_is_unknown_and_keeps_its_text(text: str) -> None:
    assert parse_station_command(text) == StationCommand(Kind.UNKNOWN, text)


@settings(deadline=None, derandomize=True, max_examples=300)
@given(st.text())
def test_parser_never_raises(text: str) -> None:
    command = parse_station_command(text)
    assert isinstance(command.kind, Kind)


# --- the loop's handling ------------------------------------------------------------------


def make_loop() -> ControlLoop:
    return ControlLoop(LoopConfig(), {"boards": BoardsBehaviour()}, start=START)


def state(loop: ControlLoop) -> tuple[object, ...]:
    """Everything a station command could change."""
    return (
        loop.stopped,
        loop.mode,
        loop.behaviour,
        loop.station_link.received,
        loop.station_link.last_heard,
        # What the failsafes would do later, asked of a copy so as not to change them.
        copy.deepcopy(loop.failsafes).update(START + 3.0),
    )


def test_station_heartbeat_is_echoed_unchanged() -> None:
    loop = make_loop()
    assert loop.station("HBB,1700000000.123", START) == StationResult(echo="HBB,1700000000.123")
    assert loop.station(" HBB,7 ", START) == StationResult(echo=" HBB,7 ")


def test_station_heartbeat_marks_station_alive_and_arms_its_failsafe() -> None:
    loop = make_loop()
    assert not loop.station_link.alive(START)
    loop.station("HBB,1.0", START + 0.2)
    assert loop.station_link.alive(START + 0.2)
    assert loop.station_link.health(START + 1.2).since_last_heard == pytest.approx(1.0)
    loop.cmd_vel(0.0, 0.0, START + 2.3)
    loop.mcu.heard(START + 2.3)
    loop.failsafes.feed("mcu", START + 2.3)
    assert [c.name for c in loop.failsafes.update(START + 2.3)] == ["station"]


def test_own_echo_coming_back_on_the_shared_topic_is_not_echoed_again() -> None:
    loop = make_loop()
    echo = loop.station("HBB,12.5", START).echo
    assert echo == "HBB,12.5"
    before = state(loop)
    assert loop.station(echo, START + 0.01) == StationResult()
    assert state(loop) == before


def test_later_heartbeats_are_still_echoed_after_own_echoes() -> None:
    loop = make_loop()
    for k in range(100):
        text = f"HBB,{k}.5"
        assert loop.station(text, START + k).echo == text
        assert loop.station(text, START + k + 0.01) == StationResult()
    assert loop.station_link.received == 100


def test_stop_holds_until_go() -> None:
    loop = make_loop()
    result = loop.station("STOP", START)
    assert loop.stopped
    assert result.info is not None
    assert "GO" in result.info
    assert result.echo is None
    assert result.warning is None
    assert loop.holding_reasons[:1] == ["STOP"]
    loop.station("STOP", START)
    assert loop.stopped
    result = loop.station("go", START)
    assert not loop.stopped
    assert result.info is not None
    assert "STOP" not in loop.holding_reasons


def test_go_when_not_stopped_says_nothing() -> None:
    loop = make_loop()
    assert loop.station("GO", START) == StationResult()
    assert not loop.stopped


def test_auto_switches_to_the_named_behaviour_and_resets_it() -> None:
    boards = BoardsBehaviour()
    loop = ControlLoop(LoopConfig(), {"boards": boards}, start=START)
    bumped = Sensors(50.0, 0.0, (0.0, 0.0, 0.0, 0.0), True, False, 0.0)
    boards.update(bumped, START)  # a back-off in progress
    result = loop.station("AUTO Boards", START + 0.1)
    assert (loop.mode, loop.behaviour) == ("auto", boards)
    assert result.info == "AUTO: behaviour boards"
    clear = Sensors(50.0, 0.0, (0.0, 0.0, 0.0, 0.0), False, False, 0.0)
    assert boards.update(clear, START + 0.2) == (0.0, boards.spin_rate)  # a new scan, no back-off


def test_manual_switches_back_to_cmd_vel() -> None:
    loop = make_loop()
    loop.station("AUTO boards", START)
    result = loop.station("MANUAL", START)
    assert (loop.mode, loop.behaviour) == ("manual", None)
    assert result.info is not None
    assert "cmd_vel" in result.info


def test_auto_with_an_unknown_behaviour_warns_naming_it_and_changes_nothing() -> None:
    loop = make_loop()
    before = state(loop)
    result = loop.station("AUTO dance", START)
    assert result.echo is None
    assert result.warning is not None
    assert "dance" in result.warning
    assert "boards" in result.warning
    assert state(loop) == before


@pytest.mark.parametrize("text", ["FORWARD", "HBB", "stop now", "AUTO", "", "DRV100,100"])
def test_unknown_command_warns_naming_it_and_nothing_else_happens(text: str) -> None:
    loop = make_loop()
    loop.station("STOP", START)  # a state that an accidental GO or STOP would change
    before = state(loop)
    result = loop.station(text, START)
    assert result.echo is None
    assert result.info is None
    assert result.warning is not None
    assert repr(text) in result.warning
    assert state(loop) == before
