"""One runner for the MCU behaviour vectors (``hil_bridge/vectors/mcu_behaviour.yaml``).

Every implementation of the robot MCU (hil_mcu's virtual MCU, the firmware's core
built for the host, the firmware in an emulator) is checked by :func:`check_case`
through the small :class:`McuUnderTest` interface, so the vectors mean the same
thing everywhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from hil_bridge.core.vectors import load_vectors
from hil_sim.core.radio import RadioReceive, RadioSend, RadioStatus, encode_radio

SOURCE_VECTORS = Path(__file__).resolve().parents[2] / "ws" / "src" / "hil_bridge" / "vectors"

# From the source tree: the installed share folder has it only after a rebuild.
VECTORS = load_vectors("mcu_behaviour", directory=SOURCE_VECTORS)
CASES: list[dict[str, Any]] = VECTORS["cases"]


class McuUnderTest(Protocol):
    """An MCU in its power-on state, driven line by line."""

    def exchange(self, lines: list[str]) -> list[str]:
        """Send ``lines`` (without line endings) at once; every line the MCU wrote since the last call."""

    def after_telemetry_period(self) -> list[str]:
        """Let one telemetry period pass; every line the MCU wrote meanwhile."""


class McuWithPins(McuUnderTest, Protocol):
    """An MCU whose time can pass idle and whose motor pins can be seen."""

    def wait(self, seconds: float) -> list[str]:
        """Let ``seconds`` pass with no input; every line the MCU wrote meanwhile."""

    def motor_enables(self) -> tuple[float, float]:
        """The enable duty of both wheels as the signal link shows them (0 = off)."""


def replies(output: list[str]) -> list[str]:
    """The lines that answer requests (telemetry is sent on a timer, not as a reply)."""
    return [line for line in output if not line.startswith("TL")]


def check_case(mcu: McuUnderTest, case: dict[str, Any]) -> None:
    """Run one vector case and assert what it expects."""
    assert replies(mcu.exchange(["HBB,0"])) == ["HBB,0"]  # the harness's heartbeat, not part of the case
    got = replies(mcu.exchange(case["send"]))
    if "expect" in case:
        assert got == case["expect"]
    else:
        assert len(got) == len(case["expect_prefix"]), got
        for line, prefix in zip(got, case["expect_prefix"], strict=True):
            assert line.startswith(prefix), (line, prefix)
    sent = mcu.after_telemetry_period()
    for expected in case.get("telemetry", []):
        assert [line for line in sent if line.startswith(expected[:3])] == [expected]


def check_heartbeat_loss(mcu: McuWithPins, *, timeout: float = 1.5, margin: float = 0.2) -> None:
    """The heartbeat watchdog, seen from outside: motors stop after ``timeout`` without HBB.

    Running motors keep running while heartbeats are recent; ``timeout`` (+ ``margin``)
    after the last one the motor pins are off, one ``ERR,heartbeat lost`` was sent and
    TL1 reports zero; a DRV is then refused until the next HBB, after which it drives.
    """
    assert replies(mcu.exchange(["HBB,0", "DRV200,200"])) == ["HBB,0"]
    mcu.wait(0.1)
    assert min(mcu.motor_enables()) > 0, "the motors did not start"
    before = mcu.wait(timeout - 0.3)
    assert "ERR,heartbeat lost" not in before, "the watchdog fired early"
    assert min(mcu.motor_enables()) > 0, "the motors stopped before the timeout"
    after = mcu.wait(0.3 + margin)
    assert replies(after) == ["ERR,heartbeat lost"], f"no heartbeat-loss error: {replies(after)}"
    assert mcu.motor_enables() == (0, 0), f"motors still driven: {mcu.motor_enables()}"
    assert [line for line in after if line.startswith("TL1")][-1] == "TL10,0"
    mcu.exchange(["DRV100,100"])
    mcu.wait(0.1)
    assert mcu.motor_enables() == (0, 0), "a DRV drove the motors with the heartbeat lost"
    assert replies(mcu.exchange(["HBB,1", "DRV100,100"])) == ["HBB,1"]
    mcu.wait(0.1)
    assert min(mcu.motor_enables()) > 0, "the motors did not come back after a heartbeat"


# --- the radio relay (DESIGN.md "Radio link") ---------------------------------------------

#: Lines a radio module and a control loop exchange through the MCU (built with the
#: radio codec, so they are what the module and the loop really write).
RTX_LINES = [
    encode_radio(RadioSend(None, bytes.fromhex("01AB"))),
    encode_radio(RadioSend(7, b"hi")),
    encode_radio(RadioSend(12, bytes(range(48)))),  # the longest payload
]
RADIO_LINES = [
    encode_radio(RadioStatus("LISTEN", 16, 0)),
    encode_radio(RadioReceive(3, -61, bytes.fromhex("00FF"))),
    encode_radio(RadioReceive(4095, -128, bytes(range(48)))),
]
LOST_LINE = "RST,LOST,0,0"
NO_RADIO = "ERR,no radio"
#: Time for a line to cross the MCU both ways, with room (the firmware polls its bridge
#: every 2 ms, and 130 bytes take 34 ms at 38400 baud).
RELAY_S = 0.15


class McuWithRadio(McuWithPins, Protocol):
    """An MCU with a radio link the test speaks as the radio module."""

    def radio_send(self, lines: list[str]) -> None:
        """Write ``lines`` to the MCU's radio link (framed as the module frames them)."""

    def radio_send_bytes(self, data: bytes) -> None:
        """Write raw bytes to the radio link."""

    def radio_received(self) -> list[str]:
        """Every whole line the MCU wrote to its radio link since the last call."""

    def radio_counters(self) -> dict[str, int] | None:
        """The MCU's radio counters, or None where they cannot be seen from outside."""


