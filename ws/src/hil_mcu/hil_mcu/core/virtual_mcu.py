"""The robot MCU's firmware behaviour in Python: the virtual MCU, without I/O or clock.

The virtual MCU stands in for the Arduino that runs the robot firmware. It speaks
the two links of DESIGN.md with the hil_bridge codecs:

* Command link (line protocol, to the control loop): ``DRV<left>,<right>`` drives the
  two wheels through their drivers' pins, whatever the driver (:data:`DRIVER_KINDS`:
  an L298 PWM on enable and levels on IN1/IN2, or PWM on IN1/IN2 with enable tied high;
  TB6612FNG, DRV8833, L9110S, PWM+DIR, a continuous-rotation servo's pulse); values
  outside ``-max_command..max_command`` get an ``ERR`` line and change nothing.
  ``HBB,<t>`` is echoed with the stamp text unchanged and feeds the watchdog.
  ``COM,STOP`` holds the motors off until ``COM,GO``; ``COM,RESET`` returns to the
  power-on state (counters kept); ``COM,VERSION`` answers ``COM,VERSION <name>
  <version>``; other ``COM`` text gets ``ERR,unknown command <text>``. ``ARM`` is
  accepted and ignored (the demo robot has no arm). Every telemetry period it sends
  each list of the telemetry schema: ``TL1`` the signed motor commands (right
  first), sensor lists as the firmware reads them: the demo firmware's named fields
  (:data:`SENSOR_FIELDS`), or any device's OUTPUT signal as ``<device>_<signal>``
  (``<device>`` alone for a device with one), rounded as its type says.
* Signal link (binary frames, to the signal bridge): it is the bridge-board side,
  sending frames of the layout's INPUT signals (motor pins, LED) every signal period
  and decoding the OUTPUT frames (sensor values) it gets back.

Watchdog: with no ``HBB`` for ``watchdog_timeout`` (counted from power-on too), the
motors go off and one ``ERR,heartbeat lost`` is sent; ``DRV`` is refused until the
next ``HBB``. The LED toggles every ``led_period``.

Radio link (optional, ``McuConfig.radio``; DESIGN.md "Radio link"): the MCU relays
without reading payloads. An ``RTX`` line from the command link goes to the radio
link re-framed (same body; the radio link's own sequence numbers and CRC in checked
mode); ``RRX`` and ``RST`` lines from the radio link go to the command link the same
way. With no radio link, or while the radio is lost, an ``RTX`` is dropped and
answered ``ERR,no radio``. No ``RST`` for :data:`RADIO_LOST_S` (counted from power-on
too) makes the radio lost: one ``RST,LOST,0,0`` goes to the command link, and the
next ``RST`` from the module ends it (and is relayed as usual). Other lines from the
radio are dropped and counted (``radio_dropped.<reason>``, ``radio_unexpected``); a
relay whose queue is full drops the line and counts it (``radio_tx_overflow``,
``radio_rx_overflow``), so a flood on one link costs the other nothing but bounded
queue space.

Time is passed in by the caller (``now``, seconds on any monotonic clock), so tests
drive hours of behaviour with a fake clock, and the node drives it from ``select``.
Nothing here reads a clock, touches a file descriptor or imports rclpy.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from hil_bridge.core.line_protocol import (
    Arm,
    Command,
    DecodeStats,
    Drive,
    DropReason,
    ErrorReport,
    Heartbeat,
    LineDecoder,
    LineEncoder,
    Message,
    Relayed,
    Telemetry,
)
from hil_bridge.core.signal_protocol import (
    FrameDecoder,
    FrameEncoder,
    FrameStats,
    SignalLayout,
    rounding_map,
)
from hil_common.core.loop_timing import DeadlineScheduler
from hil_common.errors import HilError
from hil_devices.core.devices import SignalType
from hil_devices.core.profile import RobotProfile, model_devices
from hil_devices.core.telemetry import TelemetrySchema
from hil_mcu.errors import HilMcuError

#: What ``COM,VERSION`` reports by default.
NAME = "hil-virtual-mcu"
VERSION = "0.1.0"

#: The LED the firmware blinks, if the device set has one (the demo robot's).
LED_DEVICE = "led"

#: Longest ERR text: an echoed command or a huge DRV value must not push the line
#: past the receiver's limit (128 bytes, 119 in checked mode).
ERR_TEXT_MAX = 80

#: Reference voltage and full scale of the MCU's 10-bit ADC.
ADC_REFERENCE_V = 5.0
ADC_MAX = 1023

#: Why a DRV was refused (keys of :attr:`McuStats.drv_rejected`).
REJECT_REASONS = ("out_of_range", "stopped", "heartbeat_lost")
#: COM words the firmware knows; anything else is counted as ``unknown``.
COMMAND_WORDS = ("STOP", "GO", "RESET", "VERSION")

#: Radio link (DESIGN.md "Radio link"): ids relayed from the command link to the radio,
#: and from the radio to the command link.
RADIO_TX_IDS = ("RTX",)
RADIO_RX_IDS = ("RRX", "RST")
#: Seconds without an ``RST`` from the module before the radio counts as lost (it sends
#: one at least once a second).
RADIO_LOST_S = 3.0
#: What the MCU sends on the command link when the radio is lost (only the MCU sends LOST).
RADIO_LOST_LINE = "RST,LOST,0,0"
#: What an RTX gets when there is no radio to send it.
NO_RADIO_ERROR = "no radio"
#: Bytes of relayed lines that may wait for each link: a relay that would pass this
#: drops the line (counted) rather than let one link's flood grow the other's queue.
RELAY_QUEUE_BYTES = 1024

_WORD = re.compile(r"[!-~]{1,32}")


def _tenths(value: float) -> float:
    """Rounded to 0.1 (halves up), as the firmware prints distances and headings."""
    return math.floor(value * 10.0 + 0.5) / 10.0


def _whole(value: float) -> float:
    """Rounded to an integer (halves up), as the firmware's ``(int)(x + 0.5)``."""
    return float(math.floor(value + 0.5))


