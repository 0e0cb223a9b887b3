"""The control loop on a fake clock at 30 Hz, with a scripted MCU speaking the line protocol."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_bridge.core.line_protocol import (
    Command,
    Drive,
    ErrorReport,
    Heartbeat,
    LineDecoder,
    LineEncoder,
    Message,
    Relayed,
    Telemetry,
)
from hil_devices.core.telemetry import TelemetrySchema
from robot_control.core.behaviours import (
    Behaviour,
    BoardsBehaviour,
    LightBehaviour,
    PhotoresistorResponse,
    Sensors,
)
from robot_control.core.kinematics import DriveGeometry, twist_to_commands
from robot_control.core.loop import ControlLoop, FrameResult, LoopConfig
from robot_control.errors import RobotControlError

SRC = Path(__file__).resolve().parents[2]
SCHEMA = TelemetrySchema.from_yaml(SRC / "hil_devices" / "config" / "telemetry.yaml")
GEOMETRY = DriveGeometry()
FRAME = 1 / 30
START = 1000.0
#: Echo latency of the scripted MCU (s): its echo arrives this long after the frame that wrote the HBB.
LATENCY = 0.0123
TWIST = (0.2, 0.5)
MOVING = twist_to_commands(*TWIST, GEOMETRY)
TL2_NAMES = SCHEMA.lists["TL2"]


def tl2_values(ultrasonic_cm: float = 200.0, bumper: bool = False) -> tuple[float, ...]:
    fields = dict.fromkeys(TL2_NAMES, 0.0) | {
        "ultrasonic_cm": ultrasonic_cm,
        "bumper_left": float(bumper),
        "heading_deg": 45.0,
    }
    return tuple(fields[name] for name in TL2_NAMES)


@dataclass
class Frame:
    """One frame as the rig saw it: time, the loop's result, the messages it wrote."""

    now: float
    result: FrameResult
    written: list[Message]

    @property
    def drives(self) -> list[Drive]:
        return [m for m in self.written if isinstance(m, Drive)]

    @property
    def heartbeats(self) -> list[Heartbeat]:
        return [m for m in self.written if isinstance(m, Heartbeat)]


@dataclass
class Rig:
    """A ControlLoop on a fake clock, a scripted MCU on the other end of its port, a teleop.

    The MCU (when ``mcu_echoes``) echoes every HBB the loop wrote, ``LATENCY`` after the
    frame that wrote it; the echo reaches the loop in the next frame, stamped with its
    arrival. ``teleop`` sends ``twist`` on cmd_vel just before every frame.
    """

    config: LoopConfig = field(default_factory=lambda: LoopConfig(schema=SCHEMA))
    behaviours: dict[str, Behaviour] = field(default_factory=lambda: {"boards": BoardsBehaviour()})
    mcu_echoes: bool = True
    teleop: bool = True
    twist: tuple[float, float] = TWIST
    frame_index: int = 0
    loop: ControlLoop = field(init=False)
    mcu_encoder: LineEncoder = field(init=False)
    mcu_decoder: LineDecoder = field(init=False)
    pending: list[tuple[float, bytes]] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.loop = ControlLoop(self.config, dict(self.behaviours), start=START)
        self.mcu_encoder = LineEncoder(checked=self.config.checked)
        self.mcu_decoder = LineDecoder(schema=SCHEMA, checked=self.config.checked, relay_ids=("RTX",))

    @property
    def now(self) -> float:
        """Time of the next frame."""
        return START + self.frame_index * FRAME

    def send(self, *messages: Message, at: float | None = None) -> None:
        """The MCU writes ``messages``; they arrive at ``at`` (default: just before the next frame)."""
        arrival = self.now - 0.001 if at is None else at
        self.pending.append((arrival, b"".join(self.mcu_encoder.encode(m) for m in messages)))

    def send_bytes(self, data: bytes, at: float | None = None) -> None:
        self.pending.append((self.now - 0.001 if at is None else at, data))

    def step(self) -> Frame:
        now = self.now
        if self.teleop:
            self.loop.cmd_vel(*self.twist, now - 0.002)
        received, self.pending = self.pending, []
        result = self.loop.frame(now, received)
        written = self.mcu_decoder.feed(result.write)
        frame = Frame(now, result, written)
        if self.mcu_echoes:
            for heartbeat in frame.heartbeats:
                self.send(heartbeat, at=now + LATENCY)
        self.frames.append(frame)
        self.frame_index += 1
        return frame

    def run(self, seconds: float) -> list[Frame]:
        return [self.step() for _ in range(round(seconds / FRAME))]


