"""A test sketch in the hil_simavr harness, in lockstep over real ptys.

:class:`SketchRig` builds an Arduino sketch for a board (cached by its sources), couples
it to a device set given as device configs (the shipped library's: :func:`library_device`) and
pins and parameters (:func:`hil_sim.core.simavr.coupling_text`, as the simavr_mcu node does),
and runs it in lockstep: the test reads the sketch's
``Serial`` lines on the command pty (pyserial) and its pins as the signal link's frames
(hil_bridge's decoder), and writes sensor values as frames, as the signal bridge would.
Frames are checked, so every value round-trips exactly.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import serial

from hil_bridge.core.devices import DeviceConfig, DeviceInstance, device_from_mapping, load_device_library
from hil_bridge.core.pty_link import PtyPair
from hil_bridge.core.signal_protocol import FrameDecoder, FrameEncoder, SignalLayout
from hil_sim.core.simavr import (
    FirmwareOptions,
    RobotWiring,
    SimavrProcess,
    build_firmware,
    coupling_text,
    cycles,
)

#: The test sketches (one folder each, ``<name>/<name>.ino``).
SKETCHES = Path(__file__).resolve().parents[2] / "ws" / "src" / "hil_sim" / "test" / "sketches"
#: The device library the bridge board and the harness share.
LIBRARY_DIR = Path(__file__).resolve().parents[2] / "ws" / "src" / "hil_bridge" / "config" / "devices"
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
    """

    def __init__(
        self,
        sketch: str,
        *,
        board: str,
        devices: Sequence[tuple[str, Any]],
        pins: Mapping[str, str],
        defines: Mapping[str, str | int] | None = None,
        params: Mapping[str, Mapping[str, float]] | None = None,
    ) -> None:
        elf = build_firmware(
            FirmwareOptions(board=board, defines=dict(defines or {})),
            sketch=SKETCHES / sketch,
            build_root=BUILD_CACHE,
        )
        self.layout = SignalLayout([DeviceInstance(name, config) for name, config in devices])
        wiring = RobotWiring(board, dict(pins), f"<{sketch} wiring>")
        self.command = PtyPair()
        self.signal = PtyPair()
        self.port = serial.Serial(self.command.slave_name, BAUD, timeout=0)
        self.bridge = serial.Serial(self.signal.slave_name, BAUD, timeout=0)
        self.decoder = FrameDecoder(self.layout.inputs, checked=True) if self.layout.inputs else None
        self.encoder = FrameEncoder(self.layout.outputs, checked=True) if self.layout.outputs else None
        self.warnings: list[str] = []
        self.process = SimavrProcess(
            elf,
            command_fd=self.command.master_fd,
            signal_fd=self.signal.master_fd,
            coupling=coupling_text(self.layout, wiring, params=params),
            checked=True,
            lockstep=True,
            board=board,
            on_warning=self.warnings.append,
        )
        self.now = 0.0
        self.values: dict[str, float] = {}
        self._partial = b""
        self._lines: list[str] = []
        self._outputs = {f"{slot.device}.{slot.name}": slot.spec.default for slot in self.layout.outputs}

    def set(self, **values: float) -> None:
        """Sensor values (``device__signal=value``) sent from now on, every step."""
        for key, value in values.items():
            self._outputs[key.replace("__", ".")] = value

    def advance(self, seconds: float) -> list[str]:
        """Let ``seconds`` of AVR time pass; the sketch's whole lines written meanwhile."""
        end = self.now + seconds
        while self.now < end - 1e-9:
            if self.encoder is not None:
                self.bridge.write(self.encoder.encode(list(self._outputs.values())))
            self.now = min(end, self.now + STEP_S)
            self.process.run_to(cycles(self.now))
            self._read()
        lines, self._lines = self._lines, []
        return lines

    def _read(self) -> None:
        if self.decoder is not None and (frames := self.decoder.feed(self.bridge.read(65536))):
            last = frames[-1]
            self.values = {
                f"{s.device}.{s.name}": v for s, v in zip(self.layout.inputs, last.values, strict=True)
            }
        data = self._partial + self.port.read(65536)
        *whole, self._partial = data.split(b"\n")
        self._lines += [line.decode("ascii", "replace").strip() for line in whole]

    def command_line(self, line: str, *, timeout: float = 0.5) -> list[str]:
        """Write ``line`` to the sketch's Serial; its lines up to its ``ok``."""
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
        self.port.close()
        self.bridge.close()
        self.command.close()
        self.signal.close()