def _not_telemetry(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith("TL")]


def check_rtx_relayed(mcu: McuWithRadio) -> None:
    """RTX lines from the command link reach the radio link unchanged, in order, with no reply."""
    assert replies(mcu.exchange(["HBB,0", *RTX_LINES])) == ["HBB,0"]
    mcu.wait(RELAY_S)
    assert mcu.radio_received() == RTX_LINES
    counters = mcu.radio_counters()
    if counters is not None:
        assert counters["radio_tx"] == len(RTX_LINES)
        assert counters["radio_tx_dropped"] == 0


def check_radio_lines_relayed(mcu: McuWithRadio) -> None:
    """RRX and RST lines from the radio link reach the command link unchanged, in order."""
    mcu.exchange(["HBB,0"])
    mcu.radio_send(RADIO_LINES)
    got = replies(mcu.wait(RELAY_S))
    assert got == RADIO_LINES
    assert mcu.radio_received() == []
    counters = mcu.radio_counters()
    if counters is not None:
        assert (counters["radio_rx"], counters["radio_status"]) == (2, 1)


def check_radio_junk_dropped(mcu: McuWithRadio) -> None:
    """Other ids, non-protocol and broken lines from the radio are dropped; the next good one passes."""
    mcu.exchange(["HBB,0"])
    mcu.radio_send(["XYZ,1", "HBB,5", "DRV100,100"])  # well framed, not for the radio link
    # Broken: empty, not ASCII, too long, and a bad check (in plain mode an RRX with an
    # unreadable payload, which the relay does not read: it passes).
    mcu.radio_send_bytes(b"\n\xff\xfe\n" + b"R" * 200 + b"\n")
    mcu.wait(RELAY_S)
    good = encode_radio(RadioReceive(1, -50, b"\xab"))
    mcu.radio_send([good])
    assert replies(mcu.wait(RELAY_S)) == [good]
    mcu.wait(0.2)
    assert mcu.motor_enables() == (0, 0), "a DRV from the radio drove the motors"
    counters = mcu.radio_counters()
    if counters is not None:
        assert counters["radio_dropped.unknown_id"] == 1
        assert counters["radio_unexpected"] == 2  # HBB, DRV
        broken = ("empty", "not_ascii", "bad_check")
        assert sum(counters[f"radio_dropped.{reason}"] for reason in broken) == 2
        assert counters["radio_dropped.too_long"] == 1
        assert counters["radio_rx"] == 1


def check_no_radio_refuses_rtx(mcu: McuUnderTest) -> None:
    """An MCU without a radio link answers every RTX with ``ERR,no radio`` and runs on."""
    got = replies(mcu.exchange(["HBB,0", RTX_LINES[0], "HBB,1", RTX_LINES[1]]))
    assert got == ["HBB,0", NO_RADIO, "HBB,1", NO_RADIO]
    assert LOST_LINE not in mcu.after_telemetry_period()


def _alive(mcu: McuWithRadio, seconds: float, *, stamp: int = 0) -> list[str]:
    """Let ``seconds`` pass with a heartbeat every 0.5 s (the watchdog stays quiet)."""
    out: list[str] = []
    for k in range(round(seconds / 0.5)):
        out += mcu.exchange([f"HBB,{stamp + k}"])
        out += mcu.wait(max(0.0, 0.5 - 0.02))
    return out