def commands(frames: list[Frame]) -> list[tuple[int, int]]:
    return [frame.result.command for frame in frames]


def events(frames: list[Frame]) -> list[str]:
    return [event for frame in frames for event in frame.result.events]


# --- driving from cmd_vel -------------------------------------------------------------------


@pytest.mark.parametrize("twist", [(0.0, 0.0), (0.3, 0.0), (0.2, 0.5), (-0.1, -1.0), (1.0, 3.0)])
def test_cmd_vel_gives_the_drive_of_the_kinematics(twist: tuple[float, float]) -> None:
    rig = Rig(twist=twist)
    frame = rig.step()
    expected = twist_to_commands(*twist, GEOMETRY)
    assert frame.drives == [Drive(*expected)]
    assert frame.result.command == expected
    assert frame.result.sent_drive


def test_new_cmd_vel_is_written_in_the_next_frame() -> None:
    rig = Rig()
    rig.run(0.5)
    rig.twist = (-0.3, 0.2)
    frame = rig.step()
    assert frame.drives == [Drive(*twist_to_commands(-0.3, 0.2, GEOMETRY))]


@pytest.mark.parametrize("refresh_frames", [1, 3, 10])
def test_drive_is_written_on_change_and_refreshed_every_refresh_frames(refresh_frames: int) -> None:
    rig = Rig(config=LoopConfig(schema=SCHEMA, refresh_frames=refresh_frames))
    frames = rig.run(1.0)  # 30 frames, command unchanged
    sent = [k for k, frame in enumerate(frames) if frame.drives]
    assert sent == list(range(0, 30, refresh_frames))
    assert all(frame.drives == [Drive(*MOVING)] for frame in frames if frame.drives)
    assert all(frame.result.sent_drive == bool(frame.drives) for frame in frames)
    # A change is written at once and restarts the refresh count.
    rig.twist = (0.1, 0.0)
    frames = rig.run(1.0)
    sent = [k for k, frame in enumerate(frames) if frame.drives]
    assert sent == list(range(0, 30, refresh_frames))
    assert frames[0].drives == [Drive(*twist_to_commands(0.1, 0.0, GEOMETRY))]


def test_changing_command_is_written_every_frame() -> None:
    rig = Rig()
    for k in range(20):
        rig.twist = (0.01 * k, 0.0)
        frame = rig.step()
        assert frame.drives == [Drive(*twist_to_commands(0.01 * k, 0.0, GEOMETRY))]


# --- heartbeats to the MCU ------------------------------------------------------------------


def test_heartbeat_every_half_second_without_drift_over_ten_minutes() -> None:
    rig = Rig()
    frames = rig.run(600.0)
    sent = [(frame.now, hb) for frame in frames for hb in frame.heartbeats]
    assert len(sent) == 1200
    for k, (now, heartbeat) in enumerate(sent):
        deadline = START + 0.5 * k
        # Each on the first frame at or after its own deadline: never a frame late, never drifting.
        assert deadline <= now < deadline + FRAME + 1e-9, k
        assert heartbeat == Heartbeat.at(now)
    health = rig.loop.mcu.health(rig.now)
    assert (health.sent, health.lost) == (1200, 0)
    assert rig.loop.failsafes.trips("mcu") == 0


