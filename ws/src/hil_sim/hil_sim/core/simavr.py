"""The robot firmware in simavr: harness and firmware builds, pin coupling, the harness process.

The MCU under test can be the compiled ``robot_mcu`` firmware running in simavr
(ATmega328P, 16 MHz) instead of the Python virtual MCU. The emulator side is a small
C program on libsimavr, ``firmware/simavr/hil_simavr`` (DESIGN.md "Firmware in the
loop"); this module, which never imports rclpy:

* builds it (``make`` in ``firmware/simavr``, a no-op when up to date) and the
  firmware (``hil_bridge.core.avr_build``, cached by the hash of every source and
  option, so a run starts in a fraction of a second once built);
* turns the signal layout (device set) and the robot's wiring (which MCU pin each
  device signal is on: ``firmware/robot_mcu/wiring.yaml``, the same pins as
  ``pins.h``) into the harness's coupling file;
* runs the harness with the pty masters (command, signal, and the radio link's if
  the robot has one) passed as file descriptors, either on
  the wall clock (the harness paces itself and prints a stats line a second) or in
  lockstep (:meth:`SimavrProcess.run_to` advances the AVR to a cycle and returns when
  its bytes are written).

The firmware folder is ``HIL_FIRMWARE`` if set, else ``firmware/`` of the source tree
this package is in.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import select
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from hil_bridge.core.avr_build import BOARDS, build_sketch
from hil_bridge.core.config_file import load_yaml
from hil_bridge.core.devices import Direction, Handler, PinMode, SignalType
from hil_bridge.core.runtime_dir import runtime_dir
from hil_bridge.core.signal_protocol import SignalLayout, SignalSlot
from hil_bridge.core.wiring import parse_pin
from hil_bridge.errors import HilBridgeError
from hil_sim.errors import HilSimError

#: Environment variable naming the firmware sketchbook folder.
FIRMWARE_ENV = "HIL_FIRMWARE"
#: The robot MCU's clock (UNO and Nano).
FREQUENCY_HZ = 16_000_000
#: ADC reference (AVCC) in millivolts and full scale.
ADC_REFERENCE_MV = 5000.0
ADC_MAX = 1023
#: The HMC5883L's I2C address and the ATmega328P's TWI pins.
HMC5883L_ADDRESS = 0x1E
#: The radio link's SC16IS750 I2C-to-UART bridge (emulated when a radio pty is given):
#: 7-bit address, its UART's baud rate and FIFO depth (DESIGN.md "Firmware in the loop").
SC16IS750_ADDRESS = 0x4D
RADIO_BAUD = 115200
RADIO_FIFO_BYTES = 64
TWI_PINS = {"sda": 18, "scl": 19}
#: ATmega328P pins driven by a timer's compare output (analogWrite).
PWM_PINS = (3, 5, 6, 9, 10, 11)
#: How long a lockstep step may take before the harness counts as hung.
STEP_TIMEOUT_S = 60.0
#: How long the harness gets to leave after SIGTERM before it is killed.
STOP_TIMEOUT_S = 2.0

_SOURCE_FIRMWARE = Path(__file__).resolve().parents[5] / "firmware"


def firmware_dir() -> Path:
    """The Arduino sketchbook (``robot_mcu/``, ``libraries/``, ``simavr/``).

    Raises:
        HilSimError: neither ``HIL_FIRMWARE`` nor the source tree has one.
    """
    configured = os.environ.get(FIRMWARE_ENV)
    folder = Path(configured) if configured else _SOURCE_FIRMWARE
    if not (folder / "robot_mcu").is_dir():
        raise HilSimError(
            f"no firmware sketchbook at {folder} (set {FIRMWARE_ENV} to the folder holding robot_mcu/)"
        )
    return folder


def _say(progress: Callable[[str], None] | None) -> Callable[[str], None]:
    return progress or (lambda _line: None)


def harness(*, progress: Callable[[str], None] | None = None) -> Path:
    """The harness executable, built first if its sources changed.

    Raises:
        HilSimError: make or the compiler failed (libsimavr-dev missing, ...), with output.
    """
    source = firmware_dir() / "simavr"
    make = shutil.which("make")
    if make is None:
        raise HilSimError("building hil_simavr needs make (apt-get install make)")
    result = subprocess.run(
        [make, "-s", "-C", str(source)], capture_output=True, text=True, check=False, timeout=300
    )
    if result.returncode != 0:
        hint = "" if Path("/usr/include/simavr/sim_avr.h").is_file() else " (apt-get install libsimavr-dev)"
        raise HilSimError(f"building {source / 'hil_simavr.c'} failed{hint}:\n{result.stderr.strip()}")
    if result.stdout.strip() or result.stderr.strip():
        _say(progress)(f"built {source / 'build' / 'hil_simavr'}")
    return source / "build" / "hil_simavr"


@dataclass(frozen=True, kw_only=True)
class FirmwareOptions:
    """Which firmware build runs in the emulator.

    Raises:
        HilSimError: unknown board, or a define that is not ``NAME`` -> int or str.
    """

    board: str = "nano"
    checked: bool = False
    #: Extra ``-D`` macros of ``pins.h``/``mcu_core.h`` (e.g. ``MCU_WATCHDOG_MS=0``).
    defines: Mapping[str, str | int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.board not in BOARDS:
            raise HilSimError(f"firmware board {self.board!r}: expected one of {sorted(BOARDS)}")
        for name, value in self.defines.items():
            if not name.isidentifier() or isinstance(value, bool) or not isinstance(value, (int, str)):
                raise HilSimError(f"firmware define {name}={value!r}: expected NAME=<integer or text>")

    @property
    def all_defines(self) -> dict[str, str | int]:
        """Every ``-D`` macro of the build, HIL_CHECKED included."""
        return {"HIL_CHECKED": int(self.checked), **self.defines}


def parse_defines(items: Sequence[str]) -> dict[str, str | int]:
    """``["MCU_WATCHDOG_MS=0", "HAS_COMPASS=1"]`` as a mapping (integers where they are).

    Raises:
        HilSimError: an item without ``=`` or with a bad name; names the item.
    """
    defines: dict[str, str | int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier():
            raise HilSimError(f"firmware define {item!r}: expected NAME=VALUE")
        text = value.strip()
        defines[name.strip()] = int(text) if text.lstrip("-").isdigit() else text
    return defines


def _source_hash(folders: Sequence[Path], extra: str) -> str:
    digest = hashlib.sha256(extra.encode())
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "build" not in path.relative_to(folder).parts:
                digest.update(str(path.relative_to(folder)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs building the same board wait for each other
        yield


def build_firmware(
    options: FirmwareOptions,
    *,
    build_root: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """The ``robot_mcu`` ELF for ``options``, built unless a build of the same sources exists.

    Args:
        options: board, checked mode, extra defines.
        build_root: where builds are kept (default ``robot_mcu/build/simavr``).
        progress: called with a line per build step.

    Raises:
        HilSimError: no toolchain or a compiler error (with its output).
    """
    firmware = firmware_dir()
    sketch = firmware / "robot_mcu"
    defines = options.all_defines
    key = _source_hash(
        [sketch, firmware / "libraries"], json.dumps([options.board, sorted(defines.items())], default=str)
    )
    root = build_root or sketch / "build" / "simavr"
    elf = root / f"robot_mcu-{options.board}-{key}.elf"
    if elf.is_file():
        return elf
    work = root / options.board
    with _locked(root / f".{options.board}.lock"):
        if elf.is_file():
            return elf
        _say(progress)(f"building robot_mcu for simavr ({options.board}, {defines})")
        try:
            result = build_sketch(
                sketch,
                work,
                libraries=[firmware / "libraries"],
                defines=defines,
                board=options.board,
                progress=progress,
            )
        except HilBridgeError as exc:
            raise HilSimError(f"robot_mcu: {exc}") from exc
        temporary = elf.with_suffix(".tmp")
        shutil.copyfile(result.elf, temporary)
        temporary.replace(elf)
    return elf


# --- the robot's wiring and the coupling file ----------------------------------------------


@dataclass(frozen=True)
class RobotWiring:
    """Which pin of the robot MCU each device signal (or handler pin) is on."""

    board: str
    #: ``device.signal`` or ``device.handler_pin`` -> ``"5"``, ``"A0"``... as written.
    pins: Mapping[str, str]
    source: str = ""


def default_wiring_path() -> Path:
    """The demo robot's wiring, next to its ``pins.h``."""
    return firmware_dir() / "robot_mcu" / "wiring.yaml"