def check_radio_lost_and_back(mcu: McuWithRadio) -> None:
    """No RST for 3 s: one ``RST,LOST,0,0``, RTX refused; the next RST ends it and is relayed."""
    early = _alive(mcu, 2.5)
    assert LOST_LINE not in early, "the radio counted as lost before 3 s"
    late = _alive(mcu, 1.0, stamp=10)
    assert _not_telemetry(late).count(LOST_LINE) == 1, late
    assert "ERR,heartbeat lost" not in early + late
    assert LOST_LINE not in _alive(mcu, 1.0, stamp=20), "LOST sent twice"
    assert replies(mcu.exchange(["HBB,30", RTX_LINES[0]])) == ["HBB,30", NO_RADIO]
    mcu.wait(RELAY_S)
    assert mcu.radio_received() == [], "an RTX went out to a lost radio"
    status = encode_radio(RadioStatus("LISTEN", 16, 0))
    mcu.radio_send([status])
    assert replies(mcu.wait(RELAY_S)) == [status]
    assert replies(mcu.exchange(["HBB,31", RTX_LINES[1]])) == ["HBB,31"]
    mcu.wait(RELAY_S)
    assert mcu.radio_received() == [RTX_LINES[1]]
    counters = mcu.radio_counters()
    if counters is not None:
        assert counters["radio_losses"] == 1
        assert counters["radio_lost"] == 0
        assert counters["radio_tx_dropped"] == 1


def check_relay_leaves_telemetry_and_watchdog_alone(mcu: McuWithRadio) -> None:
    """Relaying both ways for a second: telemetry at its rate, motors driven, every line through;
    then the heartbeat watchdog trips on time although the radio keeps talking."""
    assert replies(mcu.exchange(["HBB,0", "DRV150,150"])) == ["HBB,0"]
    sent_rx: list[str] = []
    sent_tx: list[str] = []
    out: list[str] = []
    for k in range(50):  # 1 s: a radio line and an RTX every 20 ms, a heartbeat every 0.25 s
        rx = encode_radio(RadioReceive(k, -40 - k % 50, bytes([k, 255 - k])))
        tx = encode_radio(RadioSend(k % 8, bytes([k])))
        mcu.radio_send([rx] if k % 10 else [encode_radio(RadioStatus("LISTEN", 16, k))])
        sent_rx.append(rx if k % 10 else encode_radio(RadioStatus("LISTEN", 16, k)))
        lines = [tx] if k % 12 else [f"HBB,{k}", tx]
        out += _write_and_wait(mcu, lines, 0.02)
        sent_tx.append(tx)
    out += mcu.wait(RELAY_S)
    assert min(mcu.motor_enables()) > 0, "the motors stopped while relaying"
    assert [line for line in out if line.startswith(("RRX", "RST"))] == sent_rx
    assert mcu.radio_received() == sent_tx
    assert 9 <= sum(line.startswith("TL1") for line in out) <= 13, "telemetry off its 10 Hz"
    assert not [line for line in out if line.startswith("ERR")], out
    # No heartbeat from now on; the radio keeps talking. The last one was at 0.96 s.
    after: list[str] = []
    for k in range(90):  # 1.8 s
        mcu.radio_send([encode_radio(RadioStatus("SEND", 15, k))])
        after += mcu.wait(0.02)
    assert [line for line in after if line.startswith("ERR")] == ["ERR,heartbeat lost"]
    assert mcu.motor_enables() == (0, 0), "the watchdog did not stop the motors"


def _write_and_wait(mcu: McuWithRadio, lines: list[str], seconds: float) -> list[str]:
    """Write ``lines`` to the command link, then let ``seconds`` pass."""
    frame = getattr(mcu, "frame", None)
    port = getattr(mcu, "port", None)
    assert frame is not None and port is not None
    port.write(frame(lines))
    return mcu.wait(seconds)


def check_radio_flood_starves_nothing(mcu: McuWithRadio) -> None:
    """A module flooding the radio link cannot hold up heartbeats, telemetry or RTX."""
    assert replies(mcu.exchange(["HBB,0", "DRV100,100"])) == ["HBB,0"]
    # 25 lines of 111 bytes every 0.2 s: more than 115200 baud carries (and far more
    # than the command link's 38400), without filling the pty the test writes to.
    flood = [encode_radio(RadioReceive(1, -50, bytes(range(48))))] * 25
    out: list[str] = []
    echoes: list[str] = []
    for k in range(1, 6):  # 1 s under the flood
        mcu.radio_send(flood)
        got = mcu.exchange([f"HBB,{k}", RTX_LINES[0]]) + mcu.wait(0.18)
        # The echo may queue behind relayed lines: the MCU's output queue (256 bytes)
        # takes 67 ms to drain at 38400 baud, longer than an exchange waits.
        echoes += [line for line in got if line.startswith("HBB")]
        out += got
    assert echoes == [f"HBB,{k}" for k in range(1, 6)]
    assert "ERR,heartbeat lost" not in out
    assert sum(line.startswith("TL1") for line in out) >= 8
    allowed = {flood[0], *(f"HBB,{k}" for k in range(6))}
    assert all(line in allowed or line.startswith("TL") for line in out), "a line was cut or garbled"
    assert any(line == flood[0] for line in out), "nothing of the flood came through"
    mcu.wait(RELAY_S)
    assert mcu.radio_received() == [RTX_LINES[0]] * 5
    assert min(mcu.motor_enables()) > 0