def _adc_counts(volts: float) -> float:
    """What ``analogRead`` returns for ``volts`` on a 5 V, 10-bit ADC."""
    return _whole(volts / ADC_REFERENCE_V * ADC_MAX)


@dataclass(frozen=True)
class SensorField:
    """Where a telemetry field comes from: an OUTPUT signal and how the firmware reads it."""

    device: str
    signal: str
    read: Callable[[float], float]


#: Telemetry fields the firmware knows, by schema field name (``telemetry.yaml``).
SENSOR_FIELDS: Mapping[str, SensorField] = MappingProxyType(
    {
        "ultrasonic_cm": SensorField("ultrasonic", "distance", _tenths),
        "ir_adc": SensorField("ir", "voltage", _adc_counts),
        **{f"light_{i}": SensorField(f"light_{i}", "reading", _whole) for i in range(4)},
        "bumper_left": SensorField("bumper_left", "pressed", _whole),
        "bumper_right": SensorField("bumper_right", "pressed", _whole),
        "heading_deg": SensorField("compass", "heading", _tenths),
    }
)
#: Telemetry fields carrying a motor command: index into (left, right).
MOTOR_FIELDS: Mapping[str, int] = MappingProxyType({"left": 0, "right": 1})


@dataclass(frozen=True)
class WheelDriver:
    """The driver of one wheel: its device on the signal link, its model kind, its parameters."""

    device: str
    #: The simulator's model kind of the driver (a key of :data:`DRIVER_KINDS`).
    kind: str
    #: Its kind's parameters (``direction``; a continuous-rotation servo's ``centre_us``, ``span_us``).
    params: Mapping[str, float] = field(default_factory=dict)


def profile_drivers(profile: RobotProfile) -> tuple[WheelDriver, WheelDriver]:
    """The left and the right wheel's drivers of a robot profile (each wheel has exactly one)."""
    drivers = {d.wheel: d for d in model_devices(profile) if d.role == "driver"}
    left, right = (drivers[wheel] for wheel in ("left", "right"))
    return tuple(  # type: ignore[return-value]
        WheelDriver(d.name, d.kind, {k: float(v) for k, v in d.params.items() if isinstance(v, (int, float))})
        for d in (left, right)
    )


