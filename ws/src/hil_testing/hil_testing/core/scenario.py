r"""HIL scenarios: a run described in YAML, its timeline of inputs, and its assertions.

A scenario file says what to run (world, start pose, MCU kind, firmware, behaviour,
checked mode, seed, link faults), what a user does during the run (a timeline of
``cmd_vel`` segments, ``robotCommand`` texts, go-to runs and link faults) and what
must hold (assertions). :func:`load_scenario` reads and checks it; every error names
the file and the field (``demo.yaml: assertions[2].inside.x: ...``). It refuses what a
run would, with the run's own checks: the world file (:func:`hil_sim.core.world.load_world`),
the start pose in it (:func:`hil_sim.core.world.start_problem`), the firmware's ELF
header (:func:`hil_mcu.core.simavr.check_firmware`), the graph's options
(:class:`~hil_bringup.core.graph.GraphOptions`); and what would only show as a
failed or vacuous verdict: telemetry lists and fields the schema
(:func:`hil_bridge.core.defaults.telemetry_schema`) does not have, more boards down
than the world has.
:class:`Timeline` turns the inputs into actions in time order, and
:meth:`Scenario.checks` makes the assertions' checks (:mod:`hil_testing.core.checks`),
which judge the run one observation per lockstep period. Nothing here runs a graph
(``hil_scenario`` does, :mod:`hil_testing.hil_scenario`).

A run ends at ``duration``, or earlier once every check's verdict is settled, the
timeline is through and no goto runs. A check over the whole run (``no_failsafe``
or ``telemetry``/``state`` without ``during``, ``rtt_below``) is about
``[0, duration]``: it settles early only by failing, so it holds the run to its
duration. A check the run ended before the end of its window is an error.

The format, with every assertion kind (times in simulated seconds)::

    name: drive_straight            # default: the file's name
    description: what it shows
    world: empty                    # a world of hil_sim (demo, empty, swarm) or a YAML path
    start: {x: 0.0, y: 0.0, yaw: 0.0}
    robot: demo                     # a shipped robot or a robot folder (relative to this file)
    brain: profile                  # control_loop | none | profile (the robot profile's)
    mcu: virtual                    # virtual | simavr
    physics: native                 # native | mujoco
    firmware: ""                    # simavr: an ELF (default: the robot's firmware built for the run)
    behaviour: manual               # manual (default) | boards | light | swarm
    robots: 1                       # and the other run options (hil_robots, robot_spacing, radio)
    checked: false
    seed: 0
    faults: {drop: 0.0, corrupt: 0.0}   # fault proxies on both links from the start
    duration: 10.0                  # simulated s, 0.1 .. 86400 (MAX_DURATION)
    timeline:
      - {at: 0.0, cmd_vel: {linear: 0.2, angular: 0.0, for: 3.0}}
      - {at: 3.0, command: STOP}
      - {at: 4.0, goto: {x: 1.0, y: 0.0, yaw: 0.0, timeout: 15}}
      - {at: 1.0, fault: {link: both, drop: 0.01, corrupt: 0.01, for: 5.0}}
      - {at: 0.5, serial: {send: "o 100 100\r", uart: 0}}  # brain none: to robot 0's firmware
      - {at: 1.0, set: {device: bumper_left, value: 1, for: 0.2}}  # a sensor held (signal: one of several)
      - {at: 1.0, set: {device: start_button, value: 1, for: 0.2}}  # a button, a knob (V), an IR key
      - {at: 2.0, set: {device: remote, value: {address: 0, command: 0x45}}}
    assertions:
      - {boards_down: {count: 6, by: 60}}
      - {task_done: {task: light, by: 40}}
      - {inside: {x: [0.5, 0.7], y: [-0.05, 0.05], at: 4.0}}       # or during: [a, b], or by: t
      - {no_failsafe: {reasons: [mcu, station], during: [0, 30]}}
      - {failsafe: {reason: cmd_vel, between: [3.4, 3.7]}}
      - {rtt_below: {link: mcu, max_ms: 40, statistic: max}}
      - {telemetry: {list: TL2, field: heading_deg, min: 0, max: 360, during: [1, 10]}}
      - {state: {field: v, min: -0.01, max: 0.01, during: [2.5, 4.0]}}
      - {serial: {expect: "^OK$", by: 0.6}}     # or during: [a, b]; uart: N (default: the command UART)
      - {serial: {forbid: "Invalid", during: [0, 10]}}   # without during: the whole run
      - {pin: {name: motor_left.enable, min: 0, max: 1024, during: [1, 2]}}  # device.signal or device.pin
      - {sensor: {device: ultrasonic, signal: distance, min: 10, during: [0, 5]}}
      - {tone: {device: buzzer, frequency: [430, 450], duration: [0.1, 0.3], during: [0, 5]}}
      - {led: {device: strip, index: 0, colour: [255, 0, 0], tolerance: 8, by: 2}}  # or during

The robot steps and assertions (``serial``, ``set``, ``pin``, ``sensor``, ``tone``,
``led``) are about robot 0 and are checked against its profile and its simulator model
when the file is read (:class:`RobotView`): a serial step on the command UART needs
``brain: none`` (the control loop owns it otherwise), another UART of the profile
needs ``mcu: simavr``; a device, signal, pin or value the robot does not have is named
with what it has. Serial text is matched as it arrives, ``\r\n`` and ``\r`` read as
``\n`` and ``^``/``$`` at line ends (:class:`~hil_testing.core.checks.SerialText`);
every byte each UART received goes to ``serial_uart<N>.log`` beside the report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hil_bridge.core.defaults import telemetry_schema
from hil_bringup.core.graph import GraphOptions
from hil_bringup.core.options import judge, on
from hil_bringup.core.robots import resolve_robots
from hil_common.core.config_file import load_yaml
from hil_common.errors import HilError
from hil_devices.core.profile import RobotProfile
from hil_mcu.core.simavr import check_firmware
from hil_mcu.errors import HilMcuError
from hil_sim.core.build import default_world_path, world_path
from hil_sim.core.device_set import DeviceSet
from hil_sim.core.devices.rgb_leds import led_signal
from hil_sim.core.robot_model import robot_model_from_profile
from hil_sim.core.world import Pose, WorldConfig, load_world, start_problem
from hil_testing.core.checks import (
    BoardsDown,
    Bounded,
    Check,
    FailsafeTrips,
    Inside,
    LedShows,
    NoFailsafe,
    Region,
    RttBelow,
    SerialExpect,
    SerialForbid,
    TaskDone,
    ToneHeard,
    compile_pattern,
    window_text,
)
from hil_testing.core.goto import GotoGoal
from hil_testing.errors import HilTestingError

#: The simulated MCUs a scenario runs (a real board needs hardware.launch.py).
MCU_KINDS = ("virtual", "simavr")
FAILSAFES = ("cmd_vel", "mcu", "station")
FAULT_LINKS = ("command", "signal", "both")
STATE_FIELDS = ("x", "y", "yaw", "v", "w")
RTT_STATISTICS = ("last", "p50", "p99", "max")
TASKS = ("boards", "light")
#: Shortest and longest run (simulated s): a few loop frames; a day (about an hour of
#: wall time in lockstep).
MIN_DURATION = 0.1
MAX_DURATION = 86400.0
#: The run options a scenario file takes at its top level (GraphOptions declares them).
RUN_KEYS = tuple(on(GraphOptions, "scenario"))
#: Where a scenario runs something else than the option's own default when the key is absent.
RUN_DEFAULTS: Mapping[str, Any] = {"behaviour": "manual"}
_TOP_KEYS = (
    "name",
    "description",
    *RUN_KEYS,
    "start",
    "faults",
    "duration",
    "timeline",
    "assertions",
)


# --- reading fields, with errors naming them ------------------------------------------------


class _Fields:
    """A mapping being read, whose errors name the file and the field's path."""

    def __init__(self, data: object, where: str, source: str) -> None:
        if not isinstance(data, Mapping):
            raise HilTestingError(f"{source}: {where}: expected a mapping, got {data!r}")
        self.data: Mapping[str, Any] = data
        self.where = where
        self.source = source

    def path(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def fail(self, key: str, text: str) -> HilTestingError:
        return HilTestingError(f"{self.source}: {self.path(key)}: {text}")

    def only(self, allowed: Sequence[str]) -> None:
        unknown = sorted(set(self.data) - set(allowed))
        if unknown:
            raise HilTestingError(
                f"{self.source}: {self.where or 'top level'}: "
                f"unknown field(s) {', '.join(map(str, unknown))} "
                f"(known: {', '.join(allowed)})"
            )

    def number(
        self,
        key: str,
        default: float | None = None,
        *,
        minimum: float | None = None,
        maximum: float | None = None,
    ) -> float:
        value = self.data.get(key, default)
        if value is None:
            raise self.fail(key, "missing (a number is needed)")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.fail(key, f"expected a finite number, got {value!r}")
        if minimum is not None and value < minimum:
            raise self.fail(key, f"{value!r} is below {minimum:g}")
        if maximum is not None and value > maximum:
            raise self.fail(key, f"{value!r} is above {maximum:g}")
        return float(value)

    def optional_number(self, key: str, *, minimum: float | None = None) -> float | None:
        return None if self.data.get(key) is None else self.number(key, minimum=minimum)

    def probability(self, key: str) -> float:
        value = self.number(key, 0.0, minimum=0.0)
        if value > 1.0:
            raise self.fail(key, f"{value!r} is not a probability in [0, 1]")
        return value

    def integer(self, key: str, default: int | None = None, *, minimum: int | None = None) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"expected an integer, got {value!r}")
        if minimum is not None and value < minimum:
            raise self.fail(key, f"{value!r} is below {minimum}")
        return value

    def text(self, key: str, default: str | None = None, *, choices: Sequence[str] = ()) -> str:
        value = self.data.get(key, default)
        if value is None:
            raise self.fail(key, "missing (a text is needed)")
        if not isinstance(value, str):
            raise self.fail(key, f"expected a text, got {value!r}")
        if choices and value not in choices:
            raise self.fail(key, f"{value!r} is not one of {', '.join(repr(c) for c in choices)}")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {value!r}")
        return value

    def interval(self, key: str) -> tuple[float, float] | None:
        value = self.data.get(key)
        if value is None:
            return None
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value
            )
            or value[0] > value[1]
        ):
            raise self.fail(key, f"expected [low, high] numbers with low <= high, got {value!r}")
        return float(value[0]), float(value[1])

    def sub(self, key: str) -> _Fields:
        return _Fields(self.data.get(key), self.path(key), self.source)


