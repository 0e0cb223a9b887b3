"""Inputs a user sets, as the harness plays them on the pins: an IR remote and buttons.

An NEC remote (the library's ``ir_receiver_nec``: address, command and a count of key
presses) read by an IRremote-style decoder that samples the receiver's pin every
50 us (``sketches/ir_nec_decoder``); a bouncing push button (``push_button``, its
bounce set by parameters) counted edge by edge and debounced in the millis() style
(``sketches/button_bounce``).
"""

from __future__ import annotations

import dataclasses

import pytest

from support.sketch_rig import SketchRig, library_device

NEC = library_device("ir_receiver_nec")
BUTTON = library_device("push_button")


def decoded(lines: list[str]) -> list[tuple[int, int]]:
    assert not [line for line in lines if line.startswith("bad")], lines
    return [(int(line.split()[1]), int(line.split()[2])) for line in lines if line.startswith("nec ")]


@pytest.mark.parametrize("board", ["uno", "mega2560"])
def test_each_key_press_reaches_the_decoder_as_its_nec_code(board: str) -> None:
    rig = SketchRig("ir_nec_decoder", board=board, devices=[("remote", NEC)], pins={"remote.out": "11"})
    try:
        assert decoded(rig.advance(0.2)) == []  # no press, no frame
        got: list[tuple[int, int]] = []
        for press, (address, command) in enumerate([(0x00, 0x45), (0xA5, 0x5A), (0xFF, 0x00), (7, 0x90)], 1):
            rig.set(remote__address=address, remote__command=command, remote__sends=press)
            got += decoded(rig.advance(0.15))
        assert got == [(0x00, 0x45), (0xA5, 0x5A), (0xFF, 0x00), (7, 0x90)]
        # three presses in one frame: three codes, 108 ms apart
        rig.set(remote__address=1, remote__command=2, remote__sends=7)
        assert decoded(rig.advance(0.2)) == [(1, 2), (1, 2)]
        assert decoded(rig.advance(0.15)) == [(1, 2)]
        assert rig.stats()["nec_frames"] == 7
    finally:
        rig.close()


def test_the_press_count_wraps_at_256() -> None:
    # a remote whose count starts at 254 (its default: no press yet)
    sends = dataclasses.replace(NEC.signal("sends"), default=254)
    remote = dataclasses.replace(NEC, signals=tuple(sends if s.name == "sends" else s for s in NEC.signals))
    rig = SketchRig("ir_nec_decoder", board="uno", devices=[("remote", remote)], pins={"remote.out": "11"})
    try:
        assert decoded(rig.advance(0.15)) == []
        rig.set(remote__sends=255, remote__command=9)
        assert decoded(rig.advance(0.15)) == [(0, 9)]
        rig.set(remote__sends=1, remote__command=10)  # 255 -> 0 -> 1: two presses
        assert decoded(rig.advance(0.25)) == [(0, 10), (0, 10)]
        assert rig.stats()["nec_presses_dropped"] == 0
    finally:
        rig.close()


def button_rig(**params: float) -> SketchRig:
    return SketchRig(
        "button_bounce",
        board="uno",
        devices=[("button", BUTTON)],
        pins={"button.contact": "4"},
        params={"button": params},
    )


def counts(rig: SketchRig) -> list[int]:
    got = [line for line in rig.command_line("c") if line.startswith("c ")]
    return [int(field) for field in got[-1].split()[1:]]


@pytest.mark.parametrize(("bounce_us", "bounces"), [(1500, 4), (5000, 10), (0, 4)])
def test_a_bouncing_button_shows_its_bounces_raw_and_one_press_debounced(
    bounce_us: float, bounces: int
) -> None:
    rig = button_rig(bounce_us=bounce_us, bounces=bounces)
    per_change = 2 * bounces + 1 if bounce_us > 0 else 1
    try:
        rig.advance(0.05)
        assert counts(rig) == [0, 0, 1]  # released: the pull-up's high
        for press in range(1, 4):
            rig.set(button__pressed=1)
            rig.advance(0.1)
            assert counts(rig) == [(2 * press - 1) * per_change, press, 0]
            rig.set(button__pressed=0)
            rig.advance(0.1)
            assert counts(rig) == [2 * press * per_change, press, 1]
        stats = rig.stats()
        assert stats["button_transitions"] == 6 * per_change and stats["button_no_pullup_pins"] == []
    finally:
        rig.close()