def test_heartbeat_keeps_its_schedule_through_late_frames() -> None:
    loop = ControlLoop(LoopConfig(schema=SCHEMA), {}, start=0.0)
    decoder = LineDecoder(schema=SCHEMA)
    # Frames with jitter and a 1.3 s stall (an overrun): deadlines stay at multiples of 0.5 s.
    times = [0.0, 0.04, 0.49, 0.52, 0.99, 1.01, 1.12, 2.42, 2.46, 2.5, 2.96, 3.0]
    sent = [
        now for now in times if any(isinstance(m, Heartbeat) for m in decoder.feed(loop.frame(now).write))
    ]
    assert sent == [0.0, 0.52, 1.01, 2.42, 2.5, 3.0]


def test_echo_round_trip_is_timed_by_the_echo_arrival_not_the_frame() -> None:
    rig = Rig()
    rig.run(3.0)
    health = rig.loop.mcu.health(rig.now)
    assert health.rtt_last == pytest.approx(LATENCY)
    assert health.rtt_mean == pytest.approx(LATENCY)
    assert health.rtt_max == pytest.approx(LATENCY)
    assert rig.loop.mcu.echoes == 6


def test_echo_split_over_two_chunks_is_timed_by_the_chunk_that_completes_it() -> None:
    rig = Rig(mcu_echoes=False)
    [heartbeat] = rig.step().heartbeats
    sent_at = rig.frames[-1].now
    line = rig.mcu_encoder.encode(heartbeat)
    rig.send_bytes(line[:5], at=sent_at + 0.005)
    rig.send_bytes(line[5:], at=sent_at + 0.021)
    rig.step()
    assert rig.loop.mcu.rtt_last == pytest.approx(0.021)


def test_echo_of_a_stamp_not_sent_gives_no_round_trip_but_mcu_is_heard() -> None:
    rig = Rig(mcu_echoes=False)
    rig.step()
    rig.send(Heartbeat("12.5"))
    rig.step()
    assert rig.loop.mcu.echoes == 0
    assert rig.loop.mcu.alive(rig.now)


# --- telemetry, errors, malformed input ------------------------------------------------------


def test_telemetry_is_typed_by_the_schema_with_the_raw_line() -> None:
    rig = Rig()
    rig.send_bytes(b"TL11500,1438\r\nTL2150,300,10,20,30,40,0,1,270\n")
    frame = rig.step()
    assert frame.result.telemetry == [
        Telemetry("TL1", ("right", "left"), (1500.0, 1438.0), "TL11500,1438"),
        Telemetry("TL2", TL2_NAMES, (150, 300, 10, 20, 30, 40, 0, 1, 270), "TL2150,300,10,20,30,40,0,1,270"),
    ]
    # A bumper counts as closed once two reports say so (sensor_filter).
    assert rig.loop.sensors == Sensors(150.0, 300.0, (10.0, 20.0, 30.0, 40.0), False, False, 270.0)
    rig.send_bytes(b"TL2150,300,10,20,30,40,0,1,270\n")
    rig.step()
    # (TL1's out-of-range 1500 clipped to full speed has driven the odometer on.)
    assert replace(rig.loop.sensors, odometer_m=0.0) == Sensors(
        150.0, 300.0, (10.0, 20.0, 30.0, 40.0), False, True, 270.0
    )


def test_mcu_error_reports_are_reported_and_counted() -> None:
    rig = Rig()
    rig.send(ErrorReport("DRV value 300 out of range"), ErrorReport("DRV value -400 out of range"))
    frame = rig.step()
    assert frame.result.mcu_errors == ["DRV value 300 out of range", "DRV value -400 out of range"]
    rig.send(ErrorReport("BAD thing"))
    assert rig.step().result.mcu_errors == ["BAD thing"]
    assert rig.loop.mcu_errors == {"DRV": 2, "BAD": 1}


def test_mcu_command_is_reported_as_an_event() -> None:
    rig = Rig()
    rig.send(Command("VERSION robot_mcu 1.2"))
    assert "MCU says: COM,VERSION robot_mcu 1.2" in rig.step().result.events


