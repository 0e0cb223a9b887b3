"""``simavr_mcu``: the compiled robot firmware in simavr, on the same two ptys as the virtual MCU.

The MCU under test is literally the program that is flashed to the robot: the node
builds ``firmware/robot_mcu`` with avr-gcc (cached), starts the ``hil_simavr``
harness (libsimavr; ``board`` nano or uno: ATmega328P, mega2560: ATmega2560; 16 MHz)
and hands it the masters of its ptys:

* ``command_port``: the firmware's command UART (``command_uart``, default 0:
  ``Serial``), opened by the control loop or the user's own program like a real port;
* ``uart_ports`` (optional): the board's other hardware UARTs that reach a pty, each
  ``"N:link"`` (``["1:bluetooth", "2:gps"]`` on a Mega: ``Serial1``, ``Serial2``);
* ``soft_uart_ports`` (optional): serial links on two ordinary pins (SoftwareSerial),
  each ``"RX:TX:BAUD:link"`` with the firmware's RX and TX pins, read and driven at
  the bit level (``["10:11:9600:bluetooth"]``);
* ``signal_port``: the firmware's pins in the signal protocol, opened by the signal
  bridge like a bridge board;
* ``radio_port`` (optional): the UART of the SC16IS750 I2C-to-UART bridge the harness
  emulates on the firmware's I2C bus, opened by the robot's radio module. Empty: no
  bridge answers, the firmware has no radio link.

With ``trace_pins`` (``motor_left.enable,encoder_left.a``: the wiring's names, raw
pins, UART lines; :mod:`hil_mcu.core.pin_trace`) the harness writes those pins' levels
to ``trace_file`` as a VCD file timed in AVR cycles, up to ``trace_limit_mb``.

Each hardware UART runs at the baud rate the firmware sets on it. With ``auto_reset``
(default on, as a real UNO, Nano or Mega through DTR) the first open of
``command_port`` by a reader resets the AVR, so the program that opens it sees what
the firmware prints at boot; the firmware starts after the bootloader's wait
(``boot_delay``; the board's by default). The ``~/reset`` service (std_srvs/Trigger)
and :meth:`SimavrMcuNode.reset_mcu` reset it as the reset button does. In lockstep
both happen at the start of the next step.

Time: the node is a :class:`~hil_common.core.stepping.Stepped` part. Started
(``start``, real time), the harness paces the AVR to the wall clock by itself; in a
lockstep run (``follow``) :meth:`SimavrMcuNode.advance_to` advances the AVR by the
cycles of each simulated period. The harness's counters (simulated MHz per wall second,
UART and frame counts, time given up when it fell behind, PWM pins never driven) go
to ``diagnostics``, with the count of simavr's own warnings and the last one; each
distinct warning is logged once. On ``use_sim_time`` a simulated clock that has not
moved for ``clock_timeout`` (the world is gone) is an ERROR there.
A bad configuration or a failed build exits with status 2 and the message; a
harness that dies (a crashed firmware) stops the node with status 1.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.node import Node
from std_srvs.srv import Trigger

from hil_bridge.core.defaults import signal_layout
from hil_bridge.core.pty_link import PtyPair, check_distinct, prepare_link_folder, pty_pairs
from hil_common import qos
from hil_common.core.param_spec import ParamSpec, ParamValues
from hil_common.core.runtime_dir import link_path
from hil_common.core.stepping import RunningTime, SimulatedClock
from hil_common.errors import HilError
from hil_common.node_runtime import CLOCK_TIMEOUT, diagnostic_array, node_thread, run_node, sim_clock_of
from hil_common.parameters import declare_parameters
from hil_devices.core.defaults import device_library
from hil_devices.core.profile import RobotProfile, load_profile
from hil_mcu.core.pin_trace import TRACE_FILE, TRACE_LIMIT_MB, TRACE_LIMIT_RANGE_MB, PinTrace, pin_trace
from hil_mcu.core.simavr import (
    MAX_BOOT_DELAY_S,
    FirmwareOptions,
    OpenWatch,
    RobotWiring,
    SerialLinks,
    SimavrProcess,
    SoftUartSpec,
    build_firmware,
    check_board,
    check_firmware,
    check_serial_pins,
    coupling_text,
    cycles,
    harness,
    load_robot_wiring,
    parse_defines,
    profile_coupling,
    profile_firmware,
    profile_wiring,
    serial_links,
)
from hil_mcu.errors import HilMcuError

NODE_NAME = "simavr_mcu"

#: Seconds (of the MCU's clock) between diagnostics messages in lockstep.
DIAGNOSTICS_PERIOD = 1.0

PARAMETERS = (
    ParamSpec(
        "command_port",
        "mcu_command",
        "Path of the command link pty the control loop (or the user's program) opens; a bare name is"
        " in the runtime folder.",
    ),
    ParamSpec(
        "command_uart",
        0,
        "The hardware UART of the command link: 0 (Serial); on the mega2560 also 1..3 (Serial1..3).",
        min=0,
        max=3,
    ),
    ParamSpec(
        "uart_ports",
        [],
        "The board's other hardware UARTs on ptys, each N:link (e.g. 1:bluetooth, 2:gps on a mega2560);"
        " a bare link name is in the runtime folder.",
    ),
    ParamSpec(
        "soft_uart_ports",
        [],
        "Serial links on two ordinary pins (SoftwareSerial), read at the bit level, each"
        " RX:TX:BAUD:link with the firmware's RX and TX pins, 8N1 (e.g. 10:11:9600:bluetooth).",
    ),
    ParamSpec(
        "auto_reset",
        True,
        "A reader's first open of command_port resets the MCU, as DTR does on a UNO, Nano or Mega;"
        " false for boards without auto-reset.",
    ),
    ParamSpec(
        "boot_delay",
        -1.0,
        "Seconds the bootloader waits after a reset before the sketch starts; -1: the board's"
        " (uno, nano 1.375: optiboot; mega2560 1.0: stk500v2).",
        min=-1.0,
        max=MAX_BOOT_DELAY_S,
    ),
    ParamSpec(
        "signal_port",
        "signal_link",
        "Path of the signal link pty the signal bridge opens; a bare name is in the runtime folder.",
    ),
    ParamSpec(
        "radio_port",
        "",
        "Path of the radio link pty (the emulated SC16IS750's UART) the radio module opens;"
        " empty: no radio link.",
    ),
    ParamSpec("checked", False, "Checked mode on every link (the firmware is built with HIL_CHECKED=1)."),
    ParamSpec(
        "robot",
        "",
        "Robot profile (a shipped robot's name, a robot folder or its robot.yaml): the board, the firmware"
        " (its sketch built with its libraries, defines and strict flag, or its ELF), the pins (coupling)"
        " and the command UART are its own, and board, wiring, device_set and command_uart are not read;"
        " empty: those parameters, robot_mcu's firmware.",
    ),
    ParamSpec(
        "firmware", "", "Firmware ELF to run; empty: the robot profile's, or firmware/robot_mcu built."
    ),
    ParamSpec(
        "firmware_defines",
        [],
        "Extra build options of robot_mcu as NAME=VALUE (e.g. MCU_WATCHDOG_MS=0, the fault build).",
    ),
    ParamSpec(
        "board",
        "nano",
        "Board the firmware is built for and runs on: nano or uno (ATmega328P), mega2560 (ATmega2560);"
        " its MCU must be the wiring's.",
    ),
    ParamSpec(
        "wiring", "", "Robot wiring YAML (device signal -> MCU pin); empty: firmware/robot_mcu/wiring.yaml."
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
    ParamSpec("signal_period", 0.005, "Seconds between signal frames (5 ms = 200 Hz).", min=0.0005, max=1.0),
    ParamSpec(
        "stats_period", 1.0, "Wall seconds between the harness's reports (real time).", min=0.05, max=60.0
    ),
    ParamSpec("build_dir", "", "Where firmware builds are cached; empty: firmware/build/simavr."),
    ParamSpec(
        "trace_pins",
        "",
        "Pins to trace into a VCD file, comma-separated: the wiring's device.signal or device.pin"
        " (a device's name: all its pins), raw pins (D9, A0, PB1), UART lines (uart0.tx, uart0.rx);"
        " empty: no trace.",
    ),
    ParamSpec("trace_file", TRACE_FILE, "The pin trace's VCD file (relative: from the working folder)."),
    ParamSpec(
        "trace_limit_mb",
        TRACE_LIMIT_MB,
        "The pin trace stops, saying so, once its file reaches this many megabytes.",
        min=TRACE_LIMIT_RANGE_MB[0],
        max=TRACE_LIMIT_RANGE_MB[1],
    ),
    CLOCK_TIMEOUT,
)


class SimavrMcuNode(Node):
    """The firmware in simavr: its ptys, the harness process, resets, diagnostics."""

    def __init__(self, **node_options: Any) -> None:
        super().__init__(NODE_NAME, **node_options)
        params = declare_parameters(self, PARAMETERS)
        log = self.get_logger()
        self.checked = params.as_bool("checked")
        robot = params.as_str("robot")
        #: The robot profile the node runs (None: the board, wiring and device_set parameters).
        self.profile: RobotProfile | None = (
            load_profile(robot, library=device_library(params.as_strings("device_configs")))
            if robot
            else None
        )
        self.board = self.profile.board if self.profile else params.as_str("board")
        links = serial_links(
            self.board,
            command_uart=self.profile.command.uart if self.profile else params.as_int("command_uart"),
            uart_ports=params.as_strings("uart_ports"),
            soft_uart_ports=params.as_strings("soft_uart_ports"),
        )
        self.command_uart = links.command_uart
        ports = {name: str(link_path(params.as_str(name))) for name in ("command_port", "signal_port")}
        radio_port = params.as_str("radio_port")
        if radio_port:
            radio_port = ports["radio_port"] = str(link_path(radio_port))
        ports.update({f"uart_ports[{n}]": str(link_path(link)) for n, link in links.uarts.items()})
        ports.update(
            {f"soft_uart_ports[{i}]": str(link_path(s.link)) for i, s in enumerate(links.soft_uarts)}
        )
        # Now, not after a firmware build.
        check_distinct(*ports.values(), names=tuple(ports))
        for port in ports.values():
            prepare_link_folder(port)
        self.auto_reset = params.as_bool("auto_reset")
        #: The bootloader's wait after a reset (None: the board's).
        self.boot_delay = params.as_float("boot_delay") if params.as_float("boot_delay") >= 0 else None
        self.coupling, wiring = self._coupling(params, links)
        #: The pin trace the harness writes, or None.
        self.trace: PinTrace | None = pin_trace(
            params.as_str("trace_pins"),
            wiring,
            path=params.as_str("trace_file"),
            limit_mb=params.as_float("trace_limit_mb"),
        )
        self.executable = harness(progress=log.info)
        self.elf = self._firmware(params)
        self.stats_period = params.as_float("stats_period")
        #: The simulated clock, read at each report (None off use_sim_time and in lockstep).
        self.sim_clock = sim_clock_of(self, params.as_float("clock_timeout"))
        #: The harness's last counters (see firmware/simavr/harness.c's stats line).
        self.stats: dict[str, Any] = {}
        self.process: SimavrProcess | None = None
        self.clock: SimulatedClock = time.monotonic
        self._start_time = 0.0
        self._running_time = RunningTime()
        self._next_report = self._advancing_to = 0.0  # the time of the step under way (lockstep)
        self._previous: tuple[float, float, float] | None = None  # wall, avr seconds, dropped
        self.diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", qos.PUBLISHER)
        self._stop = threading.Event()
        self._reset_pending = self._trace_cut_told = False
        self._thread = node_thread(self, self.run, name="simavr-mcu", stopping=self._stop)
        self.create_service(Trigger, "~/reset", self._on_reset)
        log.info(
            f"firmware {self.elf} in simavr: " + ", ".join(f"{name} {path}" for name, path in ports.items())
        )
        # The ptys come last: once their links exist, nothing else in here can fail
        # and leave them behind.
        pairs = list(pty_pairs(*ports.values(), names=tuple(ports)))
        self.command, self.signal = pairs.pop(0), pairs.pop(0)
        #: The radio link's pty, or None without ``radio_port``.
        self.radio: PtyPair | None = pairs.pop(0) if radio_port else None
        #: The other hardware UARTs' ptys, by UART number.
        self.uarts: dict[int, PtyPair] = {n: pairs.pop(0) for n in links.uarts}
        #: The soft UARTs' ptys, with their pins and baud rates.
        self.soft_uarts: list[tuple[SoftUartSpec, PtyPair]] = [(s, pairs.pop(0)) for s in links.soft_uarts]
        #: The watch on the command pty's opens (auto_reset), made with the pty.
        self.open_watch: OpenWatch | None = None
        if self.auto_reset:
            try:
                self.open_watch = OpenWatch(self.command.slave_name)
            except HilMcuError:
                self._close_ptys()
                raise

    def _coupling(self, params: ParamValues, links: SerialLinks) -> tuple[str, RobotWiring]:
        """The harness's coupling and the wiring: the profile's pins, or the wiring and device_set's."""
        period = params.as_float("signal_period")
        if self.profile is not None:
            wiring = profile_wiring(self.profile)
            check_serial_pins(links, wiring)
            return profile_coupling(self.profile, period=period), wiring
        layout = signal_layout(params.as_str("device_set"), params.as_strings("device_configs"))
        wiring = load_robot_wiring(params.as_str("wiring"))
        check_board(wiring, self.board)
        check_serial_pins(links, wiring)
        return coupling_text(layout, wiring, period=period), wiring

    def _firmware(self, params: ParamValues) -> Path:
        """The ELF to run: the ``firmware`` parameter's (checked), the profile's, or robot_mcu built."""
        firmware = params.as_str("firmware")
        if firmware:
            return check_firmware(firmware)
        defines = parse_defines(params.as_strings("firmware_defines"))
        build_dir = params.as_str("build_dir")
        root = Path(build_dir) if build_dir else None
        if self.profile is not None:
            return profile_firmware(
                self.profile,
                checked=self.checked,
                defines=defines,
                build_root=root,
                progress=self.get_logger().info,
            )
        options = FirmwareOptions(board=self.board, checked=self.checked, defines=defines)
        return build_firmware(options, build_root=root, progress=self.get_logger().info)

    def _spawn(self, *, lockstep: bool) -> SimavrProcess:
        return SimavrProcess(
            self.elf,
            uarts={
                self.command_uart: self.command.master_fd,
                **{n: pair.master_fd for n, pair in self.uarts.items()},
            },
            soft_uarts=[
                SoftUartSpec(spec.rx, spec.tx, spec.baud, str(pair.master_fd))
                for spec, pair in self.soft_uarts
            ],
            open_watch=self.open_watch,
            boot_delay=self.boot_delay,
            signal_fd=self.signal.master_fd,
            radio_fd=self.radio.master_fd if self.radio is not None else None,
            coupling=self.coupling,
            checked=self.checked,
            lockstep=lockstep,
            stats_period=self.stats_period,
            executable=self.executable,
            board=self.board,
            on_warning=lambda text: self.get_logger().warning(f"simavr: {text}"),
            trace=self.trace,
        )

    def start(self) -> None:
        """Real time: power the AVR on, paced to the wall clock by the harness."""
        self.process = self._spawn(lockstep=False)
        self._thread.start()

    def harness_ptys(self) -> dict[str, PtyPair]:
        """Its ptys by the names the harness counts their bytes under (``SimavrProcess.link_bytes``)."""
        ptys = {"signal": self.signal, f"uart{self.command_uart}": self.command}
        ptys |= {f"uart{n}": pty for n, pty in self.uarts.items()}
        return ptys | ({"radio": self.radio} if self.radio is not None else {})

    def follow(self, clock: SimulatedClock) -> None:
        """Lockstep: power the AVR on now; :meth:`advance_to` advances it to the clock's time."""
        self._running_time = running = RunningTime()
        self.clock = lambda: running.at(clock())
        self.sim_clock = None  # the clock moves as the AVR is stepped: nothing to watch
        self._start_time = self.clock()
        self._next_report = self._start_time
        if self.process is not None:
            self.process.stop()
        self.process = self._spawn(lockstep=True)

    def reset_mcu(self) -> None:
        """Reset the MCU as its reset button does; in lockstep at the start of the next step.

        Raises:
            HilMcuError: before the harness started, or the harness died.
        """
        process = self.process
        if process is None:
            raise HilMcuError("simavr_mcu: reset before the MCU is powered on")
        if process.lockstep:
            self._reset_pending = True  # done by advance_to(), in the driver's order
        else:
            process.reset()

    def _on_reset(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        try:
            self.reset_mcu()
        except HilMcuError as exc:
            response.success, response.message = False, str(exc)
            return response
        response.success = True
        response.message = "reset" + (" at the next step" if self._reset_pending else "")
        return response

    def advance_to(self, t: float) -> None:
        """Lockstep: run the AVR up to simulated time ``t``; its bytes are in the ptys on return.

        The AVR's time runs on across a world reset (:class:`RunningTime`), as a real one's does.
        """
        self.start_advance(t)
        self.finish_advance()

    def start_advance(self, t: float) -> None:
        """Lockstep: set the AVR running up to simulated time ``t`` in its harness, and return.

        :meth:`finish_advance` waits for it: several harnesses run a step side by side.
        """
        process = self.process
        if process is None:
            raise HilMcuError("simavr_mcu: advance_to() before follow()")
        self._advancing_to = now = self._running_time.at(t)
        if self._reset_pending:
            self._reset_pending = False
            process.reset()
        process.start_run(cycles(now - self._start_time))

    def finish_advance(self) -> None:
        """Lockstep: wait for the step :meth:`start_advance` began; its bytes are in the ptys then."""
        process, now = self.process, self._advancing_to
        assert process is not None
        process.finish_run()
        if now >= self._next_report:
            self._next_report = now + DIAGNOSTICS_PERIOD
            self.stats = process.stats()
            self.publish_diagnostics()

    def run(self) -> None:
        """Real time: read the harness's stats lines until it exits or the node stops."""
        process = self.process
        assert process is not None
        while not self._stop.is_set():
            stats = process.read_stats()
            if stats is None:
                if self._stop.is_set():
                    return
                raise HilMcuError(f"the firmware harness hil_simavr stopped: {process.failure()}")
            self.stats = stats
            self.publish_diagnostics()

    def stop(self) -> None:
        """Stop the harness and close the ptys (which removes their links)."""
        self._stop.set()
        if self.process is not None:
            self.process.stop()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        self._close_ptys()

    def _close_ptys(self) -> None:
        if self.open_watch is not None:
            self.open_watch.close()
        for pair in (self.command, self.signal, self.radio, *self.uarts.values()):
            if pair is not None:
                pair.close()
        for _spec, pair in self.soft_uarts:
            pair.close()

    def publish_diagnostics(self) -> None:
        """The harness's counters on ``diagnostics``; WARN while the AVR lags the wall clock."""
        stats = self.stats
        cut = stats.get("trace_cut_at_s")
        if cut is not None and self.trace is not None and not self._trace_cut_told:
            self._trace_cut_told = True
            self.get_logger().warning(
                f"pin trace {self.trace.path} reached its size limit of {self.trace.limit_bytes / 1e6:g} MB"
                f" at {cut:.3f} s of the firmware's time: nothing after that is in it (trace_limit_mb)"
            )
        wall, avr, dropped = (
            float(stats.get("wall_seconds", 0.0)),
            float(stats.get("avr_seconds", 0.0)),
            float(stats.get("behind_dropped_s", 0.0)),
        )
        previous, self._previous = self._previous, (wall, avr, dropped)
        ratio = (avr - previous[1]) / (wall - previous[0]) if previous and wall > previous[0] else 0.0
        lagging = previous is not None and dropped > previous[2]
        stopped = self.sim_clock.stopped() if self.sim_clock is not None else None
        if stopped is not None:
            level, text = DiagnosticStatus.ERROR, stopped
        elif self.process is not None and self.process.lockstep:
            level, text = DiagnosticStatus.OK, "lockstep"
        elif lagging:
            level, text = DiagnosticStatus.WARN, f"slower than real time ({ratio:.2f}x), time given up"
        else:
            level, text = DiagnosticStatus.OK, "running"
        values: dict[str, object] = {
            "firmware": str(self.elf),
            "command_port": self.command.path,
            "signal_port": self.signal.path,
            "radio_port": self.radio.path if self.radio is not None else "",
            "command_uart": self.command_uart,
            "uart_ports": ", ".join(f"{n}:{pair.path}" for n, pair in self.uarts.items()),
            "soft_uart_ports": ", ".join(
                f"{s.rx}:{s.tx}:{s.baud}:{pair.path}" for s, pair in self.soft_uarts
            ),
            "trace_file": str(self.trace.path) if self.trace is not None else "",
            "avr_time_per_wall_time": round(ratio, 3),
            **stats,
        }
        array = diagnostic_array(
            self,
            name="firmware in simavr",
            level=level,
            message=text,
            values=values,
            hardware_id=self.command.path,
        )
        self.diagnostics.publish(array)


def main(args: list[str] | None = None) -> int:
    """Run the firmware in simavr until shut down; exit 2 on a bad configuration or build."""
    return run_node(SimavrMcuNode, name=NODE_NAME, config_errors=(HilError,), args=args)


if __name__ == "__main__":
    sys.exit(main())