def load_robot_wiring(path: str | Path = "") -> RobotWiring:
    """Read a robot wiring file (``board`` + ``pins: {device.signal: pin}``).

    Raises:
        HilSimError: unreadable or malformed; names the file and key.
    """
    where = Path(path) if path else default_wiring_path()
    data = load_yaml(where, what="the robot wiring", error=HilSimError)
    if not isinstance(data, dict) or not isinstance(data.get("pins"), dict):
        raise HilSimError(f"{where}: expected a mapping with `board` and `pins: {{device.signal: pin}}`")
    unknown = sorted(set(data) - {"board", "pins"})
    if unknown:
        raise HilSimError(f"{where}: unknown keys {unknown} (expected board, pins)")
    board = str(data.get("board", "nano"))
    if board not in BOARDS:
        raise HilSimError(f"{where}: board {board!r}: expected one of {sorted(BOARDS)}")
    return RobotWiring(board, {str(k): str(v).strip().upper() for k, v in data["pins"].items()}, str(where))


def _digital(wiring: RobotWiring, key: str) -> int:
    where = f"{wiring.source}: pins.{key}"
    if key not in wiring.pins:
        raise HilSimError(f"{wiring.source}: no pin for {key}")
    try:
        return parse_pin(wiring.pins[key], key=where)
    except HilBridgeError as exc:
        raise HilSimError(str(exc)) from exc


