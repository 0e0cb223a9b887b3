"""The harness's serial links: every hardware UART, SoftwareSerial at the bit level, resets.

Test sketches in the public Arduino styles, in lockstep over real ptys: a Mega 2560
with a Bluetooth module on Serial1 at 57600 and a GPS-like NMEA talker on Serial2 at
9600; an UNO that greets whoever opens its port (auto-reset through DTR, the reset
command, the watchdog); a Bluetooth car on SoftwareSerial.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import serial

from hil_mcu.core.simavr import cycles
from hil_mcu.errors import HilMcuError
from support.sketch_rig import SketchRig, device

#: Simulated seconds per step where bytes are timed (a byte at 57600 baud: 174 us).
FINE_STEP = 0.001


def byte_time(count: int, baud: int) -> float:
    """Seconds ``count`` bytes take on an 8N1 line (10 bits each)."""
    return count * 10 / baud


@pytest.fixture
def mega() -> Iterator[SketchRig]:
    rig = SketchRig("mega_serial_ports", board="mega2560", uarts=[1, 2], step=FINE_STEP)
    yield rig
    rig.close()


def test_mega_serial1_greets_and_echoes_at_57600(mega: SketchRig) -> None:
    assert mega.wait_for("uart1", "BT ready", timeout=0.1) == ["BT ready 1"]  # 1: power-on
    assert "mega up" in mega.advance(0.01)  # Serial (UART0), the command pty
    mega.ports["uart1"].write(b"hello there\n")
    assert mega.wait_for("uart1", "echo", timeout=0.1) == ["echo hello there"]
    # 200 bytes (and "burst 200\n" in, the newline pair out) at the rate the firmware set
    start = mega.now
    mega.ports["uart1"].write(b"burst 200\n")
    burst = mega.wait_for("uart1", "abc", timeout=0.5)[-1]
    assert burst == ("abcdefghijklmnopqrstuvwxyz" * 8)[:200]
    took, least = mega.now - start, byte_time(10 + 202, 57600)
    assert least <= took <= least + 0.005, took
    stats = mega.stats()
    sent = ("hello there\n", "burst 200\n")
    echoed = ("BT ready 1\r\n", "echo hello there\r\n", "x" * 200 + "\r\n")
    assert (stats["uart1_rx"], stats["uart1_tx"]) == (sum(map(len, sent)), sum(map(len, echoed)))
    assert stats["uart1_tx_dropped"] == stats["uart1_rx_dropped"] == 0


def nmea_checksum(body: str) -> str:
    value = 0
    for char in body:
        value ^= ord(char)
    return f"{value:02X}"


def test_mega_serial2_talks_nmea_once_a_second_at_9600(mega: SketchRig) -> None:
    sentences: list[str] = []
    arrivals: list[int] = []  # bytes per 1 ms step while a sentence is on the line
    while len(sentences) < 3:
        assert mega.now < 4.0, sentences
        before = len(mega.partial("uart2"))
        mega.advance(FINE_STEP)
        lines = mega.take("uart2")
        sentences += lines
        if not lines:
            arrivals.append(len(mega.partial("uart2")) - before)
    for second, sentence in enumerate(sentences):
        match = re.fullmatch(r"\$(GPRMC,0000(\d\d)\.00,A,.*)\*([0-9A-F]{2})", sentence)
        assert match is not None, sentence
        assert int(match.group(2)) == second
        assert match.group(3) == nmea_checksum(match.group(1))
    # 9600 baud: a byte every 1.04 ms, never two in one 1 ms step
    assert max(arrivals) == 1
    assert 2.9 < mega.now < 3.2


def test_an_uno_sketch_talks_on_serial_at_the_baud_rate_it_sets() -> None:
    rig = SketchRig("uno_serial_banner", board="uno", defines={"SERIAL_BAUD": 9600}, step=FINE_STEP)
    try:
        assert rig.wait_for("command", "boot", timeout=0.1) == ["boot 1"]
        start = rig.now
        assert rig.port is not None
        rig.port.write(b"0123456789\n")
        assert rig.wait_for("command", "echo", timeout=0.1) == ["echo 0123456789 1"]
        least = byte_time(11 + len("echo 0123456789 1\r\n"), 9600)
        assert least <= rig.now - start <= least + 0.003
    finally:
        rig.close()


def test_a_uart_the_board_does_not_have_is_refused_naming_it() -> None:
    with pytest.raises(HilMcuError, match=r"exit status 2: hil_simavr: --uart 1:\d+: the uno has UART 0$"):
        rig = SketchRig("uno_serial_banner", board="uno", uarts=[1])
        try:
            rig.advance(0.01)
        finally:
            rig.close()


# --- SoftwareSerial -------------------------------------------------------------------------

L298_INS = device(
    "l298_ins",
    [
        {"name": name, "direction": "INPUT", "type": "INTEGER", "min": 0, "max": 1, "mode": "DIGITAL"}
        for name in ("in1", "in2", "in3", "in4")
    ],
)
IN_PINS = {"car.in1": "4", "car.in2": "5", "car.in3": "6", "car.in4": "7"}
#: The car's IN levels per command (left 1/2, right 3/4).
COMMANDS = {
    "F": (1, 0, 1, 0),
    "B": (0, 1, 0, 1),
    "L": (0, 1, 1, 0),
    "R": (1, 0, 0, 1),
    "S": (0, 0, 0, 0),
}


@pytest.mark.parametrize("baud", [9600, 38400])
def test_bluetooth_car_on_software_serial_takes_letters_and_answers(baud: int) -> None:
    rig = SketchRig(
        "bluetooth_car_softserial",
        board="uno",
        devices=[("car", L298_INS)],
        pins=IN_PINS,
        soft_uarts=[(10, 11, baud)],
        defines={"BT_BAUD": baud},
        step=FINE_STEP,
    )
    try:
        assert rig.wait_for("soft0", "car ready", timeout=0.1) == ["car ready"]
        for letter, levels in COMMANDS.items():
            rig.ports["soft0"].write(letter.encode())
            assert rig.wait_for("soft0", "OK", timeout=0.1) == [f"OK {letter}"]
            rig.advance(0.006)  # a signal frame after the pins changed
            assert tuple(rig.values[f"car.in{i}"] for i in range(1, 5)) == levels, letter
        rig.ports["soft0"].write(b"x")
        assert rig.wait_for("soft0", "?", timeout=0.1) == ["? x"]
        stats = rig.stats()
        assert stats["softuart0_rx"] == len(COMMANDS) + 1
        assert stats["softuart0_tx"] == len("car ready\r\n") + 6 * len(COMMANDS) + len("? x\r\n")
        assert stats["softuart0_framing_errors"] == 0
    finally:
        rig.close()


def test_software_serial_bytes_are_timed_at_the_baud_rate() -> None:
    rig = SketchRig("bluetooth_car_softserial", board="uno", soft_uarts=[(10, 11, 9600)], step=FINE_STEP)
    try:
        rig.wait_for("soft0", "car ready", timeout=0.1)
        start = rig.now
        rig.ports["soft0"].write(b"F")
        rig.wait_for("soft0", "OK F", timeout=0.1)
        least = byte_time(1 + len("OK F\r\n"), 9600)
        assert least <= rig.now - start <= least + 0.003
    finally:
        rig.close()


# --- resets -----------------------------------------------------------------------------------


#: The UNO's bootloader wait, as the harness has it (optiboot: 3 LED flashes, then 1 s).
UNO_BOOT_DELAY = 1.375


@pytest.fixture
def greeter() -> Iterator[SketchRig]:
    rig = SketchRig("uno_serial_banner", board="uno", auto_reset=True)
    yield rig
    rig.close()


def test_opening_the_port_resets_the_mcu_so_the_reader_sees_the_banner(greeter: SketchRig) -> None:
    greeter.advance(0.5)  # booted at power-on, its banner written to nobody
    opened = greeter.now
    greeter.open_command()
    assert greeter.wait_for("command", "boot", timeout=2.0) == ["boot 2"]  # 2: an external reset
    assert UNO_BOOT_DELAY <= greeter.now - opened <= UNO_BOOT_DELAY + 0.02
    stats = greeter.stats()
    assert (stats["resets"], stats["command_opens"], stats["command_readers"]) == (1, 1, 1)
    assert stats["frames_sent"] == round(greeter.now / 0.005)  # the links went on through it


def open_and_boot() -> tuple[int, list[str], int]:
    """Open the port at 0.1 s: the step the banner came in, the lines, the cycle of the reset."""
    rig = SketchRig("uno_serial_banner", board="uno", auto_reset=True)
    try:
        rig.advance(0.1)
        rig.open_command()
        reset_at = rig.process.cycle  # the step's start: where the AVR is when the step comes
        lines: list[str] = []
        steps = 0
        while not lines:
            assert steps < 400, "no banner"
            steps += 1
            lines = rig.advance(rig.step)
            if steps * rig.step < UNO_BOOT_DELAY - 1e-9:
                assert (lines, rig.stats()["booting"]) == ([], 1)
        return steps, lines, reset_at
    finally:
        rig.close()


def test_the_reset_happens_at_the_first_step_after_the_open_and_repeats() -> None:
    first, again = open_and_boot(), open_and_boot()
    assert first == again
    steps, lines, reset_at = first
    assert cycles(0.1) <= reset_at <= cycles(0.1) + 4  # the last instruction's cycles past it
    assert lines == ["boot 2"]
    assert UNO_BOOT_DELAY <= steps * 0.005 <= UNO_BOOT_DELAY + 0.01


def test_bytes_sent_before_the_reset_or_during_the_bootloader_never_reach_the_sketch(
    greeter: SketchRig,
) -> None:
    greeter.advance(0.1)
    port = greeter.open_command()
    port.write(b"stale\n")  # taken by the bootloader on a real board
    greeter.advance(0.5)
    port.write(b"early\n")
    lines = greeter.wait_for("command", "boot", timeout=2.0)
    port.write(b"fresh\n")
    lines += greeter.wait_for("command", "echo", timeout=0.1)
    assert lines == ["boot 2", "echo fresh 1"]
    stats = greeter.stats()
    assert stats["uart0_rx_dropped"] == len("stale\nearly\n")
    assert stats["uart0_rx"] == len("fresh\n")


def test_a_second_reader_does_not_reset(greeter: SketchRig) -> None:
    first = greeter.open_command()
    greeter.wait_for("command", "boot", timeout=2.0)
    other = serial.Serial(greeter.command.slave_name, 57600, timeout=0)  # DTR is already on
    try:
        greeter.advance(0.1)
        assert greeter.stats()["resets"] == 1
    finally:
        other.close()
    first.write(b"still\n")
    assert greeter.wait_for("command", "echo", timeout=0.1) == ["echo still 1"]


def test_closing_and_reopening_resets_again(greeter: SketchRig) -> None:
    greeter.open_command()
    greeter.wait_for("command", "boot", timeout=2.0)
    greeter.close_command()
    greeter.advance(0.1)
    greeter.open_command()
    assert greeter.wait_for("command", "boot", timeout=2.0) == ["boot 2"]
    assert greeter.stats()["resets"] == 2


def test_without_auto_reset_an_open_leaves_the_mcu_running() -> None:
    rig = SketchRig("uno_serial_banner", board="uno")  # no open watch: the port opened at once
    try:
        assert rig.wait_for("command", "boot", timeout=0.1) == ["boot 1"]
        rig.close_command()
        rig.advance(0.1)
        port = rig.open_command()
        port.write(b"hi\n")
        assert rig.wait_for("command", "echo", timeout=0.1) == ["echo hi 1"]
        assert rig.stats()["resets"] == 0
    finally:
        rig.close()


@pytest.mark.parametrize("boot_delay", [0.0, 0.25])
def test_the_reset_command_restarts_the_sketch_after_the_boot_delay(boot_delay: float) -> None:
    rig = SketchRig("uno_serial_banner", board="uno", boot_delay=boot_delay)
    try:
        rig.wait_for("command", "boot", timeout=0.1)
        rig.process.reset()
        start = rig.now
        assert rig.wait_for("command", "boot", timeout=1.0) == ["boot 2"]
        assert boot_delay <= rig.now - start <= boot_delay + 0.01
    finally:
        rig.close()


def test_a_watchdog_reset_restarts_at_once_and_the_links_go_on() -> None:
    rig = SketchRig("uno_serial_banner", board="uno")
    try:
        rig.wait_for("command", "boot", timeout=0.1)
        assert rig.port is not None
        rig.port.write(b"one\n")
        rig.wait_for("command", "echo", timeout=0.1)
        rig.port.write(b"wdt\n")
        assert rig.wait_for("command", "boot", timeout=0.1) == ["hanging", "boot 8"]  # 8: WDRF
        rig.port.write(b"two\n")
        assert rig.wait_for("command", "echo", timeout=0.1) == ["echo two 1"]  # a fresh count
        stats = rig.stats()
        assert (stats["resets"], stats["watchdog_resets"]) == (0, 1)
        assert stats["frames_sent"] == round(rig.now / 0.005)
    finally:
        rig.close()
