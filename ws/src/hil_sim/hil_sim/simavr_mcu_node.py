"""``simavr_mcu``: the compiled robot firmware in simavr, on the same two ptys as the virtual MCU.

The MCU under test is literally the program that is flashed to the robot: the node
builds ``firmware/robot_mcu`` with avr-gcc (cached), starts the ``hil_simavr``
harness (libsimavr; ``board`` nano or uno: ATmega328P, mega2560: ATmega2560; 16 MHz)
and hands it the masters of two ptys:

* ``command_port``: the firmware's UART, opened by the control loop like a real port;
* ``signal_port``: the firmware's pins in the signal protocol, opened by the signal
  bridge like a bridge board;
* ``radio_port`` (optional): the UART of the SC16IS750 I2C-to-UART bridge the harness
  emulates on the firmware's I2C bus, opened by the robot's radio module. Empty: no
  bridge answers, the firmware has no radio link.

Time: started normally (``start``), the harness paces the AVR to the wall clock by
itself; in a lockstep run (``use_clock``) :meth:`tick` advances the AVR by the cycles
of each simulated period. The harness's counters (simulated MHz per wall second,
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.node import Node

from hil_bridge import qos
from hil_bridge.core.defaults import signal_layout
from hil_bridge.core.param_spec import ParamSpec
from hil_bridge.core.pty_link import PtyPair, check_distinct, prepare_link_folder, pty_pairs
from hil_bridge.core.runtime_dir import link_path
from hil_bridge.errors import HilBridgeError
from hil_bridge.node_runtime import CLOCK_TIMEOUT, diagnostic_array, node_thread, run_node, sim_clock_of
from hil_bridge.parameters import declare_parameters
from hil_sim.core.simavr import (
    FirmwareOptions,
    SimavrProcess,
    build_firmware,
    check_board,
    check_firmware,
    coupling_text,
    cycles,
    harness,
    load_robot_wiring,
    parse_defines,
)
from hil_sim.errors import HilSimError

NODE_NAME = "simavr_mcu"

#: Seconds (of the MCU's clock) between diagnostics messages in lockstep.
DIAGNOSTICS_PERIOD = 1.0

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
        "Path of the radio link pty (the emulated SC16IS750's UART) the radio module opens;"
        " empty: no radio link.",
    ),
    ParamSpec("checked", False, "Checked mode on every link (the firmware is built with HIL_CHECKED=1)."),
    ParamSpec("firmware", "", "Firmware ELF to run; empty: build firmware/robot_mcu for these options."),
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
    CLOCK_TIMEOUT,
)


class SimavrMcuNode(Node):
    """The firmware in simavr: two ptys, the harness process, diagnostics."""

    def __init__(self, **node_options: Any) -> None:
        super().__init__(NODE_NAME, **node_options)
        params = declare_parameters(self, PARAMETERS)
        log = self.get_logger()
        self.checked = params.as_bool("checked")
        ports = {name: str(link_path(params.as_str(name))) for name in ("command_port", "signal_port")}
        radio_port = params.as_str("radio_port")
        if radio_port:
            radio_port = ports["radio_port"] = str(link_path(radio_port))
        # Now, not after a firmware build.
        check_distinct(*ports.values(), names=tuple(ports))
        for port in ports.values():
            prepare_link_folder(port)
        layout = signal_layout(params.as_str("device_set"), params.as_strings("device_configs"))
        wiring = load_robot_wiring(params.as_str("wiring"))
        self.board = params.as_str("board")
        check_board(wiring, self.board)
        self.coupling = coupling_text(layout, wiring, period=params.as_float("signal_period"))
        self.executable = harness(progress=log.info)
        firmware = params.as_str("firmware")
        if firmware:
            self.elf = check_firmware(firmware)
        else:
            options = FirmwareOptions(
                board=self.board,
                checked=self.checked,
                defines=parse_defines(params.as_strings("firmware_defines")),
            )
            build_dir = params.as_str("build_dir")
            self.elf = build_firmware(
                options, build_root=Path(build_dir) if build_dir else None, progress=log.info
            )
        self.stats_period = params.as_float("stats_period")
        #: The simulated clock, read at each report (None off use_sim_time and in lockstep).
        self.sim_clock = sim_clock_of(self, params.as_float("clock_timeout"))
        #: The harness's last counters (see firmware/simavr/harness.c's stats line).
        self.stats: dict[str, Any] = {}
        self.process: SimavrProcess | None = None
        self.clock: Callable[[], float] = time.monotonic
        self._start_time = 0.0
        self._next_report = 0.0
        self._previous: tuple[float, float, float] | None = None  # wall, avr seconds, dropped
        self.diagnostics = self.create_publisher(DiagnosticArray, "diagnostics", qos.PUBLISHER)
        self._stop = threading.Event()
        self._thread = node_thread(self, self.run, name="simavr-mcu", stopping=self._stop)
        log.info(
            f"firmware {self.elf} in simavr: command link {ports['command_port']},"
            f" signal link {ports['signal_port']}"
            + (f", radio link {radio_port}" if radio_port else "")
            + (" (checked)" if self.checked else "")
        )
        # The ptys come last: once their links exist, nothing else in here can fail
        # and leave them behind.
        pairs = pty_pairs(*ports.values(), names=tuple(ports))
        self.command, self.signal = pairs[0], pairs[1]
        #: The radio link's pty, or None without ``radio_port``.
        self.radio: PtyPair | None = pairs[2] if radio_port else None

    def _spawn(self, *, lockstep: bool) -> SimavrProcess:
        return SimavrProcess(
            self.elf,
            command_fd=self.command.master_fd,
            signal_fd=self.signal.master_fd,
            radio_fd=self.radio.master_fd if self.radio is not None else None,
            coupling=self.coupling,
            checked=self.checked,
            lockstep=lockstep,
            stats_period=self.stats_period,
            executable=self.executable,
            board=self.board,
            on_warning=lambda text: self.get_logger().warning(f"simavr: {text}"),
        )

    def start(self) -> None:
        """Power the AVR on, paced to the wall clock by the harness."""
        self.process = self._spawn(lockstep=False)
        self._thread.start()

    def use_clock(self, clock: Callable[[], float]) -> None:
        """Lockstep: power the AVR on now; :meth:`tick` advances it to the clock's time."""
        self.clock = clock
        self.sim_clock = None  # the clock moves as the AVR is stepped: nothing to watch
        self._start_time = clock()
        self._next_report = self._start_time
        if self.process is not None:
            self.process.stop()
        self.process = self._spawn(lockstep=True)

    def tick(self, now: float) -> None:
        """Lockstep: run the AVR up to ``now``; its bytes are in the ptys on return."""
        process = self.process
        if process is None:
            raise HilSimError("simavr_mcu: tick() before use_clock()")
        process.run_to(cycles(now - self._start_time))
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
                raise HilSimError(f"the firmware harness hil_simavr stopped: {process.failure()}")
            self.stats = stats
            self.publish_diagnostics()

    def stop(self) -> None:
        """Stop the harness and close the ptys (which removes their links)."""
        self._stop.set()
        if self.process is not None:
            self.process.stop()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        self.command.close()
        self.signal.close()
        if self.radio is not None:
            self.radio.close()

    def publish_diagnostics(self) -> None:
        """The harness's counters on ``diagnostics``; WARN while the AVR lags the wall clock."""
        stats = self.stats
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
    return run_node(SimavrMcuNode, name=NODE_NAME, config_errors=(HilSimError, HilBridgeError), args=args)


if __name__ == "__main__":
    sys.exit(main())