def _adc_channel(wiring: RobotWiring, key: str) -> int:
    if key not in wiring.pins:
        raise HilSimError(f"{wiring.source}: no pin for {key}")
    pin = wiring.pins[key]
    if len(pin) == 2 and pin[0] == "A" and pin[1] in "01234567":
        channel = int(pin[1])
        if channel >= 6 and wiring.board != "nano":
            raise HilSimError(
                f"{wiring.source}: pins.{key}: {pin} exists on the Nano, not the {wiring.board}"
            )
        return channel
    raise HilSimError(f"{wiring.source}: pins.{key}: {pin!r} is not an analog input (A0..A7)")


def _units_to_mv(slot: SignalSlot) -> float:
    unit = slot.spec.unit
    if unit == "V":
        return 1000.0
    if unit == "ADC counts":
        return ADC_REFERENCE_MV / ADC_MAX
    raise HilSimError(
        f"{slot.device}.{slot.name}: an analog input of the MCU needs the unit V or 'ADC counts',"
        f" not {unit!r}"
    )


def _number(value: float) -> str:
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


def _input_line(slot: SignalSlot, wiring: RobotWiring) -> str:
    key, spec = f"{slot.device}.{slot.name}", slot.spec
    pin = _digital(wiring, key)
    head = f"in {slot.id} {_number(spec.min)} {_number(spec.max)}"
    if spec.mode is not PinMode.PWM:
        return f"{head} level {pin}"
    if pin not in PWM_PINS:
        raise HilSimError(
            f"{wiring.source}: pins.{key}: pin {pin} has no PWM ({', '.join(map(str, PWM_PINS))})"
        )
    return f"{head} pwm {pin}"


