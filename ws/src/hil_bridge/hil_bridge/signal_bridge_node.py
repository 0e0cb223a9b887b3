"""``signal_bridge``: exchanges the signal link with the simulator at a fixed period.

Every ``exchange_period`` (default 5 ms, 200 Hz), on an absolute-deadline schedule in
a thread of its own, it decodes every frame the bridge board sent, publishes the
newest INPUT signals as ``hil_msgs/SignalArray`` on ``hil/signals/to_sim``, and writes
one frame with the latest OUTPUT values from ``hil/signals/from_sim``. Link health
goes to ``hil/link`` (``hil_msgs/LinkStatus``, link "signal") and, with the loop's
timing, to ``diagnostics``; on ``use_sim_time`` a simulated clock that has not moved
for ``clock_timeout`` (the world is gone) is an ERROR there. A bad device config makes
it exit with status 2 and the validation message.

In one process the simulator may be connected by call instead of the two topics
(:attr:`SignalBridgeNode.pins`, :attr:`SignalBridgeNode.sensor_values`), and the node is
a :class:`~hil_common.core.stepping.Stepped` part: its exchange thread in real time,
one exchange per period in lockstep (:meth:`SignalBridgeNode.advance_to`).
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.node import Node

from hil_bridge.core.defaults import signal_layout
from hil_bridge.core.serial_link import STANDARD_BAUDS, LinkState, SerialLink
from hil_bridge.core.signal_exchange import NamedValues, SignalExchange, StepResult
from hil_bridge.core.signal_protocol import Frame
from hil_bridge.errors import HilBridgeError
from hil_bridge.wire_tap import WireTap
from hil_common import qos
from hil_common.core.loop_timing import DeadlineScheduler, LoopStats
from hil_common.core.param_spec import ParamSpec
from hil_common.core.ports import InPort, OutPort
from hil_common.core.stepping import RunningTime, SimulatedClock
from hil_common.errors import HilError
from hil_common.node_runtime import CLOCK_TIMEOUT, diagnostic_array, node_thread, run_node, sim_clock_of
from hil_common.parameters import declare_parameters
from hil_msgs.msg import LinkStatus, Signal, SignalArray

NODE_NAME = "signal_bridge"

PARAMETERS = (
    ParamSpec(
        "port",
        "signal_link",
        "Serial device or pty path of the signal link; a bare name is a link in the runtime folder.",
    ),
    ParamSpec("baud", 115200, "Baud rate of the signal link.", choices=STANDARD_BAUDS),
    ParamSpec(
        "robot",
        "",
        "Robot profile (a shipped robot's name, a robot folder or its robot.yaml) whose devices are"
        " the device set; empty: device_set.",
    ),
    ParamSpec(
        "device_set",
        "",
        "YAML file listing the devices on the link in signal-id order; empty: the demo robot's.",
    ),
    ParamSpec(
        "device_configs",
        [],
        "Device config JSON files or folders; empty: the device library of hil_bridge.",
    ),
    ParamSpec("exchange_period", 0.005, "Seconds between exchanges (5 ms = 200 Hz).", min=0.001, max=1.0),
    ParamSpec("checked", False, "Checked mode: sequence number and CRC-16 on every frame."),
    ParamSpec(
        "reconnect_backoff_min", 0.05, "First delay before reopening a lost port, s.", min=0.001, max=10.0
    ),
    ParamSpec("reconnect_backoff_max", 2.0, "Longest delay between reopen attempts, s.", min=0.01, max=60.0),
    ParamSpec(
        "link_timeout", 0.1, "Seconds without a frame before the link counts as lost.", min=0.001, max=60.0
    ),
    ParamSpec("diagnostics_period", 1.0, "Seconds between diagnostics and link status.", min=0.05, max=60.0),
    CLOCK_TIMEOUT,
)


class SignalBridgeNode(Node):
    """The signal bridge: one serial link, one exchange thread, topics to the simulator."""

    def __init__(self, **node_options: Any) -> None:
        super().__init__(NODE_NAME, **node_options)
        params = declare_parameters(self, PARAMETERS)
        self._next_report = 0.0
        if params.as_float("reconnect_backoff_min") > params.as_float("reconnect_backoff_max"):
            raise HilBridgeError(f"{NODE_NAME}: reconnect_backoff_min is greater than reconnect_backoff_max")
        self.layout = signal_layout(
            params.as_str("device_set"), params.as_strings("device_configs"), robot=params.as_str("robot")
        )
        self.link = SerialLink(
            params.as_str("port"),
            baud=params.as_int("baud"),
            backoff_min=params.as_float("reconnect_backoff_min"),
            backoff_max=params.as_float("reconnect_backoff_max"),
        )
        self.exchange = SignalExchange(self.layout, self.link, checked=params.as_bool("checked"))
        self.period = params.as_float("exchange_period")
        self.link_timeout = params.as_float("link_timeout")
        self.diagnostics_period = params.as_float("diagnostics_period")
        self.stats = LoopStats()
        #: The simulated clock, read at each report (None off use_sim_time; the lockstep
        #: runner, which sets the clock by call, drops it).
        self.sim_clock = sim_clock_of(self, params.as_float("clock_timeout"))

        self.to_sim = self.create_publisher(SignalArray, "hil/signals/to_sim", qos.PUBLISHER)
        self.link_status = self.create_publisher(LinkStatus, "hil/link", qos.PUBLISHER)
        self.diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", qos.PUBLISHER)
        self.wire = WireTap(self, "signal", lines=False)
        self._from_sim = self.create_subscription(
            SignalArray, "hil/signals/from_sim", self.on_from_sim, qos.SENSOR
        )
        # One message reused every period: only values and stamp change.
        self._message = SignalArray(
            signals=[Signal(device=slot.device, name=slot.name) for slot in self.layout.inputs]
        )
        self._warned_unknown: set[str] = set()
        self._names = [(slot.device, slot.name) for slot in self.layout.inputs]
        #: The newest frame's values and them by name, as last sent to ``pins``.
        self._pin_values: tuple[float, ...] | None = None
        self._named_pins: NamedValues = []
        #: The newest frame's INPUT signals by name, by call (the simulator's robot port).
        self.pins: OutPort[[NamedValues]] = OutPort()
        #: The simulator's values for the OUTPUT signals by call (its from_sim
        #: subscription goes once connected).
        self.sensor_values: InPort[[NamedValues]] = InPort(
            self.take_sensor_values, on_connect=lambda: self.destroy_subscription(self._from_sim)
        )
        #: Names in the values last given by call that the link lacks; counted at every
        #: exchange until new values come, as a 200 Hz topic would count them.
        self._unknown_given: list[str] = []
        self._given = False
        #: Lockstep: exchanges done since follow() (the next is due at start + count * period).
        self._start = 0.0
        self._exchanges = 0
        self._running_time = RunningTime()
        self._stop = threading.Event()
        self._thread = node_thread(self, self.run, name="signal-exchange", stopping=self._stop)
        self.get_logger().info(
            f"{len(self.layout.inputs)} signals to the sim, {len(self.layout.outputs)} from it, "
            f"on {self.link.port} at {self.link.baud} baud, every {self.period * 1000:g} ms"
            + (" (checked)" if self.exchange.decoder.checked else "")
        )

    def start(self) -> None:
        """Start the exchange thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop the exchange thread and close the port."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        self.link.close()

    def follow(self, clock: SimulatedClock) -> None:
        """Lockstep: exchange by :meth:`advance_to`, reopen the port on the bridge's time."""
        running = self._running_time = RunningTime()
        self.link.use_clock(lambda: running.at(clock()))
        self.sim_clock = None  # the clock moves as the run is stepped: nothing to watch
        self._start, self._exchanges = running.at(clock()), 0

    def advance_to(self, t: float) -> None:
        """Lockstep: the exchange due by simulated time ``t``, if one is (one per period).

        The bridge's time runs on across a world reset (:class:`RunningTime`).
        """
        now = self._running_time.at(t)
        if now + 1e-9 < self._start + self._exchanges * self.period:
            return
        self._exchanges = max(self._exchanges + 1, int((now - self._start) / self.period + 1e-9) + 1)
        self._exchange(now)

    def on_from_sim(self, message: SignalArray) -> None:
        """Take the simulator's latest values for the MCU's inputs."""
        self.take_sensor_values([(s.device, s.name, s.value) for s in message.signals])

    def take_sensor_values(self, values: NamedValues) -> None:
        """The simulator's latest values for the MCU's inputs (topic or call)."""
        unknown = self.exchange.set_outputs(values)
        self._unknown_given, self._given = unknown, True
        for name in unknown:
            if name not in self._warned_unknown:
                self._warned_unknown.add(name)
                self.get_logger().warning(
                    f"hil/signals/from_sim: {name} is not an OUTPUT signal of this link"
                )

    def run(self) -> None:
        """The exchange loop: one exchange per deadline until stopped."""
        scheduler = DeadlineScheduler(self.period)
        while not self._stop.is_set():
            tick = scheduler.wait()
            self._exchange(tick.woke)
            self.stats.record(tick, time.monotonic() - tick.woke)

    def _exchange(self, now: float) -> StepResult:
        """One exchange: decode, publish the newest INPUT values, send the OUTPUT frame."""
        result = self.exchange.step(now)
        if self._unknown_given and not self._given and self.sensor_values.connected:
            for name in self._unknown_given:
                self.exchange.unknown_signals[name] += 1
        self._given = False
        if self.wire.listened:  # a stamp costs microseconds: only for someone
            stamp = self.get_clock().now().to_msg()
            self.wire.rx(result.received, stamp)
            self.wire.tx(result.written, stamp)
        if result.frames:
            self.publish_frame(result.frames[-1])
            if self.pins.connected:
                values = result.frames[-1].values
                if values != self._pin_values:  # pins change seldom: named again only then
                    self._pin_values = values
                    self._named_pins = [(d, n, v) for (d, n), v in zip(self._names, values, strict=True)]
                self.pins.send(self._named_pins)
        if now >= self._next_report:
            self._next_report = now + self.diagnostics_period
            self.publish_health(now)
        return result

    def publish_frame(self, frame: Frame) -> None:
        """Publish a frame's INPUT values on hil/signals/to_sim (if anyone listens)."""
        if not self.to_sim.get_subscription_count():
            return
        message = self._message
        message.header.stamp = self.get_clock().now().to_msg()
        for signal, value in zip(message.signals, frame.values, strict=True):
            signal.value = value
        self.to_sim.publish(message)

    def publish_health(self, now: float) -> None:
        """Publish hil/link and diagnostics."""
        exchange, link, decoder = self.exchange, self.link, self.exchange.decoder.stats
        alive = exchange.alive(now, self.link_timeout)
        stamp = self.get_clock().now().to_msg()
        since = -1.0 if exchange.last_frame_at is None else now - exchange.last_frame_at
        status = LinkStatus(
            link="signal",
            alive=alive,
            sent=exchange.frames_sent,
            received=exchange.frames_received,
            lost=decoder.lost + decoder.bad_crc + decoder.bad_ids,
            since_last_heard=since,
            detail=link.detail if link.state is not LinkState.OPEN or alive else "no frames",
        )
        status.header.stamp = stamp
        self.link_status.publish(status)

        timing = self.stats.summary()
        encoder = self.exchange.encoder.stats
        stopped = self.sim_clock.stopped() if self.sim_clock is not None else None
        if link.state is not LinkState.OPEN:
            level, text = DiagnosticStatus.ERROR, link.detail
        elif stopped is not None:
            level, text = DiagnosticStatus.ERROR, stopped
        elif not alive:
            level, text = DiagnosticStatus.WARN, "port open, no frames from the bridge board"
        else:
            level, text = DiagnosticStatus.OK, "exchanging"
        values = {
            "port": link.port,
            "state": link.state.value,
            "frames_received": exchange.frames_received,
            "frames_sent": exchange.frames_sent,
            "bad_ids": decoder.bad_ids,
            "bad_crc": decoder.bad_crc,
            "lost": decoder.lost,
            "duplicates": decoder.duplicates,
            "resyncs": decoder.resyncs,
            "skipped_bytes": decoder.skipped_bytes,
            "clamped": sum(encoder.clamped.values()),
            "invalid": sum(encoder.invalid.values()),
            "unknown_signals": sum(exchange.unknown_signals.values()),
            "reconnects": max(link.generation - 1, 0),
            "write_drops": link.write_drops,
            "period_mean_ms": f"{timing.period_mean * 1e3:.3f}",
            "jitter_p50_us": f"{timing.jitter_p50 * 1e6:.0f}",
            "jitter_p99_us": f"{timing.jitter_p99 * 1e6:.0f}",
            "overruns": timing.overruns,
            "work_mean_us": f"{timing.work_mean * 1e6:.0f}",
        }
        self.diagnostics.publish(
            diagnostic_array(
                self, name="signal link", level=level, message=text, values=values, hardware_id=link.port
            )
        )


def main(args: list[str] | None = None) -> int:
    """Run the signal bridge until shut down; exit 2 on a bad configuration."""
    return run_node(SignalBridgeNode, name=NODE_NAME, config_errors=(HilError,), args=args)


if __name__ == "__main__":
    sys.exit(main())
