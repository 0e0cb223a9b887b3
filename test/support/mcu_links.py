"""Robot MCUs on real ptys, driven in simulated time: the virtual MCU and the firmware in simavr.

Both sit behind :class:`PtyMcu`: the test talks to the command link with pyserial on
the pty, as the control loop does, and reads the pins off the signal link with
hil_bridge's frame decoder, as the signal bridge does. Time only moves when the test
says so (:meth:`PtyMcu.advance`), so every figure is exact and independent of load:

* :class:`VirtualPtyMcu` runs hil_sim's :class:`VirtualMcu` core, ticked every 1 ms;
* :class:`SimavrPtyMcu` runs the compiled ``robot_mcu`` in the ``hil_simavr`` harness
  in lockstep (cycles of the ATmega328P at 16 MHz).

They implement :class:`support.mcu_vectors.McuUnderTest`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path

import serial

from hil_bridge.core.defaults import signal_layout, telemetry_schema
from hil_bridge.core.pty_link import PtyPair
from hil_bridge.core.signal_protocol import FrameDecoder, FrameEncoder, SignalLayout
from hil_sim.core.simavr import (
    FirmwareOptions,
    SimavrProcess,
    build_firmware,
    coupling_text,
    cycles,
    load_robot_wiring,
)
from hil_sim.core.virtual_mcu import McuConfig, VirtualMcu

#: Baud rates of robot_control and hil_bridge (the ptys ignore them; pyserial wants one).
COMMAND_BAUD, SIGNAL_BAUD = 38400, 115200
#: Simulated seconds per advance step: the signal period.
STEP_S = 0.005
#: Time a byte takes on the command link at 38400 baud (10 bits), with a margin.
BYTE_S = 10 / COMMAND_BAUD * 1.5


@functools.cache
def layout() -> SignalLayout:
    """The demo robot's signal layout."""
    return signal_layout()


@functools.cache
def firmware(**defines: str | int) -> Path:
    """robot_mcu for the Nano, built once per set of defines (cached across runs too)."""
    return build_firmware(FirmwareOptions(defines=defines))


class PtyMcu:
    """An MCU behind two ptys; subclasses move its time."""

    name = "mcu"

    def __init__(self) -> None:
        self.command = PtyPair()
        self.signal = PtyPair()
        self.port = serial.Serial(self.command.slave_name, COMMAND_BAUD, timeout=0)
        self.bridge = serial.Serial(self.signal.slave_name, SIGNAL_BAUD, timeout=0)
        self.frames = FrameDecoder(layout().inputs)
        self.sensor_frames = FrameEncoder(layout().outputs)
        self.now = 0.0
        self._pending = b""
        self.pins: tuple[float, ...] = tuple(slot.spec.default for slot in layout().inputs)

    # --- time -----------------------------------------------------------------------------

    def _advance_to(self, now: float) -> None:
        raise NotImplementedError

    def advance(self, seconds: float) -> list[str]:
        """Let ``seconds`` of MCU time pass; every whole line the MCU wrote meanwhile."""
        end = self.now + seconds
        while self.now < end - 1e-9:
            self.now = min(end, self.now + STEP_S)
            self._advance_to(self.now)
            self._read_pins()
        return self._lines()

    def _read_pins(self) -> None:
        frames = self.frames.feed(self.bridge.read(65536))
        if frames:
            self.pins = frames[-1].values

    def _lines(self) -> list[str]:
        self._pending += self.port.read(65536)
        *whole, self._pending = self._pending.split(b"\n")
        return [line.decode("ascii", "replace") for line in whole]

    # --- McuUnderTest -------------------------------------------------------------------------

    def exchange(self, lines: list[str]) -> list[str]:
        """Send the lines; return every line written until they were handled and output is idle."""
        data = "".join(f"{line}\n" for line in lines).encode()
        self.port.write(data)
        out = self.advance(0.010 + len(data) * BYTE_S)
        # A telemetry line in flight would otherwise end in the next call's window.
        for _ in range(40):
            if not self._pending:
                break
            out += self.advance(STEP_S)
        return out

    def after_telemetry_period(self) -> list[str]:
        """Lines up to and including the next whole telemetry round (TL1, then TL2)."""
        out: list[str] = []
        for _ in range(round(0.3 / STEP_S)):
            out += self.advance(STEP_S)
            tl1 = [i for i, line in enumerate(out) if line.startswith("TL1")]
            if tl1 and any(line.startswith("TL2") for line in out[tl1[0] :]):
                return out
        return out

    def wait(self, seconds: float) -> list[str]:
        """Let time pass with no input; the lines written meanwhile."""
        return self.advance(seconds)

    def motor_enables(self) -> tuple[float, float]:
        """The enable duty of both wheels (0..1024) as the signal link shows them."""
        index = {slot.key: i for i, slot in enumerate(layout().inputs)}
        return self.pins[index[("motor_left", "enable")]], self.pins[index[("motor_right", "enable")]]

    def send_sensors(self, values: Mapping[tuple[str, str], float]) -> None:
        """Write one frame of sensor values to the MCU, as the signal bridge would."""
        frame = [values.get(slot.key, slot.spec.default) for slot in layout().outputs]
        self.bridge.write(self.sensor_frames.encode(frame))

    def close(self) -> None:
        """Close the ports and the ptys."""
        self.port.close()
        self.bridge.close()
        self.command.close()
        self.signal.close()


class VirtualPtyMcu(PtyMcu):
    """hil_sim's virtual MCU core on the two ptys, ticked every millisecond."""

    name = "virtual"

    def __init__(self, **config: object) -> None:
        super().__init__()
        self.mcu = VirtualMcu(
            McuConfig(layout=layout(), schema=telemetry_schema(), **config),  # type: ignore[arg-type]
            start=0.0,
        )
        self._ticked = 0.0

    def _advance_to(self, now: float) -> None:
        t = self._ticked
        while t < now - 1e-9:
            t = self._ticked = min(now, t + 0.001)
            if data := self.command.read():
                self.mcu.feed_command(data, t)
            if data := self.signal.read():
                self.mcu.feed_signal(data, t)
            self.mcu.tick(t)
            self.command.write(self.mcu.take_command_output())
            self.signal.write(self.mcu.take_signal_output())


class SimavrPtyMcu(PtyMcu):
    """The compiled robot_mcu in the hil_simavr harness, in lockstep."""

    name = "simavr"

    def __init__(self, **defines: str | int) -> None:
        super().__init__()
        self.process = SimavrProcess(
            firmware(**defines),
            command_fd=self.command.master_fd,
            signal_fd=self.signal.master_fd,
            coupling=coupling_text(layout(), load_robot_wiring()),
            lockstep=True,
        )

    def _advance_to(self, now: float) -> None:
        self.process.run_to(cycles(now))

    def close(self) -> None:
        """Stop the harness, then close the ports."""
        self.process.stop()
        super().close()


MCUS = {"virtual": VirtualPtyMcu, "simavr": SimavrPtyMcu}
