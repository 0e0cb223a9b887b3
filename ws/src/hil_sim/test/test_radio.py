"""The radio model: loss statistics, switching delay, range, round robin, queues, seeds; the radio lines."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_bridge.core.line_protocol import MAX_LINE
from hil_common.errors import HilError
from hil_sim.core.radio import (
    MAX_PAYLOAD,
    STATES,
    Delivery,
    Radio,
    RadioConfig,
    RadioReceive,
    RadioSend,
    RadioStatus,
    decode_radio,
    encode_radio,
)
from hil_sim.errors import HilSimError

SETTINGS = settings(deadline=None, derandomize=True, max_examples=150)
STEP = 0.02
#: Loss draws only (no edge ramp, no shadowing): what the statistical tests count.
PLAIN = {"edge_fraction": 0.0, "shadowing_db": 0.0}


def ring(count: int, radius: float) -> npt.NDArray[np.float64]:
    """Robot 0 at the origin, the others on a circle around it."""
    angles = np.linspace(0.0, 2.0 * math.pi, count - 1, endpoint=False)
    return np.vstack([[0.0, 0.0], np.column_stack([radius * np.cos(angles), radius * np.sin(angles)])])


def run(radio: Radio, positions: Any, ticks: int, *, send: Any = None) -> list[Delivery]:
    """Step ``ticks`` radio steps one by one; ``send(k, deliveries)`` is called after step k."""
    out: list[Delivery] = []
    start = round(radio.now / STEP)
    for k in range(start, start + ticks):
        got = radio.step(k * STEP, positions)
        out.extend(got)
        if send is not None:
            send(k, got)
    return out


def steps(seconds: float) -> int:
    return round(seconds / STEP)


@pytest.mark.parametrize("loss", [0.0, 0.04, 0.3])
def test_measured_loss_matches_the_configured_rate_within_five_sigma(loss: float) -> None:
    radio = Radio(RadioConfig(loss=loss, **PLAIN), 21, seed=3)
    run(radio, ring(21, 1.0), 5000, send=lambda k, got: radio.send(0, b"x"))
    total = radio.stats()["total"]
    copies = total["sent"] * 20
    assert copies > 90_000
    assert total["delivered"] + total["lost_random"] == copies
    assert total["late"] == total["lost_range"] == total["rx_overflow"] == 0
    sigma = math.sqrt(copies * loss * (1 - loss))
    assert abs(total["lost_random"] - copies * loss) <= 5 * sigma


def test_loss_rises_linearly_over_the_edge_of_the_range() -> None:
    config = RadioConfig(loss=0.04, max_range=2.0, edge_fraction=0.5, shadowing_db=0.0)
    radio = Radio(config, 21, seed=4)
    run(radio, ring(21, 1.5), 3000, send=lambda k, got: radio.send(0, b"x"))
    total = radio.stats()["total"]
    copies = total["sent"] * 20
    expected = 0.04 + 0.96 * 0.5  # halfway into the outer half of the range
    sigma = math.sqrt(copies * expected * (1 - expected))
    assert abs(total["lost_random"] - copies * expected) <= 5 * sigma


@SETTINGS
@given(
    points=st.lists(
        st.tuples(st.floats(-5.0, 5.0), st.floats(-5.0, 5.0)), min_size=2, max_size=8, unique=True
    ),
    sender=st.integers(0, 7),
    target=st.integers(0, 7),
    edge=st.sampled_from([0.0, 0.3]),
)
def test_packets_reach_exactly_the_robots_in_range(
    points: list[tuple[float, float]], sender: int, target: int, edge: float
) -> None:
    count = len(points)
    sender, target = sender % count, target % count
    pos = np.array(points)
    distance = np.hypot(*(pos - pos[sender]).T)
    in_range = (distance <= 3.0) & (np.arange(count) != sender)
    radio = Radio(RadioConfig(loss=0.0, max_range=3.0, edge_fraction=edge), count, seed=0)
    radio.send(sender, b"all")
    if target != sender:
        radio.send(sender, b"one", target)
    got = run(radio, pos, 20)
    assert all(distance[d.dst] <= 3.0 for d in got)
    broadcast = sorted(d.dst for d in got if d.payload == b"all")
    if edge == 0.0:  # a hard edge: every robot in range hears it, once
        assert broadcast == np.flatnonzero(in_range).tolist()
    else:  # loss rises to 1 at the edge: never twice, never beyond
        assert len(set(broadcast)) == len(broadcast)
        assert set(broadcast) <= set(np.flatnonzero(in_range).tolist())
    addressed = [d.dst for d in got if d.payload == b"one"]
    assert set(addressed) <= {target}
    if target != sender:
        total = radio.stats()["total"]
        if edge == 0.0:
            assert addressed == ([target] if in_range[target] else [])
        assert total["lost_range"] == (0 if in_range[target] else 1)
    assert radio.stats()["waiting_to_send"] == radio.stats()["waiting_to_receive"] == 0


def test_an_addressed_packet_reaches_only_its_target() -> None:
    radio = Radio(RadioConfig(loss=0.0, **PLAIN), 6, seed=0)
    radio.send(0, b"to3", 3)
    got = run(radio, ring(6, 0.5), 10)
    assert [(d.dst, d.src, d.payload) for d in got] == [(3, 0, b"to3")]
    assert radio.stats()["per_robot"]["delivered"] == [0, 0, 0, 1, 0, 0]


@pytest.mark.parametrize("switch", [0, 1, 2, 5])
def test_switching_delay_is_exactly_the_configured_radio_steps(switch: int) -> None:
    """A send from listening leaves ``switch`` steps late; a reply queued on receipt too."""
    radio = Radio(RadioConfig(switch_steps=switch, loss=0.0, **PLAIN), 2, seed=0)
    radio.send(0, b"ping", 1)

    def reply(k: int, got: list[Delivery]) -> None:
        for d in got:
            if d.payload == b"ping":
                radio.send(1, b"pong", 0)

    got = run(radio, [[0.0, 0.0], [1.0, 0.0]], 4 * switch + 6, send=reply)
    ping, pong = got
    assert (ping.payload, pong.payload) == (b"ping", b"pong")
    assert round((ping.delivered_at - ping.sent_at) / STEP) == switch
    assert round((pong.sent_at - ping.delivered_at) / STEP) == 1  # queued after the step that heard it
    assert round((pong.delivered_at - pong.sent_at) / STEP) == switch
    assert radio.stats()["total"]["late"] == 0


@pytest.mark.parametrize("switch", [0, 1, 2, 5])
def test_a_packet_for_a_module_switching_back_waits_exactly_the_switch(switch: int) -> None:
    radio = Radio(RadioConfig(switch_steps=switch, loss=0.0, **PLAIN), 3, seed=0)
    pos = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
    radio.send(0, b"out", 1)  # robot 0 sends at step `switch`, then switches back
    run(radio, pos, 1)
    radio.send(2, b"in", 0)  # queued at step 1: on the air at step 1 + switch
    got = [d for d in run(radio, pos, 4 * switch + 4) if d.dst == 0]
    assert [d.payload for d in got] == [b"in"]
    # Sender's switch, then robot 0's switch back (it sent at `switch`, listens from 2 switch + 1).
    assert round((got[0].delivered_at - got[0].sent_at) / STEP) == 2 * switch
    assert radio.stats()["per_robot"]["late"][0] == (1 if switch else 0)


@pytest.mark.parametrize("switch", [0, 2, 3])
def test_two_saturated_modules_send_two_packets_per_two_switches_and_three_steps(switch: int) -> None:
    radio = Radio(RadioConfig(switch_steps=switch, loss=0.0, **PLAIN), 2, seed=0)

    def both(k: int, got: list[Delivery]) -> None:
        radio.send(0, b"a")
        radio.send(1, b"b")

    cycle = 2 * switch + 3
    run(radio, [[0.0, 0.0], [1.0, 0.0]], 100 * cycle, send=both)
    sent = radio.stats()["per_robot"]["sent"]
    assert all(198 <= n <= 200 for n in sent)
    assert radio.stats()["total"]["queue_overflow"] > 0


def test_destinations_are_served_round_robin() -> None:
    radio = Radio(RadioConfig(loss=0.0, **PLAIN), 3, seed=0)
    for label, dst in [("B1", 1), ("B2", 1), ("B3", 1), ("C1", 2), ("C2", 2), ("C3", 2), ("*1", None)]:
        radio.send(0, label.encode(), dst)
    radio.send(0, b"*2")
    got = run(radio, ring(3, 0.5), 20)
    order: dict[bytes, float] = {}
    for d in got:
        order.setdefault(d.payload, d.delivered_at)
    sequence = sorted(order, key=order.__getitem__)
    assert sequence == [b"B1", b"C1", b"*1", b"B2", b"C2", b"*2", b"B3", b"C3"]
    times = sorted(order.values())
    assert np.all(np.round(np.diff(times) / STEP) == 1)
    assert sorted(d.dst for d in got if d.payload.startswith(b"*")) == [1, 1, 2, 2]


def test_a_busy_neighbour_does_not_starve_the_others() -> None:
    radio = Radio(RadioConfig(loss=0.0, **PLAIN), 3, seed=0)
    for _ in range(10):
        radio.send(0, b"busy", 1)
    radio.send(0, b"quiet", 2)
    got = run(radio, ring(3, 0.5), 20)
    assert [d.payload for d in got][:3] == [b"busy", b"quiet", b"busy"]


def scenario(seed: int) -> tuple[list[Delivery], dict[str, Any]]:
    rng = np.random.default_rng(0)
    pos = rng.uniform(-2.0, 2.0, (10, 2))
    radio = Radio(RadioConfig(loss=0.3), 10, seed=seed)

    def chatter(k: int, got: list[Delivery]) -> None:
        for robot in range(10):
            radio.send(robot, bytes([k % 256, robot]), None if robot % 2 else (robot + 1) % 10)

    return run(radio, pos, 200, send=chatter), radio.stats()


def test_a_seed_repeats_the_run_and_another_seed_does_not() -> None:
    first, second, other = scenario(7), scenario(7), scenario(8)
    assert first == second
    assert len(first[0]) > 1000
    assert first[0] != other[0]


def test_step_runs_every_radio_step_due_and_refuses_going_back() -> None:
    radio = Radio(RadioConfig(loss=0.0, **PLAIN), 2, seed=0)
    radio.send(0, b"x")
    got = radio.step(10 * STEP, [[0.0, 0.0], [1.0, 0.0]])
    assert [round(d.delivered_at / STEP) for d in got] == [2]
    assert radio.now == pytest.approx(11 * STEP)
    assert radio.step(10 * STEP, [[0.0, 0.0], [1.0, 0.0]]) == []
    with pytest.raises(HilSimError, match="now"):
        radio.step(5 * STEP, [[0.0, 0.0], [1.0, 0.0]])


def test_a_full_send_queue_refuses_and_counts() -> None:
    radio = Radio(RadioConfig(tx_queue=3), 2, seed=0)
    assert [radio.send(0, b"x", 1) for _ in range(5)] == [True, True, True, False, False]
    assert radio.stats()["per_robot"]["queue_overflow"] == [2, 0]
    assert radio.status(0) == RadioStatus("LISTEN", 0, 2)


def test_a_full_receive_buffer_drops_and_counts() -> None:
    radio = Radio(RadioConfig(switch_steps=5, rx_queue=2, loss=0.0, **PLAIN), 3, seed=0)
    for n in range(6):
        radio.send(0, bytes([n]))  # robot 0 broadcasts at steps 5..10
    radio.send(1, b"busy", 2)  # robot 1 sends at step 5, listens again from step 11
    got = [d for d in run(radio, ring(3, 0.5), 20) if d.dst == 1]
    assert [(d.payload, round(d.delivered_at / STEP)) for d in got] == [(b"\x00", 11), (b"\x01", 11)]
    counters = radio.stats()["per_robot"]
    assert (counters["rx_overflow"][1], counters["late"][1], counters["delivered"][1]) == (4, 2, 2)
    assert counters["delivered"][2] == 7


def test_status_follows_the_module_through_a_send() -> None:
    radio = Radio(RadioConfig(switch_steps=2), 2, seed=0)
    radio.send(0, b"x", 1)
    states = []
    for k in range(7):
        radio.step(k * STEP, [[0.0, 0.0], [1.0, 0.0]])
        states.append(radio.status(0).state)
    # The state for the next step: switching in steps 0-1, sends in 2, switching back in 3-4.
    assert states == ["SWITCH", "SEND", "SWITCH", "SWITCH", "LISTEN", "LISTEN", "LISTEN"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("step", 0.0),
        ("step", math.nan),
        ("switch_steps", -1),
        ("switch_steps", 1.5),
        ("switch_steps", True),
        ("loss", 1.5),
        ("loss", "0.1"),
        ("max_range", 0.0),
        ("edge_fraction", -0.1),
        ("tx_power_dbm", math.inf),
        ("path_loss_db", -1.0),
        ("path_loss_exponent", 0.0),
        ("shadowing_db", -1.0),
        ("tx_queue", 0),
        ("rx_queue", 0),
        ("max_payload", MAX_PAYLOAD + 1),
    ],
)
def test_a_bad_config_is_refused_naming_the_field(field: str, value: Any) -> None:
    with pytest.raises(HilSimError, match=rf"RadioConfig\.{field}:"):
        RadioConfig(**{field: value})


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda r: r.send(3, b"x"), "src"),
        (lambda r: r.send(0, b"x", 0), "dst"),
        (lambda r: r.send(0, b"x", -1), "dst"),
        (lambda r: r.send(0, b""), "payload"),
        (lambda r: r.send(0, bytes(MAX_PAYLOAD + 1)), "payload"),
        (lambda r: r.step(0.0, [[0.0, 0.0]]), "positions"),
        (lambda r: r.step(0.0, [[0.0, 0.0], [math.nan, 0.0], [0.0, 0.0]]), "positions"),
        (lambda r: r.step(math.inf, np.zeros((3, 2))), "now"),
        (lambda r: Radio(RadioConfig(), 0), "robots"),
    ],
)
def test_bad_calls_are_refused_naming_the_argument(call: Any, name: str) -> None:
    with pytest.raises(HilSimError, match=rf"^{name}:"):
        call(Radio(RadioConfig(), 3))


ids = st.integers(0, 9999)
payloads = st.binary(min_size=1, max_size=MAX_PAYLOAD)
messages = st.one_of(
    st.builds(RadioSend, st.none() | ids, payloads),
    st.builds(RadioReceive, ids, st.integers(-128, 127), payloads),
    st.builds(RadioStatus, st.sampled_from(STATES), st.integers(0, 999), st.integers(0, 10**6)),
)


@SETTINGS
@given(message=messages)
def test_radio_lines_read_back_and_fit_a_checked_line(message: Any) -> None:
    body = encode_radio(message)
    assert decode_radio(body) == message
    assert len(body) + len("*SSSSCCCC") <= MAX_LINE
    assert body[:4] in {"RTX,", "RRX,", "RST,"}


def test_radio_lines_look_as_documented() -> None:
    assert encode_radio(RadioSend(None, b"\x01\xab")) == "RTX,*,01AB"
    assert encode_radio(RadioSend(7, b"hi")) == "RTX,7,6869"
    assert encode_radio(RadioReceive(3, -61, b"\x00")) == "RRX,3,-61,00"
    assert encode_radio(RadioStatus("SWITCH", 15, 2)) == "RST,SWITCH,15,2"
    assert decode_radio("RRX3,-61,00ff") == RadioReceive(3, -61, b"\x00\xff")  # comma after the id optional


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("RXX,1,00", "id"),
        ("RTX,1", "RTX: expected 2 fields"),
        ("RTX,-1,00", "RTX dst"),
        ("RTX,a,00", "RTX dst"),
        ("RTX,1,0", "RTX payload"),
        ("RTX,1,", "RTX payload"),
        ("RTX,1,0G", "RTX payload"),
        ("RTX,1," + "00" * (MAX_PAYLOAD + 1), "RTX payload"),
        ("RRX,1,1.5,00", "RRX rssi"),
        ("RRX,x,-50,00", "RRX src"),
        ("RST,SLEEP,1,0", "RST state"),
        ("RST,LISTEN,-1,0", "RST free"),
        ("RST,LISTEN,1,", "RST dropped"),
        ("RTX,1," + "0" * MAX_LINE, "line"),
    ],
)
def test_a_bad_radio_line_is_refused_naming_the_field(line: str, name: str) -> None:
    with pytest.raises(HilError, match=f"^{name}"):
        decode_radio(line)