def test_malformed_lines_are_counted_and_the_good_ones_still_decode() -> None:
    rig = Rig()
    rig.send_bytes(b"XYZ1,2\nTL11,2,3\nTL9,1\nDRVa,b\n\n\xff\xfe\nTL110,20\n" + b"A" * 300 + b"\nERR,x\n")
    frame = rig.step()
    assert [t.values for t in frame.result.telemetry] == [(10.0, 20.0)]
    assert frame.result.mcu_errors == ["x"]
    assert rig.loop.decoder.stats.dropped == {
        "unknown_id": 1,
        "bad_arity": 1,
        "unknown_list": 1,
        "bad_field": 1,
        "empty": 1,
        "not_ascii": 1,
        "too_long": 1,
    }


def test_partial_line_is_kept_for_the_next_frame() -> None:
    rig = Rig(mcu_echoes=False)
    rig.send_bytes(b"TL1150")
    assert rig.step().result.telemetry == []
    rig.send_bytes(b"0,1438\n")
    assert [t.raw for t in rig.step().result.telemetry] == ["TL11500,1438"]


def test_reconnect_drops_the_half_line_and_rewrites_the_drive() -> None:
    rig = Rig(mcu_echoes=False)
    rig.run(0.1)
    rig.send_bytes(b"TL1150")
    rig.step()
    rig.loop.reconnected()
    rig.send_bytes(b"0,1438\nTL17,8\n")
    frame = rig.step()
    assert [t.raw for t in frame.result.telemetry] == ["TL17,8"]
    assert frame.drives == [Drive(*MOVING)]


@settings(deadline=None, derandomize=True, max_examples=150)
@given(st.lists(st.binary(max_size=200), max_size=8))
def test_garbage_bytes_never_raise_and_do_not_stop_the_loop(chunks: list[bytes]) -> None:
    rig = Rig()
    rig.step()
    for chunk in chunks:
        rig.send_bytes(chunk)
        rig.step()
    # A line end flushes whatever half line the garbage left; the next good line decodes.
    rig.send_bytes(b"\n")
    rig.step()
    rig.send(Telemetry("TL1", ("right", "left"), (3.0, 4.0)))
    frame = rig.step()
    assert [t.values for t in frame.result.telemetry] == [(3.0, 4.0)]
    assert frame.result.command == MOVING


# --- STOP / GO and AUTO --------------------------------------------------------------------


def test_stop_holds_the_motors_at_zero_until_go() -> None:
    rig = Rig()
    rig.run(0.5)
    rig.loop.station("STOP", rig.now)
    frames = rig.run(3.0)
    assert frames[0].drives == [Drive(0, 0)]
    assert set(commands(frames)) == {(0, 0)}
    rig.loop.station("GO", rig.now)
    frame = rig.step()
    assert frame.drives == [Drive(*MOVING)]


def test_auto_boards_drives_by_the_behaviour_from_tl2() -> None:
    rig = Rig(teleop=False)
    rig.loop.station("AUTO boards", START)
    # Before any TL2 the behaviour stands still.
    assert rig.step().result.command == (0, 0)
    spin = twist_to_commands(0.0, 1.5, GEOMETRY)
    back = twist_to_commands(-0.2, 0.0, GEOMETRY)
    # The behaviour starts with a scan: a spin, whatever the ranger sees.
    for values in (tl2_values(ultrasonic_cm=200.0), tl2_values(ultrasonic_cm=90.0)):
        rig.send(Telemetry("TL2", TL2_NAMES, values))
        assert rig.step().result.command == spin
    # A bumper hit (two reports: the filter's debounce): back off for 2 s (60 frames),
    # with TL2 (no bumper) arriving every 3 frames.
    rig.send(Telemetry("TL2", TL2_NAMES, tl2_values(ultrasonic_cm=3.0, bumper=True)))
    assert rig.step().result.command == spin
    rig.send(Telemetry("TL2", TL2_NAMES, tl2_values(ultrasonic_cm=3.0, bumper=True)))
    hit_frame = rig.step()
    assert hit_frame.result.command == back
    after: list[Frame] = []
    for k in range(150):
        if k % 3 == 0:
            rig.send(Telemetry("TL2", TL2_NAMES, tl2_values(ultrasonic_cm=200.0)))
        after.append(rig.step())
    backing = [f.result.command for f in after if f.now < hit_frame.now + 2.0 - 1e-6]
    later = [f.result.command for f in after if f.now > hit_frame.now + 2.0 + 1e-6]
    assert backing == [back] * 59
    # Then forward, straight, to where it was (dead reckoned, no TL1 here: the commands),
    # and a scan from there.
    home = later[: later.index(spin)]
    assert home and all(left == right > 0 for left, right in home)
    assert set(later[len(home) :]) == {spin}
    # No cmd_vel all along, and the cmd_vel failsafe did not hold the behaviour.
    assert rig.loop.holding_reasons == []


