"""``virtual_mcu``: the robot firmware in Python, on two pseudo-terminals.

For runs without an Arduino it takes the MCU's place between the control loop and
the signal bridge (DESIGN.md "Data flow"):

* ``command_port`` (default ``mcu_command``: a bare name is a link in the user's
  runtime folder, :mod:`hil_common.core.runtime_dir`): the command link, line
  protocol, opened by the control loop as it would open the robot's serial port;
* ``signal_port`` (default ``signal_link``): the signal link, binary frames,
  opened by the signal bridge as it would open the bridge board;
* ``radio_port`` (default empty: no radio): the radio link, line protocol, opened by
  the robot's radio module; the MCU relays RTX to it and RRX/RST from it
  (DESIGN.md "Radio link").

The behaviour is :class:`hil_mcu.core.virtual_mcu.VirtualMcu`; this node creates the
two ptys, and one thread of its own waits in ``select`` on both until bytes arrive
or the core's next deadline (telemetry, watchdog, LED, signal frame), so a heartbeat
is echoed as soon as it arrives rather than on a polling tick. Writes never block;
bytes a full tty does not take are dropped and counted. Counters go to
``diagnostics`` once a second; on ``use_sim_time`` a simulated clock that has not moved
for ``clock_timeout`` (the world is gone) is an ERROR there. A bad configuration makes
it exit with status 2 and the validation message.

:meth:`VirtualMcuNode.unplug` and :meth:`VirtualMcuNode.plug` pull and put back its
USB cable: the command and signal ports hang up and their links go, then new ptys appear at the same
paths, while the MCU core runs on untouched (its timers, watchdog and sequence
numbers); what it writes meanwhile is lost and counted. The radio link stays: the
radio module is wired to the MCU on the robot, not through the cable. The soak tests
use them to make the loop and the bridge reconnect; :attr:`VirtualMcuNode.replugged`
tells whoever pairs the ptys in lockstep.

The node is a :class:`~hil_common.core.stepping.Stepped` part: its event loop thread in
real time, a step per call in lockstep (:meth:`VirtualMcuNode.advance_to`).
"""

from __future__ import annotations

import contextlib
import select
import sys
import threading
import time
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.node import Node

from hil_bridge.core.defaults import signal_layout, telemetry_schema
from hil_bridge.core.pty_link import PtyPair, pty_pairs
from hil_common import qos
from hil_common.core.param_spec import ParamSpec
from hil_common.core.ports import OutPort
from hil_common.core.runtime_dir import link_path
from hil_common.core.stepping import RunningTime, SimulatedClock
from hil_common.errors import HilError
from hil_common.node_runtime import CLOCK_TIMEOUT, diagnostic_array, node_thread, run_node, sim_clock_of
from hil_common.parameters import declare_parameters
from hil_devices.core.defaults import device_library
from hil_devices.core.profile import load_profile
from hil_mcu.core.virtual_mcu import DEMO_DRIVERS, McuConfig, VirtualMcu, profile_drivers

NODE_NAME = "virtual_mcu"

#: Seconds between diagnostics messages.
DIAGNOSTICS_PERIOD = 1.0
#: Longest wait in select(); bounds how long stopping the loop takes.
IDLE_WAIT_S = 0.05
#: Most bytes taken from the radio link per tick: a flooding module cannot hold up the
#: command and signal links (the rest waits in the tty, as in a UART's line).
RADIO_READ_BYTES = 2048

PARAMETERS = (
    ParamSpec(
        "command_port",
        "mcu_command",
        "Path of the command link pty the control loop opens; a bare name is in the runtime folder.",
    ),
    ParamSpec(
        "signal_port",
        "signal_link",
        "Path of the signal link pty the signal bridge opens; a bare name is in the runtime folder.",
    ),
    ParamSpec(
        "radio_port",
        "",
        "Path of the radio link pty the radio module opens; empty: the MCU has no radio link.",
    ),
    ParamSpec("checked", False, "Checked mode on every link: sequence number and CRC-16 on every message."),
    ParamSpec("max_command", 255, "Largest DRV magnitude accepted; more is an ERR.", min=1, max=32767),
    ParamSpec(
        "telemetry_period", 0.1, "Seconds between telemetry rounds (TL1, TL2...).", min=0.001, max=60.0
    ),
    ParamSpec("watchdog_timeout", 1.5, "Seconds without HBB before the motors stop.", min=0.01, max=3600.0),
    ParamSpec("led_period", 0.5, "Seconds between LED toggles.", min=0.001, max=60.0),
    ParamSpec("signal_period", 0.005, "Seconds between signal frames (5 ms = 200 Hz).", min=0.001, max=1.0),
    ParamSpec(
        "robot",
        "",
        "Robot profile (a shipped robot's name, a robot folder or its robot.yaml): its devices are the"
        " signal link's, its wheels' drivers are driven, its telemetry lists sent; empty: device_set and"
        " telemetry_schema, the demo robot's drivers.",
    ),
    ParamSpec(
        "device_set",
        "",
        "YAML file listing the devices on the signal link in signal-id order; empty: the demo robot's.",
    ),
    ParamSpec(
        "device_configs",
        [],
        "Device config JSON files or folders; empty: the device library of hil_bridge.",
    ),
    ParamSpec(
        "telemetry_schema", "", "Telemetry schema YAML (TLn: [fields]); empty: hil_devices' telemetry.yaml."
    ),
    CLOCK_TIMEOUT,
)


