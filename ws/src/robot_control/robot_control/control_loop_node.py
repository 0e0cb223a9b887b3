"""``control_loop``: the robot's soft real-time loop, owner of the MCU's serial port.

Like a ros2_control hardware interface it reads, updates and writes in one frame, with
no ROS hop between the loop and the wire: a thread of its own wakes at absolute
deadlines (``frame_rate``, default 30 Hz), takes what arrived on the port without
blocking (a reader thread stamps each chunk as it arrives, so heartbeat round trips
are not rounded up to a frame), runs the frame (:mod:`robot_control.core.loop`) and
writes ``DRV``/``HBB`` at once. It publishes every
telemetry list on ``telemetry``, link health on ``hil/link`` (links "mcu" and
"station") and loop timing and failsafes on ``diagnostics``; it takes ``cmd_vel`` and
``robotCommand``. The port may vanish and come back: the loop keeps its rate,
commands zero while the MCU is not heard, and reopens the port with backoff. On
``use_sim_time`` it reads the simulated clock every frame: a clock that has not moved
for ``clock_timeout`` (the world is gone) holds the motors at zero (failsafe
``clock``) and is an ERROR in diagnostics, until it moves again.

The node is a :class:`~hil_common.core.stepping.Stepped` part: its frame thread in
real time, the frames due in lockstep (:meth:`ControlLoopNode.advance_to`). In one
process the operator inputs it takes and the telemetry it decodes are also handed on
by call (:attr:`ControlLoopNode.inputs_taken`, :attr:`ControlLoopNode.telemetry_lists`).
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import replace
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Twist
from rclpy.node import Node
from rclpy.time import Time
from std_msgs.msg import String

from hil_bridge.core.defaults import telemetry_schema
from hil_bridge.core.line_protocol import Drive, Telemetry
from hil_bridge.core.serial_link import STANDARD_BAUDS, LinkState, SerialLink
from hil_bridge.core.serial_reader import SerialReader
from hil_bridge.wire_tap import WireTap
from hil_common import qos
from hil_common.core.loop_timing import DeadlineScheduler, LoopStats
from hil_common.core.param_spec import ParamSpec
from hil_common.core.ports import OutPort
from hil_common.core.stepping import RunningTime, SimulatedClock
from hil_common.errors import HilError
from hil_common.node_runtime import CLOCK_TIMEOUT, diagnostic_array, node_thread, run_node, sim_clock_of
from hil_common.parameters import declare_parameters
from hil_devices.core.defaults import device_library
from hil_msgs.msg import LinkStatus
from hil_msgs.msg import Telemetry as TelemetryMsg
from robot_control.core.behaviours import (
    BEHAVIOURS,
    BoardsBehaviour,
    LightBehaviour,
    PhotoresistorResponse,
    SwarmBehaviour,
)
from robot_control.core.heartbeat import LinkHealth
from robot_control.core.kinematics import DriveGeometry
from robot_control.core.loop import ControlLoop, LoopConfig
from robot_control.errors import RobotControlError

NODE_NAME = "control_loop"

PARAMETERS = (
    ParamSpec("frame_rate", 30.0, "Frames per second of the loop.", min=1.0, max=1000.0),
    ParamSpec(
        "port",
        "mcu_command",
        "Serial device or pty path of the MCU's command link; a bare name is a link in the runtime folder.",
    ),
    ParamSpec("baud", 38400, "Baud rate of the command link.", choices=STANDARD_BAUDS),
    ParamSpec("checked", False, "Checked mode on the command link: sequence number and CRC-16 per line."),
    ParamSpec("wheel_base", 0.14, "Distance between the wheels, m.", min=0.01, max=10.0),
    ParamSpec("wheel_radius", 0.033, "Wheel radius, m.", min=0.001, max=2.0),
    ParamSpec("max_wheel_speed", 20.8, "Wheel speed at full command, rad/s.", min=0.01, max=10000.0),
    ParamSpec("max_command", 255, "Largest motor command (DRV range is -max..max).", min=1, max=32767),
    ParamSpec(
        "wheel_time_constant",
        0.1,
        "Seconds a driven wheel takes to 63 % of a new speed (dead reckoning of the behaviours).",
        min=0.0,
        max=10.0,
    ),
    ParamSpec(
        "wheel_coast_decel",
        0.31,
        "Deceleration of a wheel whose command is zero and coasts, m/s^2 (dead reckoning).",
        min=0.0,
        max=100.0,
    ),
    ParamSpec("cmd_vel_timeout", 0.5, "Seconds without cmd_vel before the motors stop.", min=0.01, max=60.0),
    ParamSpec("mcu_heartbeat_period", 0.5, "Seconds between HBB sent to the MCU.", min=0.01, max=60.0),
    ParamSpec(
        "mcu_heartbeat_timeout", 1.5, "Seconds without the MCU before the motors stop.", min=0.01, max=60.0
    ),
    ParamSpec(
        "station_heartbeat_timeout",
        2.0,
        "Seconds without the station's HBB (once heard) before the motors stop.",
        min=0.01,
        max=600.0,
    ),
    ParamSpec("refresh_frames", 10, "Frames after which an unchanged DRV is sent again.", min=1, max=10000),
    ParamSpec(
        "telemetry_schema",
        "",
        "Telemetry schema YAML; empty: the robot profile's telemetry lists, or without one hil_devices'"
        " config/telemetry.yaml.",
    ),
    ParamSpec(
        "robot",
        "",
        "Robot profile (a shipped robot's name, a robot folder or its robot.yaml) whose telemetry lists"
        " the loop decodes (its telemetry:, else TL1 only); empty: telemetry_schema.",
    ),
    ParamSpec(
        "device_configs", [], "Device config files or folders (photoresistor table); empty: hil_bridge's."
    ),
    ParamSpec(
        "behaviour",
        "manual",
        "Behaviour to start in: manual (MANUAL: drive on cmd_vel; empty means the same) or an AUTO one.",
        choices=("manual", "", *BEHAVIOURS),
    ),
    ParamSpec(
        "robot_id",
        0,
        "This robot's id in a swarm (its radio id; the swarm behaviour staggers its sends by it).",
        min=0,
        max=9999,
    ),
    ParamSpec(
        "reconnect_backoff_max",
        2.0,
        "Longest delay between reopen attempts of the port, s.",
        min=0.01,
        max=60.0,
    ),
    ParamSpec("diagnostics_period", 1.0, "Seconds between hil/link and diagnostics.", min=0.05, max=60.0),
    CLOCK_TIMEOUT,
)


class ControlLoopNode(Node):
    """The robot brain: serial port, frame thread, topics."""

    def __init__(self, **node_options: Any) -> None:
        super().__init__(NODE_NAME, **node_options)
        params = declare_parameters(self, PARAMETERS)
        #: Time source of the loop: the wall clock, or simulated time in lockstep.
        self.clock: SimulatedClock = time.monotonic
        self._running_time = RunningTime()
        if params.as_float("mcu_heartbeat_timeout") <= params.as_float("mcu_heartbeat_period"):
            raise RobotControlError(
                f"{NODE_NAME}: mcu_heartbeat_timeout must be longer than mcu_heartbeat_period"
            )
        schema = telemetry_schema(params.as_str("telemetry_schema"), robot=params.as_str("robot"))
        library = device_library(params.as_strings("device_configs"))
        if "photoresistor" not in library:
            raise RobotControlError(
                f"{NODE_NAME}: no photoresistor device config (needed by the light behaviour)"
            )
        response = PhotoresistorResponse.from_table(library["photoresistor"].table)
        behaviours = {
            "boards": BoardsBehaviour(),
            "light": LightBehaviour(response),
            "swarm": SwarmBehaviour(response, robot_id=params.as_int("robot_id")),
        }
        geometry = DriveGeometry(
            wheel_base=params.as_float("wheel_base"),
            wheel_radius=params.as_float("wheel_radius"),
            max_wheel_speed=params.as_float("max_wheel_speed"),
            max_command=params.as_int("max_command"),
            time_constant=params.as_float("wheel_time_constant"),
            coast_decel=params.as_float("wheel_coast_decel"),
        )
        config = LoopConfig(
            geometry=geometry,
            schema=schema,
            cmd_vel_timeout=params.as_float("cmd_vel_timeout"),
            mcu_heartbeat_period=params.as_float("mcu_heartbeat_period"),
            mcu_heartbeat_timeout=params.as_float("mcu_heartbeat_timeout"),
            station_heartbeat_timeout=params.as_float("station_heartbeat_timeout"),
            refresh_frames=params.as_int("refresh_frames"),
            checked=params.as_bool("checked"),
        )
        #: The simulated clock, read every frame (None off use_sim_time and in lockstep).
        self.sim_clock = sim_clock_of(self, params.as_float("clock_timeout"))
        if self.sim_clock is not None:
            config = replace(config, clock_timeout=params.as_float("clock_timeout"))
        self.period = 1.0 / params.as_float("frame_rate")
        self.diagnostics_period = params.as_float("diagnostics_period")
        self._config, self._behaviours = config, behaviours
        #: The AUTO behaviour to start in; empty for MANUAL.
        self.initial_behaviour = "" if params.as_str("behaviour") == "manual" else params.as_str("behaviour")
        self.loop = self._new_loop()
        self.link = SerialLink(
            params.as_str("port"),
            baud=params.as_int("baud"),
            backoff_max=params.as_float("reconnect_backoff_max"),
        )
        self.reader = SerialReader(self.link)
        self._generation = self.link.generation
        self.next_frame = 0.0
        self.next_report = 0.0
        self.stats = LoopStats()
        self.lock = threading.Lock()

        self.telemetry = self.create_publisher(TelemetryMsg, "telemetry", qos.PUBLISHER)
        self.link_status = self.create_publisher(LinkStatus, "hil/link", qos.PUBLISHER)
        self.diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", qos.PUBLISHER)
        self.station_out = self.create_publisher(String, "robotCommand", qos.PUBLISHER)
        self.wire = WireTap(self, "command", lines=True)
        self.cmd_vel_topic = self.create_subscription(
            Twist, "cmd_vel", self.on_cmd_vel, qos.COMMAND
        ).topic_name
        self.command_topic = self.create_subscription(
            String, "robotCommand", self.on_robot_command, qos.COMMAND
        ).topic_name
        #: Every operator input as the loop takes it, as (topic, message): the one-process
        #: runner records inputs here, so a replay sees exactly what the loop saw.
        self.inputs_taken: OutPort[[str, Any]] = OutPort()
        #: Every telemetry list as it is published: the lockstep test session reads
        #: telemetry here, without a DDS subscription of its own.
        self.telemetry_lists: OutPort[[Telemetry]] = OutPort()
        self._stop = threading.Event()
        self._thread = node_thread(self, self.run, name="control-loop", stopping=self._stop)
        self.get_logger().info(
            f"{1 / self.period:g} Hz on {self.link.port} at {self.link.baud} baud"
            + (" (checked)" if config.checked else "")
            + (f", AUTO {self.initial_behaviour}" if self.initial_behaviour else ", MANUAL")
        )

    def _new_loop(self) -> ControlLoop:
        loop = ControlLoop(self._config, self._behaviours, start=self.clock())
        if self.initial_behaviour:
            loop.station(f"AUTO {self.initial_behaviour}", self.clock())
        return loop

    def start(self) -> None:
        """Real time: start the port reader and the frame thread."""
        self.reader.start()
        self._thread.start()

    def follow(self, clock: SimulatedClock) -> None:
        """Lockstep: run on ``clock`` (frames by :meth:`advance_to`): a fresh loop at its time.

        That clock is the simulated one and moves only as the loop is stepped: no
        ``clock`` failsafe. The port's reopen backoff runs on the loop's time too.
        """
        self._running_time = running = RunningTime()
        self.clock = lambda: running.at(clock())  # cmd_vel and station commands on the loop's time
        self.sim_clock = None
        self.link.use_clock(self.clock)
        self._config = replace(self._config, clock_timeout=None)
        with self.lock:
            self.loop = self._new_loop()
        self.next_frame = self.next_report = self.clock()

    def stop(self) -> None:
        """Stop the frame thread, leave the motors at zero, close the port (again: nothing).

        The last line on an open port is ``DRV0,0``: the frame thread is joined first, so
        no frame writes after it.
        """
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        self.reader.stop()
        if self.link.state is LinkState.CLOSED:
            return
        # Leave the motors stopped: the MCU's watchdog would too, but only after its timeout.
        self.link.write(self.loop.encoder.encode(Drive(0, 0)))
        self.link.close()

    # --- ROS callbacks --------------------------------------------------------------------

    def on_cmd_vel(self, message: Twist) -> None:
        """Latest velocity command."""
        self.inputs_taken.send(self.cmd_vel_topic, message)
        with self.lock:
            self.loop.cmd_vel(message.linear.x, message.angular.z, self.clock())

    def on_robot_command(self, message: String) -> None:
        """A station command: echo heartbeats, log the rest."""
        self.inputs_taken.send(self.command_topic, message)
        with self.lock:
            result = self.loop.station(message.data, self.clock())
        if result.echo is not None:
            self.station_out.publish(String(data=result.echo))
        if result.warning:
            self.get_logger().warning(result.warning)
        if result.info:
            self.get_logger().info(result.info)

    # --- the frame thread -----------------------------------------------------------------

    def run(self) -> None:
        """Frames on absolute deadlines until stopped, bytes stamped by the reader thread."""
        scheduler = DeadlineScheduler(self.period)
        self.next_report = time.monotonic()
        while not self._stop.is_set():
            tick = scheduler.wait()
            reading = self.sim_clock.reading() if self.sim_clock is not None else None
            self._frame(tick.woke, self.reader.take(), sim_time=reading)
            self.stats.record(tick, time.monotonic() - tick.woke)

    def advance_to(self, t: float) -> None:
        """Lockstep: every frame due by simulated time ``t`` (no threads, the port polled).

        The loop's time runs on across a world reset (:class:`RunningTime`).
        """
        now = self._running_time.at(t)
        while self.next_frame <= now:
            frame_time = self.next_frame
            data = self.link.poll()
            self._frame(frame_time, [(frame_time, data)] if data else [])
            self.next_frame += self.period

    def frame_due(self, t: float) -> bool:
        """Lockstep: whether :meth:`advance_to` with simulated time ``t`` runs a frame."""
        return self.next_frame <= self._running_time.peek(t)

    def _frame(
        self, now: float, received: list[tuple[float, bytes]], *, sim_time: float | None = None
    ) -> None:
        """One frame: the loop's logic on what arrived, then write, publish and log.

        ``sim_time``: the simulated clock's reading now (a loop on ``use_sim_time``).
        """
        with self.lock:
            if self.link.generation != self._generation:
                self._generation = self.link.generation
                self.loop.reconnected()
            if sim_time is not None:
                self.loop.sim_clock(sim_time, now)
            result = self.loop.frame(now, received)
        if result.write:
            self.link.write(result.write)
        self._tap(received, result.write, now)
        for telemetry in result.telemetry:
            self.publish_telemetry(telemetry)
        for text in result.mcu_errors:
            self.get_logger().warning(f"MCU: ERR,{text}")
        for event in result.events:
            if event.startswith("failsafe"):
                self.get_logger().warning(event)
            else:
                self.get_logger().info(event)
        if now >= self.next_report:
            self.next_report = now + self.diagnostics_period
            self.publish_health(now)

    def _tap(self, received: list[tuple[float, bytes]], written: bytes, now: float) -> None:
        """The frame's wire traffic for recording, stamped in ROS time."""
        ros_now = self.get_clock().now()
        for arrived, data in received:
            # Arrival times are on the loop's clock; shift them onto the ROS clock. Under
            # sim time that clock starts at 0 (before /clock arrives), so clamp there.
            age_ns = int(max(now - arrived, 0.0) * 1e9)
            stamp = Time(nanoseconds=max(ros_now.nanoseconds - age_ns, 0), clock_type=ros_now.clock_type)
            self.wire.rx(data, stamp.to_msg())
        self.wire.tx(written, ros_now.to_msg())

    def publish_telemetry(self, telemetry: Telemetry) -> None:
        """One TLn line as hil_msgs/Telemetry."""
        self.telemetry_lists.send(telemetry)
        message = TelemetryMsg(
            list_id=telemetry.list_id,
            field_names=list(telemetry.names),
            values=list(telemetry.values),
            raw=telemetry.raw,
        )
        message.header.stamp = self.get_clock().now().to_msg()
        message.header.frame_id = "base_link"
        self.telemetry.publish(message)

    def _link_status(self, name: str, health: LinkHealth, detail: str) -> LinkStatus:
        status = LinkStatus(
            link=name,
            alive=health.alive,
            rtt_last=health.rtt_last,
            rtt_mean=health.rtt_mean,
            rtt_max=health.rtt_max,
            sent=health.sent,
            received=health.received,
            lost=health.lost,
            since_last_heard=health.since_last_heard,
            detail=detail,
        )
        status.header.stamp = self.get_clock().now().to_msg()
        return status

    def publish_health(self, now: float) -> None:
        """hil/link for both links and the loop's diagnostics."""
        with self.lock:
            loop = self.loop
            mcu, station = loop.mcu.health(now), loop.station_link.health(now)
            rtt_p50, rtt_p99 = loop.mcu.rtt_percentile(50), loop.mcu.rtt_percentile(99)
            holding = loop.holding_reasons
            active = loop.failsafes.active
            trips = {name: loop.failsafes.trips(name) for name in loop.failsafes.names}
            clock = loop.clock_watch.describe(now) if loop.clock_watch is not None else ""
            drops = dict(loop.decoder.stats.dropped)
            errors = sum(loop.mcu_errors.values())
            odometer = loop.odometer
            rejected = dict(loop.sensor_filter.rejected)
            mode = loop.mode + (f" ({loop.behaviour.name})" if loop.behaviour else "")
        port_detail = self.link.detail if self.link.state is not LinkState.OPEN else ""
        mcu_detail = port_detail or ("ok" if mcu.alive else "heartbeat lost")
        self.link_status.publish(self._link_status("mcu", mcu, mcu_detail))
        station_detail = (
            "never heard" if station.since_last_heard < 0 else ("ok" if station.alive else "heartbeat lost")
        )
        self.link_status.publish(self._link_status("station", station, station_detail))

        timing = self.stats.summary()
        values = {
            "mode": mode,
            "motors_held_by": ", ".join(holding) or "nothing",
            "failsafes_active": ", ".join(active) or "none",
            **({"sim_clock": clock} if clock else {}),
            **{f"trips_{name}": count for name, count in trips.items()},
            "port": self.link.port,
            "port_state": self.link.state.value,
            "mcu_rtt_last_ms": f"{mcu.rtt_last * 1e3:.3f}",
            "mcu_rtt_p50_ms": f"{rtt_p50 * 1e3:.3f}",
            "mcu_rtt_p99_ms": f"{rtt_p99 * 1e3:.3f}",
            "mcu_rtt_samples": len(loop.mcu.recent),
            "mcu_errors": errors,
            "odometer_m": f"{odometer.distance_m:.3f}",
            "odometer_turned_deg": f"{odometer.turned_deg:.1f}",
            "odometer_reports_overriding": odometer.overrides,
            "odometer_reports_clipped": odometer.clipped,
            "sensor_readings_rejected": sum(rejected.values()),
            **{f"rejected_{reason.replace(' ', '_')}": count for reason, count in rejected.items()},
            "lines_dropped": sum(drops.values()),
            **{f"dropped_{reason}": count for reason, count in drops.items()},
            "frames": timing.frames,
            "period_mean_ms": f"{timing.period_mean * 1e3:.3f}",
            "jitter_p50_us": f"{timing.jitter_p50 * 1e6:.0f}",
            "jitter_p99_us": f"{timing.jitter_p99 * 1e6:.0f}",
            "overruns": timing.overruns,
            "work_mean_us": f"{timing.work_mean * 1e6:.0f}",
            "work_max_us": f"{timing.work_max * 1e6:.0f}",
        }
        if self.link.state is not LinkState.OPEN:
            level, text = DiagnosticStatus.ERROR, self.link.detail
        elif "clock" in active:
            level, text = DiagnosticStatus.ERROR, f"motors held at zero: {clock}"
        elif holding and holding != ["STOP"]:
            level, text = DiagnosticStatus.WARN, f"motors held at zero: {', '.join(holding)}"
        else:
            level, text = DiagnosticStatus.OK, f"{mode}, motors held by STOP" if holding else mode
        array = diagnostic_array(
            self,
            name="loop",
            level=level,
            message=text,
            values=values,
            hardware_id=self.link.port,
        )
        self.diagnostics.publish(array)


def main(args: list[str] | None = None) -> int:
    """Run the control loop until shut down; exit 2 on a bad configuration."""
    return run_node(ControlLoopNode, name=NODE_NAME, config_errors=(HilError,), args=args)


if __name__ == "__main__":
    sys.exit(main())
