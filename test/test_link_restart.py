"""A peer restarting mid-stream. On the pure cores: the control loop and an MCU (the virtual
MCU or the firmware's core, host-built) on a simulated clock, in plain and checked mode;
the signal link between the virtual MCU and the bridge's codec. Live: the control loop
and virtual MCU nodes in checked mode over real ptys, each restarted in turn.

A restarted peer numbers its checked lines from 0 again; the other end must take them
after at most ``RESYNC_AFTER`` lines (DESIGN.md "Sequence rule"), not drop them as
repeats for as long as the peer had been running.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist

from hil_bridge.core.fault_proxy import FaultProxy
from hil_bridge.core.faults import FaultModel
from hil_bridge.core.sequence import RESYNC_AFTER
from hil_bridge.core.signal_protocol import FrameDecoder, FrameEncoder, SignalLayout
from hil_common import qos
from hil_devices.core.devices import load_device_set
from hil_devices.core.library import load_device_library
from hil_devices.core.telemetry import TelemetrySchema
from hil_mcu.core.virtual_mcu import McuConfig, VirtualMcu
from hil_msgs.msg import Telemetry
from robot_control.core.kinematics import DriveGeometry, twist_to_commands
from robot_control.core.loop import ControlLoop, LoopConfig
from support.firmware_host import HostMcu
from support.ros_probe import RosProbe

CONFIG = Path(__file__).resolve().parents[1] / "ws" / "src" / "hil_devices" / "config"
SCHEMA = TelemetrySchema.from_yaml(CONFIG / "telemetry.yaml")
LAYOUT = SignalLayout(
    load_device_set(CONFIG / "demo_robot_devices.yaml", load_device_library([CONFIG / "devices"]))
)
FRAME = 1 / 30
START = 1000.0
TWIST = (0.2, 0.5)
MOVING = twist_to_commands(*TWIST, DriveGeometry())
#: How long each peer runs before the restart: long enough that the stale sequence
#: would hold the link for many seconds (hundreds of lines each way).
RUN_BEFORE = 60.0
#: Generous bound on the recovery: a few heartbeat periods and watchdog timeouts; the
#: mechanism itself needs RESYNC_AFTER lines.
RECOVERY_BOUND = 4.0
#: Frames (30 Hz) the live loop runs before its peer restarts: 2 s, ten heartbeats
#: and the drive lines one way, telemetry and echoes the other, so a receiver stuck
#: on the old numbers would drop far more than the RESYNC_AFTER - 1 the tests allow.
LIVE_FRAMES = 60


class Mcu(Protocol):
    """The MCU end as this bench drives it."""

    def feed(self, data: bytes, now: float) -> None: ...
    def tick(self, now: float) -> bytes: ...
    def motors(self) -> tuple[int, int]: ...
    def taken(self) -> int: ...
    def decoder_stats(self) -> dict[str, int] | None: ...


class PythonMcu:
    """The virtual MCU core (hil_sim)."""

    def __init__(self, now: float, *, checked: bool) -> None:
        self.core = VirtualMcu(McuConfig(layout=LAYOUT, schema=SCHEMA, checked=checked), start=now)

    def feed(self, data: bytes, now: float) -> None:
        self.core.feed_command(data, now)

    def tick(self, now: float) -> bytes:
        self.core.tick(now)
        return self.core.take_command_output()

    def motors(self) -> tuple[int, int]:
        return (0, 0) if self.core.heartbeat_lost else self.core.motor_commands

    def taken(self) -> int:
        return self.core.stats.drv_accepted + self.core.stats.hbb_echoed

    def decoder_stats(self) -> dict[str, int] | None:
        stats = self.core.command_stats
        return {"duplicate": stats.dropped["duplicate"], "resyncs": stats.resyncs}


class FirmwareMcu:
    """The firmware's behaviour core (mcu_core.c, host build) on a millisecond clock."""

    def __init__(self, now: float, *, checked: bool) -> None:
        self.core = HostMcu(checked=checked, start_ms=self.ms(now))

    @staticmethod
    def ms(now: float) -> int:
        return round(now * 1000) & 0xFFFFFFFF

    def feed(self, data: bytes, now: float) -> None:
        self.core.feed(data, self.ms(now))

    def tick(self, now: float) -> bytes:
        self.core.tick(self.ms(now))
        return self.core.take()

    def motors(self) -> tuple[int, int]:
        state = self.core.state()
        return (0, 0) if state["heartbeat_lost"] else (state["left"], state["right"])

    def taken(self) -> int:
        counters = self.core.counters()
        return counters["drv_accepted"] + counters["hbb_echoed"]

    def decoder_stats(self) -> dict[str, int] | None:
        return None  # the firmware's decoder counters are tested in firmware/test