def _one_kind(entry: _Fields, kinds: Sequence[str], *, extra: Sequence[str] = ()) -> str:
    """The one key of ``kinds`` an entry has (besides ``extra``)."""
    present = [k for k in entry.data if k not in extra]
    if len(present) != 1 or present[0] not in kinds:
        raise HilTestingError(
            f"{entry.source}: {entry.where}: expected exactly one of {', '.join(kinds)}"
            + (f" (besides {', '.join(extra)})" if extra else "")
            + f", got {', '.join(map(str, present)) or 'none'}"
        )
    return str(present[0])


# --- the timeline ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CmdVel:
    """Send this twist on cmd_vel at every loop frame from ``at`` (for ``seconds``, else on)."""

    at: float
    linear: float
    angular: float
    seconds: float | None = None


@dataclass(frozen=True)
class StationCommand:
    """Send ``text`` on robotCommand at ``at``."""

    at: float
    text: str


@dataclass(frozen=True)
class Goto:
    """Drive to ``goal`` on cmd_vel from ``at`` (a check of its own)."""

    at: float
    goal: GotoGoal


@dataclass(frozen=True)
class Fault:
    """From ``at`` (for ``seconds``, else on), every byte of ``link`` suffers these faults."""

    at: float
    link: str
    drop: float = 0.0
    corrupt: float = 0.0
    duplicate: float = 0.0
    delay: float = 0.0
    seconds: float | None = None


