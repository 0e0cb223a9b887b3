"""WS2812 LEDs in the firmware-in-the-loop harness, decoded from the bit timing.

A sketch (``sketches/ws2812_bitbang``) bit-bangs the colours on one pin with counted
instructions, as the LED libraries do; the harness decodes each bit from the width of
its high pulse, latches on a reset and reports each LED's colour (the library's
``ws2812``: eight LEDs, ``led<i>_r``, ``_g``, ``_b``).
"""

from __future__ import annotations

from support.sketch_rig import SketchRig, library_device

WS2812 = library_device("ws2812")


def colours(rig: SketchRig) -> list[tuple[int, int, int]]:
    rig.advance(0.01)
    return [tuple(int(rig.values[f"strip.led{i}_{c}"]) for c in "rgb") for i in range(8)]  # type: ignore[misc]


def test_every_led_shows_the_colour_the_sketch_sent_and_keeps_it_until_the_next_latch() -> None:
    rig = SketchRig("ws2812_bitbang", board="uno", devices=[("strip", WS2812)], pins={"strip.din": "6"})
    try:
        assert colours(rig) == [(0, 0, 0)] * 8
        sent = [((37 * i) % 256, (101 * i + 5) % 256, (255 - 29 * i) % 256) for i in range(10)]
        for i, (r, g, b) in enumerate(sent):
            rig.command_line(f"s {i} {r} {g} {b}")
        rig.command_line("w 10")  # two more than the strip: they leave it
        assert colours(rig) == sent[:8]
        rig.command_line("s 0 255 0 0")
        rig.command_line("s 1 0 255 0")
        rig.command_line("s 2 0 0 255")
        assert colours(rig) == sent[:8]  # nothing sent, nothing changes
        rig.command_line("w 3")  # a shorter frame: the first three change, the rest keep theirs
        assert colours(rig) == [(255, 0, 0), (0, 255, 0), (0, 0, 255), *sent[3:8]]
        stats = rig.stats()
        assert stats["ws2812_frames"] == 2
        assert stats["ws2812_bad_bits"] == 0 and stats["ws2812_short_frames"] == 0
    finally:
        rig.close()


def test_bits_outside_the_datasheet_windows_are_counted_and_decoded_as_the_chip_samples_them() -> None:
    rig = SketchRig(
        "ws2812_bitbang",
        board="uno",
        devices=[("strip", WS2812)],
        pins={"strip.din": "6"},
        defines={"WIDE_ONES": 1},
    )
    try:
        rig.command_line("s 0 1 3 255")  # 1 + 2 + 8 ones
        rig.command_line("w 1")
        assert colours(rig)[0] == (1, 3, 255)
        assert rig.stats()["ws2812_bad_bits"] == 11
    finally:
        rig.close()
