"""``radio_module``: a robot's radio module (its second MCU) between its MCU and the air.

Every ``period`` (the module's own time step, 20 ms by default, apart from the MCU's)
it writes the ``RRX``/``RST`` lines that came for it to the MCU's radio link and
reads the MCU's ``RTX`` lines; each goes out as a ``hil_msgs/WireChunk`` (link
``radio``, direction ``tx``, the line's body) on ``hil/radio/tx`` to the world-side
radio (the simulator), which answers on ``hil/radio/rx`` (direction ``rx``). Counters
and link state go to ``diagnostics``. DESIGN.md "Radio link".

In one process the simulator's radio may be connected by call instead of the two
topics (:attr:`RadioModuleNode.to_air`, :attr:`RadioModuleNode.from_air`), and the node
is a :class:`~hil_common.core.stepping.Stepped` part: its stepping thread in real time,
its steps due in lockstep (:meth:`RadioModuleNode.advance_to`).
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.node import Node

from hil_bridge.core.radio_module import RX_QUEUE, RadioModule
from hil_bridge.core.serial_link import STANDARD_BAUDS, LinkState, SerialLink
from hil_common import qos
from hil_common.core.loop_timing import DeadlineScheduler
from hil_common.core.param_spec import ParamSpec
from hil_common.core.ports import InPort, OutPort
from hil_common.core.stepping import RunningTime, SimulatedClock
from hil_common.errors import HilError
from hil_common.node_runtime import diagnostic_array, node_thread, run_node
from hil_common.parameters import declare_parameters
from hil_msgs.msg import WireChunk

NODE_NAME = "radio_module"

PARAMETERS = (
    ParamSpec(
        "port",
        "radio_link",
        "Serial device or pty path of the MCU's radio link; a bare name is a link in the runtime folder.",
    ),
    ParamSpec("baud", 115200, "Baud rate of the radio link.", choices=STANDARD_BAUDS),
    ParamSpec("checked", False, "Checked mode: sequence number and CRC-16 on every line."),
    ParamSpec("period", 0.02, "The module's time step, s (its MCU's is 5 ms).", min=0.001, max=1.0),
    ParamSpec("rx_queue", RX_QUEUE, "Lines that may wait for the MCU; more are dropped.", min=1, max=4096),
    ParamSpec("diagnostics_period", 1.0, "Seconds between diagnostics.", min=0.05, max=60.0),
)


class RadioModuleNode(Node):
    """One robot's radio module: its radio link, one stepping thread, topics to the air."""

    def __init__(self, **node_options: Any) -> None:
        super().__init__(NODE_NAME, **node_options)
        params = declare_parameters(self, PARAMETERS)
        self.link = SerialLink(params.as_str("port"), baud=params.as_int("baud"))
        self.module = RadioModule(
            self.link, checked=params.as_bool("checked"), rx_queue=params.as_int("rx_queue")
        )
        self.period = params.as_float("period")
        self.diagnostics_period = params.as_float("diagnostics_period")
        self._next_report = 0.0
        self._next_step = 0.0
        self._running_time = RunningTime()
        self.tx = self.create_publisher(WireChunk, "hil/radio/tx", qos.PUBLISHER)
        self.diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", qos.PUBLISHER)
        self._rx = self.create_subscription(WireChunk, "hil/radio/rx", self.on_rx, qos.COMMAND)
        #: RTX bodies for the air by call instead of hil/radio/tx (the simulator's radio).
        self.to_air: OutPort[[str]] = OutPort()
        #: RRX and RST bodies from the air by call (the hil/radio/rx subscription goes).
        self.from_air: InPort[[str]] = InPort(
            self.deliver, on_connect=lambda: self.destroy_subscription(self._rx)
        )
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = node_thread(self, self.run, name="radio-module", stopping=self._stop)
        self.get_logger().info(
            f"radio link {self.link.port} at {self.link.baud} baud, every {self.period * 1e3:g} ms"
        )

    def start(self) -> None:
        """Real time: start the stepping thread."""
        self._thread.start()

    def follow(self, clock: SimulatedClock) -> None:
        """Lockstep: steps by :meth:`advance_to`; the port's reopen backoff on the module's time."""
        running = self._running_time = RunningTime()
        self.link.use_clock(lambda: running.at(clock()))
        self._next_step = running.at(clock())

    def stop(self) -> None:
        """Stop stepping and close the port."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        self.link.close()

    def on_rx(self, message: WireChunk) -> None:
        """A line from the air for this robot's MCU."""
        self.deliver(bytes(message.data).decode("ascii", "replace"))

    def deliver(self, body: str) -> None:
        """Queue an RRX/RST line body for the MCU (also the runner's direct call)."""
        with self._lock:
            self.module.deliver(body)

    def advance_to(self, t: float) -> None:
        """Lockstep: a step when the module's own time step is due at simulated time ``t``.

        The module's time runs on across a world reset (:class:`RunningTime`).
        """
        now = self._running_time.at(t)
        if now + 1e-9 >= self._next_step:
            self._next_step = max(self._next_step + self.period, now)
            self._step(now)

    def run(self) -> None:
        """The module's steps, one per period, until stopped."""
        scheduler = DeadlineScheduler(self.period)
        while not self._stop.is_set():
            tick = scheduler.wait()
            self._step(tick.woke)

    def _step(self, now: float) -> None:
        """One step: lines to the MCU, RTX lines to the air, diagnostics when due."""
        with self._lock:
            bodies = self.module.step()
        for body in bodies:
            if self.to_air.connected:
                self.to_air.send(body)
            else:
                chunk = WireChunk(link="radio", direction="tx", data=body.encode("ascii"))
                chunk.header.stamp = self.get_clock().now().to_msg()
                self.tx.publish(chunk)
        if now >= self._next_report:
            self._next_report = now + self.diagnostics_period
            self.publish_diagnostics()

    def publish_diagnostics(self) -> None:
        """Link state and the module's counters on ``diagnostics``."""
        link, module = self.link, self.module
        if link.state is not LinkState.OPEN:
            level, text = DiagnosticStatus.ERROR, link.detail
        elif module.dropped:
            level, text = DiagnosticStatus.WARN, f"dropped lines: {module.last_error}"
        else:
            level, text = DiagnosticStatus.OK, "relaying"
        values = {
            "port": link.port,
            "state": link.state.value,
            "rtx_sent": module.sent,
            "lines_to_mcu": module.written,
            **{f"dropped.{k}": v for k, v in sorted(module.dropped.items())},
            "decoder_dropped": module.decoder.stats.dropped_total,
        }
        self.diagnostics.publish(
            diagnostic_array(
                self, name="radio module", level=level, message=text, values=values, hardware_id=link.port
            )
        )


def main(args: list[str] | None = None) -> int:
    """Run the radio module until shut down; exit 2 on a bad configuration."""
    return run_node(RadioModuleNode, name=NODE_NAME, config_errors=(HilError,), args=args)


if __name__ == "__main__":
    sys.exit(main())