@dataclass(frozen=True)
class EndCmdVel:
    """The end of a cmd_vel segment (``owner``: its index in the timeline)."""

    at: float
    owner: int


@dataclass(frozen=True)
class EndFault:
    """The end of a fault (the link is healed unless a later fault took it over)."""

    at: float
    link: str
    owner: int


@dataclass(frozen=True)
class SerialSend:
    """Write ``data`` to robot 0's UART ``uart`` at ``at`` (it reaches the MCU in the next period)."""

    at: float
    data: bytes
    uart: int


@dataclass(frozen=True)
class SetDevice:
    """Robot 0's user sets ``device`` to ``value`` at ``at`` (a sensor's ``signal``), for ``seconds``."""

    at: float
    device: str
    value: float | Mapping[str, float]
    seconds: float | None = None
    signal: str = ""


Event = CmdVel | StationCommand | Goto | Fault | SerialSend | SetDevice
Action = CmdVel | StationCommand | Goto | Fault | SerialSend | SetDevice | EndCmdVel | EndFault


class Timeline:
    """The scenario's inputs as actions in time order (segment ends included)."""

    def __init__(self, events: Sequence[Event]) -> None:
        actions: list[tuple[float, int, int, Action]] = []
        for index, event in enumerate(events):
            actions.append((event.at, 1, index, event))
            if isinstance(event, CmdVel) and event.seconds is not None:
                actions.append(
                    (event.at + event.seconds, 0, index, EndCmdVel(event.at + event.seconds, index))
                )
            if isinstance(event, Fault) and event.seconds is not None:
                end = event.at + event.seconds
                actions.append((end, 0, index, EndFault(end, event.link, index)))
        # Ends before starts at the same moment: a segment that follows another takes over.
        actions.sort(key=lambda a: (a[0], a[1], a[2]))
        self.actions = [(index, action) for _, _, index, action in actions]
        self._next = 0

    def due(self, t: float) -> list[tuple[int, Action]]:
        """The actions due by ``t`` not handed out yet, each with its event's index."""
        out = []
        while self._next < len(self.actions) and self.actions[self._next][1].at <= t + 1e-9:
            out.append(self.actions[self._next])
            self._next += 1
        return out

    @property
    def next_at(self) -> float:
        """When the next action not handed out yet is due (infinity: none is left)."""
        return self.actions[self._next][1].at if self._next < len(self.actions) else math.inf

    @property
    def through(self) -> bool:
        """Every event has begun (what is left, if anything, are ends of segments and faults)."""
        return all(isinstance(a, (EndCmdVel, EndFault)) for _, a in self.actions[self._next :])


# --- what the steps may name on robot 0 ------------------------------------------------------


@dataclass(frozen=True)
class RobotView:
    """Robot 0 as a scenario's steps see it: its profile, its devices in the simulator, its UARTs."""

    profile: RobotProfile
    #: The simulator's view of its devices (what can be set, read, overridden).
    devices: DeviceSet
    brain: str
    mcu: str

    @property
    def command_uart(self) -> int:
        """The command UART's number."""
        return self.profile.command.uart

    def uart(self, entry: _Fields) -> int:
        """The UART a serial step names (``uart``; default: the command UART), checked for the run.

        The command UART is the scenario's with brain none (the control loop owns it
        otherwise); another UART of the profile only with the firmware in simavr.
        """
        ports = {port.uart: port.role for port in self.profile.serial}
        uart = entry.integer("uart", self.command_uart, minimum=0)
        if uart not in ports:
            known = ", ".join(f"{n} ({role})" for n, role in ports.items())
            raise entry.fail(
                "uart", f"{uart} is not a UART of robot {self.profile.name} (its UARTs: {known})"
            )
        if uart == self.command_uart and self.brain != "none":
            raise entry.fail(
                "uart",
                f"UART {uart} is the command UART, which the control loop owns (brain {self.brain});"
                " serial steps on it need brain: none",
            )
        if uart != self.command_uart and self.mcu != "simavr":
            raise entry.fail("uart", f"UART {uart} (aux) reaches a pty only with mcu: simavr")
        return uart

    def device(self, entry: _Fields, key: str = "device") -> str:
        """A device of the robot's simulator model, named by ``key``."""
        name = entry.text(key)
        if name not in self.devices.where:
            known = ", ".join(self.devices.where) or "none"
            raise entry.fail(key, f"robot {self.profile.name} has no device {name!r} (its devices: {known})")
        return name

    def kind(self, name: str) -> str:
        """The simulator kind of device ``name``."""
        return self.devices.where[name][0].KIND


def robot_view(options: GraphOptions) -> RobotView:
    """Robot 0 of a run: its profile and its simulator model's devices.

    Raises:
        HilError: a profile or model the run would refuse.
    """
    profile = options.profile(0)
    return RobotView(
        profile, DeviceSet(robot_model_from_profile(profile), 1), options.brain_of(0), options.mcu
    )


