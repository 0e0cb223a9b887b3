"""The firmware core's radio relay (mcu_core.c, host build): the virtual MCU's rules and counters."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hil_bridge.core.defaults import signal_layout, telemetry_schema
from hil_bridge.core.line_protocol import LineEncoder, Relayed
from hil_mcu.core.virtual_mcu import McuConfig, VirtualMcu
from hil_sim.core.radio import RadioReceive, RadioSend, RadioStatus, encode_radio
from support.firmware_host import RADIO_COUNTERS, HostLineDecoder, HostMcu

RTX = encode_radio(RadioSend(None, bytes.fromhex("01AB")))
RRX = encode_radio(RadioReceive(3, -61, bytes.fromhex("00FF")))
RST = encode_radio(RadioStatus("LISTEN", 16, 0))


def radio_mcu(*, checked: bool = False) -> HostMcu:
    mcu = HostMcu(checked=checked)
    mcu.radio_begin(0)
    return mcu


def test_the_c_decoder_passes_relay_ids_on_unparsed() -> None:
    decoder = HostLineDecoder(relay_ids=("RRX", "RST"))
    messages = decoder.feed(f"{RRX}\n{RST}\nXYZ,1\nRR\n".encode())
    assert [(m.type, m.text) for m in messages] == [("RLY", RRX), ("RLY", RST)]
    assert decoder.stats()["unknown_id"] == 2


def test_rtx_is_relayed_and_radio_lines_come_back_unchanged() -> None:
    mcu = radio_mcu()
    mcu.feed(f"HBB,0\n{RTX}\n".encode())
    assert mcu.take() == b"HBB,0\n"
    assert mcu.radio_take() == f"{RTX}\n".encode()
    mcu.radio_feed(f"{RST}\n{RRX}\nXYZ,1\nHBB,1\n".encode())
    assert mcu.take() == f"{RST}\n{RRX}\n".encode()
    counters = mcu.radio_counters()
    assert counters["radio_tx"] == 1
    assert (counters["radio_rx"], counters["radio_status"]) == (1, 1)
    assert (counters["radio_dropped.unknown_id"], counters["radio_unexpected"]) == (1, 1)


def test_without_a_radio_rtx_gets_no_radio() -> None:
    mcu = HostMcu()
    mcu.feed(f"{RTX}\n".encode())
    assert mcu.take() == b"ERR,no radio\n"
    assert mcu.radio_counters()["radio_tx_dropped"] == 1
    mcu.tick(10_000)
    assert b"RST,LOST" not in mcu.take()


def test_lost_after_three_seconds_once_and_back_with_the_next_rst() -> None:
    mcu = radio_mcu()
    mcu.tick(2999)
    assert b"RST,LOST" not in mcu.take()
    mcu.tick(3000)
    assert mcu.take().count(b"RST,LOST,0,0\n") == 1
    mcu.tick(9000)
    assert b"RST,LOST" not in mcu.take()
    mcu.feed(f"{RTX}\n".encode())
    assert b"ERR,no radio" in mcu.take()
    mcu.radio_feed(f"{RST}\n".encode(), 9500)
    assert mcu.take() == f"{RST}\n".encode()
    mcu.feed(f"{RTX}\n".encode())
    assert mcu.radio_take() == f"{RTX}\n".encode()
    counters = mcu.radio_counters()
    assert (counters["radio_losses"], counters["radio_lost"]) == (1, 0)


def test_relayed_lines_leave_the_reserve_of_the_command_queue_to_the_mcu() -> None:
    mcu = radio_mcu()
    line = encode_radio(RadioReceive(1, -50, bytes(range(48))))
    mcu.radio_feed(f"{line}\n".encode() * 10)
    # 256-byte queue, 128 kept for replies and telemetry: one 111-byte line fits.
    assert mcu.radio_counters()["radio_rx_overflow"] == 9
    mcu.feed(b"HBB,1\n")
    mcu.tick(100)
    out = mcu.take().decode().splitlines()
    assert out[:2] == [line, "HBB,1"]
    assert [x[:3] for x in out[2:]] == ["TL1", "TL2"]
    assert mcu.counters()["out_overflow"] == 0


def test_a_full_radio_queue_drops_whole_rtx_lines() -> None:
    mcu = radio_mcu()
    rtx = encode_radio(RadioSend(2, bytes(range(48))))
    mcu.feed(f"{rtx}\n{rtx}\n".encode())
    assert mcu.radio_take() == f"{rtx}\n".encode()
    assert mcu.radio_counters()["radio_tx_overflow"] == 1


def test_counter_names_match_the_virtual_mcu() -> None:
    config = McuConfig(layout=signal_layout(), schema=telemetry_schema(), radio=True)
    assert set(RADIO_COUNTERS) <= set(VirtualMcu(config).counters())


payloads = st.binary(min_size=1, max_size=48)
rtx_lines = st.builds(RadioSend, st.one_of(st.none(), st.integers(0, 9999)), payloads).map(encode_radio)
rrx_lines = st.builds(RadioReceive, st.integers(0, 9999), st.integers(-128, 0), payloads).map(encode_radio)


@settings(max_examples=100, deadline=None)
@given(
    steps=st.lists(st.tuples(st.booleans(), st.one_of(rtx_lines, rrx_lines)), max_size=30),
    checked=st.booleans(),
)
def test_the_firmware_core_relays_as_the_virtual_mcu(steps: list[tuple[bool, str]], checked: bool) -> None:
    host = radio_mcu(checked=checked)
    config = McuConfig(layout=signal_layout(), schema=telemetry_schema(), radio=True, checked=checked)
    virtual = VirtualMcu(config, start=0.0)
    loop, module = LineEncoder(checked=checked), LineEncoder(checked=checked)
    for k, (from_loop, line) in enumerate(steps):
        body = "RTX" + line[3:] if from_loop else "RRX" + line[3:] if line.startswith("RRX") else RRX
        if from_loop:
            data = loop.encode(Relayed(body))
            host.feed(data, k)
            virtual.feed_command(data, k / 1000)
        else:
            data = module.encode(Relayed(body))
            host.radio_feed(data, k)
            virtual.feed_radio(data, k / 1000)
        assert host.radio_take() == virtual.take_radio_output()
        assert host.take() == virtual.take_command_output()
