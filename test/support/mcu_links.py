"""Robot MCUs on real ptys, driven in simulated time: the virtual MCU and the firmware in simavr.

Both sit behind :class:`PtyMcu`: the test talks to the command link with pyserial on
the pty, as the control loop does, and reads the pins off the signal link with
hil_bridge's frame decoder, as the signal bridge does. Time only moves when the test
says so (:meth:`PtyMcu.advance`), so every figure is exact and independent of load:

* :class:`VirtualPtyMcu` runs hil_mcu's :class:`VirtualMcu` core, ticked every 1 ms;
* :class:`SimavrPtyMcu` runs the compiled ``robot_mcu`` in the ``hil_simavr`` harness
  in lockstep (cycles of the ATmega328P at 16 MHz).

They implement :class:`support.mcu_vectors.McuUnderTest`. With ``radio=True`` each
also has a radio link, a third pty the test speaks as the radio module would
(:class:`support.mcu_vectors.McuWithRadio`): the virtual MCU's radio link, or the
UART of the SC16IS750 bridge the harness emulates on the firmware's I2C bus. With
``checked=True`` every link is in checked mode and the test frames and checks lines
as the control loop and the module would.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path

import serial

from hil_bridge.core.defaults import signal_layout, telemetry_schema
from hil_bridge.core.line_protocol import LineDecoder, LineEncoder, Relayed
from hil_bridge.core.pty_link import PtyPair
from hil_bridge.core.signal_protocol import FrameDecoder, FrameEncoder, SignalLayout
from hil_mcu.core.simavr import (
    FirmwareOptions,
    SimavrProcess,
    build_firmware,
    coupling_text,
    cycles,
    load_robot_wiring,
)
from hil_mcu.core.virtual_mcu import McuConfig, VirtualMcu

#: Baud rates of robot_control and hil_bridge (the ptys ignore them; pyserial wants one).
COMMAND_BAUD, SIGNAL_BAUD = 38400, 115200
#: Simulated seconds per advance step: the signal period.
STEP_S = 0.005
#: Time a byte takes on the command link at 38400 baud (10 bits), with a margin.
BYTE_S = 10 / COMMAND_BAUD * 1.5
#: The radio link's baud rate (the SC16IS750's UART; the pty ignores it).
RADIO_BAUD = 115200
#: Ids the test reads back in checked mode (bodies, their check verified and removed).
READ_IDS = ("HBB", "ERR", "COM", "TL1", "TL2", "DRV", "ARM", "RTX", "RRX", "RST")


class _LineReader:
    """Whole lines from a port: as sent (plain), or checked and unwrapped (checked mode)."""

    def __init__(self, checked: bool) -> None:
        self.pending = b""
        self.decoder = LineDecoder(checked=True, relay_ids=READ_IDS) if checked else None

    def take(self, data: bytes) -> list[str]:
        self.pending += data
        *whole, self.pending = self.pending.split(b"\n")
        if self.decoder is None:
            return [line.decode("ascii", "replace") for line in whole]
        messages = self.decoder.feed(b"".join(line + b"\n" for line in whole))
        return [m.body for m in messages if isinstance(m, Relayed)]


def _framer(checked: bool) -> LineEncoder:
    return LineEncoder(checked=checked)


@functools.cache
def layout() -> SignalLayout:
    """The demo robot's signal layout."""
    return signal_layout()


@functools.cache
def firmware(checked: bool = False, **defines: str | int) -> Path:
    """robot_mcu for the Nano, built once per set of defines (cached across runs too)."""
    return build_firmware(FirmwareOptions(checked=checked, defines=defines))