def test_manual_after_auto_waits_for_a_fresh_cmd_vel() -> None:
    rig = Rig(teleop=False)
    rig.loop.station("AUTO boards", START)
    rig.send(Telemetry("TL2", TL2_NAMES, tl2_values(ultrasonic_cm=90.0)))
    rig.run(2.0)
    rig.loop.station("MANUAL", rig.now)
    assert rig.step().drives == [Drive(0, 0)]
    rig.teleop = True
    assert rig.step().drives == [Drive(*MOVING)]


def test_stop_holds_auto_too() -> None:
    rig = Rig(teleop=False)
    rig.loop.station("AUTO boards", START)
    rig.send(Telemetry("TL2", TL2_NAMES, tl2_values(ultrasonic_cm=90.0)))
    assert rig.step().result.command != (0, 0)
    rig.loop.station("STOP", rig.now)
    assert rig.step().drives == [Drive(0, 0)]


def test_auto_light_turns_toward_the_brightest_sensors_from_tl2() -> None:
    table = json.loads((SRC / "hil_devices" / "config" / "devices" / "photoresistor.json").read_text())[
        "table"
    ]
    light = LightBehaviour(PhotoresistorResponse.from_table(table))
    rig = Rig(behaviours={"light": light}, teleop=False)
    rig.loop.station("AUTO light", START)
    values = dict(zip(TL2_NAMES, tl2_values(), strict=True)) | {"light_1": 600.0, "light_2": 20.0}
    rig.send(Telemetry("TL2", TL2_NAMES, tuple(values[name] for name in TL2_NAMES)))
    frame = rig.step()
    # Light on the left (sensor 1, 90 degrees): turn left in place at the turn limit.
    assert frame.drives == [Drive(*twist_to_commands(0.0, light.max_turn, GEOMETRY))]
    values |= {"light_0": 950.0}
    rig.send(Telemetry("TL2", TL2_NAMES, tuple(values[name] for name in TL2_NAMES)))
    assert rig.step().drives == [Drive(0, 0)]  # in the light's glow: stop


def test_tl2_missing_a_needed_field_is_an_event_not_a_crash() -> None:
    names = tuple(name for name in TL2_NAMES if name != "ultrasonic_cm")
    schema = TelemetrySchema({**SCHEMA.lists, "TL2": names})
    rig = Rig(config=LoopConfig(schema=schema), teleop=False)
    rig.loop.station("AUTO boards", START)
    rig.send(Telemetry("TL2", names, tuple(1.0 for _ in names)))
    frame = rig.step()
    [event] = frame.result.events
    assert "ultrasonic_cm" in event
    assert "TL2" in event
    assert [t.list_id for t in frame.result.telemetry] == ["TL2"]
    assert rig.loop.sensors is None
    assert frame.result.command == (0, 0)
    with pytest.raises(RobotControlError, match="ultrasonic_cm"):
        Sensors.from_telemetry(dict(zip(names, frame.result.telemetry[0].values, strict=True)))


# --- failsafes ------------------------------------------------------------------------------


