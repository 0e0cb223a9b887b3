"""One frame of the control loop, without ROS, serial ports or clocks.

The node takes what arrived on the port (chunks stamped with their arrival time),
calls :meth:`ControlLoop.frame` with them and the time, writes what it returns and
publishes what it reports. Per frame:

1. decode everything received (partial lines kept): an ``HBB`` echo gives the MCU
   round trip, timed by the echo's arrival, not by the frame; ``TLn`` becomes
   telemetry (TL1, the motor commands the MCU applies, feeds the odometer; TL2,
   through the sensor filter, the behaviours, with the odometer's reading; see
   :mod:`odometry` and :mod:`sensor_filter`); ``ERR`` is reported and counted; any
   valid line means the MCU is alive;
2. failsafes trip or clear by their timeouts (see :mod:`failsafe`); on simulated time
   (``clock_timeout``) the node hands the loop each frame's reading of the clock
   (:meth:`ControlLoop.sim_clock`), whose moves feed the ``clock`` failsafe;
3. the wheels' command: zero while STOPped or while a failsafe holds (in AUTO the
   cmd_vel watchdog does not apply), else the behaviour's twist in AUTO (given the
   last sensors with the odometer's reading now) or the latest cmd_vel, through the
   differential-drive kinematics; the odometer runs on it while TL1 is not fresh;
4. ``DRV`` goes out when the command changes and at least every ``refresh_frames``;
5. ``HBB,<t>`` goes out every ``mcu_heartbeat_period`` on its own deadline;
6. the radio packets a behaviour queued go out as ``RTX`` lines; ``RRX``/``RST`` lines
   the MCU relayed from its radio module are read into :attr:`ControlLoop.radio`
   (:mod:`robot_control.core.radio_port`), which behaviours with a ``radio`` attribute get.

Station commands (``robotCommand``) are handled as they arrive by :meth:`station`.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from hil_bridge.core.line_protocol import (
    Command,
    Drive,
    ErrorReport,
    Heartbeat,
    LineDecoder,
    LineEncoder,
    Relayed,
    Telemetry,
)
from hil_bridge.core.radio_protocol import decode_radio
from hil_common.core.clock_watch import ClockWatch
from hil_common.errors import HilError
from hil_devices.core.telemetry import TelemetrySchema
from robot_control.core.behaviours import Behaviour, Sensors
from robot_control.core.failsafe import Failsafes
from robot_control.core.heartbeat import HeartbeatTracker
from robot_control.core.kinematics import DriveGeometry, twist_to_commands
from robot_control.core.odometry import Odometer
from robot_control.core.radio_port import RadioPort
from robot_control.core.sensor_filter import SensorFilter
from robot_control.core.station import Kind, StationCommand, parse_station_command
from robot_control.errors import RobotControlError


@dataclass(frozen=True)
class LoopConfig:
    """The loop's settings (seconds unless named otherwise)."""

    geometry: DriveGeometry = field(default_factory=DriveGeometry)
    schema: TelemetrySchema = field(default_factory=lambda: TelemetrySchema({}))
    cmd_vel_timeout: float = 0.5
    mcu_heartbeat_period: float = 0.5
    mcu_heartbeat_timeout: float = 1.5
    station_heartbeat_timeout: float = 2.0
    refresh_frames: int = 10
    checked: bool = False
    #: Seconds the simulated clock may stand still before the motors stop (``clock``
    #: failsafe); None: no such failsafe (a loop on the wall clock, or in lockstep).
    clock_timeout: float | None = None

    def __post_init__(self) -> None:
        for name in (
            "cmd_vel_timeout",
            "mcu_heartbeat_period",
            "mcu_heartbeat_timeout",
            "station_heartbeat_timeout",
        ):
            if not getattr(self, name) > 0:
                raise RobotControlError(f"loop: {name} = {getattr(self, name)!r} must be positive")
        if self.clock_timeout is not None and not self.clock_timeout > 0:
            raise RobotControlError(f"loop: clock_timeout = {self.clock_timeout!r} must be positive")
        if self.refresh_frames < 1:
            raise RobotControlError(f"loop: refresh_frames = {self.refresh_frames!r} must be at least 1")


@dataclass
class FrameResult:
    """What one frame wants written, published and logged."""

    write: bytes = b""
    telemetry: list[Telemetry] = field(default_factory=list)
    mcu_errors: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    command: tuple[int, int] = (0, 0)
    sent_drive: bool = False


