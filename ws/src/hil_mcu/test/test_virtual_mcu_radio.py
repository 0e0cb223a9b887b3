"""The virtual MCU core's radio relay on fake time: RTX out, RRX/RST in, LOST, drops, bounds."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_bridge.core.line_protocol import LineDecoder, LineEncoder, Relayed
from hil_bridge.core.signal_protocol import SignalLayout
from hil_devices.core.devices import load_device_set
from hil_devices.core.library import load_device_library
from hil_devices.core.telemetry import TelemetrySchema
from hil_mcu.core.virtual_mcu import RADIO_LOST_LINE, RADIO_LOST_S, RELAY_QUEUE_BYTES, McuConfig, VirtualMcu
from hil_mcu.errors import HilMcuError
from hil_sim.core.radio import RadioReceive, RadioSend, RadioStatus, encode_radio

CONFIG = Path(__file__).resolve().parents[2] / "hil_devices" / "config"
LAYOUT = SignalLayout(
    load_device_set(CONFIG / "demo_robot_devices.yaml", load_device_library([CONFIG / "devices"]))
)
SCHEMA = TelemetrySchema.from_yaml(CONFIG / "telemetry.yaml")
RADIO = McuConfig(layout=LAYOUT, schema=SCHEMA, radio=True)

RTX = encode_radio(RadioSend(None, bytes.fromhex("01AB")))
RRX = encode_radio(RadioReceive(3, -61, bytes.fromhex("00FF")))
RST = encode_radio(RadioStatus("LISTEN", 16, 0))


def make(config: McuConfig = RADIO, **changes: object) -> VirtualMcu:
    return VirtualMcu(replace(config, **changes) if changes else config, start=0.0)  # type: ignore[arg-type]


def to_mcu(mcu: VirtualMcu, *texts: str, now: float = 0.0) -> list[str]:
    """Command-link lines in; every command-link line the MCU has queued since."""
    mcu.feed_command("".join(f"{t}\n" for t in texts).encode(), now)
    return mcu.take_command_output().decode().splitlines()


def from_radio(mcu: VirtualMcu, *texts: str, now: float = 0.0) -> list[str]:
    """Radio-link lines in; every command-link line the MCU has queued since."""
    mcu.feed_radio("".join(f"{t}\n" for t in texts).encode(), now)
    return mcu.take_command_output().decode().splitlines()


def not_telemetry(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith("TL")]


def test_rtx_goes_to_the_radio_link_unchanged_and_gets_no_reply() -> None:
    mcu = make()
    assert to_mcu(mcu, "HBB,0", RTX, "RTX7,6869") == ["HBB,0"]
    assert mcu.take_radio_output() == f"{RTX}\nRTX7,6869\n".encode()
    assert mcu.counters()["radio_tx"] == 2


def test_rrx_and_rst_go_to_the_command_link_unchanged() -> None:
    mcu = make()
    assert from_radio(mcu, RST, RRX) == [RST, RRX]
    counters = mcu.counters()
    assert (counters["radio_rx"], counters["radio_status"]) == (1, 1)
    assert mcu.take_radio_output() == b""


def test_without_a_radio_link_rtx_is_dropped_with_no_radio_and_radio_bytes_are_ignored() -> None:
    mcu = make(radio=False)
    assert to_mcu(mcu, RTX, RTX) == ["ERR,no radio", "ERR,no radio"]
    assert mcu.take_radio_output() == b""
    assert from_radio(mcu, RRX) == []
    assert mcu.counters()["radio_tx_dropped"] == 2
    mcu.tick(10.0)
    assert "RST,LOST,0,0" not in mcu.take_command_output().decode()
    assert not mcu.radio_lost


def test_other_ids_and_broken_lines_from_the_radio_are_dropped_and_counted() -> None:
    mcu = make()
    mcu.feed_radio(b"XYZ,1\nHBB,5\nDRV100,100\n\n\xff\n" + b"R" * 300 + b"\n", 0.0)
    assert mcu.take_command_output() == b""
    assert mcu.motor_commands == (0, 0)
    counters = mcu.counters()
    assert counters["radio_dropped.unknown_id"] == 1
    assert counters["radio_unexpected"] == 2
    assert counters["radio_dropped.empty"] == 1
    assert counters["radio_dropped.not_ascii"] == 1
    assert counters["radio_dropped.too_long"] == 1
    assert from_radio(mcu, RRX) == [RRX]


def test_three_seconds_without_rst_make_the_radio_lost_once_until_the_next_rst() -> None:
    mcu = make()
    mcu.tick(RADIO_LOST_S - 0.001)
    assert RADIO_LOST_LINE not in mcu.take_command_output().decode()
    assert mcu.next_deadline(RADIO_LOST_S - 0.001) == pytest.approx(RADIO_LOST_S)
    mcu.tick(RADIO_LOST_S)
    assert not_telemetry(mcu.take_command_output().decode().splitlines()) == [RADIO_LOST_LINE]
    assert mcu.radio_lost
    mcu.tick(10.0)
    assert RADIO_LOST_LINE not in mcu.take_command_output().decode()
    assert to_mcu(mcu, RTX, now=10.0) == ["ERR,no radio"]
    assert mcu.take_radio_output() == b""
    assert from_radio(mcu, RST, now=10.5) == [RST]
    assert not mcu.radio_lost
    assert to_mcu(mcu, RTX, now=10.5) == []
    assert mcu.take_radio_output() == f"{RTX}\n".encode()
    counters = mcu.counters()
    assert (counters["radio_losses"], counters["radio_lost"], counters["radio_tx_dropped"]) == (1, 0, 1)


def test_rst_keeps_the_radio_alive_and_rrx_does_not() -> None:
    mcu = make()
    for k in range(1, 10):
        from_radio(mcu, RST, now=k * 1.0)
        mcu.tick(k * 1.0 + 0.5)
    assert not mcu.radio_lost
    from_radio(mcu, RRX, RRX, now=11.0)
    mcu.tick(12.0)
    assert mcu.radio_lost  # the last RST was at 9 s


def test_an_rtx_after_the_timeout_but_before_the_tick_is_already_refused() -> None:
    mcu = make()
    assert "ERR,no radio" in to_mcu(mcu, "HBB,1", RTX, now=RADIO_LOST_S + 0.1)


def test_full_relay_queues_drop_whole_lines_and_count_them() -> None:
    mcu = make()
    line = encode_radio(RadioReceive(1, -50, bytes(range(48))))
    n = RELAY_QUEUE_BYTES // (len(line) + 1)
    mcu.feed_radio(f"{line}\n".encode() * (n + 5), 0.0)
    assert mcu.take_command_output().decode().splitlines() == [line] * n
    assert mcu.counters()["radio_rx_overflow"] == 5
    rtx = encode_radio(RadioSend(2, bytes(range(48))))
    mcu.feed_command(f"{rtx}\n".encode() * (n + 3), 0.0)
    assert mcu.take_radio_output().decode().splitlines() == [rtx] * n
    assert mcu.counters()["radio_tx_overflow"] == 3
    # Taken: room again.
    assert from_radio(mcu, RRX) == [RRX]


def test_checked_mode_reframes_each_link_with_its_own_sequence() -> None:
    mcu = make(checked=True)
    loop, module = LineEncoder(checked=True), LineEncoder(checked=True)
    mcu.feed_command(loop.encode(Relayed("HBB,0")) + loop.encode(Relayed(RTX)), 0.0)
    mcu.feed_radio(module.encode(Relayed(RRX)), 0.0)
    reader = LineDecoder(checked=True, relay_ids=("HBB", "RRX", "RTX"))
    assert [m.body for m in reader.feed(mcu.take_command_output())] == ["HBB,0", RRX]  # type: ignore[union-attr]
    radio_reader = LineDecoder(checked=True, relay_ids=("RTX",))
    assert [m.body for m in radio_reader.feed(mcu.take_radio_output())] == [RTX]  # type: ignore[union-attr]
    assert mcu.take_radio_output() == b""
    # The radio link numbers from 0: the command link's HBB echo took 0 there.
    mcu.feed_command(loop.encode(Relayed(RTX)), 0.0)
    assert mcu.take_radio_output().rsplit(b"*", 1)[1][:4] == b"0001"


def test_a_radio_line_with_a_bad_check_is_dropped() -> None:
    mcu = make(checked=True)
    mcu.feed_radio(f"{RRX}*0000FFFF\n".encode(), 0.0)
    assert mcu.take_command_output() == b""
    assert mcu.counters()["radio_dropped.bad_check"] == 1


def test_radio_must_be_a_bool() -> None:
    with pytest.raises(HilMcuError, match="radio"):
        McuConfig(layout=LAYOUT, schema=SCHEMA, radio="yes")  # type: ignore[arg-type]


def test_without_radio_the_radio_deadline_is_not_waited_for() -> None:
    assert make(radio=False).next_deadline(0.0) <= 0.1
    assert make().counters()["radio_lost"] == 0


payloads = st.binary(min_size=1, max_size=48)
rtx_lines = st.builds(RadioSend, st.one_of(st.none(), st.integers(0, 9999)), payloads).map(encode_radio)
rrx_lines = st.builds(RadioReceive, st.integers(0, 9999), st.integers(-128, 0), payloads).map(encode_radio)


@settings(max_examples=150, deadline=None)
@given(
    steps=st.lists(st.tuples(st.booleans(), st.one_of(rtx_lines, rrx_lines)), max_size=40),
    checked=st.booleans(),
    cut=st.integers(1, 64),
)
def test_any_sequence_of_valid_rtx_and_rrx_lines_is_relayed_byte_for_byte_in_order(
    steps: list[tuple[bool, str]], checked: bool, cut: int
) -> None:
    mcu = make(checked=checked)
    loop, module = LineEncoder(checked=checked), LineEncoder(checked=checked)
    expect_tx = LineEncoder(checked=checked)
    expect_rx = LineEncoder(checked=checked)
    radio_out = command_out = b""
    want_radio = want_command = b""
    for k, (from_loop, line) in enumerate(steps):
        now = k * 0.001
        if from_loop:
            rtx = line if line.startswith("RTX") else "RTX" + line[3:]
            data = loop.encode(Relayed(rtx))
            want_radio += expect_tx.encode(Relayed(rtx))
            feed = mcu.feed_command
        else:
            rrx = line if line.startswith("RRX") else encode_radio(RadioReceive(1, -1, b"\x00"))
            data = module.encode(Relayed(rrx))
            want_command += expect_rx.encode(Relayed(rrx))
            feed = mcu.feed_radio
        for start in range(0, len(data), cut):  # any chunking
            feed(data[start : start + cut], now)
        radio_out += mcu.take_radio_output()
        command_out += mcu.take_command_output()
    assert radio_out == want_radio
    assert command_out == want_command