def test_cmd_vel_timeout_zeroes_the_motors_in_the_first_frame_after_it() -> None:
    rig = Rig()
    rig.run(1.0)
    last = rig.now - 0.002  # the teleop's last cmd_vel, just before this frame
    rig.step()
    rig.teleop = False
    frames = rig.run(2.0)
    first_late = next(f for f in frames if f.now > last + 0.5)
    for frame in frames:
        expected = (0, 0) if frame.now >= first_late.now else MOVING
        assert frame.result.command == expected, frame.now
    assert first_late.drives == [Drive(0, 0)]
    assert first_late.now <= last + 0.5 + FRAME
    [event] = [e for e in events(frames) if "cmd_vel" in e]
    assert re.fullmatch(r"failsafe: cmd_vel: nothing for 0\.5\d s \(timeout 0\.5 s\)", event)
    # Recovery: cmd_vel again.
    rig.teleop = True
    frame = rig.step()
    assert frame.drives == [Drive(*MOVING)]
    assert frame.result.events == ["recovered: cmd_vel: back"]


def test_cmd_vel_timeout_does_not_apply_in_auto() -> None:
    rig = Rig(teleop=False)
    rig.loop.station("AUTO boards", START)
    frames = []
    for _ in range(60):
        rig.send(Telemetry("TL2", TL2_NAMES, tl2_values(ultrasonic_cm=90.0)))
        frames.append(rig.step())
    assert set(commands(frames)) == {twist_to_commands(0.0, 1.5, GEOMETRY)}  # the behaviour's scan


def test_mcu_silent_zeroes_the_motors_within_one_frame_after_its_timeout_and_recovers() -> None:
    rig = Rig()
    rig.run(2.0)
    rig.mcu_echoes = False
    rig.pending.clear()
    last_heard = rig.loop.mcu.last_heard
    assert last_heard is not None
    frames = rig.run(3.0)
    first_zero = next(k for k, f in enumerate(frames) if f.result.command == (0, 0))
    assert frames[first_zero].now > last_heard + 1.5
    assert frames[first_zero - 1].now <= last_heard + 1.5
    assert frames[first_zero].drives == [Drive(0, 0)]
    assert set(commands(frames[first_zero:])) == {(0, 0)}
    [event] = [e for e in events(frames) if "mcu" in e]
    assert re.fullmatch(r"failsafe: mcu: nothing for 1\.5\d s \(timeout 1\.5 s\)", event)
    assert not rig.loop.mcu.alive(rig.now)
    assert rig.loop.mcu.lost > 0
    # Recovery: the MCU speaks again (any valid line).
    rig.send(Telemetry("TL1", ("right", "left"), (0.0, 0.0)))
    frame = rig.step()
    assert frame.drives == [Drive(*MOVING)]
    assert frame.result.events == ["recovered: mcu: back"]


def test_mcu_never_heard_stops_the_motors_after_its_timeout_from_start() -> None:
    rig = Rig(mcu_echoes=False)
    frames = rig.run(3.0)
    moving = [f for f in frames if f.result.command == MOVING]
    stopped = [f for f in frames if f.result.command == (0, 0)]
    assert moving
    assert stopped
    assert max(f.now for f in moving) <= START + 1.5 < min(f.now for f in stopped) <= START + 1.5 + FRAME
    assert [e for e in events(frames) if "mcu" in e] == ["failsafe: mcu: never heard (timeout 1.5 s)"]


def test_invalid_lines_do_not_keep_the_mcu_alive() -> None:
    rig = Rig(mcu_echoes=False)
    frames = []
    for _ in range(90):
        rig.send_bytes(b"garbage\nTL9,1\n")
        frames.append(rig.step())
    assert frames[-1].result.command == (0, 0)
    assert rig.loop.failsafes.trips("mcu") == 1


