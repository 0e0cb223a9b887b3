"""The robot firmware in simavr: harness and firmware builds, pin coupling, the harness process.

The MCU under test can be the compiled ``robot_mcu`` firmware (or any sketch)
running in simavr instead of the Python virtual MCU, on a UNO, Nano (ATmega328P) or
Mega 2560 (ATmega2560), all at 16 MHz (:mod:`hil_devices.core.boards`). The emulator
side is a small C program on libsimavr, ``firmware/simavr/build/hil_simavr``
(DESIGN.md "Firmware in the loop"); this module, which never imports rclpy:

* builds it (``make`` in ``firmware/simavr``, a no-op when up to date) and the
  firmware (``hil_firmware.core.avr_build``, cached by the hash of every source and
  option, so a run starts in a fraction of a second once built);
* turns the signal layout (device set) and the robot's wiring (its board, and which
  pin each device signal is on: ``firmware/robot_mcu/wiring.yaml``, the same pins as
  ``pins.h``) into the harness's coupling file;
* runs the harness with the pty masters (the firmware's hardware UARTs that reach a
  pty, its bit-level serial links on ordinary pins, the signal link, and the radio
  link's if the robot has one) passed as file descriptors, either on
  the wall clock (the harness paces itself and prints a stats line a second) or in
  lockstep (:meth:`SimavrProcess.run_to` advances the AVR to a cycle and returns when
  its bytes are written); its stderr is read in the background, and simavr's own
  warnings (``simavr: ...`` lines) are counted, handed to ``on_warning`` once each,
  and added to the stats (``simavr_warnings``, ``simavr_last_warning``);
* resets the AVR as a real board's DTR does when the command link's pty is first
  opened (:class:`OpenWatch`), or on request (:meth:`SimavrProcess.reset`);
* has the harness write a pin trace on request (:mod:`hil_mcu.core.pin_trace`).

The firmware folder is ``HIL_FIRMWARE`` if set, else ``firmware/`` of the source tree
this package is in.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import hashlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from hil_bridge.core.signal_protocol import SignalLayout, SignalSlot, profile_layout
from hil_common.core.children import die_with_parent
from hil_common.core.config_file import load_yaml
from hil_common.core.param_spec import ParamSpec
from hil_common.core.runtime_dir import runtime_dir
from hil_common.errors import HilError
from hil_devices.core.boards import BOARDS, Board
from hil_devices.core.devices import DeviceConfig, Direction, PinMode, SignalType
from hil_devices.core.elf import check_avr_elf
from hil_devices.core.profile import RobotProfile, coupling_params, mcu_pins
from hil_firmware.core.avr_build import build_sketch
from hil_mcu.core.pin_trace import PinTrace
from hil_mcu.errors import HilMcuError

#: Environment variable naming the firmware sketchbook folder.
FIRMWARE_ENV = "HIL_FIRMWARE"
#: The robot MCU's clock (every board of hil_devices.core.boards).
FREQUENCY_HZ = 16_000_000
#: ADC reference (AVCC) in millivolts and full scale.
ADC_REFERENCE_MV = 5000.0
ADC_MAX = 1023
#: The HMC5883L's I2C address (on the board's TWI pins).
HMC5883L_ADDRESS = 0x1E
#: The MPU-6050's I2C address with AD0 low (AD0 high: one more).
MPU6050_ADDRESS = 0x68
#: The radio link's SC16IS750 I2C-to-UART bridge (emulated when a radio pty is given):
#: 7-bit address, its UART's baud rate and FIFO depth (DESIGN.md "Firmware in the loop").
SC16IS750_ADDRESS = 0x4D
RADIO_BAUD = 115200
RADIO_FIFO_BYTES = 64
#: The hardware UARTs of each board (UART0..n-1: Serial, Serial1...), and their pins
#: (RX, TX) as the Arduino core's variants have them.
UART_PINS: Mapping[str, Mapping[int, tuple[int, int]]] = {
    "uno": {0: (0, 1)},
    "nano": {0: (0, 1)},
    "mega2560": {0: (0, 1), 1: (19, 18), 2: (17, 16), 3: (15, 14)},
}
#: Baud rates a bit-level serial link (SoftwareSerial) may run at (the harness's range).
SOFT_UART_BAUDS = (300, 250_000)
#: The bootloader's wait after an external reset is at most this (s; the harness's range).
MAX_BOOT_DELAY_S = 10.0
#: How long a lockstep step may take before the harness counts as hung.
STEP_TIMEOUT_S = 60.0
#: Lockstep: how long a request spins for the harness's answer before it sleeps for it,
#: when this process has a core to itself beside its harnesses' (each harness has one)
#: and the machine runs no more tasks than it has cores (:func:`_spare_core`). A step of
#: the AVR takes about a millisecond: sleeping through it lets the core idle, and the
#: wake-up and the cold caches after it cost the runner a tenth of the step; on a busy
#: machine (parallel tests) the spin takes a core from other work instead.
REPLY_SPIN_S = 0.01
#: The lockstep harnesses of this process that have not stopped (they run side by side).
_LOCKSTEP_HARNESSES: weakref.WeakSet[SimavrProcess] = weakref.WeakSet()
#: How long the harness gets to leave after SIGTERM before it is killed.
STOP_TIMEOUT_S = 2.0
#: simavr's own messages on the harness's stderr start with this.
SIMAVR_PREFIX = "simavr: "
#: Lines of the harness's stderr kept for failure messages; distinct warnings remembered.
STDERR_LINES = 200
MAX_DISTINCT_WARNINGS = 100

_SOURCE_FIRMWARE = Path(__file__).resolve().parents[5] / "firmware"


def firmware_dir() -> Path:
    """The Arduino sketchbook (``robot_mcu/``, ``libraries/``, ``simavr/``).

    Raises:
        HilMcuError: neither ``HIL_FIRMWARE`` nor the source tree has one.
    """
    configured = os.environ.get(FIRMWARE_ENV)
    folder = Path(configured) if configured else _SOURCE_FIRMWARE
    if not (folder / "robot_mcu").is_dir():
        raise HilMcuError(
            f"no firmware sketchbook at {folder} (set {FIRMWARE_ENV} to the folder holding robot_mcu/)"
        )
    return folder


def check_firmware(path: str | Path) -> Path:
    """``path``, once its ELF header says it is an AVR program simavr can load.

    The harness would otherwise fail only at the run's start, in its own words
    (:func:`hil_devices.core.elf.check_avr_elf`).

    Raises:
        HilMcuError: no such file, unreadable, or not a 32-bit little-endian executable
            ELF for the AVR (EM_AVR, 83); names the file and what it is instead.
    """
    return check_avr_elf(path, error=HilMcuError)


def _say(progress: Callable[[str], None] | None) -> Callable[[str], None]:
    return progress or (lambda _line: None)


def harness(*, progress: Callable[[str], None] | None = None) -> Path:
    """The harness executable, built first if its sources changed.

    Raises:
        HilMcuError: make or the compiler failed (libsimavr-dev missing, ...), with output.
    """
    source = firmware_dir() / "simavr"
    make = shutil.which("make")
    if make is None:
        raise HilMcuError("building hil_simavr needs make (apt-get install make)")
    result = subprocess.run(
        [make, "-s", "-C", str(source)], capture_output=True, text=True, check=False, timeout=300
    )
    if result.returncode != 0:
        hint = "" if Path("/usr/include/simavr/sim_avr.h").is_file() else " (apt-get install libsimavr-dev)"
        raise HilMcuError(f"building the harness in {source} failed{hint}:\n{result.stderr.strip()}")
    if result.stdout.strip() or result.stderr.strip():
        _say(progress)(f"built {source / 'build' / 'hil_simavr'}")
    return source / "build" / "hil_simavr"


@dataclass(frozen=True, kw_only=True)
class FirmwareOptions:
    """Which firmware build runs in the emulator.

    Raises:
        HilMcuError: unknown board, or a define that is not ``NAME`` -> int or str.
    """

    board: str = "nano"
    checked: bool = False
    #: Extra ``-D`` macros of ``pins.h``/``mcu_core.h`` (e.g. ``MCU_WATCHDOG_MS=0``).
    defines: Mapping[str, str | int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.board not in BOARDS:
            raise HilMcuError(f"firmware board {self.board!r}: expected one of {sorted(BOARDS)}")
        for name, value in self.defines.items():
            if not name.isidentifier() or isinstance(value, bool) or not isinstance(value, (int, str)):
                raise HilMcuError(f"firmware define {name}={value!r}: expected NAME=<integer or text>")

    @property
    def all_defines(self) -> dict[str, str | int]:
        """Every ``-D`` macro of the build, HIL_CHECKED included."""
        return {"HIL_CHECKED": int(self.checked), **self.defines}


def parse_defines(items: Sequence[str]) -> dict[str, str | int]:
    """``["MCU_WATCHDOG_MS=0", "HAS_COMPASS=1"]`` as a mapping (integers where they are).

    Raises:
        HilMcuError: an item without ``=`` or with a bad name; names the item.
    """
    defines: dict[str, str | int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier():
            raise HilMcuError(f"firmware define {item!r}: expected NAME=VALUE")
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
    sketch: Path | None = None,
    libraries: Sequence[Path] | None = None,
    strict: bool = True,
    build_root: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """The ELF of ``sketch`` for ``options``, built unless a build of the same sources exists.

    Args:
        options: board, checked mode, extra defines.
        sketch: the sketch folder (default ``robot_mcu``).
        libraries: the library folders it may use (default: the sketchbook's ``libraries``).
        strict: a warning in the sketch or its libraries fails the build (our own
            sketches build so).
        build_root: where builds are kept (default ``build/simavr`` beside the sketch
            folder, not inside it, as the builder copies the sketch folder into its
            build; the user's cache folder where that cannot be written).
        progress: called with a line per build step.

    Raises:
        HilMcuError: no toolchain or a compiler error (with its output).
    """
    sketch = sketch or firmware_dir() / "robot_mcu"
    folders = list(libraries) if libraries is not None else [firmware_dir() / "libraries"]
    defines = options.all_defines
    key = _source_hash(
        [sketch, *folders],
        json.dumps([options.board, sorted(defines.items()), strict, [str(f) for f in folders]], default=str),
    )
    root = build_root or _build_root(sketch)
    elf = root / f"{sketch.name}-{options.board}-{key}.elf"
    if elf.is_file():
        return elf
    work = root / f"{sketch.name}-{options.board}"
    with _locked(root / f".{sketch.name}-{options.board}.lock"):
        if elf.is_file():
            return elf
        _say(progress)(f"building {sketch.name} for simavr ({options.board}, {defines})")
        try:
            result = build_sketch(
                sketch,
                work,
                libraries=folders,
                defines=defines,
                board=options.board,
                strict=strict,
                progress=progress,
            )
        except HilError as exc:
            raise HilMcuError(f"{sketch.name}: {exc}") from exc
        temporary = elf.with_suffix(".tmp")
        shutil.copyfile(result.elf, temporary)
        temporary.replace(elf)
    return elf


def _build_root(sketch: Path) -> Path:
    """``build/simavr`` beside the sketch folder, or the user's cache if that cannot be written."""
    beside = sketch.parent / "build" / "simavr"
    with contextlib.suppress(OSError):
        beside.mkdir(parents=True, exist_ok=True)
        if os.access(beside, os.W_OK):
            return beside
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "hil" / "simavr" / hashlib.sha256(str(sketch).encode()).hexdigest()[:12]


def profile_firmware(
    profile: RobotProfile,
    *,
    checked: bool = False,
    defines: Mapping[str, str | int] | None = None,
    build_root: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """The ELF a robot profile runs: its ``firmware.elf``, or its sketch built for its board.

    The sketch builds with the profile's libraries, defines (``defines`` over them) and
    strict flag, as ``hil_sketch build`` does (:func:`build_firmware`, cached).

    Raises:
        HilMcuError: a build that fails (its output), or an ELF that is no AVR program.
    """
    spec = profile.firmware
    if spec.elf is not None:
        return check_firmware(spec.elf)
    assert spec.sketch is not None  # a profile has one of the two
    options = FirmwareOptions(
        board=profile.board, checked=checked, defines={**spec.defines, **(defines or {})}
    )
    return build_firmware(
        options,
        sketch=spec.sketch,
        libraries=spec.libraries,
        strict=spec.strict,
        build_root=build_root,
        progress=progress,
    )


# --- the robot's wiring and the coupling file ----------------------------------------------


@dataclass(frozen=True)
class RobotWiring:
    """Which pin of the robot MCU each device signal (or handler pin) is on."""

    #: The board (a key of :data:`hil_devices.core.boards.BOARDS`).
    board: str
    #: ``device.signal`` or ``device.handler_pin`` -> ``"5"``, ``"A0"``... as written.
    pins: Mapping[str, str]
    source: str = ""

    @property
    def spec(self) -> Board:
        """The board's pin table."""
        return BOARDS[self.board]


def default_wiring_path() -> Path:
    """The demo robot's wiring, next to its ``pins.h``."""
    return firmware_dir() / "robot_mcu" / "wiring.yaml"


def load_robot_wiring(path: str | Path = "") -> RobotWiring:
    """Read a robot wiring file (``board`` + ``pins: {device.signal: pin}``).

    Raises:
        HilMcuError: unreadable or malformed; names the file and key.
    """
    where = Path(path) if path else default_wiring_path()
    data = load_yaml(where, what="the robot wiring", error=HilMcuError)
    if not isinstance(data, dict) or not isinstance(data.get("pins"), dict):
        raise HilMcuError(f"{where}: expected a mapping with `board` and `pins: {{device.signal: pin}}`")
    unknown = sorted(set(data) - {"board", "pins"})
    if unknown:
        raise HilMcuError(f"{where}: unknown keys {unknown} (expected board, pins)")
    board = str(data.get("board", "nano"))
    if board not in BOARDS:
        raise HilMcuError(f"{where}: board {board!r}: expected one of {sorted(BOARDS)}")
    return RobotWiring(board, {str(k): str(v).strip().upper() for k, v in data["pins"].items()}, str(where))


def profile_wiring(profile: RobotProfile) -> RobotWiring:
    """The robot wiring of a profile: its board and every wired pin.

    The pins are :func:`hil_devices.core.profile.mcu_pins`.

    With :func:`hil_bridge.core.signal_protocol.profile_layout` and
    :func:`~hil_devices.core.profile.coupling_params` it makes the profile's coupling
    (:func:`profile_coupling`).
    """
    return RobotWiring(profile.board, mcu_pins(profile), str(profile.source))


def profile_coupling(profile: RobotProfile, *, period: float = 0.005) -> str:
    """The harness's coupling file for a robot profile (:func:`coupling_text` of its layout and wiring).

    Raises:
        HilMcuError: a signal the harness cannot serve; names the profile and the device.
    """
    return coupling_text(
        profile_layout(profile), profile_wiring(profile), period=period, params=coupling_params(profile)
    )


def check_board(wiring: RobotWiring, board: str) -> None:
    """Check that firmware built for ``board`` runs on the wiring's board (the same MCU).

    Raises:
        HilMcuError: another MCU; names the wiring file.
    """
    if board not in BOARDS:
        raise HilMcuError(f"board {board!r}: expected one of {sorted(BOARDS)}")
    if BOARDS[board].mcu != wiring.spec.mcu:
        raise HilMcuError(
            f"{wiring.source}: board {wiring.board} ({wiring.spec.mcu}) is not the firmware's board"
            f" {board} ({BOARDS[board].mcu})"
        )


def _digital(wiring: RobotWiring, key: str) -> int:
    where = f"{wiring.source}: pins.{key}"
    if key not in wiring.pins:
        raise HilMcuError(f"{wiring.source}: no pin for {key}")
    try:
        return wiring.spec.parse_pin(wiring.pins[key], key=where)
    except HilError as exc:
        raise HilMcuError(str(exc)) from exc


def _adc_channel(wiring: RobotWiring, key: str) -> int:
    if key not in wiring.pins:
        raise HilMcuError(f"{wiring.source}: no pin for {key}")
    try:
        return wiring.spec.parse_analog(wiring.pins[key], key=f"{wiring.source}: pins.{key}")
    except HilError as exc:
        raise HilMcuError(str(exc)) from exc


def _units_to_mv(slot: SignalSlot) -> float:
    unit = slot.spec.unit
    if unit == "V":
        return 1000.0
    if unit == "ADC counts":
        return ADC_REFERENCE_MV / ADC_MAX
    raise HilMcuError(
        f"{slot.device}.{slot.name}: an analog input of the MCU needs the unit V or 'ADC counts',"
        f" not {unit!r}"
    )


def _number(value: float) -> str:
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


def _plain_input(slot: SignalSlot, wiring: RobotWiring, config: DeviceConfig) -> str:
    key, spec = f"{slot.device}.{slot.name}", slot.spec
    pin = _digital(wiring, key)
    if spec.mode is not PinMode.PWM:
        return f"level {pin}"
    pwm_pins = wiring.spec.pwm_pins
    carrier = config.pin_of_signal(slot.name)
    if pin not in pwm_pins and carrier is not None and carrier.needs == "digital":
        return f"level {pin}"  # a pin that takes levels or PWM (an L298's IN), wired to a plain pin
    if pin not in pwm_pins:
        raise HilMcuError(
            f"{wiring.source}: pins.{key}: pin {pin} has no PWM on the {wiring.board}"
            f" ({', '.join(map(str, pwm_pins))})"
        )
    return f"pwm {pin}"


def _plain_output(slot: SignalSlot, wiring: RobotWiring) -> str:
    key, spec = f"{slot.device}.{slot.name}", slot.spec
    if spec.mode in (PinMode.PWM, PinMode.ANALOG):
        return f"adc {_adc_channel(wiring, key)} {_units_to_mv(slot)!r}"
    return f"level {_digital(wiring, key)}"


#: What a coupling kind's arguments after its pins are made of: the signal, and the
#: device's parameters (the config's defaults, over them the instance's).
KindArgs = Callable[[SignalSlot, Mapping[str, float]], str]


@dataclass(frozen=True)
class CouplingKind:
    """How the harness serves the signals of a device with a handler template.

    The coupling line of each signal is ``<kind> <pins> <args>``: the device's
    ``pins`` (handler pin names, in the kind's order) as the board's pin numbers,
    then what ``args`` makes of the signal and the device's parameters.
    """

    #: The harness's kind (firmware/simavr, one C file per family).
    kind: str
    #: The direction its signals have (seen from the simulator).
    direction: Direction
    #: Handler pins in the order of the coupling line.
    pins: tuple[str, ...] = ()
    args: KindArgs | None = None
    #: An I2C part: its ``sda`` and ``scl`` pins must be the board's TWI pins.
    twi: bool = False


def _signal_name(slot: SignalSlot, _params: Mapping[str, float]) -> str:
    return slot.name


def _mpu6050_args(slot: SignalSlot, params: Mapping[str, float]) -> str:
    return f"{MPU6050_ADDRESS + int(params.get('ad0', 0)):#x} {slot.name}"


def _ws2812_args(slot: SignalSlot, _params: Mapping[str, float]) -> str:
    match = re.fullmatch(r"led(\d+)_([rgb])", slot.name)
    if match is None:
        raise HilMcuError(
            f"{slot.device}.{slot.name}: a ws2812 signal is named led<index>_r, _g or _b (led0_g...)"
        )
    return f"{int(match.group(1))} {match.group(2)}"


def _button_args(_slot: SignalSlot, params: Mapping[str, float]) -> str:
    return f"{_number(params.get('bounce_us', 0))} {int(params.get('bounces', 0))}"


#: Handler templates the harness models (template name -> how), one line per device.
HANDLER_KINDS: Mapping[str, CouplingKind] = {
    "hc_sr04": CouplingKind("echo", Direction.OUTPUT, ("trigger", "echo")),
    "ping": CouplingKind("ping", Direction.OUTPUT, ("signal",)),
    "hmc5883l": CouplingKind(
        "hmc5883l", Direction.OUTPUT, args=lambda *_: f"{HMC5883L_ADDRESS:#x}", twi=True
    ),
    "quadrature_encoder": CouplingKind("quadrature", Direction.OUTPUT, ("a", "b")),
    "single_channel_encoder": CouplingKind("pulses", Direction.OUTPUT, ("signal",)),
    "servo": CouplingKind("servo", Direction.INPUT, ("signal",)),
    "buzzer": CouplingKind("tone", Direction.INPUT, ("signal",)),
    "ws2812": CouplingKind("ws2812", Direction.INPUT, ("din",), _ws2812_args),
    "mpu6050": CouplingKind("mpu6050", Direction.OUTPUT, args=_mpu6050_args, twi=True),
    "ir_receiver_nec": CouplingKind("nec", Direction.OUTPUT, ("out",), _signal_name),
    "push_button": CouplingKind("button", Direction.OUTPUT, ("contact",), _button_args),
}


def device_params(config: DeviceConfig) -> dict[str, ParamSpec]:
    """The numeric parameters a device config declares (its ``params``), each a :class:`ParamSpec`.

    Parameters that are a choice (a motor driver's ``wheel``) are the simulator's, not
    the harness's, and are left out.
    """
    specs: dict[str, ParamSpec] = {}
    for name, param in config.params.items():
        if param.choices or not isinstance(param.default, float):
            continue
        text = f"{param.description} ({param.unit})".replace(" ()", "")
        specs[name] = ParamSpec(name, param.default, text, param.min, param.max)
    return specs


def _params_of(
    device: str, config: DeviceConfig, overrides: Mapping[str, Mapping[str, float]]
) -> dict[str, float]:
    specs = device_params(config)
    values = {name: float(spec.default) for name, spec in specs.items()}  # type: ignore[arg-type]
    for name, value in overrides.get(device, {}).items():
        if name not in specs:
            known = ", ".join(sorted(specs)) or "none"
            raise HilMcuError(f"{device}: device {config.name} has no parameter {name!r} (it has: {known})")
        try:
            values[name] = float(specs[name].validate(value, node=device))  # type: ignore[arg-type]
        except HilError as exc:
            raise HilMcuError(str(exc)) from exc
    return values


def _handler_line(slot: SignalSlot, wiring: RobotWiring, kind: str, params: Mapping[str, float]) -> str:
    coupling = HANDLER_KINDS.get(kind)
    if coupling is None:
        known = ", ".join(sorted(HANDLER_KINDS))
        raise HilMcuError(
            f"{slot.device}: the simavr harness has no model of handler {kind!r} (it models: {known})"
        )
    if slot.spec.direction is not coupling.direction:
        raise HilMcuError(
            f"{slot.device}.{slot.name}: handler {kind} serves {coupling.direction.value}"
            f" signals, this one is {slot.spec.direction.value}"
        )
    if coupling.twi:
        board = wiring.spec
        for name, number in {"sda": board.sda, "scl": board.scl}.items():
            if _digital(wiring, f"{slot.device}.{name}") != number:
                raise HilMcuError(
                    f"{wiring.source}: pins.{slot.device}.{name} must be {board.pin_name(number)} (TWI)"
                )
    parts = [coupling.kind, *(str(_digital(wiring, f"{slot.device}.{name}")) for name in coupling.pins)]
    if coupling.args is not None:
        parts.append(coupling.args(slot, params))
    return " ".join(parts)


def coupling_text(
    layout: SignalLayout,
    wiring: RobotWiring,
    *,
    period: float = 0.005,
    params: Mapping[str, Mapping[str, float]] | None = None,
) -> str:
    """The harness's coupling file: every signal of ``layout`` in frame order, with its pins.

    Pins are those of ``wiring.board``. A device whose ``coupling`` (else its handler
    template) names a model of the harness (:data:`HANDLER_KINDS`) is served by that
    kind, on the handler's pins:
    ultrasonic rangers (``hc_sr04``: trigger, echo; ``ping``: signal), I2C parts on
    the TWI pins (``hmc5883l``, ``mpu6050``), wheel encoders (``quadrature_encoder``:
    a, b; ``single_channel_encoder``: signal), pulses the firmware drives
    (``servo``, ``buzzer``: signal), ``ws2812`` LEDs (din), an NEC IR receiver
    (``ir_receiver_nec``: out) and a bouncing ``push_button`` (contact). Other
    INPUT signals (MCU -> simulator) are measured on their pins: PWM mode as the
    duty of the timer output (on a pin without a timer, as its level where the
    device's pin ``needs`` only ``digital``: an L298's inputs), the rest as levels;
    other OUTPUT signals drive the MCU:
    analog modes as ADC millivolts (unit V or ADC counts), digital modes as pin levels.

    Args:
        layout: the device set in frame order.
        wiring: the board and which pin serves each signal or handler pin.
        period: the signal link's frame period in seconds.
        params: per device instance, parameters over the defaults its config declares
            (``params``: ``push_button`` bounce_us and bounces, ``mpu6050`` ad0).

    Raises:
        HilMcuError: a signal without a pin, a pin that cannot do the job, a signal
            the harness cannot serve, or a parameter the device does not have or out
            of its range; the message names the wiring file and key, or the device.
    """
    if not 0.0005 <= period <= 1.0:
        raise HilMcuError(f"signal period {period!r} s is outside 0.0005..1")
    overrides = params or {}
    unknown = sorted(set(overrides) - {d.name for d in layout.devices})
    if unknown:
        raise HilMcuError(f"parameters for {', '.join(unknown)}: no such device in the set")
    configs = {d.name: d.config for d in layout.devices}
    values = {name: _params_of(name, config, overrides) for name, config in configs.items()}
    lines = ["# hil_simavr coupling, written by hil_mcu.core.simavr", f"period_us {round(period * 1e6)}"]
    for slot in layout.slots:
        spec, config = slot.spec, configs[slot.device]
        model = config.coupling or (config.handler.template if config.handler is not None else "")
        if spec.direction is Direction.INPUT:
            head = f"in {slot.id} {_number(spec.min)} {_number(spec.max)}"
        else:
            kind = "float" if spec.type is SignalType.FLOAT else "int"
            head = f"out {slot.id} {kind} {_number(spec.min)} {_number(spec.max)} {_number(spec.default)}"
        if model:
            body = _handler_line(slot, wiring, model, values[slot.device])
        elif spec.direction is Direction.INPUT:
            body = _plain_input(slot, wiring, config)
        else:
            body = _plain_output(slot, wiring)
        lines.append(f"{head} {body}")
    return "\n".join(lines) + "\n"


# --- the harness process ----------------------------------------------------------------------


def cycles(seconds: float) -> int:
    """AVR cycles in ``seconds`` of its time."""
    return round(seconds * FREQUENCY_HZ)


# --- the serial links -----------------------------------------------------------------------


@dataclass(frozen=True)
class SoftUartSpec:
    """A serial link on two ordinary pins (SoftwareSerial), read and driven at the bit level.

    ``rx`` and ``tx`` are the firmware's (``SoftwareSerial(rx, tx)``): the harness drives
    ``rx`` and decodes ``tx``, 8N1 at ``baud``. ``link`` is the pty: its path in a
    parameter, the pty master's descriptor (as text) for :class:`SimavrProcess`.
    """

    rx: int
    tx: int
    baud: int
    link: str = ""


def parse_uart_ports(items: Sequence[str], *, board: str, command_uart: int = 0) -> dict[int, str]:
    """``["1:bluetooth", "2:gps"]`` (``N:link``) as {UART number: link}.

    Args:
        items: the entries, each a hardware UART number and its pty link.
        board: the board (its UARTs: :data:`UART_PINS`).
        command_uart: the command link's UART, which is not listed again.

    Raises:
        HilMcuError: a malformed entry, a UART the board does not have, one listed twice
            or the command link's; names the entry.
    """
    uarts = UART_PINS[board]
    ports: dict[int, str] = {}
    for item in items:
        number, sep, link = item.partition(":")
        where = f"uart_ports entry {item!r}"
        if not sep or not number.strip().isdigit() or not link.strip():
            raise HilMcuError(f"{where}: expected N:link (a UART number and its pty path)")
        uart = int(number)
        if uart not in uarts:
            raise HilMcuError(f"{where}: the {board} has UART {', '.join(map(str, uarts))}")
        if uart == command_uart:
            raise HilMcuError(f"{where}: UART {uart} is the command link (command_port)")
        if uart in ports:
            raise HilMcuError(f"{where}: UART {uart} is listed twice")
        ports[uart] = link.strip()
    return ports


def parse_soft_uart_ports(items: Sequence[str], *, board: str) -> list[SoftUartSpec]:
    """``["10:11:9600:bluetooth"]`` (``RX:TX:BAUD:link``, the firmware's pins) as specs.

    Raises:
        HilMcuError: a malformed entry, a pin the board does not have, RX = TX, a pin
            of another entry, a baud rate outside :data:`SOFT_UART_BAUDS`; names the entry.
    """
    spec = BOARDS[board]
    links: list[SoftUartSpec] = []
    used: set[int] = set()
    low, high = SOFT_UART_BAUDS
    for item in items:
        parts = item.split(":", 3)
        where = f"soft_uart_ports entry {item!r}"
        if len(parts) != 4 or not all(p.strip() for p in parts):
            raise HilMcuError(f"{where}: expected RX:TX:BAUD:link (the firmware's pins, 8N1 baud, pty)")
        try:
            rx, tx = (spec.parse_pin(p.strip(), key=where) for p in parts[:2])
        except HilError as exc:
            raise HilMcuError(str(exc)) from exc
        baud = int(parts[2]) if parts[2].strip().isdigit() else 0
        if not low <= baud <= high:
            raise HilMcuError(f"{where}: baud {parts[2]!r}: expected a whole number {low}..{high}")
        if rx == tx or {rx, tx} & used:
            raise HilMcuError(f"{where}: RX and TX must be two pins no other soft UART uses")
        used |= {rx, tx}
        links.append(SoftUartSpec(rx, tx, baud, parts[3].strip()))
    return links


@dataclass(frozen=True)
class SerialLinks:
    """The firmware's serial links that reach a pty, besides the command link's."""

    #: The command link's hardware UART.
    command_uart: int
    #: The board's other hardware UARTs on ptys: number -> link.
    uarts: Mapping[int, str]
    #: Serial links on ordinary pins (``link``: the pty's path).
    soft_uarts: tuple[SoftUartSpec, ...]


def serial_links(
    board: str, *, command_uart: int = 0, uart_ports: Sequence[str] = (), soft_uart_ports: Sequence[str] = ()
) -> SerialLinks:
    """The serial links of the ``simavr_mcu`` parameters, checked against the board.

    Raises:
        HilMcuError: an unknown board, a command UART the board does not have, or a bad
            entry (:func:`parse_uart_ports`, :func:`parse_soft_uart_ports`); names it.
    """
    if board not in UART_PINS:
        raise HilMcuError(f"board {board!r}: expected one of {sorted(UART_PINS)}")
    if command_uart not in UART_PINS[board]:
        numbers = ", ".join(map(str, UART_PINS[board]))
        raise HilMcuError(f"command_uart {command_uart}: the {board} has UART {numbers}")
    return SerialLinks(
        command_uart,
        parse_uart_ports(uart_ports, board=board, command_uart=command_uart),
        tuple(parse_soft_uart_ports(soft_uart_ports, board=board)),
    )


def check_serial_pins(links: SerialLinks, wiring: RobotWiring) -> None:
    """Refuse a serial link on a pin the wiring gives a device (both would use the pin).

    Raises:
        HilMcuError: naming the link, the pin, the device signal and the wiring file.
    """
    taken: dict[int, str] = {}
    for key, text in wiring.pins.items():
        with contextlib.suppress(HilError):  # analog-only inputs: not a digital pin
            taken[wiring.spec.parse_pin(text, key=key)] = key
    used = {f"UART{number}": UART_PINS[wiring.board][number] for number in (links.command_uart, *links.uarts)}
    used.update({f"soft_uart_ports[{i}]": (s.rx, s.tx) for i, s in enumerate(links.soft_uarts)})
    for name, pins in used.items():
        for pin in pins:
            if pin in taken:
                raise HilMcuError(f"{name}: pin {pin} is {taken[pin]} in {wiring.source}")


#: inotify's events (linux/inotify.h) the open watch asks for.
_IN_CLOSE_WRITE, _IN_CLOSE_NOWRITE, _IN_OPEN = 0x08, 0x10, 0x20


class OpenWatch:
    """Opens of a pty's slave side, for the harness: an inotify descriptor watching it.

    Made when the pty is made, so every open by a reader counts, whenever the harness
    starts: the harness reads the events (``--reset-on-open``) and resets the AVR when
    a first reader opens the port, as DTR does on a real UNO, Nano or Mega. The pty's
    own slave descriptor, opened before the watch, is no reader.

    Args:
        path: the pty's slave device (``/dev/pts/N``).

    Raises:
        HilMcuError: inotify refuses (no more watches for this user); names the path.
    """

    def __init__(self, path: str) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = int(libc.inotify_init1(os.O_CLOEXEC))
        events = _IN_OPEN | _IN_CLOSE_WRITE | _IN_CLOSE_NOWRITE
        if fd < 0 or libc.inotify_add_watch(fd, os.fsencode(path), events) < 0:
            error = ctypes.get_errno()
            if fd >= 0:
                os.close(fd)
            raise HilMcuError(f"cannot watch {path} for opens (auto-reset): {os.strerror(error)}")
        #: The inotify descriptor the harness inherits.
        self.fd = fd

    def close(self) -> None:
        """Stop watching."""
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1


class HarnessLog:
    """The harness's stderr, read by a background thread until the harness closes it.

    Lines starting with :data:`SIMAVR_PREFIX` are simavr's warnings: each is counted,
    the last one kept, and each distinct one (up to :data:`MAX_DISTINCT_WARNINGS`)
    handed to ``on_warning`` once. The last :data:`STDERR_LINES` lines are kept for
    :meth:`tail`. Never blocks the caller; memory stays bounded.
    """

    def __init__(self, stream: IO[str], *, on_warning: Callable[[str], None] | None = None) -> None:
        self._on_warning = on_warning
        self._lines: deque[str] = deque(maxlen=STDERR_LINES)
        self._distinct: set[str] = set()
        self._lock = threading.Lock()
        #: How many warnings simavr printed, and the last.
        self.warnings = 0
        self.last_warning = ""
        self._thread = threading.Thread(
            target=self._read, args=(stream,), name="hil-simavr-stderr", daemon=True
        )
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        with contextlib.suppress(OSError, ValueError):
            while line := stream.readline(4096):
                self._take(line.rstrip("\n"))

    def _take(self, line: str) -> None:
        new = False
        with self._lock:
            self._lines.append(line)
            if line.startswith(SIMAVR_PREFIX):
                text = line[len(SIMAVR_PREFIX) :].strip()
                self.warnings += 1
                self.last_warning = text
                new = text not in self._distinct and len(self._distinct) < MAX_DISTINCT_WARNINGS
                if new:
                    self._distinct.add(text)
        if new and self._on_warning is not None:
            self._on_warning(text)

    def counters(self) -> dict[str, Any]:
        """``simavr_warnings`` and ``simavr_last_warning``, for the stats."""
        with self._lock:
            return {"simavr_warnings": self.warnings, "simavr_last_warning": self.last_warning}

    def tail(self, *, wait: float = 0.0) -> str:
        """The last lines (after waiting up to ``wait`` s for the harness to close its stderr)."""
        self._thread.join(timeout=wait)
        with self._lock:
            return "\n".join(self._lines)[-2000:].strip()


@functools.cache
def _loadavg() -> int:
    """``/proc/loadavg``, open for the life of the process."""
    return os.open("/proc/loadavg", os.O_RDONLY)


#: The machine's cores, against which :func:`_spare_core` counts its runnable tasks
#: (read once: ``os.cpu_count`` reads a sysfs file on every call, some 2 µs a step).
_MACHINE_CORES = os.cpu_count() or 1


def _spare_core() -> bool:
    """Whether the machine's runnable tasks now (``/proc/loadavg``) are no more than its cores.

    This process and the harness it just woke count among them.
    """
    try:
        runnable = int(os.pread(_loadavg(), 128, 0).split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return False  # no such file (not Linux): do not spin
    return runnable <= _MACHINE_CORES


class SimavrProcess:
    """One run of the harness on its pty masters.

    Args:
        elf: the firmware.
        signal_fd: pty master of the signal link.
        command_fd: pty master of UART0 (the same as ``uarts={0: fd}``).
        uarts: the hardware UARTs that reach a pty: UART number -> pty master (UART0 on
            the UNO and Nano, 0..3 on the Mega 2560), each timed at the baud rate the
            firmware sets on it.
        soft_uarts: serial links on ordinary pins (:class:`SoftUartSpec`, ``link`` the pty
            master's descriptor as text), decoded and driven at the bit level.
        open_watch: the command link's :class:`OpenWatch`: a reader's first open resets
            the AVR (in lockstep at the start of the next step); None: opens do not.
        boot_delay: the bootloader's wait after an external reset, in seconds; None: the
            board's (UNO and Nano 1.375 s, optiboot; Mega 2560 1.0 s, stk500v2).
        radio_fd: pty master of the radio link (the UART of the emulated SC16IS750), or
            None: no bridge on the bus, the firmware has no radio link.
        coupling: the coupling file's text (:func:`coupling_text`).
        checked: checked signal frames.
        lockstep: advance only on :meth:`run_to`; else paced to the wall clock.
        stats_period: wall seconds between stats lines (real time).
        board: the board the firmware was built for (its MCU and pin table).
        on_warning: called (from a background thread) with each distinct warning simavr
            prints, once.
        trace: a pin trace to write (:mod:`hil_mcu.core.pin_trace`), or None.

    Raises:
        HilMcuError: the harness cannot start.
    """

    def __init__(
        self,
        elf: Path,
        *,
        signal_fd: int,
        coupling: str,
        command_fd: int | None = None,
        uarts: Mapping[int, int] | None = None,
        soft_uarts: Sequence[SoftUartSpec] = (),
        open_watch: OpenWatch | None = None,
        boot_delay: float | None = None,
        radio_fd: int | None = None,
        checked: bool = False,
        lockstep: bool = False,
        stats_period: float = 1.0,
        executable: Path | None = None,
        board: str = "nano",
        on_warning: Callable[[str], None] | None = None,
        trace: PinTrace | None = None,
    ) -> None:
        if board not in BOARDS:
            raise HilMcuError(f"board {board!r}: expected one of {sorted(BOARDS)}")
        ports = dict(uarts or {})
        if command_fd is not None:
            if 0 in ports:
                raise HilMcuError("UART 0 given twice (command_fd and uarts)")
            ports[0] = command_fd
        if not ports:
            raise HilMcuError("the harness needs a UART on a pty (uarts or command_fd)")
        if boot_delay is not None and not 0.0 <= boot_delay <= MAX_BOOT_DELAY_S:
            raise HilMcuError(f"boot_delay {boot_delay!r} s is outside 0..{MAX_BOOT_DELAY_S:g}")
        self.lockstep = lockstep
        self.cycle = 0
        #: Lockstep: each link's bytes taken from its pty and written to it so far, as of
        #: the last step ("signal", "radio", "uartN" -> (read, written)).
        self.link_bytes: dict[str, tuple[int, int]] = {}
        self._cores = len(os.sched_getaffinity(0))
        self._running: str | None = None  # the step asked for and not answered yet
        self._folder = Path(tempfile.mkdtemp(prefix="hil-simavr-", dir=runtime_dir()))
        (self._folder / "coupling.txt").write_text(coupling)
        soft_fds = [int(link.link) for link in soft_uarts]
        command = [
            str(executable or harness()),
            "--firmware",
            str(elf),
            *(arg for number, fd in sorted(ports.items()) for arg in ("--uart", f"{number}:{fd}")),
            *(
                arg
                for link, fd in zip(soft_uarts, soft_fds, strict=True)
                for arg in ("--softuart", f"{link.rx}:{link.tx}:{link.baud}:{fd}")
            ),
            *(["--reset-on-open", str(open_watch.fd)] if open_watch is not None else []),
            *(["--boot-delay", repr(float(boot_delay))] if boot_delay is not None else []),
            "--signal-fd",
            str(signal_fd),
            "--coupling",
            str(self._folder / "coupling.txt"),
            "--board",
            board,
            "--frequency",
            str(FREQUENCY_HZ),
            "--stats-period",
            str(stats_period),
            *(["--radio-fd", str(radio_fd)] if radio_fd is not None else []),
            *(["--checked"] if checked else []),
            *(["--lockstep"] if lockstep else []),
            *(trace.arguments() if trace is not None else []),
        ]
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
                pass_fds=(
                    *ports.values(),
                    *soft_fds,
                    signal_fd,
                    *([radio_fd] if radio_fd is not None else []),
                    *([open_watch.fd] if open_watch is not None else []),
                ),
                start_new_session=True,  # a Ctrl-C reaches the node, which stops the harness
                # and a killed node's harness stops too (it holds no more ptys anyone reads)
                preexec_fn=die_with_parent(),  # noqa: PLW1509 - the child runs only prctl and getppid
            )
        except OSError as exc:
            self._cleanup()
            raise HilMcuError(f"cannot start {command[0]}: {exc}") from exc
        assert self.process.stderr is not None
        #: The harness's stderr: simavr's warnings and the harness's errors.
        self.log = HarnessLog(self.process.stderr, on_warning=on_warning)
        if lockstep:
            _LOCKSTEP_HARNESSES.add(self)

    # --- lockstep -----------------------------------------------------------------------------

    def run_to(self, cycle: int) -> None:
        """Lockstep: advance the AVR to ``cycle``; returns once its output is written.

        Raises:
            HilMcuError: the harness died, hung or answered something else.
        """
        self.start_run(cycle)
        self.finish_run()

    def start_run(self, cycle: int) -> None:
        """Lockstep: ask the harness to advance the AVR to ``cycle``, without waiting for it.

        :meth:`finish_run` waits; meanwhile this process (or other harnesses) may work.

        Raises:
            HilMcuError: the harness has exited, or a step is already under way.
        """
        if self._running is not None:
            raise HilMcuError(f"hil_simavr: {self._running!r} is still under way")
        if cycle > self.cycle:
            self._running = f"run {cycle}"
            self._send(self._running)

    def finish_run(self) -> None:
        """Lockstep: wait for the step :meth:`start_run` asked for (none: return at once).

        Raises:
            HilMcuError: the harness died, hung or answered something else.
        """
        request, self._running = self._running, None
        if request is not None:
            self._take_ok(self._answer(request), request)

    def _take_ok(self, reply: str, request: str) -> None:
        """``ok <cycle> [signal|radio|uartN <read> <written>]...``: the cycle and the links' byte counts."""
        words = reply.split()
        try:
            if words[0] != "ok" or (len(words) - 2) % 3:
                raise ValueError
            self.cycle = int(words[1])
            for k in range(2, len(words), 3):
                if not re.fullmatch(r"signal|radio|uart\d", words[k]):
                    raise ValueError
                self.link_bytes[words[k]] = (int(words[k + 1]), int(words[k + 2]))
        except (ValueError, IndexError):
            raise HilMcuError(f"hil_simavr answered {reply!r} to {request}") from None

    def stats(self) -> dict[str, Any]:
        """Lockstep: the harness's counters now (simavr's warnings as far as read)."""
        return self._parse_stats(self._request("stats"))

    def reset(self) -> None:
        """Reset the AVR as its RESET pin does (reset button, DTR); the bootloader's wait follows.

        In lockstep it happens now, at the current cycle; in real time at once.

        Raises:
            HilMcuError: the harness died, hung or answered something else.
        """
        if self.lockstep:
            self._take_ok(self._request("reset"), "reset")
        else:
            self._send("reset")

    def _request(self, line: str) -> str:
        if self._running is not None:
            raise HilMcuError(f"hil_simavr: {self._running!r} is still under way")
        self._send(line)
        return self._answer(line)

    def _send(self, line: str) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(line + "\n")
            stdin.flush()
        except (BrokenPipeError, ValueError):
            raise HilMcuError(f"hil_simavr has exited: {self.failure()}") from None

    def _answer(self, line: str) -> str:
        """The harness's answer to the request ``line`` (one line)."""
        stdout = self.process.stdout
        assert stdout is not None
        ready = self._spin_for(stdout) or select.select([stdout], [], [], STEP_TIMEOUT_S)[0]
        reply = stdout.readline() if ready else ""
        if not reply:
            if not ready:
                raise HilMcuError(f"hil_simavr did not answer {line!r} within {STEP_TIMEOUT_S:g} s")
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=STOP_TIMEOUT_S)  # its output closed: it is on its way out
            raise HilMcuError(f"hil_simavr has exited: {self.failure()}")
        return reply.strip()

    def _spin_for(self, stdout: IO[str]) -> bool:
        """Whether ``stdout`` became readable within the reply spin (yielding the core meanwhile)."""
        spin = REPLY_SPIN_S if self._cores > len(_LOCKSTEP_HARNESSES) and _spare_core() else 0.0
        deadline = time.perf_counter() + spin
        while time.perf_counter() < deadline:
            if select.select([stdout], [], [], 0)[0]:
                return True
            os.sched_yield()  # a process that shares this core (under load) runs now
        return False

    # --- real time ----------------------------------------------------------------------------

    def read_stats(self) -> dict[str, Any] | None:
        """Real time: the next stats line (blocks up to a stats period); None at exit."""
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=STOP_TIMEOUT_S)  # its output closed: it is on its way out
            return None
        return self._parse_stats(line)

    def _parse_stats(self, line: str) -> dict[str, Any]:
        try:
            stats: dict[str, Any] = json.loads(line)
        except json.JSONDecodeError as exc:
            raise HilMcuError(f"hil_simavr printed {line!r}, not a stats line") from exc
        return {**stats, **self.log.counters()}

    # --- both ---------------------------------------------------------------------------------

    def failure(self) -> str:
        """Why the harness ended: its exit status and the end of its error output."""
        status = self.process.poll()
        # Once it has exited, its last lines are on their way through the pipe.
        tail = self.log.tail(wait=STOP_TIMEOUT_S if status is not None else 0.0)
        if status is None:
            return "still running" + (f": {tail}" if tail else "")
        how = f"exit status {status}"
        if status < 0:
            with contextlib.suppress(ValueError):
                how = f"killed by {signal.Signals(-status).name}"
        return how + (f": {tail}" if tail else "")

    @property
    def running(self) -> bool:
        """True until the harness has exited."""
        return self.process.poll() is None

    def stop(self) -> None:
        """End the harness (SIGTERM, then SIGKILL) and remove its files."""
        _LOCKSTEP_HARNESSES.discard(self)
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
        self.log.tail(wait=STOP_TIMEOUT_S)  # the reader ends at the pipe's end
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
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
        shutil.rmtree(self._folder, ignore_errors=True)