# --- the scenario ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """One scenario file, checked."""

    name: str
    path: Path
    description: str = ""
    world: str = ""
    start: tuple[float, float, float] | None = None
    firmware: str = ""
    #: The run's other options (GraphOptions fields of RUN_KEYS: mcu, behaviour, seed...).
    run: Mapping[str, Any] = field(default_factory=dict)
    #: (drop, corrupt) from the start, or None.
    faults: tuple[float, float] | None = None
    duration: float = 10.0
    events: tuple[Event, ...] = ()
    #: The assertions as read (kind, fields); :meth:`checks` makes fresh checks of them.
    assertions: tuple[tuple[str, Mapping[str, Any], str], ...] = ()
    #: Robot 0 as the steps name it (None: not read from a file).
    view: RobotView | None = field(default=None, compare=False)

    def _run(self, name: str) -> Any:
        return self.run.get(name, RUN_DEFAULTS.get(name, getattr(GraphOptions, name)))

    @property
    def mcu(self) -> str:
        """The simulated MCU (virtual or simavr)."""
        return str(self._run("mcu"))

    @property
    def physics(self) -> str:
        """The physics backend."""
        return str(self._run("physics"))

    @property
    def behaviour(self) -> str:
        """The behaviour the control loop starts in (manual: MANUAL)."""
        return str(self._run("behaviour"))

    @property
    def checked(self) -> bool:
        """Checked mode on both links."""
        return bool(self._run("checked"))

    @property
    def seed(self) -> int:
        """The run's seed."""
        return int(self._run("seed"))

    @property
    def fault_proxies(self) -> bool:
        """The run needs link fault proxies (faults from the start or in the timeline)."""
        return self.faults is not None or any(isinstance(e, Fault) for e in self.events)

    def checks(self) -> list[Check]:
        """Fresh checks of the assertions, in file order."""
        return [
            _make_check(kind, _Fields(data, where, str(self.path)), self.view)
            for kind, data, where in self.assertions
        ]

    @property
    def uarts(self) -> tuple[int, ...]:
        """The UARTs of robot 0 the timeline writes to or the assertions read (sorted)."""
        used = {event.uart for event in self.events if isinstance(event, SerialSend)}
        used |= {c.uart for c in self.checks() if isinstance(c, (SerialExpect, SerialForbid))}
        return tuple(sorted(used))


def graph_options(scenario: Scenario) -> GraphOptions:
    """The graph a scenario runs on (lockstep).

    Raises:
        HilTestingError: options the graph refuses.
    """
    drop, corrupt = scenario.faults or (0.0, 0.0)
    return GraphOptions(
        rtf=0.0,
        **{**RUN_DEFAULTS, **scenario.run},
        world=scenario.world,
        firmware=scenario.firmware,
        faults=scenario.fault_proxies,
        fault_drop=drop,
        fault_corrupt=corrupt,
    )


_EVENT_KINDS = ("cmd_vel", "command", "goto", "fault", "serial", "set")


def _when(entry: _Fields) -> tuple[str, dict[str, Any]]:
    """Exactly one of ``at``, ``during``, ``by``, described."""
    given = [k for k in ("at", "during", "by") if entry.data.get(k) is not None]
    if len(given) != 1:
        raise HilTestingError(
            f"{entry.source}: {entry.where}: give exactly one of at, during, by (got {given or 'none'})"
        )
    key = given[0]
    if key == "during":
        window = entry.interval("during")
        assert window is not None
        return f"during [{window[0]:g}, {window[1]:g}] s", {"during": window}
    value = entry.number(key, minimum=0.0)
    return (f"at {value:g} s" if key == "at" else f"by {value:g} s"), {key: value}


def _boards_down(entry: _Fields) -> Check:
    entry.only(("count", "by"))
    count = None if entry.data.get("count") is None else entry.integer("count", minimum=1)
    by = entry.number("by", minimum=0.0)
    what = "all boards" if count is None else f"{count} board(s)"
    return BoardsDown(label=f"{what} down by {by:g} s", by=by, count=count)


def _task_done(entry: _Fields) -> Check:
    entry.only(("task", "by"))
    task = entry.text("task", choices=TASKS)
    by = entry.number("by", minimum=0.0)
    return TaskDone(label=f"task {task} done by {by:g} s", by=by, task=task)


def _inside(entry: _Fields) -> Check:
    entry.only(("x", "y", "center", "radius", "at", "during", "by"))
    if entry.data.get("center") is not None:
        region = Region(center=_pair(entry, "center"), radius=entry.number("radius", minimum=0.0))
    else:
        x, y = entry.interval("x"), entry.interval("y")
        if x is None or y is None:
            raise HilTestingError(
                f"{entry.source}: {entry.where}: give x and y intervals, or center and radius"
            )
        region = Region(x=x, y=y)
    words, when = _when(entry)
    return Inside(label=f"robot {region} {words}", region=region, **when)


def _no_failsafe(entry: _Fields) -> Check:
    entry.only(("reasons", "during"))
    reasons = _reasons(entry)
    during = entry.interval("during")
    label = f"no {'/'.join(reasons)} failsafe {window_text(during)}"
    return NoFailsafe(label=label, reasons=reasons, during=during)


def _failsafe(entry: _Fields) -> Check:
    entry.only(("reason", "between"))
    reason = entry.text("reason", choices=FAILSAFES)
    between = entry.interval("between")
    if between is None:
        raise entry.fail("between", "missing ([earliest, latest] s)")
    label = f"{reason} failsafe trips in [{between[0]:g}, {between[1]:g}] s"
    return FailsafeTrips(label=label, reason=reason, between=between)


