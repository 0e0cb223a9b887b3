"""A HIL run in lockstep, driven as a user drives it: for scenarios and pytest.

:class:`HilSession` owns a :class:`~hil_bringup.graph_runner.GraphRunner` in lockstep
(``rtf`` 0) and gives it operator input where the loop takes it
(``GraphRunner.input_feeds``, the way ``hil_replay`` does): ``cmd_vel`` and
``robotCommand`` go into the control loop's own callbacks, at simulated times that
do not depend on DDS, so a session repeats exactly for the same seed and inputs. On
top of that it runs the go-to and step tests' cores (:mod:`hil_testing.core.goto`,
:mod:`hil_testing.core.step_test`) on the simulator's state, which is what ``odom``
and ``joint_states`` carry, and injects link faults into a running graph through the
run's fault proxies.

    with HilSession(GraphOptions(behaviour="", world="empty")) as hil:
        result = hil.goto(0.5, 0.2, 0.0, timeout=10.0)
        assert result.reached
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING

from geometry_msgs.msg import Twist
from std_msgs.msg import String

from hil_bridge.core.faults import FaultModel
from hil_bridge.core.line_protocol import Telemetry
from hil_bringup.core.graph import GraphOptions
from hil_bringup.core.serial_port import SerialPort
from hil_bringup.graph_runner import GraphRunner
from hil_common.errors import HilError
from hil_sim.core.world import Pose
from hil_testing.core.checks import SerialText, compile_pattern
from hil_testing.core.goto import GotoGains, GotoGoal, GotoResult, GotoRun
from hil_testing.core.step_test import StepPlan, StepResult, StepRun
from hil_testing.errors import HilTestingError

if TYPE_CHECKING:
    from hil_sim.core.simulation import Simulation

#: The links a fault can be injected on (the fault proxies' names), and both.
FAULT_LINKS = ("command", "signal", "both")
#: What :meth:`HilSession.twist_source` returns: a twist to feed now, or None for none.
TwistSource = Callable[[float], "tuple[float, float] | None"]


class HilSession:
    """The HIL graph in lockstep with a user's inputs: cmd_vel, robotCommand, faults."""

    def __init__(self, options: GraphOptions, *, start: Pose | None = None) -> None:
        """Build and start the graph (always lockstep) with robot 0 at ``start``.

        Raises:
            HilTestingError: and the errors of the nodes, on a bad configuration.
        """
        self.runner = GraphRunner(replace(options, rtf=0.0))
        #: The latest values of each telemetry list (``{"TL1": {"right": .., "left": ..}}``).
        self.telemetry: dict[str, dict[str, float]] = {}
        #: When each list was last received (simulated s).
        self.telemetry_time: dict[str, float] = {}
        #: Called after every period with the session (a scenario's assertions, a recorder).
        self.observers: list[Callable[[HilSession], None]] = []
        #: Called with every telemetry list as it arrives.
        self.telemetry_observers: list[Callable[[float, Telemetry], None]] = []
        #: Called with the simulated time at each loop frame, before the input is fed (a
        #: scenario's timeline: an input due at a frame's time reaches that frame).
        self.input_hooks: list[Callable[[float], None]] = []
        #: Gives the twist fed to the loop at each of its frames; None: no cmd_vel at all.
        self.twist_source: TwistSource | None = None
        self._commands: deque[str] = deque()
        self._serials: dict[int, SessionSerial] = {}
        try:
            if start is not None:
                self.runner.sim.sim.teleport(0, start)
            if self.runner.chains[0].loop is not None:
                self.runner.loop.telemetry_lists.connect(self._on_telemetry)
            self.runner.input_feeds.append(self._feed)
            self.runner.start()
        except BaseException:
            self.runner.stop()
            raise

    # --- what the run is ------------------------------------------------------------------

    @property
    def sim(self) -> Simulation:
        """The simulation core (robot 0 is the one the HIL chain drives)."""
        return self.runner.sim.sim

    @property
    def time(self) -> float:
        """Simulated seconds since the start."""
        return self.runner.sim.sim.time

    @property
    def pose(self) -> tuple[float, float, float]:
        """Robot 0's (x, y, yaw), as ``odom`` has it."""
        sim = self.sim
        return float(sim.x[0]), float(sim.y[0]), float(sim.yaw[0])

    @property
    def wheel_speeds(self) -> tuple[float, float]:
        """Robot 0's (left, right) wheel speeds (rad/s), as ``joint_states`` has them."""
        sim = self.sim
        gear = sim.models[0].motor.gear_ratio
        left, right = sim.motors.speed[0]
        return float(left) / gear, float(right) / gear

    @property
    def serial(self) -> SessionSerial | None:
        """Brain none: robot 0's command UART, your program's end of it (:class:`SessionSerial`).

        ``write()`` reaches the firmware in the next period, ``read()`` returns what it sent
        up to the last one, ``read_until(pattern, timeout=)`` steps the run until it has
        sent a match. None with a control loop (the loop owns the UART).
        """
        if self.runner.serial is None:
            return None
        return self.serial_port(self.runner.options.profile(0).command.uart)

    def serial_port(self, uart: int) -> SessionSerial:
        """Robot 0's UART ``uart`` (the command UART with brain none; the profile's others in simavr).

        Raises:
            HilTestingError: the run has no port of that UART (naming those it has).
        """
        ports = self.runner.serial_ports(0)
        if uart not in ports:
            known = ", ".join(map(str, ports)) or "none"
            raise HilTestingError(
                f"serial_port: this run has no serial port of UART {uart} (it has: {known})"
            )
        if uart not in self._serials or self._serials[uart].port is not ports[uart]:
            self._serials[uart] = SessionSerial(self, ports[uart], uart)
        return self._serials[uart]

    @property
    def failsafes(self) -> list[str]:
        """The loop's failsafes holding the motors now (``cmd_vel``, ``mcu``, ``station``)."""
        return list(self.runner.loop.loop.failsafes.active)

    def trips(self, reason: str) -> int:
        """How often the loop's failsafe ``reason`` has tripped."""
        return self.runner.loop.loop.failsafes.trips(reason)

    # --- time -----------------------------------------------------------------------------

    def advance(self, *, ahead: bool = False) -> None:
        """One lockstep period (5 ms of simulated time), then the observers.

        ``ahead``: the firmwares in simavr may begin the next period meanwhile
        (``GraphRunner.step(ahead=True)``): nothing the caller does before the next
        :meth:`advance` may reach them (a UART write, a reset).

        Raises:
            HilTestingError: a part of the graph died (a firmware harness), naming it.
        """
        self.runner.step(ahead=ahead)
        for observer in self.observers:
            observer(self)

    def run(self, seconds: float) -> None:
        """Let ``seconds`` of simulated time pass.

        Without observers, every period but the last steps ahead (:meth:`advance`): what
        the caller writes after the call reaches the firmware as it would otherwise.
        """
        end = self.time + seconds
        while self.time < end - 1e-9:
            self.advance(ahead=not self.observers and self.runner.sim.period_end < end - 1e-9)

    def wait_until(self, predicate: Callable[[], object], *, timeout: float, what: str = "") -> float:
        """Step until ``predicate()`` is true; returns the simulated seconds it took.

        Raises:
            HilTestingError: not true within ``timeout`` simulated seconds (naming ``what``).
        """
        start = self.time
        while not predicate():
            if self.time - start >= timeout:
                name = what or getattr(predicate, "__name__", "the condition")
                raise HilTestingError(f"wait_until: {name} not true within {timeout:g} s of simulated time")
            self.advance()
        return self.time - start

    # --- operator input -------------------------------------------------------------------

    def hold_cmd_vel(self, linear: float, angular: float = 0.0) -> None:
        """Send this twist on cmd_vel at every loop frame until told otherwise."""
        twist = (float(linear), float(angular))
        self.twist_source = lambda _now: twist

    def release_cmd_vel(self) -> None:
        """Stop sending cmd_vel (the loop's cmd_vel failsafe trips after its timeout)."""
        self.twist_source = None

    def drive(self, linear: float, angular: float = 0.0, *, seconds: float) -> None:
        """Send a twist for ``seconds``, then a zero twist (held, as a connected teleop does)."""
        self.hold_cmd_vel(linear, angular)
        self.run(seconds)
        self.hold_cmd_vel(0.0, 0.0)

    def command(self, text: str) -> None:
        """Send ``text`` on robotCommand (``STOP``, ``GO``, ``AUTO boards``...) at the next frame."""
        self._commands.append(text)

    def set(
        self,
        device: str,
        value: float | Mapping[str, float],
        *,
        for_: float | None = None,
        signal: str = "",
        robot: int = 0,
    ) -> None:
        """A user sets a device of the robot from the next period: press a button, turn a knob...

        ``hil.set("start_button", 1, for_=0.2)`` presses a button for 0.2 s;
        ``hil.set("mode", 1.2)`` puts an analog input at 1.2 V; ``hil.set("remote",
        {"address": 0, "command": 0x45})`` presses an IR remote's key; a sensor's output
        to the MCU is held (``hil.set("bumper_left", 1)``; ``signal`` names one of several).
        The simulator takes it at the start of the next period
        (:meth:`hil_sim.sim_node.SimNode.set_device`).

        Raises:
            HilTestingError: no such device or signal, or a value it does not take.
        """
        try:
            self.runner.sim.set_device(robot, device, value, seconds=for_, signal=signal)
        except HilError as exc:
            raise HilTestingError(f"set: {exc}") from None

    def _feed(self, now: float) -> None:
        for hook in self.input_hooks:
            hook(now)
        loop = self.runner.chains[0].loop
        if loop is None:
            return  # brain none: no loop takes operator input (the UART is hil.serial)
        while self._commands:
            loop.on_robot_command(String(data=self._commands.popleft()))
        if self.twist_source is None:
            return
        twist = self.twist_source(now)
        if twist is None:
            return
        message = Twist()
        message.linear.x, message.angular.z = twist
        loop.on_cmd_vel(message)

    def _on_telemetry(self, telemetry: Telemetry) -> None:
        now = self.time
        self.telemetry[telemetry.list_id] = dict(zip(telemetry.names, telemetry.values, strict=True))
        self.telemetry_time[telemetry.list_id] = now
        for observer in self.telemetry_observers:
            observer(now, telemetry)

    # --- the tests ------------------------------------------------------------------------

    def start_goto(self, goal: GotoGoal, *, gains: GotoGains | None = None) -> GotoRun:
        """Begin driving to ``goal`` on cmd_vel (closed loop on the pose); returns the run.

        The run becomes the cmd_vel source: after it has finished it keeps sending zero.
        """
        run = GotoRun(goal, gains or GotoGains())

        def source(now: float) -> tuple[float, float]:
            return run.update(now, *self.pose)

        self.twist_source = source
        return run

    def goto(
        self,
        x: float,
        y: float,
        yaw: float = 0.0,
        *,
        timeout: float = 20.0,
        tolerance: float = 0.03,
        yaw_tolerance: float = 0.05,
        gains: GotoGains | None = None,
    ) -> GotoResult:
        """Drive to (x, y, yaw) and report the final error, the time and the path."""
        goal = GotoGoal(x, y, yaw, tolerance=tolerance, yaw_tolerance=yaw_tolerance, timeout=timeout)
        run = self.start_goto(goal, gains=gains)
        # The run's own timeout ends it; the margin covers the frames before its first pose.
        self.wait_until(lambda: run.finished, timeout=timeout + goal.settle + 1.0, what="the goto run")
        return run.result()

    def step(
        self, left: int, right: int, seconds: float, *, settle: float = 0.5, tolerance: float = 0.2
    ) -> StepResult:
        """Step the motor commands to (left, right) for ``seconds`` through cmd_vel; fit the wheels.

        The wheels first settle at zero for ``settle`` seconds; afterwards zero is held.
        """
        plan = StepPlan(
            left=left,
            right=right,
            settle=settle,
            duration=seconds,
            geometry=self.runner.loop.loop.config.geometry,
        )
        run = StepRun(plan)

        def sample(session: HilSession) -> None:
            run.sample(session.time, *session.wheel_speeds)

        def motor_telemetry(now: float, telemetry: Telemetry) -> None:
            if telemetry.list_id == "TL1":
                run.telemetry(now, dict(zip(telemetry.names, telemetry.values, strict=True)))

        sample(self)
        self.twist_source = run.command_at
        self.observers.append(sample)
        self.telemetry_observers.append(motor_telemetry)
        try:
            self.wait_until(lambda: run.finished, timeout=settle + seconds + 1.0, what="the step test")
        finally:
            self.observers.remove(sample)
            self.telemetry_observers.remove(motor_telemetry)
            self.hold_cmd_vel(0.0, 0.0)
        return run.result(tolerance=tolerance)

    # --- faults ---------------------------------------------------------------------------

    def inject_fault(
        self,
        link: str = "both",
        *,
        drop: float = 0.0,
        corrupt: float = 0.0,
        duplicate: float = 0.0,
        delay: float = 0.0,
        delay_s: float | None = None,
    ) -> None:
        """From now on, each byte on ``link`` (both directions) suffers these faults.

        Probabilities per byte (:class:`~hil_bridge.core.faults.FaultModel`); all zero
        heals the link. The run's fault proxies carry them, so the run must have been
        started with ``faults`` on (probabilities may be 0 until now).

        Raises:
            HilTestingError: an unknown link, a bad probability, or a run without fault proxies.
        """
        if link not in FAULT_LINKS:
            raise HilTestingError(f"inject_fault: link = {link!r} is not one of {', '.join(FAULT_LINKS)}")
        proxies = [p for p in self.runner.proxies if link in ("both", p.name)]
        if not proxies:
            raise HilTestingError(
                "inject_fault: this run has no link fault proxies; start it with faults on "
                "(GraphOptions(faults=True), a scenario's `faults:`, @pytest.mark.hil(faults=True))"
            )
        for proxy in proxies:
            for channel in (proxy.down, proxy.up):
                try:
                    channel.model = replace(
                        channel.model,
                        drop=drop,
                        corrupt=corrupt,
                        duplicate=duplicate,
                        delay=delay,
                        delay_s=channel.model.delay_s if delay_s is None else delay_s,
                    )
                except HilError as exc:  # the fault model names the bad field
                    raise HilTestingError(f"inject_fault: {exc}") from exc

    def clear_faults(self, link: str = "both") -> None:
        """Heal ``link``: no more faults on it from now on."""
        self.inject_fault(link)

    def fault_models(self) -> dict[str, FaultModel]:
        """Each proxied link's current fault model (the direction towards the loop or bridge)."""
        return {proxy.name: proxy.down.model for proxy in self.runner.proxies}

    # --- the end --------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the graph (again: nothing)."""
        self.runner.stop()

    def __enter__(self) -> HilSession:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class SessionSerial:
    r"""A UART of the session's robot as your program sees it, in lockstep (simulated time).

    ``write(b"o 100 100\r")`` (bytes, or text of one-byte characters) reaches the MCU in
    the next period; ``read()`` returns the bytes it sent so far and not read yet;
    ``read_until(pattern, timeout=)`` steps the session until the text not read yet
    matches ``pattern`` (a regex, ``^``/``$`` at line ends; ``\r\n`` and ``\r`` read as
    ``\n``) and returns the match, taking the text up to its end.
    """

    def __init__(self, session: HilSession, port: SerialPort, uart: int) -> None:
        self.session = session
        self.port = port
        self.uart = uart
        self._unread = bytearray()

    @property
    def baud(self) -> int:
        """The firmware's baud rate on it."""
        return self.port.baud

    @property
    def path(self) -> str:
        """The pty's path."""
        return self.port.path

    def write(self, data: bytes | str) -> None:
        """Queue ``data`` for the firmware (text: one byte a character, U+0000..U+00FF)."""
        self.port.write(data.encode("latin-1") if isinstance(data, str) else bytes(data))

    def read(self) -> bytes:
        """What the firmware sent up to the last period and was not read yet."""
        data = bytes(self._unread) + self.port.read()
        self._unread.clear()
        return data

    def read_until(self, pattern: str | re.Pattern[str], *, timeout: float) -> re.Match[str]:
        """Step until what the firmware sent (not read yet) matches ``pattern``; the match.

        The text up to the match's end counts as read.

        Raises:
            HilTestingError: no match within ``timeout`` simulated seconds (naming the
                pattern and the text that came); nothing is taken then.
        """
        regex = compile_pattern(pattern) if isinstance(pattern, str) else pattern
        start = self.session.time
        while True:
            self._unread += self.port.read()
            text = SerialText()
            text.add(self._unread.decode("latin-1"))
            found = text.search(regex)
            if found is not None:
                raw_end = _raw_end(self._unread, found.end())
                del self._unread[:raw_end]
                return found
            if self.session.time - start >= timeout - 1e-9:
                tail = text.text[-120:]
                raise HilTestingError(
                    f"read_until: /{regex.pattern}/ not sent within {timeout:g} s of simulated time"
                    f" on UART {self.uart}; unread: {tail!r}"
                )
            self.session.advance()


def _raw_end(raw: bytes | bytearray, end: int) -> int:
    r"""Where in ``raw`` the normalised text's first ``end`` characters end (\r\n and \r count as \n)."""
    text = SerialText()
    for k in range(len(raw)):
        text.add(raw[k : k + 1].decode("latin-1"))
        if len(text.text) >= end:
            # A \r ending here may still be followed by the \n of its pair: take that too.
            if raw[k : k + 1] == b"\r" and raw[k + 1 : k + 2] == b"\n":
                return k + 2
            return k + 1
    return len(raw)
