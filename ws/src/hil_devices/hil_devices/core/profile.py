"""Robot profiles: one YAML file describing a robot, and what is derived from it.

A robot is a folder holding ``robot.yaml`` (the profile), its firmware (a sketch
folder of ``.ino`` tabs, or an ELF), ``scenarios/`` and a ``README.md``; the shipped
ones are in the ``hil_robots`` package (``share/hil_robots/robots/<name>``).
:func:`load_profile` takes a robot.yaml, a robot folder or a shipped robot's name:

.. code-block:: yaml

    name: rab_style
    description: L298 with PWM on IN1..IN4 (ENA/ENB jumpered high), quadrature encoders
    board: uno                          # uno | nano | mega2560
    firmware:
      sketch: firmware/rab_style        # a sketch folder, relative to this file; or
      elf: ""                           # a prebuilt ELF (exactly one of the two)
      libraries: []                     # library folders the sketch uses
      defines: {}                       # -D NAME=value
      strict: false                     # warnings as errors (the project's own sketches)
    serial:                             # the hardware UARTs that reach a pty
      - {uart: 0, baud: 57600, role: command}
    soft_serial:                        # SoftwareSerial links that reach a pty
      - {rx: 10, tx: 11, baud: 9600}    # the firmware's pins: SoftwareSerial bt(10, 11)
    auto_reset: true                    # opening the command pty resets the MCU (DTR)
    brain: none                         # control_loop | none (the firmware owns its UART)
    telemetry: {}                       # brain control_loop: TLn -> field names
    body:
      wheel_radius: 0.033               # m
      track: 0.14                       # m between the wheels' contact lines
      mass: 0.8                         # kg
      footprint: {radius: 0.09}         # the body's disc, m
      height: 0.06                      # m
      caster: {x: -0.07, radius: 0.01}  # m
      motor: {}                         # DC motor model parameters over the defaults
      urdf: ""                          # a URDF the generated one is checked against
    devices:
      - {name: motor_left, type: l298n, pins: {in1: 5, in2: 6}, tie: {ena: high},
         params: {wheel: left}}
      - {name: sonar, type: hc_sr04, pins: {trigger: 12, echo: 13},
         pose: {x: 0.09, y: 0.0, z: 0.07, yaw: 0.0}, mount: pan}
      - {name: pan, type: servo, pins: {signal: 11}, pose: {x: 0.06, y: 0.0, z: 0.08}}
      - {name: light_0, type: photoresistor, pins: {reading: A1}, pose: {z: 0.1},
         frame: light_front_link, topic: light/front}

A device's ``type`` is a config of the device library (:mod:`hil_devices.core.devices`:
its ``pins``, ``params`` and ``model`` sections). Every error names the file and the
field (``robot.yaml: devices[3].pins.echo: pin 13 is devices[1]'s (motor_left.in2)``).
The checks: the board exists; every pin is a pin of the board (0 and 1, and the pins
of every UART in ``serial`` and of every ``soft_serial`` link, are the serial
ports'); a pin serves one device pin,
except the board's I2C pins, which every I2C device shares; a pin ``needs: pwm`` (a
PWM-measured input such as an L298's ENA) is a timer pin, ``analog`` an analog input,
``i2c_sda``/``i2c_scl`` the board's TWI pins; ``interrupt`` on a pin with neither an
external nor a pin-change interrupt is only a warning (a sketch may poll it); every
device pin is wired or tied (``tie: {pin: high|low}``: held at that level instead of
an MCU pin, an output pin carrying a signal only); ``frame`` and ``topic`` (optional)
name its TF frame and its ROS topic in a run (default: ``<name>_link``, and the
simulator's per kind: ``range/<name>``...); params are the type's, within its
ranges or choices, each required one given; a ``mount`` names a servo (a device whose
model is a ``joint``); a pose is finite and within the footprint's radius + 0.2 m
(height: the body's + 0.2 m); each wheel (left, right) has exactly one driver; baud
rates are the usual ones (a ``soft_serial`` link's at most 115200, SoftwareSerial's
fastest); the firmware's sketch folder exists, or its ELF is an AVR
program (:func:`hil_devices.core.elf.check_avr_elf`).

Derived from a profile (pure functions): the signal link's device set
(:func:`device_instances`: devices in profile order, a tied pin's signal left out),
the MCU's pins (:func:`mcu_pins`, keyed as a robot wiring file: ``device.signal`` or
``device.pin``), the harness parameters (:func:`coupling_params`), the telemetry
schema (:func:`telemetry_schema`), and the simulator's view of each device
(:func:`model_devices`). The signal layout (:func:`hil_bridge.core.signal_protocol.profile_layout`),
the simavr coupling (:func:`hil_mcu.core.simavr.profile_wiring`) and the bridge-board
sketch's inputs (:func:`hil_firmware.core.sketch_gen.profile_sketch_inputs`) are made
from these where those live.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hil_common.core.config_file import load_yaml
from hil_common.core.paths import share_dir
from hil_common.errors import HilError
from hil_devices.core.boards import BOARDS, Board
from hil_devices.core.devices import DeviceConfig, DeviceInstance, DevicePin, Direction
from hil_devices.core.elf import check_avr_elf
from hil_devices.core.library import load_device_library
from hil_devices.core.models import ModelKind, model_kinds
from hil_devices.core.params import ParamValue
from hil_devices.core.sketch_files import sketch_folder
from hil_devices.core.telemetry import TelemetrySchema
from hil_devices.errors import HilDevicesError

#: The profile's file name in a robot folder.
PROFILE_FILE = "robot.yaml"
#: Who talks to the firmware on its command UART.
BRAINS = ("control_loop", "none")
#: What a serial port is for: ``command`` (the brain's link, or the user's program) or
#: ``aux`` (another UART reaching a pty: a Bluetooth module's, a GPS's).
SERIAL_ROLES = ("command", "aux")
#: The baud rates a profile may give (the Arduino IDE's serial monitor's, and 31250, MIDI).
BAUD_RATES = (
    300, 600, 1200, 2400, 4800, 9600, 14400, 19200, 28800, 31250, 38400, 57600, 74880,
    115200, 230400, 250000, 500000, 1000000, 2000000,
)  # fmt: skip
#: The fastest SoftwareSerial link a profile may give (SoftwareSerial's own limit).
SOFT_SERIAL_MAX_BAUD = 115200
#: Levels a device pin may be tied to.
TIE_LEVELS = ("high", "low")
#: How far beyond the footprint's radius (and the body's height) a device may sit, m.
POSE_MARGIN = 0.2
#: The wheels of a differential drive, each driven by exactly one driver.
WHEELS = ("left", "right")

#: What a robot's name (and a device's, a define's) may be: letters, digits, _.
NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOP_KEYS = (
    "name", "description", "board", "firmware", "serial", "soft_serial", "auto_reset", "brain",
    "telemetry", "body", "devices",
)  # fmt: skip
_DEVICE_KEYS = ("name", "type", "pins", "tie", "params", "pose", "mount", "frame", "topic")
_TOPIC = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(frozen=True)
class Pose:
    """Where a device sits in the body frame: m, and yaw in rad (counter-clockwise from +x)."""

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    yaw: float = 0.0


@dataclass(frozen=True)
class DeviceEntry:
    """One device of a profile: an instance of a library type, wired to the MCU."""

    name: str
    type: str
    config: DeviceConfig
    #: Device pin -> the board's pin, as the board names it (``"5"``, ``"A0"``).
    pins: Mapping[str, str]
    #: Device pin -> ``high`` or ``low``: held there instead of wired to the MCU.
    ties: Mapping[str, str] = field(default_factory=dict)
    #: Every parameter of the type: the profile's values over the type's defaults.
    params: Mapping[str, ParamValue] = field(default_factory=dict)
    pose: Pose | None = None
    #: The servo device it rides on, or "".
    mount: str = ""
    #: Its TF frame and ROS topic in a run; "": the simulator's (``<name>_link``, per kind).
    frame: str = ""
    topic: str = ""

    @property
    def wheel(self) -> str:
        """The wheel it drives or measures (``params.wheel``), or ""."""
        return str(self.params.get("wheel", ""))

    @property
    def tied_signals(self) -> dict[str, float]:
        """Signal -> the value its tied pin holds (high: the signal's max, low: its min)."""
        values: dict[str, float] = {}
        for pin_name, level in self.ties.items():
            pin = self.config.pin(pin_name)
            assert pin is not None and pin.signal  # checked at load
            spec = self.config.signal(pin.signal)
            values[pin.signal] = spec.max if level == "high" else spec.min
        return values

    def instance(self) -> DeviceInstance:
        """The device on the signal link: its type's signals but the tied ones."""
        tied = self.tied_signals
        config = self.config
        if tied:
            config = replace(config, signals=tuple(s for s in config.signals if s.name not in tied))
        return DeviceInstance(self.name, config)


@dataclass(frozen=True)
class FirmwareSpec:
    """The robot's firmware: a sketch folder to build, or a prebuilt ELF."""

    sketch: Path | None = None
    elf: Path | None = None
    libraries: tuple[Path, ...] = ()
    defines: Mapping[str, str | int] = field(default_factory=dict)
    strict: bool = False


@dataclass(frozen=True)
class SerialPort:
    """A hardware UART of the MCU that reaches a pty."""

    uart: int
    baud: int
    role: str


@dataclass(frozen=True)
class SoftSerialPort:
    """A SoftwareSerial link on two ordinary pins that reaches a pty (a Bluetooth module's).

    ``rx`` and ``tx`` are the firmware's pins (``SoftwareSerial(rx, tx)``), 8N1 at ``baud``.
    """

    rx: int
    tx: int
    baud: int


@dataclass(frozen=True)
class Caster:
    """The caster wheel: its x in the body frame and its radius (m)."""

    x: float
    radius: float


@dataclass(frozen=True)
class Body:
    """A differential-drive body: two driven wheels and a caster (SI units)."""

    wheel_radius: float
    track: float
    mass: float
    footprint_radius: float
    height: float
    caster: Caster
    #: DC motor model parameters over the simulator's defaults (MotorParams fields).
    motor: Mapping[str, float] = field(default_factory=dict)
    #: A URDF the generated one is checked against, or None.
    urdf: Path | None = None


@dataclass(frozen=True)
class RobotProfile:
    """A robot as its ``robot.yaml`` describes it (module docstring)."""

    name: str
    description: str
    board: str
    firmware: FirmwareSpec
    serial: tuple[SerialPort, ...]
    auto_reset: bool
    brain: str
    #: Telemetry lists (brain control_loop): ``TLn`` -> field names; empty: the default schema.
    telemetry: Mapping[str, tuple[str, ...]]
    body: Body
    devices: tuple[DeviceEntry, ...]
    #: The robot.yaml it was read from.
    source: Path
    #: What the checks found worth saying but not refusing (an encoder on a pin without interrupt).
    warnings: tuple[str, ...] = ()
    #: SoftwareSerial links that reach a pty, beside the hardware UARTs of ``serial``.
    soft_serial: tuple[SoftSerialPort, ...] = ()

    @property
    def folder(self) -> Path:
        """The robot's folder (where relative paths of the profile start)."""
        return self.source.parent

    @property
    def spec(self) -> Board:
        """The board's pin table."""
        return BOARDS[self.board]

    @property
    def command(self) -> SerialPort:
        """The command UART (the brain's link, or the user's program's)."""
        return next(port for port in self.serial if port.role == "command")

    def device(self, name: str) -> DeviceEntry:
        """The device called ``name``.

        Raises:
            HilDevicesError: no such device; names the profile and its devices.
        """
        for entry in self.devices:
            if entry.name == name:
                return entry
        known = ", ".join(entry.name for entry in self.devices)
        raise HilDevicesError(f"{self.source}: no device {name!r} (devices: {known})")


# --- reading -----------------------------------------------------------------------------------


class _Fields:
    """A mapping being read, whose errors name the file and the field's path."""

    def __init__(self, data: object, where: str, source: str) -> None:
        self.where = where
        self.source = source
        if not isinstance(data, Mapping):
            raise HilDevicesError(f"{source}: {where or 'top level'}: expected a mapping, got {data!r:.60}")
        self.data: Mapping[str, Any] = data

    def path(self, key: str | int) -> str:
        if isinstance(key, int):
            return f"{self.where}[{key}]"
        return f"{self.where}.{key}" if self.where else key

    def fail(self, key: str | int, text: str) -> HilDevicesError:
        return HilDevicesError(f"{self.source}: {self.path(key)}: {text}")

    def only(self, allowed: Sequence[str]) -> None:
        unknown = sorted(set(self.data) - set(allowed))
        if unknown:
            raise HilDevicesError(
                f"{self.source}: {self.where or 'top level'}: unknown field(s) {', '.join(unknown)}"
                f" (known: {', '.join(allowed)})"
            )

    def sub(self, key: str, default: object = None) -> _Fields:
        value = self.data.get(key)
        return _Fields(
            default if value is None and default is not None else value, self.path(key), self.source
        )

    def text(self, key: str, default: str | None = None) -> str:
        value = self.data.get(key, default)
        if value is None:
            raise self.fail(key, "missing")
        if not isinstance(value, str):
            raise self.fail(key, f"expected text, got {value!r:.40}")
        return value

    def number(self, key: str, default: float | None = None, *, positive: bool = False) -> float:
        value = self.data.get(key, default)
        if value is None:
            raise self.fail(key, "missing (a number is needed)")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.fail(key, f"expected a finite number, got {value!r:.40}")
        if positive and value <= 0:
            raise self.fail(key, f"{value!r} must be above 0")
        return float(value)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {value!r:.40}")
        return value

    def choice(self, key: str, choices: Sequence[str], default: str | None = None) -> str:
        value = self.text(key, default)
        if value not in choices:
            raise self.fail(key, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def items(self, key: str) -> list[Any]:
        value = self.data.get(key, [])
        if not isinstance(value, list):
            raise self.fail(key, f"expected a list, got {value!r:.40}")
        return value


def robots_dir() -> Path:
    """The shipped robots (``share/hil_robots/robots``)."""
    return share_dir("hil_robots") / "robots"


def shipped_robots() -> list[str]:
    """The names of the shipped robots."""
    folder = robots_dir()
    return sorted(p.name for p in folder.iterdir() if (p / PROFILE_FILE).is_file()) if folder.is_dir() else []


def profile_path(path_or_name: str | Path) -> Path:
    """The robot.yaml of a robot.yaml path, a robot folder or a shipped robot's name.

    Raises:
        HilDevicesError: none of those; names what was given and the shipped robots.
    """
    path = Path(path_or_name)
    if path.is_file():
        return path
    if path.is_dir():
        if not (path / PROFILE_FILE).is_file():
            raise HilDevicesError(f"{path}: no {PROFILE_FILE} in this folder (not a robot folder)")
        return path / PROFILE_FILE
    text = str(path_or_name)
    if NAME_PATTERN.fullmatch(text):
        shipped = robots_dir() / text / PROFILE_FILE
        if shipped.is_file():
            return shipped
        raise HilDevicesError(
            f"robot {text!r}: no such file or folder, nor a shipped robot"
            f" (shipped: {', '.join(shipped_robots())})"
        )
    raise HilDevicesError(f"robot {text}: no such file or folder")


def load_profile(
    path_or_name: str | Path, *, library: Mapping[str, DeviceConfig] | None = None
) -> RobotProfile:
    """Read and check a robot profile (module docstring).

    Args:
        path_or_name: a robot.yaml, a robot folder, or a shipped robot's name.
        library: the device library (default: hil_bridge's ``config/devices``).

    Raises:
        HilDevicesError: naming the file and the field at fault.
    """
    path = profile_path(path_or_name)
    data = load_yaml(path, what="robot profile", error=HilDevicesError)
    types = dict(library) if library is not None else dict(load_device_library([_library_dir()]))
    return _Reader(path, types).profile(data)


def _library_dir() -> Path:
    return share_dir("hil_devices") / "config" / "devices"


class _Reader:
    """One profile being read: the file, the library, what is taken so far."""

    def __init__(self, path: Path, library: Mapping[str, DeviceConfig]) -> None:
        self.path = path
        self.source = str(path)
        #: Relative paths start at the file's real folder (a symlinked install's too).
        self.base = path.resolve().parent
        self.library = library
        self.warnings: list[str] = []

    def profile(self, data: object) -> RobotProfile:
        top = _Fields(data, "", self.source)
        top.only(_TOP_KEYS)
        name = top.text("name", path_name(self.path))
        if not NAME_PATTERN.fullmatch(name):
            raise top.fail("name", f"{name!r} is not a name (letters, digits, _)")
        board = top.text("board")
        if board not in BOARDS:
            raise top.fail("board", f"{board!r} is not one of {', '.join(BOARDS)}")
        brain = top.choice("brain", BRAINS, "control_loop")
        serial = self.serial(top, BOARDS[board])
        taken: dict[int, tuple[str, bool]] = {}
        for port in serial:
            for pin in BOARDS[board].uarts[port.uart]:
                taken[pin] = (f"serial UART {port.uart}", False)
        soft_serial = self.soft_serial(top, BOARDS[board], taken)
        body = self.body(top.sub("body"))
        devices = self.devices(top, BOARDS[board], body, taken)
        return RobotProfile(
            name=name,
            description=top.text("description", ""),
            board=board,
            firmware=self.firmware(top.sub("firmware")),
            serial=serial,
            auto_reset=top.boolean("auto_reset", True),
            brain=brain,
            telemetry=self.telemetry(top, brain),
            body=body,
            devices=devices,
            source=self.path,
            warnings=tuple(self.warnings),
            soft_serial=soft_serial,
        )

    def resolve(self, value: str) -> Path:
        path = Path(value).expanduser()
        return (path if path.is_absolute() else self.base / path).resolve()

    def firmware(self, fields: _Fields) -> FirmwareSpec:
        fields.only(("sketch", "elf", "libraries", "defines", "strict"))
        sketch, elf = fields.text("sketch", ""), fields.text("elf", "")
        if bool(sketch) == bool(elf):
            raise fields.fail(
                "sketch", "give exactly one of sketch (a sketch folder) and elf (a built firmware)"
            )
        spec = FirmwareSpec(strict=fields.boolean("strict", False))
        if sketch:
            folder = self.resolve(sketch)
            try:
                sketch_folder(folder)
            except HilDevicesError as exc:
                raise fields.fail("sketch", str(exc)) from None
            spec = replace(spec, sketch=folder)
        else:
            try:
                spec = replace(spec, elf=check_avr_elf(self.resolve(elf)))
            except HilDevicesError as exc:
                raise fields.fail("elf", str(exc)) from None
        libraries = []
        for index, item in enumerate(fields.items("libraries")):
            if not isinstance(item, str) or not self.resolve(item).is_dir():
                raise fields.fail("libraries", f"[{index}]: {item!r:.60} is not a folder")
            libraries.append(self.resolve(item))
        defines = fields.sub("defines", {})
        for key, value in defines.data.items():
            if (
                not NAME_PATTERN.fullmatch(key)
                or isinstance(value, bool)
                or not isinstance(value, (int, str))
            ):
                raise defines.fail(key, f"expected NAME: <integer or text>, got {value!r:.40}")
        return replace(spec, libraries=tuple(libraries), defines=dict(defines.data))

    def serial(self, top: _Fields, board: Board) -> tuple[SerialPort, ...]:
        raw = top.items("serial")
        if not raw:
            raise top.fail("serial", "expected a list of UARTs, one with role command ({uart: 0, baud: ...})")
        ports: list[SerialPort] = []
        for index, item in enumerate(raw):
            entry = _Fields(item, top.path("serial") + f"[{index}]", self.source)
            entry.only(("uart", "baud", "role"))
            uart = entry.data.get("uart", 0)
            if uart not in board.uarts or isinstance(uart, bool):
                raise entry.fail(
                    "uart", f"{uart!r} is not a UART of the {board.name} ({', '.join(map(str, board.uarts))})"
                )
            if any(port.uart == uart for port in ports):
                raise entry.fail("uart", f"UART {uart} is listed twice")
            baud = entry.data.get("baud")
            if baud not in BAUD_RATES or isinstance(baud, bool):
                raise entry.fail(
                    "baud", f"{baud!r} is not a usual baud rate ({', '.join(map(str, BAUD_RATES))})"
                )
            ports.append(SerialPort(int(uart), int(baud), entry.choice("role", SERIAL_ROLES, "command")))
        commands = [port for port in ports if port.role == "command"]
        if len(commands) != 1:
            raise top.fail("serial", f"expected exactly one UART with role command, found {len(commands)}")
        return tuple(ports)

    def soft_serial(
        self, top: _Fields, board: Board, taken: dict[int, tuple[str, bool]]
    ) -> tuple[SoftSerialPort, ...]:
        ports: list[SoftSerialPort] = []
        for index, item in enumerate(top.items("soft_serial")):
            entry = _Fields(item, top.path("soft_serial") + f"[{index}]", self.source)
            entry.only(("rx", "tx", "baud"))
            pins = {}
            for key in ("rx", "tx"):
                if key not in entry.data:
                    raise entry.fail(key, "missing: the firmware's pin (SoftwareSerial(rx, tx))")
                try:
                    number = board.parse_pin(entry.data[key], key=f"{self.source}: {entry.path(key)}")
                except HilError as exc:
                    raise HilDevicesError(str(exc)) from None
                holder = taken.get(number)
                if holder is not None:
                    raise entry.fail(key, f"pin {board.pin_name(number)} is taken by {holder[0]}")
                taken[number] = (f"soft_serial[{index}] ({key})", False)
                pins[key] = number
            baud = entry.data.get("baud")
            if baud not in BAUD_RATES or isinstance(baud, bool) or baud > SOFT_SERIAL_MAX_BAUD:
                usual = ", ".join(str(b) for b in BAUD_RATES if b <= SOFT_SERIAL_MAX_BAUD)
                raise entry.fail("baud", f"{baud!r} is not a usual SoftwareSerial baud rate ({usual})")
            ports.append(SoftSerialPort(pins["rx"], pins["tx"], int(baud)))
        return tuple(ports)

    def telemetry(self, top: _Fields, brain: str) -> dict[str, tuple[str, ...]]:
        raw = top.data.get("telemetry") or {}
        if raw and brain != "control_loop":
            raise top.fail("telemetry", "telemetry lists are the control loop's: brain none has none")
        try:
            return TelemetrySchema.from_mapping(raw, source=f"{self.source}: telemetry").lists
        except HilError as exc:
            raise HilDevicesError(str(exc)) from None

    def body(self, fields: _Fields) -> Body:
        fields.only(("wheel_radius", "track", "mass", "footprint", "height", "caster", "motor", "urdf"))
        footprint = fields.sub("footprint")
        footprint.only(("radius",))
        caster = fields.sub("caster", {})
        caster.only(("x", "radius"))
        radius = footprint.number("radius", positive=True)
        motor = fields.sub("motor", {})
        for key in motor.data:
            if not NAME_PATTERN.fullmatch(key):
                raise motor.fail(key, "not a motor parameter name")
            motor.number(key)
        urdf = fields.text("urdf", "")
        urdf_path = self.resolve(urdf) if urdf else None
        if urdf_path is not None and not urdf_path.is_file():
            raise fields.fail("urdf", f"{urdf_path}: no such file")
        return Body(
            wheel_radius=fields.number("wheel_radius", positive=True),
            track=fields.number("track", positive=True),
            mass=fields.number("mass", positive=True),
            footprint_radius=radius,
            height=fields.number("height", 0.06, positive=True),
            caster=Caster(caster.number("x", -0.8 * radius), caster.number("radius", 0.01, positive=True)),
            motor={key: float(value) for key, value in motor.data.items()},
            urdf=urdf_path,
        )

    # --- devices ------------------------------------------------------------------------------

    def devices(
        self, top: _Fields, board: Board, body: Body, taken: dict[int, tuple[str, bool]]
    ) -> tuple[DeviceEntry, ...]:
        """The devices; ``taken`` maps a board pin to who holds it and whether it is a bus pin."""
        raw = top.items("devices")
        if not raw:
            raise top.fail("devices", "expected a list of devices ({name, type, pins, ...})")
        entries: list[DeviceEntry] = []
        for index, item in enumerate(raw):
            fields = _Fields(item, f"devices[{index}]", self.source)
            entries.append(self.device(fields, index, board, body, taken))
        names = [entry.name for entry in entries]
        for index, entry in enumerate(entries):
            if names.index(entry.name) != index:
                raise HilDevicesError(f"{self.source}: devices[{index}].name: {entry.name!r} is used twice")
        self.mounts(entries)
        self.wheels(entries, top)
        return tuple(entries)

    def device(
        self, entry: _Fields, index: int, board: Board, body: Body, taken: dict[int, tuple[str, bool]]
    ) -> DeviceEntry:
        entry.only(_DEVICE_KEYS)
        name = entry.text("name")
        if not NAME_PATTERN.fullmatch(name):
            raise entry.fail("name", f"{name!r} is not a name (letters, digits, _)")
        kind = entry.text("type")
        config = self.library.get(kind)
        if config is None:
            raise entry.fail(
                "type",
                f"unknown device type {kind!r} (the library's types: {', '.join(sorted(self.library))})",
            )
        if not config.pins:
            raise entry.fail("type", f"device type {kind} has no pins section: a profile cannot wire it")
        ties = self.ties(entry.sub("tie", {}), config)
        pins = self.pins(
            entry.sub("pins", {}), config=config, board=board, ties=ties, taken=taken, owner=(index, name)
        )
        return DeviceEntry(
            name=name,
            type=kind,
            config=config,
            pins=pins,
            ties=ties,
            params=self.params(entry.sub("params", {}), config),
            pose=self.pose(entry.sub("pose"), body) if entry.data.get("pose") is not None else None,
            mount=entry.text("mount", ""),
            frame=self.name_like(entry, "frame", NAME_PATTERN, "a frame name (letters, digits, _)"),
            topic=self.name_like(entry, "topic", _TOPIC, "a relative topic name (words joined by /)"),
        )

    @staticmethod
    def name_like(entry: _Fields, key: str, pattern: re.Pattern[str], what: str) -> str:
        value = entry.text(key, "")
        if value and not pattern.fullmatch(value):
            raise entry.fail(key, f"{value!r:.60} is not {what}")
        return value

    def ties(self, fields: _Fields, config: DeviceConfig) -> dict[str, str]:
        ties: dict[str, str] = {}
        for pin_name, level in fields.data.items():
            pin = config.pin(pin_name)
            if pin is None:
                raise fields.fail(
                    pin_name, f"device type {config.name} has no pin {pin_name!r} ({_pin_list(config)})"
                )
            if pin.mcu != "output" or not pin.signal:
                raise fields.fail(
                    pin_name, "only a pin the MCU would drive with a signal of its own can be tied"
                )
            if level not in TIE_LEVELS:
                raise fields.fail(pin_name, f"{level!r:.40} is not one of {', '.join(TIE_LEVELS)}")
            ties[pin_name] = str(level)
        return ties

    def pins(
        self,
        fields: _Fields,
        *,
        config: DeviceConfig,
        board: Board,
        ties: Mapping[str, str],
        taken: dict[int, tuple[str, bool]],
        owner: tuple[int, str],
    ) -> dict[str, str]:
        for pin_name in fields.data:
            if config.pin(pin_name) is None:
                raise fields.fail(
                    pin_name, f"device type {config.name} has no pin {pin_name!r} ({_pin_list(config)})"
                )
            if pin_name in ties:
                raise fields.fail(pin_name, "is tied (tie:) and wired: give one of the two")
        pins: dict[str, str] = {}
        for pin in config.pins:
            if pin.name in ties:
                continue
            if pin.name not in fields.data:
                raise fields.fail(
                    pin.name, f"missing: device type {config.name} needs its pin {pin.name} wired (or tied)"
                )
            number, label = self.pin(fields, pin, board)
            shared = pin.needs in ("i2c_sda", "i2c_scl")
            holder = taken.get(number)
            if holder is not None and not (shared and holder[1]):
                raise fields.fail(pin.name, f"pin {label} is taken by {holder[0]}")
            taken[number] = (f"devices[{owner[0]}] ({owner[1]}.{pin.name})", shared)
            pins[pin.name] = label
        return pins

    def pin(self, fields: _Fields, pin: DevicePin, board: Board) -> tuple[int, str]:
        """The board pin a device pin is wired to: its number (analog-only: 1000 + channel) and name."""
        value = fields.data[pin.name]
        where = f"{self.source}: {fields.path(pin.name)}"
        try:
            if pin.needs == "analog":
                channel = board.parse_analog(value, key=where)
                number = board.analog_pin(channel)
                return (number if number is not None else 1000 + channel), f"A{channel}"
            number = board.parse_pin(value, key=where)
        except HilError as exc:
            raise HilDevicesError(str(exc)) from None
        label = board.pin_name(number)
        spec = board.pins[number]
        if pin.needs == "pwm" and spec.pwm is None:
            raise fields.fail(
                pin.name,
                f"pin {label} has no PWM on the {board.name};"
                f" the PWM pins: {', '.join(map(str, board.pwm_pins))}",
            )
        for need, wanted in (("i2c_sda", board.sda), ("i2c_scl", board.scl)):
            if pin.needs == need and number != wanted:
                raise fields.fail(
                    pin.name,
                    f"pin {label} is not the {board.name}'s {need[4:].upper()} ({board.pin_name(wanted)})",
                )
        if pin.needs == "interrupt" and spec.interrupt is None and spec.pcint is None:
            external = [str(n) for n, p in board.pins.items() if p.interrupt is not None]
            self.warnings.append(
                f"{where}: pin {label} has no interrupt on the {board.name} (attachInterrupt pins:"
                f" {', '.join(external)}); fine if the sketch polls it"
            )
        return number, label

    def params(self, fields: _Fields, config: DeviceConfig) -> dict[str, ParamValue]:
        values: dict[str, ParamValue] = {}
        for key, value in fields.data.items():
            param = config.params.get(key)
            if param is None:
                known = ", ".join(config.params) or "none"
                raise fields.fail(
                    key, f"device type {config.name} has no parameter {key!r} (its parameters: {known})"
                )
            values[key] = param.check(value, f"{self.source}: {fields.path(key)}")
        for key, param in config.params.items():
            if key in values:
                continue
            if param.default is None:
                what = f"one of {', '.join(param.choices)}" if param.choices else "a number"
                raise fields.fail(
                    key, f"missing: device type {config.name} needs it ({what}: {param.description})"
                )
            values[key] = param.default
        return values

    def pose(self, fields: _Fields, body: Body) -> Pose:
        fields.only(("x", "y", "z", "yaw"))
        pose = Pose(*(fields.number(key, 0.0) for key in ("x", "y", "z", "yaw")))
        reach = body.footprint_radius + POSE_MARGIN
        if math.hypot(pose.x, pose.y) > reach:
            raise fields.fail(
                "x",
                f"({pose.x:g}, {pose.y:g}) is {math.hypot(pose.x, pose.y):.3g} m from the"
                f" body's centre, beyond the footprint's radius + {POSE_MARGIN:g} m ({reach:g} m)",
            )
        if not 0.0 <= pose.z <= body.height + POSE_MARGIN:
            raise fields.fail(
                "z",
                f"{pose.z:g} m is outside 0..{body.height + POSE_MARGIN:g} m"
                f" (the body's height + {POSE_MARGIN:g})",
            )
        return pose

    def mounts(self, entries: Sequence[DeviceEntry]) -> None:
        by_name = {entry.name: entry for entry in entries}
        for index, entry in enumerate(entries):
            if not entry.mount:
                continue
            where = f"{self.source}: devices[{index}].mount"
            servo = by_name.get(entry.mount)
            joints = [
                e.name for e in entries if e.config.model is not None and e.config.model.role == "joint"
            ]
            if (
                servo is None
                or servo is entry
                or servo.config.model is None
                or servo.config.model.role != "joint"
            ):
                raise HilDevicesError(
                    f"{where}: {entry.mount!r} is not a servo of this robot"
                    f" (servos: {', '.join(joints) or 'none'})"
                )
            if entry.pose is None:
                raise HilDevicesError(
                    f"{self.source}: devices[{index}].pose: a device on a servo needs its pose"
                )

    def wheels(self, entries: Sequence[DeviceEntry], top: _Fields) -> None:
        for wheel in WHEELS:
            drivers = [
                f"devices[{i}] ({e.name})"
                for i, e in enumerate(entries)
                if e.config.model is not None and e.config.model.role == "driver" and e.wheel == wheel
            ]
            if len(drivers) != 1:
                found = ", ".join(drivers) or "none"
                raise top.fail(
                    "devices",
                    f"the {wheel} wheel needs exactly one driver (params.wheel: {wheel}); found {found}",
                )


#: Several robots' profiles in one text (a run's ``robot`` option) are comma-separated.
ROBOT_SEPARATOR = ","


def robot_entries(text: str) -> list[str]:
    """The profiles a run's ``robot`` text names, in robot order (blank entries left out).

    One per robot, the last for the robots past the list (:func:`for_robot`).
    """
    return [entry.strip() for entry in text.split(ROBOT_SEPARATOR) if entry.strip()]


def for_robot(items: Sequence[Any], robot: int) -> Any:
    """Robot ``robot``'s item of a per-robot list: its own, or the last for robots past the list."""
    return items[min(robot, len(items) - 1)]


def path_name(path: Path) -> str:
    """A robot's default name: its folder's (robot.yaml) or the file's stem."""
    return path.resolve().parent.name if path.name == PROFILE_FILE else path.stem


def _pin_list(config: DeviceConfig) -> str:
    return "its pins: " + ", ".join(pin.name for pin in config.pins)


# --- derived -----------------------------------------------------------------------------------


def device_instances(profile: RobotProfile) -> list[DeviceInstance]:
    """The signal link's device set: the devices in profile order, tied pins' signals left out."""
    return [entry.instance() for entry in profile.devices]


def mcu_pins(profile: RobotProfile) -> dict[str, str]:
    """Every wired pin as a robot wiring file keys it: ``device.signal`` or ``device.pin`` -> pin.

    A device pin carrying a signal is keyed by the signal (``motor_left.enable``), a
    handler's pin by its own name (``ultrasonic.trigger``).
    """
    pins: dict[str, str] = {}
    for entry in profile.devices:
        for pin in entry.config.pins:
            if pin.name in entry.pins:
                pins[f"{entry.name}.{pin.signal or pin.name}"] = entry.pins[pin.name]
    return pins


def coupling_params(profile: RobotProfile) -> dict[str, dict[str, float]]:
    """Each device's numeric parameters (the harness's models take those they know)."""
    return {
        entry.name: {key: float(value) for key, value in entry.params.items() if isinstance(value, float)}
        for entry in profile.devices
    }


#: The telemetry a profile without ``telemetry:`` gives a control loop: the motor commands.
MOTOR_TELEMETRY = {"TL1": ("right", "left")}


def telemetry_schema(profile: RobotProfile) -> TelemetrySchema:
    """The telemetry lists a control loop gets from this robot: its ``telemetry:``, else TL1 only.

    TL1 (``right``, ``left``: the motor commands the MCU applies) is what the loop's
    odometer needs; sensor lists are the profile's to name.
    """
    return TelemetrySchema(dict(profile.telemetry) if profile.telemetry else dict(MOTOR_TELEMETRY))


@dataclass(frozen=True)
class ModelDevice:
    """A device as the simulator models it, in plain values (``hil_sim``'s robot model reads these)."""

    name: str
    type: str
    #: The model kind (``hil_sim/core/devices/<kind>.py``) and its role (driver, joint or "").
    kind: str
    role: str
    #: Every parameter of its kind the type gives (:mod:`hil_devices.core.models`): the
    #: type's data table's (the IR ranger's distance table...), its model's fixed values,
    #: the device's parameters over them; none of the type's own (``wheel``, a harness's).
    params: Mapping[str, Any]
    wheel: str
    pose: Pose
    mount: str
    #: Tied inputs: signal -> the value held.
    ties: Mapping[str, float]
    #: The signals on the link, INPUT (from the MCU) and OUTPUT (to it).
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    #: Its TF frame and ROS topic, or "" (the simulator's defaults).
    frame: str = ""
    topic: str = ""


def model_params(
    config: DeviceConfig, given: Mapping[str, Any], kinds: Mapping[str, ModelKind] | None = None
) -> dict[str, Any]:
    """The parameters of a device's model kind its type gives, with ``given`` over them.

    Those of the type's data table (the IR ranger's distance table...), its model's
    fixed values, then the type's parameter defaults and ``given`` (a profile's); only
    the kind's parameters (:mod:`hil_devices.core.models`), none of the type's own
    (``wheel``, a harness's). Empty for a type without a model.
    """
    if config.model is None:
        return {}
    kinds = model_kinds() if kinds is None else kinds
    declared = kinds[config.model.kind].params if config.model.kind in kinds else {}
    values = {k: v for k, v in config.table.items() if k in declared}
    values.update(config.model.data)
    values.update({k: p.default for k, p in config.params.items() if k in declared and p.default is not None})
    values.update({k: v for k, v in given.items() if k in declared})
    return values


def model_devices(
    profile: RobotProfile, kinds: Mapping[str, ModelKind] | None = None
) -> tuple[ModelDevice, ...]:
    """The devices the simulator models (those whose type has a ``model``), in profile order.

    Args:
        profile: the robot.
        kinds: the simulator's model kinds (default: hil_devices' ``config/models.json``).
    """
    kinds = model_kinds() if kinds is None else kinds
    devices = []
    for entry in profile.devices:
        model = entry.config.model
        if model is None:
            continue
        link = entry.instance().config.signals
        devices.append(
            ModelDevice(
                name=entry.name,
                type=entry.type,
                kind=model.kind,
                role=model.role,
                params=model_params(entry.config, entry.params, kinds),
                wheel=entry.wheel,
                pose=entry.pose or Pose(),
                mount=entry.mount,
                ties=entry.tied_signals,
                inputs=tuple(s.name for s in link if s.direction is Direction.INPUT),
                outputs=tuple(s.name for s in link if s.direction is Direction.OUTPUT),
                frame=entry.frame,
                topic=entry.topic,
            )
        )
    return tuple(devices)