def _rtt_below(entry: _Fields) -> Check:
    entry.only(("link", "max_ms", "statistic"))
    link = entry.text("link", "mcu", choices=("mcu",))
    max_ms = entry.number("max_ms", minimum=0.0)
    statistic = entry.text("statistic", "max", choices=RTT_STATISTICS)
    label = f"{link} round trip {statistic} below {max_ms:g} ms"
    return RttBelow(label=label, link=link, max_ms=max_ms, statistic=statistic)


def _telemetry(entry: _Fields) -> Check:
    entry.only(("list", "field", "min", "max", "during"))
    name, field_name = entry.text("list"), entry.text("field")
    low, high, during = _bounds(entry)
    label = f"telemetry {name}.{field_name} in [{low:g}, {high:g}] {window_text(during)}"
    return Bounded(label=label, minimum=low, maximum=high, during=during, telemetry=(name, field_name))


def _state(entry: _Fields) -> Check:
    entry.only(("field", "min", "max", "during"))
    state = entry.text("field", choices=STATE_FIELDS)
    low, high, during = _bounds(entry)
    label = f"robot {state} in [{low:g}, {high:g}] {window_text(during)}"
    return Bounded(label=label, minimum=low, maximum=high, during=during, state=state)


def _pattern(entry: _Fields, key: str) -> re.Pattern[str]:
    text = entry.text(key)
    if not text:
        raise entry.fail(key, "empty pattern (it would match at once)")
    try:
        return compile_pattern(text)
    except re.error as exc:
        raise entry.fail(key, f"not a regular expression: {exc}") from None


def _serial(entry: _Fields, view: RobotView) -> Check:
    kind = _one_kind(entry, ("expect", "forbid"), extra=("uart", "by", "during"))
    uart = view.uart(entry)
    pattern = _pattern(entry, kind)
    on = "" if uart == view.command_uart else f" on UART {uart}"
    if kind == "forbid":
        entry.only(("forbid", "uart", "during"))
        during = entry.interval("during")
        return SerialForbid(
            label=f"serial{on} never shows /{pattern.pattern}/ {window_text(during)}",
            pattern=pattern,
            uart=uart,
            during=during,
        )
    entry.only(("expect", "uart", "by", "during"))
    given = [k for k in ("by", "during") if entry.data.get(k) is not None]
    if len(given) != 1:
        raise HilTestingError(f"{entry.source}: {entry.where}: give by or during (got {given or 'none'})")
    if given[0] == "by":
        by = entry.number("by", minimum=0.0)
        window, words = (0.0, by), f"by {by:g} s"
    else:
        window = entry.interval("during") or (0.0, 0.0)
        words = window_text(window)
    return SerialExpect(
        label=f"serial{on} shows /{pattern.pattern}/ {words}", pattern=pattern, uart=uart, during=window
    )


def _pin(entry: _Fields, view: RobotView) -> Check:
    entry.only(("name", "min", "max", "during"))
    device, signal = _pin_signal(entry, view)
    low, high, during = _bounds(entry)
    label = f"pin {entry.data['name']} in [{low:g}, {high:g}] {window_text(during)}"
    return Bounded(label=label, minimum=low, maximum=high, during=during, read=f"input:{device}.{signal}")


def _pin_signal(entry: _Fields, view: RobotView) -> tuple[str, str]:
    """``device.signal`` or ``device.pin`` of a signal the MCU drives on the link, as (device, signal)."""
    name = entry.text("name")
    device, _, part = name.partition(".")
    profile_devices = {d.name: d for d in view.profile.devices}
    if device not in profile_devices or not part:
        known = ", ".join(profile_devices) or "none"
        raise entry.fail("name", f"{name!r} is not <device>.<signal or pin> of a device (devices: {known})")
    found = profile_devices[device]
    pin = found.config.pin(part)
    signal = pin.signal if pin is not None and pin.signal else part
    if signal in found.tied_signals:
        raise entry.fail(
            "name", f"{name!r} is tied in the profile ({dict(found.ties)}), not driven by the MCU"
        )
    if (device, signal) not in view.devices.inputs:
        driven = ", ".join(f"{d}.{s}" for d, s in view.devices.inputs) or "none"
        raise entry.fail("name", f"{name!r}: not a signal the MCU drives on the link (those: {driven})")
    return device, signal


def _sensor(entry: _Fields, view: RobotView) -> Check:
    entry.only(("device", "signal", "min", "max", "during"))
    device = view.device(entry)
    batch, _ = view.devices.where[device]
    signal = entry.text("signal")
    if signal not in batch.OUTPUTS:
        known = ", ".join(batch.OUTPUTS) or "none"
        raise entry.fail("signal", f"{signal!r} is not an output of {device} ({batch.KIND}: {known})")
    low, high, during = _bounds(entry)
    label = f"sensor {device}.{signal} in [{low:g}, {high:g}] {window_text(during)}"
    return Bounded(label=label, minimum=low, maximum=high, during=during, read=f"output:{device}.{signal}")


def _tone(entry: _Fields, view: RobotView) -> Check:
    entry.only(("device", "frequency", "duration", "during"))
    device = view.device(entry)
    if view.kind(device) != "buzzer":
        raise entry.fail("device", f"{device} is a {view.kind(device)}, not a buzzer")
    frequency = entry.interval("frequency")
    if frequency is None or frequency[0] < 0:
        raise entry.fail("frequency", "expected [low, high] Hz, low >= 0")
    duration = entry.interval("duration")
    during = entry.interval("during")
    words = f"{frequency[0]:g}..{frequency[1]:g} Hz" + (
        f" for {duration[0]:g}..{duration[1]:g} s" if duration is not None else ""
    )
    return ToneHeard(
        label=f"{device} sounds {words} {window_text(during)}",
        read=f"input:{device}.frequency",
        frequency=frequency,
        during=during,
        duration=duration,
    )