def test_station_heard_then_silent_zeroes_after_its_timeout_and_recovers() -> None:
    rig = Rig()
    for _ in range(30):
        rig.loop.station(f"HBB,{rig.now:.3f}", rig.now - 0.01)
        rig.step()
    last = rig.loop.station_link.last_heard
    assert last is not None
    frames = rig.run(4.0)
    first_zero = next(k for k, f in enumerate(frames) if f.result.command == (0, 0))
    assert frames[first_zero - 1].now <= last + 2.0 < frames[first_zero].now <= last + 2.0 + FRAME
    assert frames[first_zero].drives == [Drive(0, 0)]
    assert set(commands(frames[first_zero:])) == {(0, 0)}
    [event] = [e for e in events(frames) if "station" in e]
    assert re.fullmatch(r"failsafe: station: nothing for 2\.0\d s \(timeout 2 s\)", event)
    assert rig.loop.holding_reasons == ["station"]
    result = rig.loop.station("HBB,7.0", rig.now - 0.01)
    assert result.echo == "HBB,7.0"
    frame = rig.step()
    assert frame.drives == [Drive(*MOVING)]
    assert frame.result.events == ["recovered: station: back"]


def test_no_station_ever_means_no_station_failsafe() -> None:
    rig = Rig()
    frames = rig.run(20.0)
    assert set(commands(frames)) == {MOVING}
    assert events(frames) == []


@pytest.mark.parametrize("cause", ["cmd_vel", "mcu", "station"])
def test_each_outage_fires_exactly_once_and_clears_once(cause: str) -> None:
    rig = Rig()
    changes: list[str] = []
    for _ in range(3):
        for silent in (False, True):
            for _ in range(round(4.0 / FRAME)):
                rig.teleop = not (silent and cause == "cmd_vel")
                rig.mcu_echoes = not (silent and cause == "mcu")
                if not silent or cause != "station":
                    rig.loop.station(f"HBB,{rig.now:.3f}", rig.now - 0.01)
                if silent and cause == "mcu":
                    rig.pending.clear()
                else:
                    rig.send(Telemetry("TL1", ("right", "left"), (0.0, 0.0)))
                changes += [e.split(":")[0] for e in rig.step().result.events if cause in e]
    assert changes == ["failsafe", "recovered"] * 2 + ["failsafe"]
    assert rig.loop.failsafes.trips(cause) == 3


# --- checked mode ----------------------------------------------------------------------------


def test_checked_mode_round_trip() -> None:
    rig = Rig(config=LoopConfig(schema=SCHEMA, checked=True))
    first = rig.step()
    raw = rig.frames[0].result.write
    assert raw.startswith(b"DRV%d,%d*0000" % MOVING)
    assert first.drives == [Drive(*MOVING)]
    assert len(first.heartbeats) == 1
    rig.send(Telemetry("TL1", ("right", "left"), (5.0, 6.0)), ErrorReport("oops"))
    frames = [rig.step(), *rig.run(3.0)]
    assert [t.raw for t in frames[0].result.telemetry] == ["TL15,6"]
    assert frames[0].result.mcu_errors == ["oops"]
    assert rig.loop.mcu.echoes == rig.loop.mcu.sent == 7
    assert rig.loop.mcu.rtt_last == pytest.approx(LATENCY)
    assert rig.loop.decoder.stats.dropped_total == 0
    assert rig.loop.decoder.stats.lost == 0
    assert rig.mcu_decoder.stats.dropped_total == 0
    assert rig.mcu_decoder.stats.lost == 0
    assert set(commands(frames)) == {MOVING}


def test_checked_mode_drops_plain_and_corrupted_lines() -> None:
    rig = Rig(config=LoopConfig(schema=SCHEMA, checked=True), mcu_echoes=False)
    rig.step()
    good = LineEncoder(checked=True).encode(Telemetry("TL1", ("right", "left"), (1.0, 2.0)))
    corrupted = good.replace(b"TL11", b"TL17")
    rig.send_bytes(b"TL11,2\n" + corrupted)
    frame = rig.step()
    assert frame.result.telemetry == []
    assert rig.loop.decoder.stats.dropped == {"bad_check": 2}
    assert rig.loop.mcu.last_heard is None


# --- bad cmd_vel ------------------------------------------------------------------------------


@pytest.mark.parametrize("twist", [(float("nan"), 0.0), (0.0, float("inf"))])
def test_non_finite_cmd_vel_gives_zero(twist: tuple[float, float]) -> None:
    rig = Rig(twist=twist)
    assert rig.step().drives == [Drive(0, 0)]


