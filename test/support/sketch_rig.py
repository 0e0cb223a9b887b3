"""A test sketch in the hil_simavr harness, in lockstep over real ptys.

:class:`SketchRig` builds an Arduino sketch for a board (cached by its sources), couples
it to a device set given as device configs (the shipped library's: :func:`library_device`) and
pins and parameters (:func:`hil_mcu.core.simavr.coupling_text`, as the simavr_mcu node does),
and runs it in lockstep: the test reads the sketch's
``Serial`` lines on the command pty (pyserial) and its pins as the signal link's frames
(hil_bridge's decoder), and writes sensor values as frames, as the signal bridge would.
Frames are checked, so every value round-trips exactly. The sketch's other serial links
(hardware UARTs, SoftwareSerial pins) are ptys too, read every step (:meth:`SketchRig.take`);
with ``auto_reset`` the command pty is watched for opens, and opened when the test says
(:meth:`SketchRig.open_command`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import serial

from hil_bridge.core.pty_link import PtyPair
from hil_bridge.core.signal_protocol import FrameDecoder, FrameEncoder, SignalLayout
from hil_devices.core.devices import DeviceConfig, DeviceInstance, device_from_mapping
from hil_devices.core.library import load_device_library
from hil_mcu.core.pin_trace import PinTrace
from hil_mcu.core.simavr import (
    FirmwareOptions,
    OpenWatch,
    RobotWiring,
    SimavrProcess,
    SoftUartSpec,
    build_firmware,
    coupling_text,
    cycles,
)

#: The test sketches (one folder each, ``<name>/<name>.ino``).
SKETCHES = Path(__file__).resolve().parents[2] / "ws" / "src" / "hil_mcu" / "test" / "sketches"
#: The device library the bridge board and the harness share.
LIBRARY_DIR = Path(__file__).resolve().parents[2] / "ws" / "src" / "hil_devices" / "config" / "devices"
#: Where their builds are kept between runs (keyed by sources, board and defines).
BUILD_CACHE = Path(tempfile.gettempdir()) / "hil-test-sketches"
#: Simulated seconds per step: the signal period.
STEP_S = 0.005
BAUD = 115200


def device(name: str, signals: Sequence[Mapping[str, Any]], handler: Mapping[str, Any] | None = None) -> Any:
    """A device config as its JSON would give it."""
    data: dict[str, Any] = {"name": name, "signals": [dict(s) for s in signals]}
    if handler is not None:
        data["handler"] = dict(handler)
    return device_from_mapping(data, source=f"<test device {name}>")


def library_device(name: str) -> DeviceConfig:
    """A device config of the shipped library."""
    return load_device_library([LIBRARY_DIR])[name]


class SketchRig:
    """One sketch on one board, its devices wired to its pins.

    Args:
        sketch: folder name under :data:`SKETCHES`.
        board: uno, nano or mega2560.
        devices: (instance name, device config) in signal-link order.
        pins: ``device.signal`` or ``device.handler_pin`` -> pin (``"9"``, ``"A0"``).
        defines: ``-D`` macros of the sketch.
        params: device parameters over their configs' defaults (device -> name -> value).
        command_uart: the hardware UART of the command pty.
        uarts: other hardware UARTs on ptys (their lines: ``take("uart<n>")``).
        soft_uarts: (rx, tx, baud) SoftwareSerial links on ptys (``take("soft<i>")``).
        auto_reset: the command pty's first open resets the AVR; the test opens it
            (:meth:`open_command`) instead of the rig at the start.
        boot_delay: the bootloader's wait after a reset (None: the board's).
        step: simulated seconds per step.
        trace: a pin trace the harness writes (:mod:`hil_mcu.core.pin_trace`).
    """

    def __init__(
        self,
        sketch: str,
        *,
        board: str,
        devices: Sequence[tuple[str, Any]] = (),
        pins: Mapping[str, str] | None = None,
        defines: Mapping[str, str | int] | None = None,
        params: Mapping[str, Mapping[str, float]] | None = None,
        command_uart: int = 0,
        uarts: Sequence[int] = (),
        soft_uarts: Sequence[tuple[int, int, int]] = (),
        auto_reset: bool = False,
        boot_delay: float | None = None,
        step: float = STEP_S,
        trace: PinTrace | None = None,
    ) -> None:
        elf = build_firmware(
            FirmwareOptions(board=board, defines=dict(defines or {})),
            sketch=SKETCHES / sketch,
            build_root=BUILD_CACHE,
        )
        self.layout = SignalLayout([DeviceInstance(name, config) for name, config in devices])
        wiring = RobotWiring(board, dict(pins or {}), f"<{sketch} wiring>")
        self.step = step
        self.command = PtyPair()
        self.signal = PtyPair()
        self.uarts = {number: PtyPair() for number in uarts}
        self.soft_uarts = [(SoftUartSpec(rx, tx, baud), PtyPair()) for rx, tx, baud in soft_uarts]
        self.watch = OpenWatch(self.command.slave_name) if auto_reset else None
        self.port: serial.Serial | None = None if auto_reset else self.open_command()
        self.bridge = serial.Serial(self.signal.slave_name, BAUD, timeout=0)
        #: The other links' ports (pyserial on their ptys), by name: uart<n>, soft<i>.
        self.ports = {
            f"uart{n}": serial.Serial(pair.slave_name, BAUD, timeout=0) for n, pair in self.uarts.items()
        }
        self.ports.update(
            {
                f"soft{i}": serial.Serial(pair.slave_name, BAUD, timeout=0)
                for i, (_, pair) in enumerate(self.soft_uarts)
            }
        )
        self._port_lines: dict[str, list[str]] = {name: [] for name in self.ports}
        self._port_partial = dict.fromkeys(self.ports, b"")
        self.decoder = FrameDecoder(self.layout.inputs, checked=True) if self.layout.inputs else None
        self.encoder = FrameEncoder(self.layout.outputs, checked=True) if self.layout.outputs else None
        self.warnings: list[str] = []
        self.process = SimavrProcess(
            elf,
            uarts={
                command_uart: self.command.master_fd,
                **{n: pair.master_fd for n, pair in self.uarts.items()},
            },
            soft_uarts=[
                SoftUartSpec(spec.rx, spec.tx, spec.baud, str(pair.master_fd))
                for spec, pair in self.soft_uarts
            ],
            open_watch=self.watch,
            boot_delay=boot_delay,
            signal_fd=self.signal.master_fd,
            coupling=coupling_text(self.layout, wiring, params=params),
            checked=True,
            lockstep=True,
            board=board,
            on_warning=self.warnings.append,
            trace=trace,
        )
        self.now = 0.0
        self.values: dict[str, float] = {}
        self._partial = b""
        self._lines: list[str] = []
        self._outputs = {f"{slot.device}.{slot.name}": slot.spec.default for slot in self.layout.outputs}

    def open_command(self) -> serial.Serial:
        """Open the command pty (pyserial, as a user's program does): with auto_reset, a reset."""
        self.port = serial.Serial(self.command.slave_name, BAUD, timeout=0)
        return self.port

    def close_command(self) -> None:
        """Close the command pty's port."""
        if self.port is not None:
            self.port.close()
            self.port = None

    def set(self, **values: float) -> None:
        """Sensor values (``device__signal=value``) sent from now on, every step."""
        for key, value in values.items():
            self._outputs[key.replace("__", ".")] = value

    def advance(self, seconds: float) -> list[str]:
        """Let ``seconds`` of AVR time pass; the sketch's whole lines written meanwhile."""
        self._run(seconds)
        lines, self._lines = self._lines, []
        return lines

    def _run(self, seconds: float) -> None:
        end = self.now + seconds
        while self.now < end - 1e-9:
            if self.encoder is not None:
                self.bridge.write(self.encoder.encode(list(self._outputs.values())))
            self.now = min(end, self.now + self.step)
            self.process.run_to(cycles(self.now))
            self._read()

    def _read(self) -> None:
        if self.decoder is not None and (frames := self.decoder.feed(self.bridge.read(65536))):
            last = frames[-1]
            self.values = {
                f"{s.device}.{s.name}": v for s, v in zip(self.layout.inputs, last.values, strict=True)
            }
        if self.port is not None:
            data = self._partial + self.port.read(65536)
            *whole, self._partial = data.split(b"\n")
            self._lines += [line.decode("ascii", "replace").strip() for line in whole]
        for name, port in self.ports.items():
            data = self._port_partial[name] + port.read(65536)
            *whole, self._port_partial[name] = data.split(b"\n")
            self._port_lines[name] += [line.decode("ascii", "replace").strip() for line in whole]

    def take(self, name: str) -> list[str]:
        """The whole lines a link (``command``, ``uart<n>``, ``soft<i>``) brought since the last call."""
        if name == "command":
            lines, self._lines = self._lines, []
        else:
            lines, self._port_lines[name] = self._port_lines[name], []
        return lines

    def partial(self, name: str) -> bytes:
        """What a link (``uart<n>``, ``soft<i>``) has brought of a line not whole yet."""
        return self._port_partial[name]

    def wait_for(self, name: str, pattern: str, *, timeout: float) -> list[str]:
        """Advance until a line of ``name`` (``command`` or another link) contains ``pattern``.

        Returns every line of that link up to and including it; fails the test after
        ``timeout`` simulated seconds.
        """
        got: list[str] = []
        waited = 0.0
        while not any(pattern in line for line in got):
            assert waited < timeout, f"no {pattern!r} on {name} within {timeout} s: {got}"
            self._run(self.step)
            got += self.take(name)
            waited += self.step
        return got

    def command_line(self, line: str, *, timeout: float = 0.5) -> list[str]:
        """Write ``line`` to the sketch's Serial; its lines up to its ``ok``."""
        assert self.port is not None, "the command port is closed"
        self.port.write(line.encode() + b"\n")
        got: list[str] = []
        waited = 0.0
        while "ok" not in got:
            assert waited < timeout, f"no ok for {line!r}: {got}"
            got += self.advance(STEP_S)
            waited += STEP_S
        return got

    def stats(self) -> dict[str, Any]:
        """The harness's counters."""
        return self.process.stats()

    def close(self) -> None:
        """Stop the harness and close the ports."""
        self.process.stop()
        self.close_command()
        self.bridge.close()
        for port in self.ports.values():
            port.close()
        for pair in (self.command, self.signal, *self.uarts.values(), *(p for _, p in self.soft_uarts)):
            pair.close()
        if self.watch is not None:
            self.watch.close()