def _led(entry: _Fields, view: RobotView) -> Check:
    entry.only(("device", "index", "colour", "tolerance", "during", "by"))
    device = view.device(entry)
    if view.kind(device) != "rgb_leds":
        raise entry.fail("device", f"{device} is a {view.kind(device)}, not RGB LEDs")
    batch, index = view.devices.where[device]
    leds = int(batch.params[index]["leds"])
    led = entry.integer("index", 0, minimum=0)
    if led >= leds:
        raise entry.fail("index", f"{led}: {device} has LEDs 0..{leds - 1}")
    colour = entry.data.get("colour")
    if (
        not isinstance(colour, list)
        or len(colour) != 3
        or not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255 for c in colour)
    ):
        raise entry.fail("colour", f"expected [r, g, b], each 0..255, got {colour!r}")
    tolerance = entry.number("tolerance", 0.0, minimum=0.0, maximum=255.0)
    given = [k for k in ("during", "by") if entry.data.get(k) is not None]
    if len(given) != 1:
        raise HilTestingError(f"{entry.source}: {entry.where}: give during or by (got {given or 'none'})")
    during = entry.interval("during")
    by = entry.number("by", minimum=0.0) if given[0] == "by" else None
    red, green, blue = (f"input:{device}.{led_signal(led, c)}" for c in "rgb")
    words = window_text(during) if during is not None else f"by {by:g} s"
    near = f" +-{tolerance:g}" if tolerance else ""
    return LedShows(
        label=f"{device}[{led}] shows ({colour[0]}, {colour[1]}, {colour[2]}){near} {words}",
        channels=(red, green, blue),
        colour=(float(colour[0]), float(colour[1]), float(colour[2])),
        tolerance=tolerance,
        during=during,
        by=by,
    )


#: Each assertion kind and what makes its check from the entry's fields.
_CHECKS: dict[str, Callable[[_Fields], Check]] = {
    "boards_down": _boards_down,
    "task_done": _task_done,
    "inside": _inside,
    "no_failsafe": _no_failsafe,
    "failsafe": _failsafe,
    "rtt_below": _rtt_below,
    "telemetry": _telemetry,
    "state": _state,
}
#: The assertion kinds about robot 0's firmware and devices, made with its :class:`RobotView`.
_ROBOT_CHECKS: dict[str, Callable[[_Fields, RobotView], Check]] = {
    "serial": _serial,
    "pin": _pin,
    "sensor": _sensor,
    "tone": _tone,
    "led": _led,
}
ASSERTION_KINDS = (*_CHECKS, *_ROBOT_CHECKS)


def _make_check(kind: str, entry: _Fields, view: RobotView | None) -> Check:
    if kind in _ROBOT_CHECKS:
        if view is None:
            raise HilTestingError(f"{entry.source}: {entry.where}: needs the run's robot")
        return _ROBOT_CHECKS[kind](entry, view)
    return _CHECKS[kind](entry)


def _pair(entry: _Fields, key: str) -> tuple[float, float]:
    value = entry.data.get(key)
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value
        )
    ):
        raise entry.fail(key, f"expected [x, y] numbers, got {value!r}")
    return float(value[0]), float(value[1])


def _reasons(entry: _Fields) -> tuple[str, ...]:
    value = entry.data.get("reasons", list(FAILSAFES))
    if not isinstance(value, list) or not value or not all(v in FAILSAFES for v in value):
        raise entry.fail("reasons", f"expected a list of {', '.join(FAILSAFES)}, got {value!r}")
    return tuple(value)


def _bounds(entry: _Fields) -> tuple[float, float, tuple[float, float] | None]:
    low = entry.number("min") if entry.data.get("min") is not None else -math.inf
    high = entry.number("max") if entry.data.get("max") is not None else math.inf
    if low == -math.inf and high == math.inf:
        raise HilTestingError(f"{entry.source}: {entry.where}: give min, max or both")
    if low > high:
        raise HilTestingError(f"{entry.source}: {entry.where}: min {low:g} is above max {high:g}")
    return low, high, entry.interval("during")


def _deadline(entry: _Fields) -> float | None:
    """The latest moment an assertion looks at (checked against the duration)."""
    for key in ("by", "at"):
        if isinstance(entry.data.get(key), (int, float)):
            return float(entry.data[key])
    for key in ("during", "between"):
        window = entry.data.get(key)
        if isinstance(window, list) and len(window) == 2 and isinstance(window[1], (int, float)):
            return float(window[1])
    return None