MCUS: dict[str, Callable[..., Mcu]] = {"virtual": PythonMcu, "firmware": FirmwareMcu}


class Bench:
    """The loop's frames at 30 Hz; what one end writes reaches the other in the next frame."""

    def __init__(self, make_mcu: Callable[..., Mcu], *, checked: bool) -> None:
        self.make_mcu, self.checked = make_mcu, checked
        self.now = START
        self.loop = self.new_loop()
        self.mcu = make_mcu(self.now, checked=checked)
        self.to_loop = b""
        self.restarted_at = self.now
        self.taken_before = 0

    def new_loop(self) -> ControlLoop:
        return ControlLoop(LoopConfig(schema=SCHEMA, checked=self.checked), {}, start=self.now)

    def step(self) -> None:
        now = self.now
        self.loop.cmd_vel(*TWIST, now)
        result = self.loop.frame(now, [(now, self.to_loop)] if self.to_loop else [])
        self.mcu.feed(result.write, now)
        self.to_loop = self.mcu.tick(now)
        self.now = now + FRAME

    def restart_mcu(self) -> None:
        """The MCU resets: a new one on the same port, which the loop keeps open."""
        self.mcu = self.make_mcu(self.now, checked=self.checked)
        self._restarted()

    def restart_loop(self) -> None:
        """control_loop restarts: a new loop, and a new encoder at sequence 0."""
        self.loop = self.new_loop()
        self._restarted()

    def _restarted(self) -> None:
        self.restarted_at = self.now
        self.taken_before = self.mcu.taken()

    def healthy(self) -> bool:
        """Since the restart, each end took the other's lines; the MCU drives what the loop commands."""
        heard = self.loop.mcu.last_heard
        return (
            heard is not None
            and heard >= self.restarted_at
            and self.mcu.taken() > self.taken_before
            and "mcu" not in self.loop.failsafes.active
            and self.mcu.motors() == MOVING
        )

    def run_until_healthy(self, limit: float) -> float:
        """Seconds from the restart until :meth:`healthy` (``limit`` if never)."""
        while self.now - self.restarted_at < limit:
            self.step()
            if self.healthy():
                return self.now - self.restarted_at
        return limit

    def run(self, seconds: float) -> None:
        for _ in range(round(seconds / FRAME)):
            self.step()


