"""One exchange period of the signal link (hil_bridge.core.signal_exchange), over a real pty."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from hil_bridge.core.pty_link import PtyPair
from hil_bridge.core.serial_link import SerialLink
from hil_bridge.core.signal_exchange import SignalExchange
from hil_bridge.core.signal_protocol import FrameDecoder, FrameEncoder, SignalLayout
from hil_devices.core.devices import DeviceConfig, DeviceInstance, Direction, PinMode, SignalSpec, SignalType


def spec(name: str, direction: Direction) -> SignalSpec:
    return SignalSpec(
        name=name,
        direction=direction,
        type=SignalType.INTEGER,
        min=0.0,
        max=255.0,
        mode=PinMode.PWM,
        default=0.0,
    )


LAYOUT = SignalLayout(
    [
        DeviceInstance(
            "dev",
            DeviceConfig("dev", (spec("pwm", Direction.INPUT), spec("distance", Direction.OUTPUT))),
        )
    ]
)


@pytest.fixture
def pty() -> Iterator[PtyPair]:
    pair = PtyPair()
    yield pair
    pair.close()


def read_for(pty: PtyPair, seconds: float = 0.5) -> bytes:
    data = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        data += pty.read()
        time.sleep(0.01)
    return data


def test_a_step_decodes_what_came_and_answers_with_the_latest_outputs(pty: PtyPair) -> None:
    link = SerialLink(pty.path, baud=115200)
    exchange = SignalExchange(LAYOUT, link)
    try:
        exchange.step(0.0)  # opens the port
        assert link.is_open
        exchange.set_outputs([("dev", "distance", 42.0)])
        pty.write(FrameEncoder(LAYOUT.inputs).encode([200.0]))
        result = exchange.step(0.005)
        deadline = time.monotonic() + 2.0
        frames = list(result.frames)
        while not frames and time.monotonic() < deadline:
            frames += exchange.step(0.01).frames
        assert [list(f.values) for f in frames] == [[200.0]]
        assert exchange.latest is not None
        sent = FrameDecoder(LAYOUT.outputs).feed(read_for(pty))
        assert sent and list(sent[-1].values) == [42.0]
    finally:
        link.close()


def test_the_frame_goes_out_in_the_step_whose_poll_opens_the_port(pty: PtyPair) -> None:
    link = SerialLink(pty.path, baud=115200)
    exchange = SignalExchange(LAYOUT, link)
    try:
        assert not link.is_open
        result = exchange.step(0.0)
        assert link.is_open
        assert result.sent
        assert exchange.frames_sent == 1
        assert len(FrameDecoder(LAYOUT.outputs).feed(read_for(pty))) == 1
    finally:
        link.close()