def _event(entry: _Fields, view: RobotView) -> Event:
    kind = _one_kind(entry, _EVENT_KINDS, extra=("at",))
    at = entry.number("at", minimum=0.0)
    if kind == "serial":
        body = entry.sub("serial")
        body.only(("send", "uart"))
        text = body.text("send")
        if not text:
            raise body.fail("send", "empty")
        try:
            data = text.encode("latin-1")
        except UnicodeEncodeError:
            raise body.fail(
                "send", "one byte a character: only U+0000..U+00FF (\\xNN in double quotes)"
            ) from None
        return SerialSend(at, data, view.uart(body))
    if kind == "set":
        return _set_event(at, entry.sub("set"), view)
    if kind == "command":
        text = entry.text("command")
        if not text.strip():
            raise entry.fail("command", "empty robotCommand")
        return StationCommand(at, text)
    body = entry.sub(kind)
    if kind == "cmd_vel":
        body.only(("linear", "angular", "for"))
        return CmdVel(
            at,
            body.number("linear", 0.0),
            body.number("angular", 0.0),
            body.optional_number("for", minimum=0.0),
        )
    if kind == "goto":
        body.only(("x", "y", "yaw", "timeout", "tolerance", "yaw_tolerance", "settle"))
        defaults = GotoGoal(0.0, 0.0)
        try:
            goal = GotoGoal(
                body.number("x"),
                body.number("y"),
                body.number("yaw", 0.0),
                tolerance=body.number("tolerance", defaults.tolerance),
                yaw_tolerance=body.number("yaw_tolerance", defaults.yaw_tolerance),
                timeout=body.number("timeout", defaults.timeout),
                settle=body.number("settle", defaults.settle),
            )
        except HilTestingError as exc:
            if str(exc).startswith(entry.source):
                raise
            raise HilTestingError(f"{entry.source}: {body.where}: {exc}") from None
        return Goto(at, goal)
    body.only(("link", "drop", "corrupt", "duplicate", "delay", "for"))
    return Fault(
        at,
        body.text("link", "both", choices=FAULT_LINKS),
        drop=body.probability("drop"),
        corrupt=body.probability("corrupt"),
        duplicate=body.probability("duplicate"),
        delay=body.probability("delay"),
        seconds=body.optional_number("for", minimum=0.0),
    )


def _set_event(at: float, body: _Fields, view: RobotView) -> SetDevice:
    """A ``set:`` step, checked as the simulator checks it, and against the link's range."""
    body.only(("device", "value", "for", "signal"))
    device = view.device(body)
    if "value" not in body.data:
        raise body.fail("value", "missing")
    value = body.data["value"]
    signal = body.text("signal", "")
    try:
        setting = view.devices.setting(device, value, signal=signal)
    except HilError as exc:
        field_name = "signal" if signal and "signal" in str(exc) else "value"
        raise body.fail(field_name, str(exc).removeprefix(f"robot {view.devices.model.name}: ")) from None
    seconds = body.optional_number("for", minimum=0.0)
    if seconds is not None and seconds <= 0:
        raise body.fail("for", f"{seconds!r}: a hold lasts longer than 0 s")
    if seconds is not None and view.kind(device) == "ir_remote":
        raise body.fail("for", "an IR remote's press is an event (one NEC frame): no for")
    if setting.signal:  # an override: within what the link carries
        spec = next(d for d in view.profile.devices if d.name == device).config.signal(setting.signal)
        number = setting.columns[setting.signal]
        if not spec.min <= number <= spec.max:
            raise body.fail(
                "value", f"{number:g} is outside {device}.{setting.signal}'s {spec.min:g}..{spec.max:g}"
            )
    parsed = {str(k): float(v) for k, v in value.items()} if isinstance(value, Mapping) else float(value)
    return SetDevice(at, device, parsed, seconds, setting.signal)


def resolve_world(value: str, *, base: Path, source: str) -> str:
    """The world file of ``value``: a world name of hil_sim (``demo``, ``empty``) or a YAML path.

    Args:
        value: the name or path; empty: the default world (returned empty).
        base: the folder a relative path is relative to.
        source: what to name in an error (the scenario file).

    Raises:
        HilTestingError: no such world.
    """
    if not value:
        return ""
    if value.endswith((".yaml", ".yml")) or "/" in value:
        path = Path(value) if Path(value).is_absolute() else base / value
        if not path.is_file():
            raise HilTestingError(f"{source}: world: no file {path}")
        return str(path)
    try:
        path = world_path(value)
    except HilError as exc:
        raise HilTestingError(f"{source}: world: {exc}") from None
    return str(path)


def _events(top: _Fields, duration: float, view: RobotView) -> tuple[Event, ...]:
    """The timeline's events, each within the duration."""
    timeline = top.data.get("timeline") or []
    if not isinstance(timeline, list):
        raise top.fail("timeline", f"expected a list of events, got {timeline!r}")
    events = []
    for index, item in enumerate(timeline):
        event = _event(_Fields(item, f"timeline[{index}]", top.source), view)
        where = f"{top.source}: timeline[{index}]"
        if event.at > duration:
            raise HilTestingError(f"{where}.at = {event.at:g} is after the duration {duration:g} s")
        if isinstance(event, Goto) and event.at + event.goal.timeout + event.goal.settle > duration + 1e-9:
            # The run would end before the goto could: its check would fail for want of time.
            raise HilTestingError(
                f"{where}.goto: at {event.at:g} s + timeout {event.goal.timeout:g} s "
                f"+ settle {event.goal.settle:g} s ends after the duration {duration:g} s"
            )
        events.append(event)
    return tuple(events)


def _assertions(
    top: _Fields, duration: float, world: tuple[str, WorldConfig], view: RobotView
) -> tuple[tuple[str, Mapping[str, Any], str], ...]:
    """The assertions as (kind, fields, where), each checked once, within the duration and the run."""
    assertions = top.data.get("assertions")
    if not isinstance(assertions, list) or not assertions:
        raise top.fail("assertions", f"expected a non-empty list, got {assertions!r}")
    read = []
    for index, item in enumerate(assertions):
        entry = _Fields(item, f"assertions[{index}]", top.source)
        kind = _one_kind(entry, ASSERTION_KINDS)
        body = entry.sub(kind)
        check = _make_check(kind, body, view)  # checked now, made fresh per run
        deadline = _deadline(body)
        if deadline is not None and deadline > duration:
            raise HilTestingError(
                f"{top.source}: assertions[{index}].{kind}: looks at {deadline:g} s, "
                f"after the duration {duration:g} s"
            )
        if isinstance(check, Bounded) and check.telemetry is not None:
            _telemetry_known(body, *check.telemetry)
        if isinstance(check, BoardsDown):
            _boards_there(body, check.count, world)
        read.append((kind, body.data, body.where))
    return tuple(read)