#: The demo robot's drivers: two L298 channels (PWM on enable, levels on A/B).
DEMO_DRIVERS = (WheelDriver("motor_left", "l298n"), WheelDriver("motor_right", "l298n"))
#: The driver kinds the firmware drives, and the inputs each has.
DRIVER_KINDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "l298n": ("enable", "a", "b"),
        "tb6612fng": ("pwm", "in1", "in2", "stby"),
        "drv8833": ("in1", "in2"),
        "l9110s": ("ia", "ib"),
        "pwm_dir": ("pwm", "dir"),
        "cr_servo": ("pulse_us",),
    }
)


def _positive_seconds(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise HilMcuError(f"virtual MCU: {name} must be a finite number of seconds, got {value!r}")
    if value <= 0:
        raise HilMcuError(f"virtual MCU: {name} must be positive, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class McuConfig:
    """Settings of a virtual MCU (the node's parameters, with layout and schema loaded).

    Raises:
        HilMcuError: a setting is out of range (the message names it).
    """

    layout: SignalLayout
    schema: TelemetrySchema
    max_command: int = 255
    telemetry_period: float = 0.1
    watchdog_timeout: float = 1.5
    led_period: float = 0.5
    signal_period: float = 0.005
    checked: bool = False
    #: Whether the MCU has a radio link (the node's ``radio_port`` set).
    radio: bool = False
    #: The left and the right wheel's drivers.
    drivers: tuple[WheelDriver, WheelDriver] = DEMO_DRIVERS
    name: str = NAME
    version: str = VERSION

    def __post_init__(self) -> None:
        if isinstance(self.max_command, bool) or not isinstance(self.max_command, int):
            raise HilMcuError(f"virtual MCU: max_command must be an integer, got {self.max_command!r}")
        if not 1 <= self.max_command <= 32767:
            raise HilMcuError(f"virtual MCU: max_command {self.max_command} is outside 1..32767")
        if not isinstance(self.radio, bool):
            raise HilMcuError(f"virtual MCU: radio must be true or false, got {self.radio!r}")
        for name in ("telemetry_period", "watchdog_timeout", "led_period", "signal_period"):
            _positive_seconds(name, getattr(self, name))
        for name in ("name", "version"):
            value = getattr(self, name)
            if not isinstance(value, str) or not _WORD.fullmatch(value):
                raise HilMcuError(f"virtual MCU: {name} {value!r} must be 1..32 visible characters")


@dataclass
class McuStats:
    """What the virtual MCU did, counted."""

    drv_accepted: int = 0
    #: Refused DRV lines by reason (:data:`REJECT_REASONS`).
    drv_rejected: Counter[str] = field(default_factory=Counter)
    arm_ignored: int = 0
    hbb_echoed: int = 0
    #: COM lines by command word (:data:`COMMAND_WORDS`); ``unknown`` for the rest.
    commands: Counter[str] = field(default_factory=Counter)
    #: Valid lines an MCU does not take (ERR, TLn from the brain), by id.
    unexpected: Counter[str] = field(default_factory=Counter)
    errors_sent: int = 0
    telemetry_sent: int = 0
    watchdog_trips: int = 0
    #: Replies the encoder refused (a line the receiver would drop); never sent.
    unsendable: int = 0
    signal_frames_received: int = 0
    #: RTX lines relayed to the radio link.
    radio_tx: int = 0
    #: RTX lines dropped (no radio link, or the radio lost), each answered ``ERR,no radio``.
    radio_tx_dropped: int = 0
    #: RTX lines dropped because the radio link's queue was full.
    radio_tx_overflow: int = 0
    #: RRX and RST lines relayed to the command link.
    radio_rx: int = 0
    radio_status: int = 0
    #: RRX/RST lines dropped because the command link's relay queue was full.
    radio_rx_overflow: int = 0
    #: Valid lines of other ids from the radio link (HBB, ERR, DRV...), dropped.
    radio_unexpected: int = 0
    #: Times the radio went lost (``RST,LOST,0,0`` sent).
    radio_losses: int = 0


#: Caller times this close before a deadline are at it. A lockstep caller's clock is
#: ``steps / rate`` and a timer's deadlines ``first + k * period``; the two land an ulp
#: apart, and a deadline missed by an ulp fired a step late and then skipped a period
#: (about one signal frame in sixteen at 1 kHz steps and 5 ms frames).
TIME_EPSILON_S = 1e-9


class _Timer:
    """A :class:`DeadlineScheduler` run on the caller's time instead of a clock.

    It is due once ``now`` reaches its deadline. After an overrun (``now`` a whole
    period or more past the deadline) the scheduler skips the missed deadlines and
    waits for the next one ahead; on caller time that wait takes no time, so the
    timer fires at once and the schedule stays on its grid.
    """

    def __init__(self, period: float, first: float) -> None:
        self._now = first
        self.scheduler = DeadlineScheduler(period, clock=self._clock, sleep=self._sleep, start=first)

    @property
    def deadline(self) -> float:
        """When the timer is due next."""
        return self.scheduler.next_deadline

    def due(self, now: float) -> int | None:
        """The index of the deadline that fires at ``now``, or None if none is due."""
        deadline = self.scheduler.next_deadline
        if now < deadline - TIME_EPSILON_S:
            return None
        self._now = max(now, deadline)
        return self.scheduler.wait().index

    def _clock(self) -> float:
        return self._now

    def _sleep(self, seconds: float) -> None:
        self._now += seconds


def _driver_inputs(
    driver: WheelDriver, pins: Mapping[str, tuple[int, float]], value: int, limit: int
) -> dict[str, float]:
    """What a driver's inputs on the link are for a signed command ``value`` (``-limit..limit``).

    A duty is ``rounding_map`` of ``|value|`` onto the input's full scale (the firmware
    computes the same bit for bit); a level high is the full scale.
    """

    def duty(name: str) -> float:
        return float(rounding_map(abs(value), 0, limit, 0, int(pins[name][1])))

    def high(name: str, on: bool) -> float:
        return pins[name][1] if on else 0.0

    forward, back = value > 0, value < 0
    out: dict[str, float] = {}
    kind = driver.kind
    if kind == "l298n" and "enable" in pins:  # PWM on ENA, levels on IN1/IN2
        out = {"enable": duty("enable"), "a": high("a", forward), "b": high("b", back)}
    elif kind in ("l298n", "drv8833", "l9110s"):  # PWM on one input, the other low
        first, second = DRIVER_KINDS[kind][-2:]
        out = {first: duty(first) if forward else 0.0, second: duty(second) if back else 0.0}
    elif kind == "tb6612fng":
        out = {
            "pwm": duty("pwm"),
            "in1": high("in1", forward),
            "in2": high("in2", back),
            "stby": high("stby", True),
        }
    elif kind == "pwm_dir":
        out = {"pwm": duty("pwm"), "dir": high("dir", back)}
    elif kind == "cr_servo":
        centre, span = driver.params.get("centre_us", 1500.0), driver.params.get("span_us", 500.0)
        out = {"pulse_us": centre + span * value / limit}
    return {name: level for name, level in out.items() if name in pins}


class VirtualMcu:
    """The firmware's behaviour on both links, driven by bytes and the time passed in.

    Args:
        config: the settings.
        start: power-on time, on the clock later calls pass as ``now``.

    Raises:
        HilMcuError: a wheel's driver it cannot drive or that is not on the layout, or
            a telemetry field no device of the layout gives (naming what it lacks).
    """

    def __init__(self, config: McuConfig, *, start: float = 0.0) -> None:
        self.config = config
        layout = config.layout
        self.stats = McuStats()
        self._line_decoder = LineDecoder(schema=config.schema, checked=config.checked, relay_ids=RADIO_TX_IDS)
        self._line_encoder = LineEncoder(checked=config.checked)
        self._radio_decoder = LineDecoder(checked=config.checked, relay_ids=RADIO_RX_IDS)
        self._radio_encoder = LineEncoder(checked=config.checked)
        self._radio_out = bytearray()
        #: Relayed bytes waiting in the command-link queue (counted against RELAY_QUEUE_BYTES).
        self._relayed_pending = 0
        self._radio_heard = start
        self._radio_lost = False
        try:
            self._frame_encoder = FrameEncoder(layout.inputs, checked=config.checked)
            self._frame_decoder = FrameDecoder(layout.outputs, checked=config.checked)
        except HilError as exc:
            raise HilMcuError(f"virtual MCU: signal layout: {exc}") from exc
        self._input_index = {slot.key: i for i, slot in enumerate(layout.inputs)}
        self._output_index = {slot.key: i for i, slot in enumerate(layout.outputs)}
        # Each wheel's driver inputs: name -> (index, full scale), left then right.
        self._wheels = tuple(self._driver(driver) for driver in config.drivers)
        self._led_index = self._input_index.get((LED_DEVICE, "active"))
        self._telemetry = [
            (list_id, names, [self._field_reader(list_id, name) for name in names])
            for list_id, names in config.schema.lists.items()
        ]
        self._pins: list[float] = [slot.spec.default for slot in layout.inputs]
        self._sensors: list[float] = [slot.spec.default for slot in layout.outputs]
        self._commands = [0, 0]
        self._stopped = False
        self._heartbeat_lost = False
        self._last_heartbeat = start
        self._last_signal_at: float | None = None
        self._command_out = bytearray()
        self._signal_out = bytearray()
        self._telemetry_timer = _Timer(config.telemetry_period, start + config.telemetry_period)
        self._led_timer = _Timer(config.led_period, start + config.led_period)
        self._signal_timer = _Timer(config.signal_period, start + config.signal_period)
        self._set_motors(0, 0)

    # -- configuration -------------------------------------------------------------

    @staticmethod
    def _index(index: dict[tuple[str, str], int], device: str, signal: str, direction: str) -> int:
        try:
            return index[(device, signal)]
        except KeyError:
            raise HilMcuError(
                f"virtual MCU: the signal layout has no {direction} signal {device}.{signal}"
            ) from None

    def _driver(self, driver: WheelDriver) -> dict[str, tuple[int, float]]:
        """A driver's inputs on the link (tied ones are not): name -> (index, full scale)."""
        names = DRIVER_KINDS.get(driver.kind)
        if names is None:
            raise HilMcuError(
                f"virtual MCU: {driver.device}: it drives no {driver.kind}"
                f" (it drives: {', '.join(DRIVER_KINDS)})"
            )
        pins = {
            name: (index, self.config.layout.inputs[index].spec.max)
            for name in names
            if (index := self._input_index.get((driver.device, name))) is not None
        }
        if not pins:
            raise HilMcuError(f"virtual MCU: the signal layout has no INPUT signal of {driver.device}")
        return pins

    def _field_reader(self, list_id: str, name: str) -> Callable[[], float]:
        if name in MOTOR_FIELDS:
            wheel = MOTOR_FIELDS[name]
            return lambda: float(self._commands[wheel])
        source = SENSOR_FIELDS.get(name)
        if source is not None and (source.device, source.signal) in self._output_index:
            index, read = self._output_index[(source.device, source.signal)], source.read
            return lambda: read(self._sensors[index])
        for slot_index, slot in enumerate(self.config.layout.outputs):
            single = sum(1 for s in self.config.layout.outputs if s.device == slot.device) == 1
            if name == f"{slot.device}_{slot.name}" or (single and name == slot.device):
                rounding = _whole if slot.spec.type is SignalType.INTEGER else _tenths
                return lambda index=slot_index: rounding(self._sensors[index])  # type: ignore[misc]
        known = [*MOTOR_FIELDS, *(f"{s.device}_{s.name}" for s in self.config.layout.outputs)]
        known += [
            field for field, src in SENSOR_FIELDS.items() if (src.device, src.signal) in self._output_index
        ]
        raise HilMcuError(
            f"virtual MCU: telemetry schema {list_id}: field {name!r} has no source in this robot's"
            f" devices (known: {', '.join(known)})"
        )

    # -- inputs --------------------------------------------------------------------

    def feed_command(self, data: bytes, now: float) -> None:
        """Handle bytes from the control loop; replies wait in :meth:`take_command_output`."""
        # A timeout that expired before these bytes arrived counts first.
        self._check_watchdog(now)
        self._check_radio(now)
        for message in self._line_decoder.feed(data):
            self._handle(message, now)

    def feed_signal(self, data: bytes, now: float) -> None:
        """Take bytes from the signal bridge; the newest whole frame sets the sensor values."""
        frames = self._frame_decoder.feed(data)
        if frames:
            self._sensors = list(frames[-1].values)
            self._last_signal_at = now
            self.stats.signal_frames_received += len(frames)

    def feed_radio(self, data: bytes, now: float) -> None:
        """Take bytes from the radio module; RRX and RST lines are relayed to the command link.

        Nothing happens without a radio link (``McuConfig.radio`` false).
        """
        if not self.config.radio:
            return
        self._check_radio(now)
        for message in self._radio_decoder.feed(data):
            if not isinstance(message, Relayed):
                self.stats.radio_unexpected += 1
                continue
            if message.body.startswith("RST"):
                self._radio_heard = now
                self._radio_lost = False
            self._relay_to_command(message)

    def tick(self, now: float) -> None:
        """Run whatever is due at ``now``: watchdog, radio, telemetry, LED and signal frame."""
        self._check_watchdog(now)
        self._check_radio(now)
        if self._telemetry_timer.due(now) is not None:
            self._send_telemetry()
        led = self._led_timer.due(now)
        if led is not None and self._led_index is not None:
            # Deadline 0 switches the LED on; parity keeps the phase across skipped deadlines.
            self._pins[self._led_index] = 1.0 if led % 2 == 0 else 0.0
        if self._signal_timer.due(now) is not None:
            self._signal_out += self.signal_frame()

    def next_deadline(self, now: float) -> float:
        """When :meth:`tick` must run next (``now`` if something is already due)."""
        deadline = min(self._telemetry_timer.deadline, self._led_timer.deadline, self._signal_timer.deadline)
        if not self._heartbeat_lost:
            deadline = min(deadline, self._last_heartbeat + self.config.watchdog_timeout)
        if self.config.radio and not self._radio_lost:
            deadline = min(deadline, self._radio_heard + RADIO_LOST_S)
        return max(now, deadline)

    # -- outputs -------------------------------------------------------------------

    def take_command_output(self) -> bytes:
        """The bytes waiting for the command link, removed from the queue."""
        data = bytes(self._command_out)
        self._command_out.clear()
        self._relayed_pending = 0
        return data

    def take_radio_output(self) -> bytes:
        """The bytes waiting for the radio link (relayed RTX lines), removed from the queue."""
        data = bytes(self._radio_out)
        self._radio_out.clear()
        return data

    def take_signal_output(self) -> bytes:
        """The signal frames :meth:`tick` queued, removed from the queue."""
        data = bytes(self._signal_out)
        self._signal_out.clear()
        return data

    def signal_frame(self) -> bytes:
        """One frame of the INPUT signals (motor pins, LED) as they are now."""
        return self._frame_encoder.encode(self._pins)

    # -- state ---------------------------------------------------------------------

    @property
    def motor_commands(self) -> tuple[int, int]:
        """The signed commands the motors run at, (left, right)."""
        return self._commands[0], self._commands[1]

    @property
    def input_values(self) -> tuple[float, ...]:
        """The INPUT signal values (pins), in the layout's INPUT order."""
        return tuple(self._pins)

    def pin(self, device: str, signal: str) -> int:
        """The level of the INPUT signal ``device.signal`` (e.g. ``motor_left``, ``enable``).

        Raises:
            HilMcuError: no such INPUT signal.
        """
        return int(self._pins[self._index(self._input_index, device, signal, "INPUT")])

    def sensor(self, device: str, signal: str) -> float:
        """The newest value of the OUTPUT signal ``device.signal`` (its default before any frame).

        Raises:
            HilMcuError: no such OUTPUT signal.
        """
        return self._sensors[self._index(self._output_index, device, signal, "OUTPUT")]

    @property
    def led_on(self) -> bool:
        """True while the LED pin is high (False without an LED)."""
        return self._led_index is not None and self._pins[self._led_index] != 0.0

    @property
    def stopped(self) -> bool:
        """True between ``COM,STOP`` and ``COM,GO`` (or ``COM,RESET``)."""
        return self._stopped

    @property
    def heartbeat_lost(self) -> bool:
        """True from a watchdog trip until the next ``HBB``."""
        return self._heartbeat_lost

    @property
    def radio_lost(self) -> bool:
        """True from :data:`RADIO_LOST_S` without an ``RST`` until the next one (radio link only)."""
        return self._radio_lost

    @property
    def radio_stats(self) -> DecodeStats:
        """The radio-link decoder's counters (drops by reason, lost lines)."""
        return self._radio_decoder.stats

    @property
    def last_signal_at(self) -> float | None:
        """When the last OUTPUT frame arrived, or None."""
        return self._last_signal_at

    @property
    def command_stats(self) -> DecodeStats:
        """The command-link decoder's counters (drops by reason, lost lines)."""
        return self._line_decoder.stats

    @property
    def signal_stats(self) -> FrameStats:
        """The signal-link decoder's counters (bad ids, bad CRC, lost frames, skipped bytes)."""
        return self._frame_decoder.stats

    def counters(self) -> dict[str, int]:
        """Every counter as a flat ``name -> value`` mapping (for diagnostics), stable keys."""
        stats, lines, frames = self.stats, self._line_decoder.stats, self._frame_decoder.stats
        radio = self._radio_decoder.stats
        encoder = self._frame_encoder.stats
        timers = (self._telemetry_timer, self._led_timer, self._signal_timer)
        return {
            "drv_accepted": stats.drv_accepted,
            **{f"drv_rejected.{r}": stats.drv_rejected[r] for r in REJECT_REASONS},
            "arm_ignored": stats.arm_ignored,
            "hbb_echoed": stats.hbb_echoed,
            **{f"commands.{k}": stats.commands[k] for k in (*COMMAND_WORDS, "unknown")},
            "unexpected": sum(stats.unexpected.values()),
            "errors_sent": stats.errors_sent,
            "telemetry_sent": stats.telemetry_sent,
            "watchdog_trips": stats.watchdog_trips,
            "unsendable": stats.unsendable,
            "command_messages": lines.messages,
            **{f"command_dropped.{r.value}": lines.dropped[r.value] for r in DropReason},
            "command_lost": lines.lost,
            "command_resyncs": lines.resyncs,
            "signal_frames_received": stats.signal_frames_received,
            "signal_frames_sent": encoder.frames,
            "signal_bad_ids": frames.bad_ids,
            "signal_bad_crc": frames.bad_crc,
            "signal_duplicates": frames.duplicates,
            "signal_lost": frames.lost,
            "signal_resyncs": frames.resyncs,
            "signal_skipped_bytes": frames.skipped_bytes,
            "timer_overruns": sum(t.scheduler.overruns for t in timers),
            "radio_tx": stats.radio_tx,
            "radio_tx_dropped": stats.radio_tx_dropped,
            "radio_tx_overflow": stats.radio_tx_overflow,
            "radio_rx": stats.radio_rx,
            "radio_status": stats.radio_status,
            "radio_rx_overflow": stats.radio_rx_overflow,
            "radio_unexpected": stats.radio_unexpected,
            **{f"radio_dropped.{r.value}": radio.dropped[r.value] for r in DropReason},
            "radio_lost_lines": radio.lost,
            "radio_losses": stats.radio_losses,
            "radio_lost": int(self._radio_lost),
        }

    # -- behaviour -----------------------------------------------------------------

    def _handle(self, message: Message, now: float) -> None:
        if isinstance(message, Drive):
            self._drive(message)
        elif isinstance(message, Heartbeat):
            self._last_heartbeat = now
            self._heartbeat_lost = False
            if self._send(message):
                self.stats.hbb_echoed += 1
        elif isinstance(message, Command):
            self._command(message.text, now)
        elif isinstance(message, Arm):
            self.stats.arm_ignored += 1
        elif isinstance(message, Relayed):
            self._relay_to_radio(message)
        elif isinstance(message, Telemetry):
            self.stats.unexpected[message.list_id] += 1
        else:
            self.stats.unexpected["ERR"] += 1

    def _drive(self, drive: Drive) -> None:
        limit = self.config.max_command
        bad = [
            f"{side} {value}"
            for side, value in (("left", drive.left), ("right", drive.right))
            if not -limit <= value <= limit
        ]
        if bad:
            self.stats.drv_rejected["out_of_range"] += 1
            self._error(f"DRV {' and '.join(bad)} out of range {-limit}..{limit}")
        elif self._stopped:
            self.stats.drv_rejected["stopped"] += 1
        elif self._heartbeat_lost:
            self.stats.drv_rejected["heartbeat_lost"] += 1
        else:
            self.stats.drv_accepted += 1
            self._set_motors(drive.left, drive.right)

    def _command(self, text: str, now: float) -> None:
        if text == "STOP":
            self._stopped = True
            self._set_motors(0, 0)
        elif text == "GO":
            self._stopped = False
        elif text == "RESET":
            self._stopped = False
            self._heartbeat_lost = False
            # Power-on state: the watchdog counts from the reset, as from power-on.
            self._last_heartbeat = now
            self._set_motors(0, 0)
        elif text == "VERSION":
            self._send(Command(f"VERSION {self.config.name} {self.config.version}"))
        else:
            self.stats.commands["unknown"] += 1
            printable = "".join(ch if " " <= ch <= "~" else "?" for ch in text)
            self._error(f"unknown command {printable}")
            return
        self.stats.commands[text] += 1

    def _set_motors(self, left: int, right: int) -> None:
        """Command both wheels through their drivers' inputs (duty from |value|, direction from its sign)."""
        self._commands = [left, right]
        limit = self.config.max_command
        for driver, pins, value in zip(self.config.drivers, self._wheels, (left, right), strict=True):
            signed = -value if driver.params.get("direction", 1) < 0 else value
            for name, level in _driver_inputs(driver, pins, signed, limit).items():
                self._pins[pins[name][0]] = level

    def _check_watchdog(self, now: float) -> None:
        if self._heartbeat_lost or now - self._last_heartbeat < self.config.watchdog_timeout:
            return
        self._heartbeat_lost = True
        self.stats.watchdog_trips += 1
        self._set_motors(0, 0)
        self._error("heartbeat lost")

    def _check_radio(self, now: float) -> None:
        if not self.config.radio or self._radio_lost or now - self._radio_heard < RADIO_LOST_S:
            return
        self._radio_lost = True
        self.stats.radio_losses += 1
        self._send(Relayed(RADIO_LOST_LINE))

    def _line_size(self, line: Relayed) -> int:
        """Bytes ``line`` takes on a link once framed (line feed, checked suffix)."""
        return len(line.body) + 1 + (9 if self.config.checked else 0)

    def _relay_to_radio(self, line: Relayed) -> None:
        """An RTX from the command link: on to the radio link, or dropped with ``ERR,no radio``."""
        if not self.config.radio or self._radio_lost:
            self.stats.radio_tx_dropped += 1
            self._error(NO_RADIO_ERROR)
            return
        if len(self._radio_out) + self._line_size(line) > RELAY_QUEUE_BYTES:
            self.stats.radio_tx_overflow += 1
            return
        try:
            self._radio_out += self._radio_encoder.encode(line)
        except HilError:
            self.stats.unsendable += 1
            return
        self.stats.radio_tx += 1

    def _relay_to_command(self, line: Relayed) -> None:
        """An RRX or RST from the radio link: on to the command link unless its queue is full."""
        size = self._line_size(line)
        if self._relayed_pending + size > RELAY_QUEUE_BYTES:
            self.stats.radio_rx_overflow += 1
            return
        if not self._send(line):
            return
        self._relayed_pending += size
        if line.body.startswith("RST"):
            self.stats.radio_status += 1
        else:
            self.stats.radio_rx += 1

    def _send_telemetry(self) -> None:
        for list_id, names, readers in self._telemetry:
            values = tuple(read() for read in readers)
            if self._send(Telemetry(list_id, names, values)):
                self.stats.telemetry_sent += 1

    def _error(self, text: str) -> None:
        if self._send(ErrorReport(text[:ERR_TEXT_MAX])):
            self.stats.errors_sent += 1

    def _send(self, message: Message) -> bool:
        """Queue ``message`` for the command link; False (counted) if the encoder refuses it."""
        try:
            self._command_out += self._line_encoder.encode(message)
        except HilError:
            # E.g. the echo of a 128-byte "HBB<stamp>" gains a comma and no longer fits.
            self.stats.unsendable += 1
            return False
        return True
