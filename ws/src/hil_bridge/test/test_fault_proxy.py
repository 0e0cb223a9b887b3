"""Through the fault proxy, over real ptys: checked mode catches every corruption,
plain mode resynchronises."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hil_bridge.core.fault_proxy import FaultProxy
from hil_bridge.core.faults import FaultModel
from hil_bridge.core.pty_link import PtyPair
from hil_bridge.core.serial_link import SerialLink
from hil_bridge.core.signal_protocol import Frame, FrameDecoder, FrameEncoder, SignalLayout
from hil_devices.core.devices import load_device_set
from hil_devices.core.library import load_device_library

CONFIG = Path(__file__).resolve().parents[2] / "hil_devices" / "config"
SLOTS = SignalLayout(
    load_device_set(CONFIG / "demo_robot_devices.yaml", load_device_library([CONFIG / "devices"]))
).outputs


class Rig:
    """A device pty, the proxy in front of it, and a client on the faulty port."""

    def __init__(self, tmp_path: Path, model: FaultModel) -> None:
        self.device = PtyPair(tmp_path / "device")
        self.proxy = FaultProxy(str(tmp_path / "device"), tmp_path / "faulty", model)
        self.proxy.start()
        self.client = SerialLink(str(tmp_path / "faulty"), baud=115200)
        self.received = bytearray()
        self.sent_total = 0
        wait_for(lambda: self.client.poll() == b"" and self.client.is_open and self.proxy.upstream.is_open)

    def send(self, data: bytes) -> None:
        """Write as the device would, collecting what comes out meanwhile."""
        self.sent_total += len(data)
        view = memoryview(data)
        while view:
            written = self.device.write(bytes(view[:1024]))
            view = view[written:]
            self.received += self.client.poll()

    def drain(self) -> bytes:
        """Everything that came through, once the proxy has passed all it was given."""

        def passed_all() -> bool:
            self.received += self.client.poll()
            down = self.proxy.down
            return down.stats.bytes_in >= self.sent_total and down.next_due() is None

        wait_for(passed_all)
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < 0.2:  # the last bytes crossing the tty
            data = self.client.poll()
            if data:
                self.received += data
                quiet_since = time.monotonic()
            time.sleep(0.005)
        return bytes(self.received)

    def close(self) -> None:
        self.client.close()
        self.proxy.stop()
        self.device.close()


def wait_for(condition: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.005)
    raise AssertionError("condition not met within the timeout")


@pytest.fixture
def rig_factory(tmp_path: Path) -> Iterator[object]:
    rigs: list[Rig] = []

    def make(model: FaultModel) -> Rig:
        rig = Rig(tmp_path, model)
        rigs.append(rig)
        return rig

    yield make
    for rig in rigs:
        rig.close()


def rows(count: int) -> list[list[float]]:
    return [
        [i % 2, (i // 2) % 2, float(i % 200), 1.0 + (i % 40) / 10, i % 1024, 500, 600, 700, float(i % 360)]
        for i in range(count)
    ]


def test_checked_mode_detects_every_injected_corruption(rig_factory: object) -> None:
    rig: Rig = rig_factory(FaultModel(corrupt=0.004, seed=11))  # type: ignore[operator]
    encoder = FrameEncoder(SLOTS, checked=True)
    sent = [encoder.encode(row) for row in rows(600)]
    rig.send(b"".join(sent))
    received = rig.drain()

    decoder = FrameDecoder(SLOTS, checked=True)
    frames = decoder.feed(received)
    reference = {(f.seq, f.raw) for f in FrameDecoder(SLOTS, checked=True).feed(b"".join(sent))}
    assert rig.proxy.down.stats.corrupted > 10, "the proxy must really have corrupted bytes"
    assert all((f.seq, f.raw) in reference for f in frames), "a corrupted frame was accepted"
    # Every frame between the first and the last intact one that did not arrive
    # intact is counted as lost (before the first and after the last, no sequence
    # gap can show a loss).
    index = {(f.seq, f.raw): i for i, f in enumerate(FrameDecoder(SLOTS, checked=True).feed(b"".join(sent)))}
    first, last = index[(frames[0].seq, frames[0].raw)], index[(frames[-1].seq, frames[-1].raw)]
    assert decoder.stats.lost == (last - first + 1) - len(frames)
    assert len(frames) < len(sent)


def test_plain_mode_resynchronises_after_lost_and_corrupted_bytes(rig_factory: object) -> None:
    rig: Rig = rig_factory(FaultModel(drop=0.003, corrupt=0.003, seed=5))  # type: ignore[operator]
    encoder = FrameEncoder(SLOTS)
    faulty = [encoder.encode(row) for row in rows(400)]
    rig.send(b"".join(faulty))
    rig.drain()
    dropped, corrupted = rig.proxy.down.stats.dropped, rig.proxy.down.stats.corrupted
    assert dropped > 0 and corrupted > 0

    # The line heals; every frame after the healing must decode again.
    rig.proxy.down.model = FaultModel()
    clean = [encoder.encode(row) for row in rows(50)]
    rig.send(b"".join(clean))
    frames: list[Frame] = FrameDecoder(SLOTS).feed(rig.drain())
    expected = FrameDecoder(SLOTS).feed(b"".join(clean))
    # A false start left by the faults may swallow the first clean frame (plain mode
    # has no CRC); from the second on, all decode.
    assert [f.raw for f in frames[-49:]] == [f.raw for f in expected[-49:]]
    # 0.6 % of bytes faulty on 28-byte frames hits about 17 % of the faulty frames.
    assert len(frames) > 0.7 * 400 + 49