def test_huge_finite_cmd_vel_saturates_instead_of_crashing_the_frame() -> None:
    rig = Rig(twist=(1e308, 0.0))
    assert rig.step().drives == [Drive(255, 255)]


def test_radio_lines_the_mcu_relays_reach_the_radio_port_and_queued_packets_go_out_as_rtx() -> None:
    rig = Rig()
    rig.send_bytes(b"RRX,3,-61,0102\nRST,LISTEN,16,0\nRRX,x,1,00\n")
    frame = rig.step()
    radio = rig.loop.radio
    assert [(p.src, p.rssi, p.payload) for p in radio.inbox] == [(3, -61, b"\x01\x02")]
    assert radio.state == "LISTEN" and not radio.lost
    assert rig.loop.radio_errors == 1 and any("RRX src" in e for e in frame.result.events)
    assert radio.send(b"\xab", dst=2) and radio.send(b"\xcd")
    frame = rig.step()
    assert [m for m in frame.written if isinstance(m, Relayed)] == [Relayed("RTX,2,AB"), Relayed("RTX,*,CD")]
    rig.send_bytes(b"RST,LOST,0,0\n")
    rig.step()
    assert radio.lost


def test_a_radio_packet_the_codec_cannot_write_is_refused_and_counted() -> None:
    rig = Rig()
    assert not rig.loop.radio.send(b"")
    assert not rig.loop.radio.send(b"x" * 49)
    assert rig.loop.radio.refused == 2


# --- the simulated clock (a loop on use_sim_time) ---------------------------------------------


def test_a_stopped_simulated_clock_zeroes_the_motors_and_a_moving_one_releases_them() -> None:
    rig = Rig(config=LoopConfig(schema=SCHEMA, clock_timeout=1.0))
    for _ in range(60):  # the world's clock runs: the loop drives
        moved = rig.now
        rig.loop.sim_clock(moved - START + 7.0, moved)
        frame = rig.step()
    assert frame.result.command == MOVING
    frames = [rig.step() for _ in range(60)]  # the world is gone: no more readings that change
    first_zero = next(k for k, f in enumerate(frames) if f.result.command == (0, 0))
    assert frames[first_zero - 1].now <= moved + 1.0 < frames[first_zero].now <= moved + 1.0 + FRAME
    assert frames[first_zero].drives == [Drive(0, 0)]
    assert set(commands(frames[first_zero:])) == {(0, 0)}
    assert rig.loop.holding_reasons == ["clock"]
    [event] = [e for e in events(frames) if "clock" in e]
    assert re.fullmatch(r"failsafe: clock: nothing for 1\.0\d s \(timeout 1 s\)", event)
    # A world that starts again: its clock begins near 0, and that is a move too.
    rig.loop.sim_clock(0.005, rig.now)
    frame = rig.step()
    assert frame.drives == [Drive(*MOVING)]
    assert frame.result.events == ["recovered: clock: back"]


def test_a_simulated_clock_never_heard_stops_the_motors_after_its_timeout_from_start() -> None:
    rig = Rig(config=LoopConfig(schema=SCHEMA, clock_timeout=1.0))
    frames = []
    for _ in range(60):
        rig.loop.sim_clock(0.0, rig.now)  # rclpy's simulated time before the first /clock
        frames.append(rig.step())
    assert frames[0].result.command == MOVING
    assert frames[-1].result.command == (0, 0)
    assert [e for e in events(frames) if "clock" in e] == ["failsafe: clock: never heard (timeout 1 s)"]


def test_without_clock_timeout_the_loop_has_no_clock_failsafe() -> None:
    rig = Rig()
    frames = rig.run(5.0)  # nobody reads a clock
    assert set(commands(frames)) == {MOVING}
    assert "clock" not in rig.loop.failsafes.names
    assert rig.loop.clock_watch is None


def test_a_clock_timeout_that_is_not_positive_is_refused() -> None:
    with pytest.raises(RobotControlError, match="clock_timeout"):
        LoopConfig(schema=SCHEMA, clock_timeout=0.0)