def _output_line(slot: SignalSlot, wiring: RobotWiring, handler: Handler | None) -> str:
    key, spec = f"{slot.device}.{slot.name}", slot.spec
    kind = "float" if spec.type is SignalType.FLOAT else "int"
    head = f"out {slot.id} {kind} {_number(spec.min)} {_number(spec.max)} {_number(spec.default)}"
    if handler is None:
        if spec.mode in (PinMode.PWM, PinMode.ANALOG):
            return f"{head} adc {_adc_channel(wiring, key)} {_units_to_mv(slot)!r}"
        return f"{head} level {_digital(wiring, key)}"
    if handler.template == "hc_sr04":
        trigger = _digital(wiring, f"{slot.device}.trigger")
        return f"{head} echo {trigger} {_digital(wiring, f'{slot.device}.echo')}"
    if handler.template == "hmc5883l":
        for name, number in TWI_PINS.items():
            if _digital(wiring, f"{slot.device}.{name}") != number:
                raise HilSimError(f"{wiring.source}: pins.{slot.device}.{name} must be A{number - 14} (TWI)")
        return f"{head} hmc5883l {HMC5883L_ADDRESS:#x}"
    raise HilSimError(f"{slot.device}: the simavr harness has no model of handler {handler.template!r}")


def coupling_text(layout: SignalLayout, wiring: RobotWiring, *, period: float = 0.005) -> str:
    """The harness's coupling file: every signal of ``layout`` in frame order, with its pins.

    INPUT signals (MCU -> simulator) are measured on their pins: PWM mode from the
    timer's compare output, the rest as levels. OUTPUT signals drive the MCU: the
    HC-SR04 handler as an echo pulse, the HMC5883L handler on the TWI bus, analog
    modes as ADC millivolts (unit V or ADC counts), digital modes as pin levels.

    Raises:
        HilSimError: a signal without a pin, a pin that cannot do the job, or a signal
            the harness cannot serve; the message names the wiring file and key.
    """
    if not 0.0005 <= period <= 1.0:
        raise HilSimError(f"signal period {period!r} s is outside 0.0005..1")
    handlers = {d.name: d.config.handler for d in layout.devices}
    lines = ["# hil_simavr coupling, written by hil_sim.core.simavr", f"period_us {round(period * 1e6)}"]
    for slot in layout.slots:
        if slot.spec.direction is Direction.INPUT:
            lines.append(_input_line(slot, wiring))
        else:
            lines.append(_output_line(slot, wiring, handlers.get(slot.device)))
    return "\n".join(lines) + "\n"


# --- the harness process ----------------------------------------------------------------------


def cycles(seconds: float) -> int:
    """AVR cycles in ``seconds`` of its time."""
    return round(seconds * FREQUENCY_HZ)