class VirtualMcuNode(Node):
    """The virtual MCU: two ptys, one event-loop thread, diagnostics."""

    def __init__(self, **node_options: Any) -> None:
        super().__init__(NODE_NAME, **node_options)
        params = declare_parameters(self, PARAMETERS)
        #: Time source of the MCU's timers: the wall clock, or simulated time in lockstep.
        self.clock: SimulatedClock = time.monotonic
        self._next_report = 0.0
        robot = params.as_str("robot")
        library = device_library(params.as_strings("device_configs"))
        config = McuConfig(
            layout=signal_layout(
                params.as_str("device_set"), params.as_strings("device_configs"), robot=robot
            ),
            schema=telemetry_schema(params.as_str("telemetry_schema"), robot=robot),
            drivers=profile_drivers(load_profile(robot, library=library)) if robot else DEMO_DRIVERS,
            max_command=params.as_int("max_command"),
            telemetry_period=params.as_float("telemetry_period"),
            watchdog_timeout=params.as_float("watchdog_timeout"),
            led_period=params.as_float("led_period"),
            signal_period=params.as_float("signal_period"),
            checked=params.as_bool("checked"),
            radio=bool(params.as_str("radio_port")),
        )
        self.config = config
        self.mcu = VirtualMcu(config, start=self.clock())
        self._running_time = RunningTime()
        #: The simulated clock, read at each report (None off use_sim_time and in lockstep).
        self.sim_clock = sim_clock_of(self, params.as_float("clock_timeout"))
        #: Bytes a full tty did not take, per link.
        self.unwritten = {"command": 0, "signal": 0, "radio": 0}
        self.diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", qos.PUBLISHER)
        self._stop = threading.Event()
        self._thread = node_thread(self, self.run, name="virtual-mcu", stopping=self._stop)
        command_port = str(link_path(params.as_str("command_port")))
        signal_port = str(link_path(params.as_str("signal_port")))
        radio_port = params.as_str("radio_port") and str(link_path(params.as_str("radio_port")))
        self.get_logger().info(
            f"command link {command_port}, signal link {signal_port}"
            + (f", radio link {radio_port}" if radio_port else "")
            + f" ({len(config.layout.inputs)} pin signals out,"
            + f" {len(config.layout.outputs)} sensor signals in)"
            + (" (checked)" if config.checked else "")
        )
        self._ports = (command_port, signal_port)
        #: Held while the ptys are used or swapped (plug/unplug from another thread).
        self._io_lock = threading.Lock()
        #: False between :meth:`unplug` and :meth:`plug`.
        self.plugged = True
        #: Times the cable was plugged back in.
        self.replugs = 0
        #: Sent after :meth:`plug` made new ptys (the lockstep runner pairs them with their readers).
        self.replugged: OutPort[[]] = OutPort()
        # The ptys come last: once their links exist, nothing else in here can fail
        # and leave them behind.
        #: The radio link's pty (None without ``radio_port``); a lockstep runner pairs it
        #: with the radio module's port as it pairs ``command`` and ``signal``.
        self.radio: PtyPair | None = None
        if radio_port:
            self.command, self.signal, self.radio = pty_pairs(
                command_port, signal_port, radio_port, names=("command_port", "signal_port", "radio_port")
            )
        else:
            self.command, self.signal = pty_pairs(
                command_port, signal_port, names=("command_port", "signal_port")
            )

    def start(self) -> None:
        """Real time: start the event loop thread."""
        self._thread.start()

    def follow(self, clock: SimulatedClock) -> None:
        """Lockstep: run on ``clock`` (stepped by :meth:`advance_to`): the MCU powers up again at its time."""
        self._running_time = running = RunningTime()
        self.clock = lambda: running.at(clock())
        self.sim_clock = None  # the clock moves as the MCU is stepped: nothing to watch
        self.mcu = VirtualMcu(self.config, start=self.clock())
        self._next_report = self.clock()

    def advance_to(self, t: float) -> None:
        """Lockstep: take what the links sent, run the MCU's timers due by ``t``, write what it says.

        The MCU's time runs on across a world reset (:class:`RunningTime`), as a real one's does.
        """
        self._step(self._running_time.at(t))

    def stop(self) -> None:
        """Stop the event loop and close the ptys (which removes their links)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        with self._io_lock:
            self.command.close()
            self.signal.close()
            if self.radio is not None:
                self.radio.close()

    def unplug(self) -> None:
        """Pull the cable: both ports hang up and their links go; the MCU runs on."""
        with self._io_lock:
            self.command.close()
            self.signal.close()
            self.plugged = False

    def plug(self) -> None:
        """Plug the cable back in: new ptys at the same paths (nothing if plugged).

        Raises:
            HilBridgeError: a link cannot be made again (something else took its path).
        """
        with self._io_lock:
            if self.plugged:
                return
            self.command, self.signal = pty_pairs(*self._ports, names=("command_port", "signal_port"))
            self.plugged = True
            self.replugs += 1
        self.replugged.send()

    def run(self) -> None:
        """The event loop: wait for bytes or the next deadline, then a step."""
        while not self._stop.is_set():
            now = self.clock()
            wait = min(self.mcu.next_deadline(now) - now, IDLE_WAIT_S)
            fds = [self.command.master_fd, self.signal.master_fd] if self.plugged else []
            if self.radio is not None:
                fds.append(self.radio.master_fd)
            with contextlib.suppress(OSError, ValueError):  # unplugged while waiting: the tick sees it
                select.select(fds, [], [], max(wait, 0.0))
            self._step(self.clock())

    def _step(self, now: float) -> None:
        """Take what the links sent, run the MCU's timers, write what it has to say."""
        with self._io_lock:
            mcu, command, signal, radio = self.mcu, self.command, self.signal, self.radio
            if self.plugged:
                if data := command.read():
                    mcu.feed_command(data, now)
                if data := signal.read():
                    mcu.feed_signal(data, now)
            if radio is not None and (data := radio.read(RADIO_READ_BYTES)):
                mcu.feed_radio(data, now)
            mcu.tick(now)
            self._write("command", command, mcu.take_command_output())
            self._write("signal", signal, mcu.take_signal_output())
            if radio is not None:
                self._write("radio", radio, mcu.take_radio_output(), plugged=True)
        if now >= self._next_report:
            self._next_report = now + DIAGNOSTICS_PERIOD
            self.publish_diagnostics()

    def _write(self, link: str, pty: PtyPair, data: bytes, *, plugged: bool | None = None) -> None:
        if not data:
            return
        try:
            written = pty.write(data) if (self.plugged if plugged is None else plugged) else 0
        except OSError:
            written = 0
        # Nobody reads the port (or too slowly): the rest is dropped, as a UART would.
        self.unwritten[link] += len(data) - written

    def publish_diagnostics(self) -> None:
        """Publish the core's counters and the link state on ``diagnostics``."""
        mcu = self.mcu
        stopped = self.sim_clock.stopped() if self.sim_clock is not None else None
        if stopped is not None:
            level, text = DiagnosticStatus.ERROR, stopped
        elif mcu.heartbeat_lost:
            level, text = DiagnosticStatus.WARN, "heartbeat lost, motors off"
        elif mcu.stopped:
            level, text = DiagnosticStatus.WARN, "stopped (COM,STOP), motors off"
        elif mcu.radio_lost:
            level, text = DiagnosticStatus.WARN, "radio lost (no RST for 3 s)"
        else:
            level, text = DiagnosticStatus.OK, "running"
        left, right = mcu.motor_commands
        values: dict[str, object] = {
            "command_port": self.command.path,
            "signal_port": self.signal.path,
            "radio_port": self.radio.path if self.radio is not None else "",
            "motor_left": left,
            "motor_right": right,
            "led": int(mcu.led_on),
            **mcu.counters(),
            "command_unwritten_bytes": self.unwritten["command"],
            "signal_unwritten_bytes": self.unwritten["signal"],
            "radio_unwritten_bytes": self.unwritten["radio"],
            "plugged": int(self.plugged),
            "replugs": self.replugs,
        }
        array = diagnostic_array(
            self,
            name="virtual MCU",
            level=level,
            message=text,
            values=values,
            hardware_id=self.command.path,
        )
        self.diagnostics.publish(array)


def main(args: list[str] | None = None) -> int:
    """Run the virtual MCU until shut down; exit 2 on a bad configuration."""
    return run_node(VirtualMcuNode, name=NODE_NAME, config_errors=(HilError,), args=args)


if __name__ == "__main__":
    sys.exit(main())