def _telemetry_known(body: _Fields, name: str, field_name: str) -> None:
    """The telemetry list and field are in the schema the run's loop decodes with."""
    try:
        lists = telemetry_schema().lists
    except HilError as exc:
        raise HilTestingError(f"{body.source}: {body.where}: {exc}") from exc
    if name not in lists:
        raise body.fail("list", f"{name!r} is not a telemetry list (known: {', '.join(sorted(lists))})")
    if field_name not in lists[name]:
        raise body.fail("field", f"{field_name!r} is not a field of {name} (known: {', '.join(lists[name])})")


def _boards_there(body: _Fields, count: int | None, world: tuple[str, WorldConfig]) -> None:
    """The world has the boards (an MJCF world's are in its MJCF file: not counted here)."""
    path, config = world
    if config.mjcf:
        return
    boards = len(config.boards)
    if count is None and boards == 0:
        raise body.fail(
            "count", f"missing, and the world {path} has no boards (all of none would pass at once)"
        )
    if count is not None and count > boards:
        raise body.fail("count", f"{count} boards, but the world {path} has {boards}")


def _run_options(top: _Fields, base: Path) -> dict[str, Any]:
    """The run options the file gives (RUN_KEYS), each checked as its declaration says.

    ``world`` and ``firmware`` are paths, resolved against the file by their own readers;
    ``robot``'s paths (a robot folder or robot.yaml) against the file here.
    """
    found: dict[str, Any] = {}
    for name, opt in on(GraphOptions, "scenario").items():
        if name in ("world", "firmware") or name not in top.data:
            continue
        value, problem = judge(opt, top.data[name])
        if problem is not None:
            raise top.fail(name, problem)
        if name == "robot":
            try:
                value = resolve_robots(value, base=base)
            except HilError as exc:
                raise top.fail(name, str(exc)) from None
        found[name] = value
    if found.get("mcu", "virtual") not in MCU_KINDS:
        raise top.fail("mcu", f"{found['mcu']!r}: a scenario runs a simulated MCU ({', '.join(MCU_KINDS)})")
    return found


def _robot_view(top: _Fields, run: Mapping[str, Any]) -> RobotView:
    """Robot 0 of the run the file gives (its robot, brain and mcu)."""
    keys = ("robot", "brain", "mcu")
    options = {k: v for k, v in {**RUN_DEFAULTS, **run}.items() if k in keys}
    try:
        return robot_view(GraphOptions(rtf=0.0, **options))
    except HilError as exc:
        raise top.fail("robot", str(exc)) from None


def _firmware(top: _Fields, mcu: str, base: Path) -> str:
    """The firmware ELF's path (simavr only, an AVR program), or empty."""
    firmware = top.text("firmware", "")
    if not firmware:
        return ""
    if mcu != "simavr":
        raise top.fail("firmware", "is for mcu: simavr")
    elf = Path(firmware) if Path(firmware).is_absolute() else base / firmware
    try:
        return str(check_firmware(elf))
    except HilMcuError as exc:
        raise top.fail("firmware", str(exc)) from None


def _world(top: _Fields, base: Path) -> tuple[str, WorldConfig]:
    """The world file the run loads (the simulator's default if none is named), loaded."""
    path = resolve_world(top.text("world", ""), base=base, source=top.source)
    try:
        return path, load_world(path or default_world_path())
    except HilError as exc:
        raise top.fail("world", str(exc)) from None


def _start(top: _Fields, world: tuple[str, WorldConfig]) -> tuple[float, float, float] | None:
    """The start pose, if given, checked in the world as the world's own start is."""
    if top.data.get("start") is None:
        return None
    pose = top.sub("start")
    pose.only(("x", "y", "yaw"))
    start = (pose.number("x", 0.0), pose.number("y", 0.0), pose.number("yaw", 0.0))
    problem = start_problem(world[1], Pose(*start))
    if problem is not None:
        raise top.fail("start", f"{problem} in the world {world[0] or default_world_path()}")
    return start


def load_scenario(path: str | Path) -> Scenario:
    """Read and check a scenario file.

    Raises:
        HilTestingError: unreadable, or a field is missing or wrong (named with its path).
    """
    path = Path(path)
    source = str(path)
    top = _Fields(load_yaml(path, what="scenario", error=HilTestingError), "", source)
    top.only(_TOP_KEYS)
    duration = top.number("duration", minimum=MIN_DURATION, maximum=MAX_DURATION)
    world = _world(top, path.parent)
    start = _start(top, world)
    faults = None
    if top.data.get("faults") is not None:
        spec = top.sub("faults")
        spec.only(("drop", "corrupt"))
        faults = (spec.probability("drop"), spec.probability("corrupt"))
    run = _run_options(top, path.parent)
    view = _robot_view(top, run)
    events = _events(top, duration, view)
    assertions = _assertions(top, duration, world, view)
    scenario = Scenario(
        name=top.text("name", path.stem),
        path=path,
        description=top.text("description", ""),
        world=world[0],
        start=start,
        firmware=_firmware(top, str(run.get("mcu", GraphOptions.mcu)), path.parent),
        run=run,
        faults=faults,
        duration=duration,
        events=events,
        assertions=assertions,
        view=view,
    )
    try:
        graph_options(scenario)
    except HilError as exc:
        raise HilTestingError(f"{source}: {exc}") from None
    return scenario


def goto_label(goal: GotoGoal, at: float) -> str:
    """The check name of a timeline goto."""
    return (
        f"goto ({goal.x:g}, {goal.y:g}, {goal.yaw:g} rad) from {at:g} s within "
        f"{goal.tolerance * 100:g} cm in {goal.timeout:g} s"
    )