@dataclass
class StationResult:
    """What one robotCommand asks for: an echo to publish, or a warning to log."""

    echo: str | None = None
    warning: str | None = None
    info: str | None = None


class ControlLoop:
    """The robot brain's frame logic; time is always passed in."""

    def __init__(self, config: LoopConfig, behaviours: dict[str, Behaviour], *, start: float) -> None:
        self.config = config
        self.behaviours = behaviours
        self.decoder = LineDecoder(schema=config.schema, checked=config.checked, relay_ids=("RRX", "RST"))
        self.encoder = LineEncoder(checked=config.checked)
        self.failsafes = Failsafes(
            config.cmd_vel_timeout,
            config.mcu_heartbeat_timeout,
            config.station_heartbeat_timeout,
            start=start,
            clock_timeout=config.clock_timeout,
        )
        #: The simulated clock's readings (None without ``clock_timeout``).
        self.clock_watch = (
            ClockWatch(config.clock_timeout, start=start) if config.clock_timeout is not None else None
        )
        self.mcu = HeartbeatTracker(timeout=config.mcu_heartbeat_timeout)
        self.station_link = HeartbeatTracker(timeout=config.station_heartbeat_timeout)
        self.stopped = False
        self.mode = "manual"
        self.behaviour: Behaviour | None = None
        self.sensors: Sensors | None = None
        self._twist = (0.0, 0.0)
        self._last_command: tuple[int, int] | None = None
        self._frames_since_drive = 0
        self._next_heartbeat = start
        self._echoed: deque[str] = deque(maxlen=32)
        self._reported: set[str] = set()
        self.mcu_errors: Counter[str] = Counter()
        self.frames = 0
        self.radio = RadioPort()
        self.odometer = Odometer(geometry=config.geometry)
        self.sensor_filter = SensorFilter()
        self._tl1_wheels = {"left", "right"} <= set(config.schema.lists.get("TL1", ()))
        #: Radio lines from the MCU that did not parse.
        self.radio_errors = 0
        for behaviour in behaviours.values():
            if hasattr(behaviour, "radio"):
                behaviour.radio = self.radio

    # --- inputs between frames ----------------------------------------------------------

    def cmd_vel(self, linear: float, angular: float, now: float) -> None:
        """A velocity command arrived."""
        self._twist = (linear, angular)
        self.failsafes.feed("cmd_vel", now)

    def sim_clock(self, reading: float, now: float) -> None:
        """The simulated clock read ``reading`` s at ``now``: a move feeds the ``clock`` failsafe."""
        if self.clock_watch is not None and self.clock_watch.observe(reading, now):
            self.failsafes.feed("clock", now)

    def station(self, text: str, now: float) -> StationResult:
        """A robotCommand arrived."""
        if text in self._echoed:
            return StationResult()  # our own echo, coming back on the shared topic
        command = parse_station_command(text)
        handlers = {
            Kind.HEARTBEAT: self._station_heartbeat,
            Kind.STOP: self._station_stop,
            Kind.GO: self._station_go,
            Kind.MANUAL: self._station_manual,
            Kind.AUTO: self._station_auto,
        }
        handler = handlers.get(command.kind)
        if handler is None:
            expected = "STOP, GO, HBB,<t>, AUTO <behaviour>, MANUAL"
            return StationResult(warning=f"robotCommand {text!r} is not a command ({expected})")
        return handler(command, now)

    def _station_heartbeat(self, command: StationCommand, now: float) -> StationResult:
        self.station_link.heard(now)
        self.failsafes.feed("station", now)
        self._echoed.append(command.argument)
        return StationResult(echo=command.argument)

    def _station_stop(self, command: StationCommand, now: float) -> StationResult:
        self.stopped = True
        return StationResult(info="STOP: motors held at zero until GO")

    def _station_go(self, command: StationCommand, now: float) -> StationResult:
        was = self.stopped
        self.stopped = False
        if not was:
            return StationResult()
        still = self.holding_reasons
        return StationResult(
            info="GO: STOP released" + (f" (still held by {', '.join(still)})" if still else "")
        )

    def _station_manual(self, command: StationCommand, now: float) -> StationResult:
        # Whatever cmd_vel said before AUTO is stale: wait for a fresh one.
        self.mode, self.behaviour, self._twist = "manual", None, (0.0, 0.0)
        return StationResult(info="MANUAL: driving from cmd_vel")

    def _station_auto(self, command: StationCommand, now: float) -> StationResult:
        behaviour = self.behaviours.get(command.argument)
        if behaviour is None:
            known = ", ".join(sorted(self.behaviours)) or "none"
            return StationResult(warning=f"AUTO {command.argument}: no such behaviour (known: {known})")
        behaviour.reset()
        self.mode, self.behaviour = "auto", behaviour
        return StationResult(info=f"AUTO: behaviour {behaviour.name}")

    def reconnected(self) -> None:
        """The serial port was reopened: drop the half line of the old connection."""
        self.decoder.reset()
        self._last_command = None

    # --- the frame ----------------------------------------------------------------------

    def frame(self, now: float, received: Sequence[tuple[float, bytes]] = ()) -> FrameResult:
        """Run one frame at time ``now`` on the chunks (arrival time, bytes) since the last one."""
        self.frames += 1
        result = FrameResult()
        for arrived, data in received:
            for message in self.decoder.feed(data):
                self._take(message, arrived, result)
        if self.mode == "auto":
            # The behaviour drives: cmd_vel silence is expected, not a failure.
            self.failsafes.feed("cmd_vel", now)
        for change in self.failsafes.update(now):
            result.events.append(("failsafe: " if change.active else "recovered: ") + change.reason)
        self.mcu.expire(now)
        result.command = self._command(now)
        self.odometer.command(now, *result.command)
        out = bytearray()
        self._frames_since_drive += 1
        if result.command != self._last_command or self._frames_since_drive >= self.config.refresh_frames:
            out += self.encoder.encode(Drive(*result.command))
            self._last_command = result.command
            self._frames_since_drive = 0
            result.sent_drive = True
        if now >= self._next_heartbeat:
            heartbeat = Heartbeat.at(now)
            out += self.encoder.encode(heartbeat)
            self.mcu.sent_heartbeat(heartbeat.stamp, now)
            periods = int((now - self._next_heartbeat) // self.config.mcu_heartbeat_period) + 1
            self._next_heartbeat += periods * self.config.mcu_heartbeat_period
        for line in self.radio.take_outbox():
            out += self.encoder.encode(line)
        result.write = bytes(out)
        return result

    def _take(self, message: object, now: float, result: FrameResult) -> None:
        self.failsafes.feed("mcu", now)
        if isinstance(message, Heartbeat):
            self.mcu.echoed(message.stamp, now)
            return
        self.mcu.heard(now)
        if isinstance(message, Telemetry):
            result.telemetry.append(message)
            fields = dict(zip(message.names, message.values, strict=True))
            if message.list_id == "TL1" and self._tl1_wheels:
                self.odometer.report(now, fields["left"], fields["right"])
            elif message.list_id == "TL2":
                odometer_m = self.odometer.advance(now)
                fields = self.sensor_filter.filter(fields, turned_deg=self.odometer.turned_deg)
                try:
                    self.sensors = Sensors.from_telemetry(fields, odometer_m=odometer_m)
                except RobotControlError as exc:
                    result.events.append(str(exc))
        elif isinstance(message, ErrorReport):
            self.mcu_errors[message.text.split(" ", 1)[0]] += 1
            result.mcu_errors.append(message.text)
        elif isinstance(message, Command):
            result.events.append(f"MCU says: COM,{message.text}")
        elif isinstance(message, Relayed):
            try:
                self.radio.received(decode_radio(message.body), now)
            except HilError as exc:
                self.radio_errors += 1
                result.events.append(f"radio: {exc}")

    def _command(self, now: float) -> tuple[int, int]:
        if self.holding_reasons:
            return 0, 0
        if self.mode == "auto" and self.behaviour is not None:
            sensors = self.sensors
            if sensors is not None:
                # The last report's readings, but where the robot is now: TL2 may be late.
                sensors = replace(sensors, odometer_m=self.odometer.advance(now))
            linear, angular = self.behaviour.update(sensors, now)
        else:
            linear, angular = self._twist
        return twist_to_commands(linear, angular, self.config.geometry)

    @property
    def holding_reasons(self) -> list[str]:
        """Why the motors are at zero now (empty if they are not held)."""
        return (["STOP"] if self.stopped else []) + self.failsafes.active