class PtyMcu:
    """An MCU behind two ptys; subclasses move its time."""

    name = "mcu"

    def __init__(self, *, radio: bool = False, checked: bool = False) -> None:
        self.checked = checked
        self.command = PtyPair()
        self.signal = PtyPair()
        self.port = serial.Serial(self.command.slave_name, COMMAND_BAUD, timeout=0)
        self.bridge = serial.Serial(self.signal.slave_name, SIGNAL_BAUD, timeout=0)
        #: The radio link (None without one): the MCU's end is the pty master.
        self.radio: PtyPair | None = PtyPair() if radio else None
        self.module = (
            serial.Serial(self.radio.slave_name, RADIO_BAUD, timeout=0) if self.radio is not None else None
        )
        self.frames = FrameDecoder(layout().inputs, checked=checked)
        self.sensor_frames = FrameEncoder(layout().outputs, checked=checked)
        self.now = 0.0
        self._reader = _LineReader(checked)
        self._command_framer = _framer(checked)
        self._radio_reader = _LineReader(checked)
        self._radio_framer = _framer(checked)
        self._lines_in: list[str] = []
        self._radio_in: list[str] = []
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
            # Read every step: a pty holds a few kilobytes, a flood would fill it.
            self._lines_in += self._reader.take(self.port.read(65536))
            if self.module is not None:
                self._radio_in += self._radio_reader.take(self.module.read(65536))
        return self._lines()

    def _read_pins(self) -> None:
        frames = self.frames.feed(self.bridge.read(65536))
        if frames:
            self.pins = frames[-1].values

    def _lines(self) -> list[str]:
        self._lines_in += self._reader.take(self.port.read(65536))
        lines, self._lines_in = self._lines_in, []
        return lines

    @property
    def _pending(self) -> bytes:
        return self._reader.pending

    def frame(self, lines: list[str]) -> bytes:
        """``lines`` as the control loop writes them (checked suffix in checked mode)."""
        return b"".join(self._command_framer.encode(Relayed(line)) for line in lines)

    # --- McuUnderTest -------------------------------------------------------------------------

    def exchange(self, lines: list[str]) -> list[str]:
        """Send the lines; return every line written until they were handled and output is idle."""
        data = self.frame(lines)
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

    # --- McuWithRadio ---------------------------------------------------------------------------

    def radio_send(self, lines: list[str]) -> None:
        """Write ``lines`` to the MCU's radio link, as the radio module would."""
        assert self.module is not None, "this MCU has no radio link"
        self.module.write(b"".join(self._radio_framer.encode(Relayed(line)) for line in lines))

    def radio_send_bytes(self, data: bytes) -> None:
        """Write raw bytes to the radio link (junk, broken lines)."""
        assert self.module is not None, "this MCU has no radio link"
        self.module.write(data)

    def radio_received(self) -> list[str]:
        """Every whole line the MCU wrote to its radio link since the last call."""
        if self.module is not None:
            self._radio_in += self._radio_reader.take(self.module.read(65536))
        lines, self._radio_in = self._radio_in, []
        return lines

    def radio_counters(self) -> dict[str, int] | None:
        """The MCU's radio counters where they can be seen (None: inside the firmware)."""
        return None

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
        if self.module is not None and self.radio is not None:
            self.module.close()
            self.radio.close()


class VirtualPtyMcu(PtyMcu):
    """hil_mcu's virtual MCU core on the two ptys, ticked every millisecond."""

    name = "virtual"

    def __init__(self, *, radio: bool = False, checked: bool = False, **config: object) -> None:
        super().__init__(radio=radio, checked=checked)
        self.mcu = VirtualMcu(
            McuConfig(
                layout=layout(),
                schema=telemetry_schema(),
                radio=radio,
                checked=checked,
                **config,  # type: ignore[arg-type]
            ),
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
            if self.radio is not None and (data := self.radio.read(2048)):
                self.mcu.feed_radio(data, t)
            self.mcu.tick(t)
            self.command.write(self.mcu.take_command_output())
            self.signal.write(self.mcu.take_signal_output())
            if self.radio is not None:
                self.radio.write(self.mcu.take_radio_output())

    def radio_counters(self) -> dict[str, int] | None:
        """The core's radio counters (``VirtualMcu.counters``)."""
        return {k: v for k, v in self.mcu.counters().items() if k.startswith("radio_")}


class SimavrPtyMcu(PtyMcu):
    """The compiled robot_mcu in the hil_simavr harness, in lockstep."""

    name = "simavr"

    def __init__(self, *, radio: bool = False, checked: bool = False, **defines: str | int) -> None:
        super().__init__(radio=radio, checked=checked)
        self.process = SimavrProcess(
            firmware(checked, **defines),
            command_fd=self.command.master_fd,
            signal_fd=self.signal.master_fd,
            radio_fd=self.radio.master_fd if self.radio is not None else None,
            coupling=coupling_text(layout(), load_robot_wiring()),
            checked=checked,
            lockstep=True,
        )

    def _advance_to(self, now: float) -> None:
        self.process.run_to(cycles(now))

    def close(self) -> None:
        """Stop the harness, then close the ports."""
        self.process.stop()
        super().close()


MCUS = {"virtual": VirtualPtyMcu, "simavr": SimavrPtyMcu}