@pytest.mark.parametrize("checked", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("mcu", sorted(MCUS))
def test_loop_hears_a_reset_mcu_again_within_a_few_lines(mcu: str, checked: bool) -> None:
    bench = Bench(MCUS[mcu], checked=checked)
    bench.run(RUN_BEFORE)
    assert bench.healthy()
    before = bench.loop.decoder.stats.dropped["duplicate"]
    bench.restart_mcu()
    took = bench.run_until_healthy(RUN_BEFORE)
    assert took < RECOVERY_BOUND, f"mcu failsafe held {took:.1f} s after an MCU reset"
    stats = bench.loop.decoder.stats
    assert stats.dropped["duplicate"] - before <= RESYNC_AFTER - 1
    assert stats.resyncs == (1 if checked else 0)


@pytest.mark.parametrize("checked", [False, True], ids=["plain", "checked"])
@pytest.mark.parametrize("mcu", sorted(MCUS))
def test_mcu_follows_a_restarted_loop_within_a_few_lines(mcu: str, checked: bool) -> None:
    bench = Bench(MCUS[mcu], checked=checked)
    bench.run(RUN_BEFORE)
    assert bench.healthy()
    before = bench.mcu.decoder_stats()
    bench.restart_loop()
    took = bench.run_until_healthy(RUN_BEFORE)
    assert took < RECOVERY_BOUND, f"the MCU ignored the restarted loop for {took:.1f} s"
    after = bench.mcu.decoder_stats()
    if before is not None and after is not None:
        assert after["duplicate"] - before["duplicate"] <= RESYNC_AFTER - 1
        assert after["resyncs"] == (1 if checked else 0)


@pytest.mark.parametrize("mcu", sorted(MCUS))
def test_both_ends_restarting_again_and_again_recover_every_time(mcu: str) -> None:
    bench = Bench(MCUS[mcu], checked=True)
    bench.run(10.0)
    for round_ in range(6):
        if round_ % 3 != 1:
            bench.restart_mcu()
        if round_ % 3 != 0:
            bench.restart_loop()
        took = bench.run_until_healthy(30.0)
        assert took < RECOVERY_BOUND, f"round {round_}: held {took:.1f} s"
        bench.run(5.0 + 3 * round_)


@pytest.mark.parametrize("restarting", ["virtual_mcu", "bridge"])
def test_checked_signal_link_takes_frames_again_within_a_few_after_a_restart(restarting: str) -> None:
    config = McuConfig(layout=LAYOUT, schema=SCHEMA, checked=True)
    mcu = VirtualMcu(config, start=0.0)
    bridge_in = FrameDecoder(LAYOUT.inputs, checked=True)
    bridge_out = FrameEncoder(LAYOUT.outputs, checked=True)
    sensors = [slot.spec.default for slot in LAYOUT.outputs]
    now = 0.0

    def exchange(frames: int) -> None:
        nonlocal now
        for _ in range(frames):
            now += config.signal_period
            mcu.tick(now)
            bridge_in.feed(mcu.take_signal_output())
            mcu.feed_signal(bridge_out.encode(sensors), now)

    # 100 frames: sequence 0 is then 100 behind (of 256), as far as it can be.
    exchange(100)
    if restarting == "virtual_mcu":
        mcu = VirtualMcu(config, start=now)
        stats = bridge_in.stats
    else:
        bridge_out = FrameEncoder(LAYOUT.outputs, checked=True)
        stats = mcu.signal_stats
    taken_before, dropped_before = stats.frames, stats.duplicates
    exchange(RESYNC_AFTER + 20)
    assert stats.duplicates - dropped_before == RESYNC_AFTER - 1
    assert stats.frames - taken_before == 21
    assert stats.resyncs == 1


# --- live: the nodes over real ptys, checked mode ----------------------------------------------

#: The loop's MCU heartbeat timeout (s) in the live tests.
LIVE_MCU_TIMEOUT = 0.6


def loop_node(port: Path) -> list[str]:
    args = [sys.executable, "-m", "robot_control.control_loop_node", "--ros-args"]
    for param in (
        f"port:={port}",
        "checked:=true",
        f"mcu_heartbeat_timeout:={LIVE_MCU_TIMEOUT}",
        "mcu_heartbeat_period:=0.2",
        "diagnostics_period:=0.1",
        "station_heartbeat_timeout:=600.0",
    ):
        args += ["-p", param]
    return args


def mcu_node(folder: Path) -> list[str]:
    args = [sys.executable, "-m", "hil_mcu.virtual_mcu_node", "--ros-args"]
    for param in (f"command_port:={folder / 'cmd'}", f"signal_port:={folder / 'sig'}", "checked:=true"):
        args += ["-p", param]
    return args


@pytest.fixture
def probe() -> Iterator[RosProbe]:
    probe = RosProbe("link_restart_test")
    probe.record(Telemetry, "telemetry", qos.SENSOR)
    probe.record(DiagnosticArray, "diagnostics", qos.COMMAND)
    yield probe
    probe.close()


def latest_status(probe: RosProbe, prefix: str) -> tuple[str, dict[str, str]]:
    """The message and values of the newest status whose name starts with ``prefix``."""
    for array in reversed(probe.messages("diagnostics")):
        if array.status and array.status[0].name.startswith(prefix):
            return array.status[0].message, {kv.key: kv.value for kv in array.status[0].values}
    return "", {}


def latest_diagnostics(probe: RosProbe, prefix: str) -> dict[str, str]:
    """The values of the newest status whose name starts with ``prefix``."""
    return latest_status(probe, prefix)[1]


class Driver:
    """Publishes a twist and tells whether the MCU reports the kinematics' commands in TL1."""

    def __init__(self, probe: RosProbe) -> None:
        self.probe = probe
        self.cmd_vel = probe.publisher(Twist, "cmd_vel", qos.COMMAND)
        self.twist = Twist()
        self.twist.linear.x, self.twist.angular.z = TWIST
        left, right = MOVING
        self.expected = [float(right), float(left)]  # TL1 is right first

    def driving(self, after: int = 0) -> bool:
        """The newest TL1 among the telemetry messages from index ``after`` on shows the commands."""
        self.cmd_vel.publish(self.twist)
        for message in reversed(self.probe.messages("telemetry")[after:]):
            if message.list_id == "TL1":
                return list(message.values) == self.expected
        return False


@pytest.mark.ros
def test_live_loop_hears_a_restarted_mcu_behind_an_open_port_again(
    tmp_path: Path, spawn: Any, probe: RosProbe
) -> None:
    # The proxy keeps the loop's port open while the MCU behind it restarts, as a
    # reset MCU on a USB serial adapter does: the loop's decoder is not reset.
    mcu = spawn(mcu_node(tmp_path), name="mcu")
    wait_for_path(tmp_path / "cmd")
    with FaultProxy(str(tmp_path / "cmd"), tmp_path / "cmd_proxy", FaultModel()) as proxy:
        proxy.start()
        spawn(loop_node(tmp_path / "cmd_proxy"), name="loop")
        driver = Driver(probe)
        probe.wait_for(driver.driving, timeout=30.0, what="TL1 shows the loop's commands")
        # A dozen lines or more each way (RESYNC_AFTER is 3): a receiver stuck on the
        # old numbers would drop as many.
        probe.wait_for(
            lambda: int(latest_diagnostics(probe, "control_loop").get("frames", "0")) > LIVE_FRAMES,
            timeout=30.0,
            what=f"the loop running for {LIVE_FRAMES} frames",
        )
        os.killpg(mcu.pid, signal.SIGKILL)
        mcu.wait()
        probe.wait_for(
            lambda: "mcu" in latest_diagnostics(probe, "control_loop").get("motors_held_by", ""),
            timeout=10.0,
            what="the mcu failsafe holding the motors",
        )
        dropped_before = int(latest_diagnostics(probe, "control_loop").get("dropped_duplicate", "0"))
        heard_before = len(probe.messages("telemetry"))
        spawn(mcu_node(tmp_path), name="mcu2")
        probe.wait_for(
            lambda: "mcu" not in latest_diagnostics(probe, "control_loop").get("motors_held_by", "mcu"),
            timeout=30.0,
            what="the mcu failsafe clearing after the MCU's restart",
        )
        probe.wait_for(lambda: driver.driving(heard_before), timeout=10.0, what="driving again")
        values = latest_diagnostics(probe, "control_loop")
        assert int(values.get("dropped_duplicate", "0")) - dropped_before <= RESYNC_AFTER - 1, values


@pytest.mark.ros
def test_live_mcu_follows_a_restarted_loop(tmp_path: Path, spawn: Any, probe: RosProbe) -> None:
    spawn(mcu_node(tmp_path), name="mcu")
    wait_for_path(tmp_path / "cmd")
    loop = spawn(loop_node(tmp_path / "cmd"), name="loop")
    driver = Driver(probe)
    probe.wait_for(driver.driving, timeout=30.0, what="TL1 shows the loop's commands")
    probe.wait_for(
        lambda: int(latest_diagnostics(probe, "control_loop").get("frames", "0")) > LIVE_FRAMES,
        timeout=30.0,
        what=f"the loop running for {LIVE_FRAMES} frames",
    )
    os.killpg(loop.pid, signal.SIGKILL)
    loop.wait()
    # The MCU's watchdog stops the motors, and its report says so. Motors at 0 alone
    # could be a report from before the loop drove: reports come late on a busy machine.
    probe.wait_for(
        lambda: (
            (status := latest_status(probe, "virtual_mcu"))[0].startswith("heartbeat lost")
            and status[1].get("motor_left") == "0"
        ),
        timeout=10.0,
        what="the MCU's watchdog stopping the motors",
    )
    before = latest_diagnostics(probe, "virtual_mcu")
    spawn(loop_node(tmp_path / "cmd"), name="loop2")
    # Reports arrive in order: a running MCU driving after the heartbeat-lost one is
    # the restarted loop's doing.
    probe.wait_for(
        lambda: (
            driver.driving()
            and (status := latest_status(probe, "virtual_mcu"))[0] == "running"
            and status[1].get("motor_left") == str(MOVING[0])
        ),
        timeout=30.0,
        what="the MCU driving the restarted loop's commands",
    )
    after = latest_diagnostics(probe, "virtual_mcu")
    dropped = int(after["command_dropped.duplicate"]) - int(before["command_dropped.duplicate"])
    assert dropped <= RESYNC_AFTER - 1, after
    assert int(after["command_resyncs"]) - int(before["command_resyncs"]) == 1, after


def wait_for_path(path: Path, timeout: float = 30.0) -> None:
    RosProbe.wait_for(path.exists, timeout=timeout, what=f"{path} created")