class SimavrProcess:
    """One run of the harness on its pty masters.

    Args:
        elf: the firmware.
        command_fd: pty master of the command link (the firmware's UART).
        signal_fd: pty master of the signal link.
        radio_fd: pty master of the radio link (the UART of the emulated SC16IS750), or
            None: no bridge on the bus, the firmware has no radio link.
        coupling: the coupling file's text (:func:`coupling_text`).
        checked: checked signal frames.
        lockstep: advance only on :meth:`run_to`; else paced to the wall clock.
        stats_period: wall seconds between stats lines (real time).

    Raises:
        HilSimError: the harness cannot start.
    """

    def __init__(
        self,
        elf: Path,
        *,
        command_fd: int,
        signal_fd: int,
        coupling: str,
        radio_fd: int | None = None,
        checked: bool = False,
        lockstep: bool = False,
        stats_period: float = 1.0,
        executable: Path | None = None,
    ) -> None:
        self.lockstep = lockstep
        self.cycle = 0
        self._folder = Path(tempfile.mkdtemp(prefix="hil-simavr-", dir=runtime_dir()))
        (self._folder / "coupling.txt").write_text(coupling)
        command = [
            str(executable or harness()),
            "--firmware",
            str(elf),
            "--command-fd",
            str(command_fd),
            "--signal-fd",
            str(signal_fd),
            "--coupling",
            str(self._folder / "coupling.txt"),
            "--frequency",
            str(FREQUENCY_HZ),
            "--stats-period",
            str(stats_period),
            *(["--radio-fd", str(radio_fd)] if radio_fd is not None else []),
            *(["--checked"] if checked else []),
            *(["--lockstep"] if lockstep else []),
        ]
        self._stderr: IO[str] = (self._folder / "stderr.txt").open("w+")
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                text=True,
                bufsize=1,
                pass_fds=(command_fd, signal_fd, *([radio_fd] if radio_fd is not None else [])),
                start_new_session=True,  # a Ctrl-C reaches the node, which stops the harness
            )
        except OSError as exc:
            self._cleanup()
            raise HilSimError(f"cannot start {command[0]}: {exc}") from exc

    # --- lockstep -----------------------------------------------------------------------------

    def run_to(self, cycle: int) -> None:
        """Lockstep: advance the AVR to ``cycle``; returns once its output is written.

        Raises:
            HilSimError: the harness died, hung or answered something else.
        """
        if cycle <= self.cycle:
            return
        reply = self._request(f"run {cycle}")
        if not reply.startswith("ok "):
            raise HilSimError(f"hil_simavr answered {reply!r} to run {cycle}")
        self.cycle = int(reply.split()[1])

    def stats(self) -> dict[str, Any]:
        """Lockstep: the harness's counters now."""
        return self._parse_stats(self._request("stats"))

    def _request(self, line: str) -> str:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(line + "\n")
            stdin.flush()
        except (BrokenPipeError, ValueError):
            raise HilSimError(f"hil_simavr has exited: {self.failure()}") from None
        ready, _, _ = select.select([stdout], [], [], STEP_TIMEOUT_S)
        reply = stdout.readline() if ready else ""
        if not reply:
            if not ready:
                raise HilSimError(f"hil_simavr did not answer {line!r} within {STEP_TIMEOUT_S:g} s")
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=STOP_TIMEOUT_S)  # its output closed: it is on its way out
            raise HilSimError(f"hil_simavr has exited: {self.failure()}")
        return reply.strip()

    # --- real time ----------------------------------------------------------------------------

    def read_stats(self) -> dict[str, Any] | None:
        """Real time: the next stats line (blocks up to a stats period); None at exit."""
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        return self._parse_stats(line) if line else None

    @staticmethod
    def _parse_stats(line: str) -> dict[str, Any]:
        try:
            stats: dict[str, Any] = json.loads(line)
        except json.JSONDecodeError as exc:
            raise HilSimError(f"hil_simavr printed {line!r}, not a stats line") from exc
        return stats

    # --- both ---------------------------------------------------------------------------------

    def failure(self) -> str:
        """Why the harness ended: its exit status and the end of its error output."""
        status = self.process.poll()
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            tail = self._stderr.read()[-2000:].strip()
        except ValueError:  # closed by stop()
            tail = ""

        if status is None:
            return "still running" + (f": {tail}" if tail else "")
        return f"exit status {status}" + (f": {tail}" if tail else "")

    @property
    def running(self) -> bool:
        """True until the harness has exited."""
        return self.process.poll() is None

    def stop(self) -> None:
        """End the harness (SIGTERM, then SIGKILL) and remove its files."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                if self.process.stdin is not None:
                    self.process.stdin.close()
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        self._cleanup()

    def kill(self) -> None:
        """End the harness at once (SIGKILL), as a pulled power plug."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.stop()

    def _cleanup(self) -> None:
        with contextlib.suppress(OSError):
            self._stderr.close()
        shutil.rmtree(self._folder, ignore_errors=True)
