"""The node graph of a HIL run, described once for the launch files and the runner.

:func:`describe` turns the run's options into the list of nodes (package, executable,
name, namespace, parameters) and helper processes; ``sim.launch.py`` and
``hardware.launch.py`` turn that list into launch actions, the one-process runner
into node objects. Parameters start from each package's
YAML defaults (``config/<package>.yaml``) and take the run's options on top.

Links in a simulated run (``mcu`` = ``virtual``): the virtual MCU serves the command
link at ``command_port`` and the signal link at ``signal_port``; the signal bridge
opens the signal link, the control loop the command link. With ``faults`` on, a link
fault proxy sits in front of each link (dropping and corrupting bytes with the
probabilities ``fault_drop`` and ``fault_corrupt``, at the link's baud rate), and the
loop and the bridge open the proxies' ports instead.
With ``mcu`` = ``simavr`` the compiled robot firmware runs in simavr
(``simavr_mcu``) on the same two ptys. With ``mcu`` = ``serial`` (hardware.launch.py)
there is no simulated MCU: the ports are real devices.

The ptys' links live in the run's ``link_dir``; by default :func:`run_link_dir`, one
folder per ROS domain and namespace in the user's runtime folder
(:func:`hil_common.core.runtime_dir.runtime_root`), so launches that cannot hear each
other cannot take each other's ports either, and other users cannot reach them (the
one-process runner makes a private folder there). :func:`prepare_link_folder` makes
and checks the folder before anything is started.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hil_bridge.core.faults import FaultModel
from hil_bringup.core.options import check, on, option, options_of
from hil_bringup.core.robots import profile_of, resolve_robots, robot_profiles
from hil_bringup.errors import HilBringupError
from hil_common.core.config_file import load_yaml
from hil_common.core.param_spec import yaml_defaults
from hil_common.core.paths import share_dir
from hil_common.core.runtime_dir import private_dir, runtime_root
from hil_common.errors import HilError
from hil_devices.core.profile import RobotProfile
from hil_mcu.core.pin_trace import TRACE_FILE, TRACE_LIMIT_MB, TRACE_LIMIT_RANGE_MB
from robot_control.core.behaviours import BEHAVIOURS as AUTO_BEHAVIOURS

MCU_KINDS = ("virtual", "simavr", "serial")
#: The simulator's physics backends (hil_sim.core.physics.BACKENDS; not imported: launch
#: files read this module without hil_sim's numpy core).
PHYSICS = ("native", "mujoco")
#: The node that plays the MCU, by kind (a real MCU has none).
MCU_NODES = {"virtual": "virtual_mcu", "simavr": "simavr_mcu"}
#: When a run holds the CPUs' wake-up latency low (``cpu_latency``).
CPU_LATENCY = ("auto", "on", "off")
#: Who talks to the firmware on its command UART; ``profile``: the robot profile's ``brain``.
BRAINS = ("profile", "control_loop", "none")
#: The control loop's behaviours; ``manual`` (spelt ``""`` too) drives on cmd_vel.
BEHAVIOURS = ("manual", *AUTO_BEHAVIOURS)


def run_link_dir(*, namespace: str = "", domain_id: str | None = None) -> str:
    """The pty link folder of a run: ``<runtime folder>/domain<id>/<namespace>``.

    The runtime folder is the user's own (``$XDG_RUNTIME_DIR/hil`` or ``/tmp/hil-<uid>``:
    :func:`~hil_common.core.runtime_dir.runtime_root`); nothing is made here.

    Args:
        namespace: the run's ROS namespace (``/team_a``); empty: none.
        domain_id: the run's ``ROS_DOMAIN_ID``; None: this process's (unset: 0).

    Raises:
        HilBringupError: the domain id is not a number, or a namespace token not a ROS name.
    """
    domain = (os.environ.get("ROS_DOMAIN_ID", "") if domain_id is None else domain_id).strip() or "0"
    if not domain.isdigit():
        raise HilBringupError(f"ROS_DOMAIN_ID = {domain!r} is not a domain number")
    return str(Path(runtime_root(), f"domain{int(domain)}", *namespace_tokens(namespace)))


def namespace_tokens(namespace: str) -> list[str]:
    """The tokens of a ROS namespace (``/team_a/arm`` -> ``team_a``, ``arm``).

    Raises:
        HilBringupError: a token that is not a ROS name token.
    """
    tokens = [t for t in namespace.split("/") if t]
    for token in tokens:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", token):
            raise HilBringupError(f"namespace {namespace!r}: {token!r} is not a ROS name token")
    return tokens


#: The graph-wide topics its nodes publish by absolute name, so every robot's reach one
#: topic (frames prefixed ``robot_<i>/``; diagnostics named by node full name): under a
#: ``namespace`` they move into it (:func:`graph_remaps`), as in ROS 2's multi-robot
#: setups. ``/clock`` is not among them: a domain has one simulated time.
GRAPH_TOPICS = ("/tf", "/tf_static", "/diagnostics")


def graph_remaps(namespace: str) -> list[tuple[str, str]]:
    """The remappings every node of a run in ``namespace`` gets: the graph-wide topics into it.

    ``team_a`` -> ``/tf`` to ``/team_a/tf``, and so on; no namespace: none.

    Raises:
        HilBringupError: a namespace token that is not a ROS name token.
    """
    prefix = "/".join(namespace_tokens(namespace))
    return [(topic, f"/{prefix}{topic}") for topic in GRAPH_TOPICS] if prefix else []


def prepare_link_folder(options: GraphOptions) -> Path:
    """Make and check the run's link folder (``link_dir`` or :func:`run_link_dir`).

    Refused as :func:`~hil_common.core.runtime_dir.private_dir` refuses it, when another
    user could change it or a folder on its way.

    Raises:
        HilBringupError: naming the folder and what is wrong with it.
    """
    try:
        return private_dir(options.link_folder)
    except HilError as exc:
        what = f"link_dir {options.link_dir}" if options.link_dir else "the run's link folder"
        raise HilBringupError(f"{what}: {exc}") from None


@dataclass(frozen=True)
class GraphOptions:
    """What a run is: robots, pace, world, behaviour, links (defaults: a demo run).

    Each field is a run option declared once (:func:`hil_bringup.core.options.option`):
    the launch arguments, the runners' command-line options, the scenario keys and the
    pytest marker's keywords are made from these declarations.
    """

    robot: str = option(
        "demo",
        "The robot (its profile): a shipped robot's name (demo, rab_style...: hil_robot list) "
        "or a robot folder or robot.yaml of your own; robots of different "
        "profiles: comma-separated, one per robot, the last for the rest (demo,rab_style).",
        reaches=("sim.robot",),
    )
    brain: str = option(
        "profile",
        "Who talks to the firmware on its command UART: control_loop (the DRV/HBB protocol) or "
        "none (no control loop: the firmware owns its UART, a pty at a printed path for your own "
        "program, at the firmware's baud rate); profile: the robot profile's brain.",
        choices=BRAINS,
        aliases={"": "profile"},
    )
    uart_link: str = option(
        "",
        "brain none: the path of the firmware's command UART, the pty your program opens; empty: "
        "mcu_command in the run's link folder (printed).",
        surfaces=("launch", "cli"),
    )
    robots: int = option(
        1,
        "Number of simulated robots (those past hil_robots follow robot_<i>/cmd_vel).",
        minimum=1,
        maximum=1000,
        reaches=("sim.robots",),
    )
    hil_robots: int = option(
        1,
        "Robots 0..hil_robots-1 each get an MCU, signal bridge and control loop in robot_<i>/.",
        minimum=1,
        maximum=1000,
        reaches=("sim.hil_robots",),
    )
    robot_spacing: float = option(
        0.4,
        "Grid spacing (m) of several robots around the world's start.",
        minimum=0.0,
        maximum=10.0,
        unit="m",
        reaches=("sim.robot_spacing",),
    )
    rtf: float = option(
        1.0,
        "Real-time factor of the simulation; 0 = as fast as possible. The one-process runner "
        "then steps every part in lockstep (a run repeats exactly); under ros2 launch only the "
        "simulator runs fast and the other processes follow /clock.",
        minimum=0.0,
        maximum=1000.0,
        reaches=("sim.rtf",),
        surfaces=("launch", "cli"),
    )
    radio: bool = option(
        False,
        "A radio between the robots: the simulator's radio model and a radio module on each HIL robot.",
        reaches=("sim.radio",),
    )
    use_sim_time: bool = option(
        True,
        "Every node takes its time from /clock, the simulated time, which also stamps the "
        "simulator's own topics (odom, tf, sensors): one clock for the whole graph. false puts the "
        "other nodes (and rviz2, the recorder) on the wall clock while the simulator still stamps "
        "simulated time.",
        surfaces=("launch",),
    )
    world: str = option(
        "",
        "World YAML file, or the name of one of hil_sim's worlds (demo, empty, swarm); empty: demo.",
        reaches=("sim.world",),
    )
    behaviour: str = option(
        "boards",
        "Behaviour the control loop starts in: manual (drive it on cmd_vel), boards, light or swarm.",
        choices=BEHAVIOURS,
        aliases={"": "manual"},
        reaches=("control_loop.behaviour",),
    )
    checked: bool = option(
        False,
        "Checked mode (sequence number + CRC-16) on both links.",
        reaches=(
            "virtual_mcu.checked",
            "simavr_mcu.checked",
            "signal_bridge.checked",
            "control_loop.checked",
            "radio_module.checked",
        ),
    )
    faults: bool = option(
        False,
        "Put a link fault proxy (drops, corruption, baud timing) on both links, command and signal.",
        surfaces=("launch", "cli", "marker"),
    )
    fault_drop: float = option(
        0.001,
        "faults: probability that a byte is lost, on each link and direction.",
        minimum=0.0,
        maximum=1.0,
        surfaces=("launch", "cli", "marker"),
    )
    fault_corrupt: float = option(
        0.001,
        "faults: probability that a byte gets one bit flipped, on each link and direction.",
        minimum=0.0,
        maximum=1.0,
        surfaces=("launch", "cli", "marker"),
    )
    mcu: str = option(
        "virtual",
        "The MCU under test: virtual (Python), simavr (the compiled firmware in the AVR emulator), "
        "or serial (a real board on command_port; hardware.launch.py).",
        choices=MCU_KINDS,
    )
    physics: str = option(
        "native",
        "Physics backend of the simulator: native (2-D numpy engine) or mujoco (MuJoCo: the robot "
        "from its URDF, boards that topple).",
        choices=PHYSICS,
        reaches=("sim.physics",),
    )
    seed: int = option(
        0,
        "Seed of the sensor noise and the link faults (identical runs for identical seeds).",
        minimum=0,
        maximum=2**31 - 1,
        reaches=("sim.seed",),
    )
    link_dir: str = option(
        "",
        "Folder of the run's pty links (simulated MCU, fault proxies); empty: the ROS domain's "
        "folder (launch, hil_side) or a private one (hil_sim_runner).",
        surfaces=("launch", "cli"),
    )
    command_port: str = option(
        "",
        "Serial device of the MCU's command link (mcu serial); empty: the simulated MCU's pty.",
        surfaces=("launch",),
    )
    signal_port: str = option(
        "",
        "Serial device of the bridge board's signal link; empty: the simulated MCU's pty.",
        surfaces=("launch",),
    )
    signal_baud: int = option(
        115200,
        "Baud rate of the signal link (the bridge board's UART).",
        minimum=300,
        maximum=2_000_000,
        surfaces=(),
    )
    record: str = option(
        "",
        "Record every topic and the raw wire traffic to this rosbag2 (MCAP) path; empty: off.",
        surfaces=("launch", "cli"),
    )
    live: bool = option(
        False,
        "Serve the run live over the Foxglove WebSocket protocol (live_view) for the Foxglove app or "
        "Lichtblick: the scene (arena, boards, robots with their sensor beams, paths, LEDs, the MCU's "
        "pins) and every topic of the graph, at ws://<live_host>:<live_port>.",
        surfaces=("launch", "cli"),
    )
    live_port: int = option(
        8765,
        "live: the live view's WebSocket port; 0: any free port (printed).",
        minimum=0,
        maximum=65535,
        surfaces=("launch", "cli"),
    )
    live_host: str = option(
        "127.0.0.1",
        "live: the address the live view listens on: 127.0.0.1 this machine only, 0.0.0.0 every "
        "network interface (anyone who reaches it sees the run).",
        surfaces=("launch", "cli"),
    )
    firmware: str = option(
        "",
        "mcu simavr: the firmware ELF to run; empty: the profile's (its sketch built, cached, or its ELF).",
        reaches=("simavr_mcu.firmware",),
    )
    auto_reset: bool = option(
        False,
        "mcu simavr, brain control_loop: the control loop's open of the command pty resets the firmware,"
        " as DTR does on a UNO, Nano or Mega; off by default, so a run starts with the firmware running."
        " With brain none the profile's auto_reset says what your program's open does.",
        surfaces=(),
    )
    trace_pins: str = option(
        "",
        "mcu simavr: pins whose levels the firmware's run writes to a VCD file (GTKWave, PulseView),"
        " timed in AVR cycles; comma-separated: the wiring's device.signal or device.pin"
        " (motor_left.enable), a device's name (all its pins), raw pins (D9, A0, PB1), UART lines"
        " (uart0.tx, uart0.rx); empty: no trace.",
        reaches=("simavr_mcu.trace_pins",),
    )
    trace_file: str = option(
        "",
        "trace_pins: the VCD file; empty: pins.vcd in the run's report folder (hil_sim_runner) or in"
        " the working folder. With several HIL robots, robot i's name gets _robot_<i> before .vcd.",
    )
    trace_limit_mb: float = option(
        TRACE_LIMIT_MB,
        "trace_pins: the trace stops, saying so, once its file reaches this size.",
        minimum=TRACE_LIMIT_RANGE_MB[0],
        maximum=TRACE_LIMIT_RANGE_MB[1],
        unit="MB",
        reaches=("simavr_mcu.trace_limit_mb",),
    )
    namespace: str = option(
        "",
        "A ROS namespace for the whole graph (team_a): every node and topic under /team_a, the "
        "transforms and diagnostics on /team_a/tf, /team_a/tf_static and /team_a/diagnostics, the pty "
        "links in the namespace's folder; empty: none. /clock stays /clock.",
        surfaces=("launch",),
    )
    cpu_latency: str = option(
        "auto",
        "Keep idle CPU cores from halting (Linux PM QoS, /dev/cpu_dma_latency: root's by default) while "
        "the run lasts: the ptys' hand-overs between its parts are several times faster on a machine "
        "whose idle cores halt, for more power drawn. auto: in lockstep runs (rtf 0), which go as "
        "fast as they can; on: in every run; off: never. Where the device cannot be opened the run "
        "goes on and says so.",
        choices=CPU_LATENCY,
        surfaces=("cli", "scenario", "marker"),
    )
    params_file: str = option(
        "",
        "A ROS 2 parameter file for the whole graph (node_name: ros__parameters: sections; "
        "/** and other wildcards), applied over the graph's own parameters; empty: none.",
        surfaces=("launch", "cli"),
    )

    def __post_init__(self) -> None:
        for name, opt in options_of(GraphOptions).items():
            object.__setattr__(self, name, check(opt, getattr(self, name)))
        try:
            object.__setattr__(self, "robot", resolve_robots(self.robot))
            robot_profiles(self.robot)  # each profile read and checked now, before anything starts
        except HilError as exc:
            raise HilBringupError(f"robot = {exc}") from None
        if self.uart_link and self.hil_robots > 1:
            raise HilBringupError(f"uart_link is for one HIL robot (hil_robots = {self.hil_robots})")
        if not 1 <= self.hil_robots <= self.robots:
            raise HilBringupError(f"hil_robots = {self.hil_robots!r}: need 1..robots ({self.robots})")
        if self.hil_robots > 1 and (self.command_port or self.signal_port or self.mcu == "serial"):
            raise HilBringupError(
                f"hil_robots = {self.hil_robots}: command_port/signal_port and mcu = serial are for one robot"
            )
        if self.mcu == "serial" and not (self.command_port and self.signal_port):
            raise HilBringupError("mcu = serial needs command_port and signal_port (the real devices)")
        namespace_tokens(self.namespace)  # refused here, before anything starts
        if self.trace_pins.strip() and self.mcu != "simavr":
            raise HilBringupError(
                f"trace_pins needs mcu = simavr (the firmware in the AVR emulator), not {self.mcu}"
            )

    def trace_path(self, robot: int = 0) -> str:
        """HIL robot ``robot``'s pin trace: ``trace_file`` (or pins.vcd), ``_robot_<i>`` added with more."""
        path = Path(self.trace_file or TRACE_FILE)
        if self.hil_robots > 1:
            path = path.with_name(f"{path.stem}_robot_{robot}{path.suffix or '.vcd'}")
        return str(path)

    @property
    def profiles(self) -> tuple[RobotProfile, ...]:
        """The ``robot`` option's profiles (:mod:`hil_bringup.core.robots`)."""
        return robot_profiles(self.robot)

    def profile(self, robot: int = 0) -> RobotProfile:
        """Robot ``robot``'s profile (the last one named for robots past the list)."""
        return profile_of(self.profiles, robot)

    def brain_of(self, robot: int = 0) -> str:
        """Who talks to HIL robot ``robot``'s firmware: the ``brain`` option, else its profile's."""
        return self.profile(robot).brain if self.brain == "profile" else self.brain

    @property
    def link_folder(self) -> str:
        """Where the run's pty links are: ``link_dir``, or this ROS domain's (and namespace's) folder."""
        return self.link_dir or run_link_dir(namespace=self.namespace)

    def robot_namespace(self, robot: int) -> str:
        """The namespace of HIL robot ``robot``'s chain: ``robot_<i>`` when there are several robots."""
        return f"robot_{robot}" if self.robots > 1 else ""

    def links(self, robot: int = 0) -> RobotLinks:
        """Where HIL robot ``robot``'s links are: ``<link folder>[/robot_<i>]/<link>``."""
        folder = Path(self.link_folder, self.robot_namespace(robot))
        command = self.command_port or self.uart_link or str(folder / "mcu_command")
        signal = self.signal_port or str(folder / "signal_link")
        return RobotLinks(
            command=command,
            signal=signal,
            radio=str(folder / "radio_link"),
            uarts={
                port.uart: str(folder / f"uart{port.uart}")
                for port in self.profile(robot).serial
                if port.role != "command"
            },
            soft_uarts=tuple(str(folder / f"soft{i}") for i in range(len(self.profile(robot).soft_serial))),
            loop_port=str(folder / "mcu_command_faulty") if self.faults else command,
            bridge_port=str(folder / "signal_link_faulty") if self.faults else signal,
        )

    @property
    def command_link(self) -> str:
        """Where robot 0's command link is (the simulated MCU's pty, or the device)."""
        return self.links(0).command

    @property
    def signal_link(self) -> str:
        """Where robot 0's signal link is."""
        return self.links(0).signal

    @property
    def loop_port(self) -> str:
        """The port robot 0's control loop opens: the fault proxy's when faults are on."""
        return self.links(0).loop_port

    @property
    def bridge_port(self) -> str:
        """The port robot 0's signal bridge opens: the fault proxy's when faults are on."""
        return self.links(0).bridge_port

    @property
    def chain_namespace(self) -> str:
        """The namespace of robot 0's HIL chain within the graph: robot_0 when there are several robots."""
        return self.robot_namespace(0)

    def node_namespace(self, namespace: str) -> str:
        """A node's namespace in the run: the graph's ``namespace``, then its own (``team_a/robot_1``)."""
        return "/".join(t for t in (*namespace_tokens(self.namespace), namespace) if t)


def user_ports(options: GraphOptions) -> list[tuple[int, str, int]]:
    """The command UARTs that are the user's program's (brain none): (robot, path, baud rate).

    The path is the simulated MCU's pty (the run's link folder, or ``uart_link``), or
    the real board's device (``command_port``); the baud rate the profile's command UART's.
    """
    return [
        (robot, options.links(robot).command, options.profile(robot).command.baud)
        for robot in range(options.hil_robots)
        if options.brain_of(robot) == "none"
    ]


def your_program(path: str, baud: int, *, robot: int | None = None) -> str:
    """What a runner prints for a user's program: ``your program: open <path> (<baud> baud)``."""
    whose = f" (robot {robot})" if robot is not None else ""
    return f"your program{whose}: open {path} ({baud} baud)"


#: Launch arguments beside the run options: name -> (default, description, choices or None).
LAUNCH_EXTRA: dict[str, tuple[str, str, list[str] | None]] = {
    "rviz": (
        "false",
        "Start rviz2 with hil_bringup's configuration made for the run's robots and namespace "
        "(written to the run's link folder).",
        ["true", "false"],
    ),
}


def launch_arguments() -> dict[str, tuple[str, str, list[str] | None]]:
    """Every launch argument of the launch files: the run options launch takes, then :data:`LAUNCH_EXTRA`.

    ``name -> (default text, description, choices or None)``.
    """
    found = {
        name: (opt.launch_default(), opt.spec.description, opt.text_choices())
        for name, opt in on(GraphOptions, "launch").items()
    }
    return {**found, **LAUNCH_EXTRA}


@dataclass(frozen=True)
class RobotLinks:
    """The pty (or device) paths of one HIL robot's links."""

    command: str
    signal: str
    #: The radio module's link to the MCU.
    radio: str
    #: The profile's other UARTs (role aux) on ptys: UART number -> link.
    uarts: dict[int, str]
    #: The profile's SoftwareSerial links on ptys (``soft<i>``), in profile order.
    soft_uarts: tuple[str, ...]
    #: What the control loop and the signal bridge open (the fault proxies' with faults).
    loop_port: str
    bridge_port: str


def node_key(namespace: str, name: str) -> str:
    """A node's (or helper process's) full name without the leading slash (``robot_1/control_loop``)."""
    return f"{namespace}/{name}" if namespace else name


@dataclass(frozen=True)
class NodeSpec:
    """One node of the graph, as launch_ros.actions.Node and the runner both need it."""

    package: str
    executable: str
    name: str
    module: str  # "<module>:<Node class>" for the one-process runner
    namespace: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)
    #: The HIL robot whose chain the node is part of; None for the world's nodes.
    robot: int | None = None

    @property
    def key(self) -> str:
        """The node's full name without the leading slash (``robot_1/control_loop``)."""
        return node_key(self.namespace, self.name)


@dataclass(frozen=True)
class FaultLink:
    """A link fault proxy: the link, the port it serves, the port it makes, its faults."""

    link: str  # "command" or "signal"
    upstream: str
    port: str
    model: FaultModel
    #: The HIL robot whose link it is.
    robot: int = 0

    def arguments(self) -> tuple[str, ...]:
        """The ``hil_link_proxy`` command line of this proxy."""
        model = self.model
        return (
            "--upstream",
            self.upstream,
            "--link",
            self.port,
            "--drop",
            repr(model.drop),
            "--corrupt",
            repr(model.corrupt),
            "--baud",
            str(model.baud),
            "--seed",
            str(model.seed),
        )


@dataclass(frozen=True)
class ProcessSpec:
    """A helper process that is not a ROS node (a link fault proxy)."""

    name: str
    package: str  # installed in lib/<package>/, found as ``ros2 run`` finds it
    executable: str
    arguments: tuple[str, ...]
    #: A link fault proxy's settings, for the runner that makes it in-process.
    faults: FaultLink | None = None


def package_defaults(package: str, node: str) -> dict[str, Any]:
    """The YAML defaults of ``node`` from ``config/<package>.yaml``."""
    return yaml_defaults(share_dir(package) / "config" / f"{package}.yaml", node)


def _spec(
    package: str, executable: str, node: str, module: str, namespace: str, **overrides: Any
) -> NodeSpec:
    parameters = package_defaults(package, node)
    unknown = sorted(set(overrides) - set(parameters))
    if unknown:
        raise HilBringupError(f"{package}/{node}: no parameter(s) {unknown} in config/{package}.yaml")
    parameters.update(overrides)
    return NodeSpec(package, executable, node, module, namespace, parameters)


def reached(options: GraphOptions, node: str) -> dict[str, Any]:
    """The parameters of ``node`` that options pass on unchanged (their declared ``reaches``)."""
    found = {}
    for name, opt in options_of(GraphOptions).items():
        for target in opt.spec.reaches:
            target_node, parameter = target.split(".", 1)
            if target_node == node:
                found[parameter] = getattr(options, name)
    return found


#: The key of a node's parameters in a ROS 2 parameter file.
ROS_PARAMETERS = "ros__parameters"


def check_params_file(path: str) -> None:
    """Refuse what is not a ROS 2 parameter file, naming the file and the key.

    A mapping of node names (``/**``, ``control_loop``, ``/robot_0/control_loop``, or
    namespaces holding node names) down to ``ros__parameters:`` mappings; rcl applies
    it to each node whose name matches. Checked before anything starts, so a bad file
    stops the run with its name instead of a node failing to parse it.

    Raises:
        HilBringupError: the file is missing, not YAML, or not a parameter file.
    """
    try:
        data = load_yaml(path, what="parameter file", error=HilBringupError)
    except HilBringupError as exc:
        raise HilBringupError(f"params_file {exc}") from None

    def walk(node: Any, where: str) -> None:
        if not isinstance(node, dict) or not node:
            raise HilBringupError(
                f"params_file {path}: {where or 'the file'} is not a mapping of node names "
                f"to '{ROS_PARAMETERS}:' sections"
            )
        for key, value in node.items():
            inner = f"{where}.{key}" if where else str(key)
            if key == ROS_PARAMETERS:
                if not isinstance(value, dict):
                    raise HilBringupError(f"params_file {path}: {inner} is not a mapping of parameters")
            else:
                walk(value, inner)

    walk(data, "")


def describe(options: GraphOptions) -> tuple[list[NodeSpec], list[ProcessSpec]]:
    """The nodes and helper processes of a run: the simulator, then each HIL robot's chain.

    A chain (MCU first: it creates the ptys the others open) is in its robot's
    namespace with links of its own (:meth:`GraphOptions.links`). A ``params_file`` is
    checked (:func:`check_params_file`); each way of starting the nodes passes it to
    every node after the graph's own parameters, so its values win.

    Raises:
        HilBringupError: a ``params_file`` that is not a parameter file.
    """
    if options.params_file:
        check_params_file(options.params_file)
    # A recording keeps the live scene at its simulated rate; a live view alone takes at
    # most the simulator's scene_max_rate per wall second (a fast lockstep run is not slowed).
    scene = {"scene_max_rate": 0.0} if options.record else {}
    nodes = [
        _spec("hil_sim", "sim", "sim", "hil_sim.sim_node:SimNode", "", **reached(options, "sim"), **scene)
    ]
    for robot in range(options.hil_robots):
        nodes += chain(options, robot)
    nodes += descriptions(options)
    if options.live:
        nodes.append(live_view(options))
    # The simulator is the clock: it stamps with simulated time itself (as Gazebo does,
    # whatever the other nodes follow), and following its own /clock would wake its
    # executor every period for nothing. Every other node follows it (use_sim_time,
    # default true), so each stamp of the graph is on that one clock.
    sim_time = {"use_sim_time": options.use_sim_time}
    nodes = [n if n.name == "sim" else replace(n, parameters={**n.parameters, **sim_time}) for n in nodes]
    processes = [
        ProcessSpec(
            node_key(options.robot_namespace(link.robot), f"{link.link}_link_proxy"),
            "hil_bridge",
            "hil_link_proxy",
            link.arguments(),
            link,
        )
        for robot in range(options.hil_robots)
        for link in fault_links(options, robot)
    ]
    return nodes, processes


def descriptions(options: GraphOptions) -> list[NodeSpec]:
    """The world's description nodes: the robots without a chain (past ``hil_robots``), a node per profile.

    Each publishes its robots' URDF on ``robot_<i>/robot_description`` and their frames,
    prefixed ``robot_<i>/``, on ``/tf_static`` and ``/tf``, as a chain's description
    does for its robot: every robot of the world has its frames in TF.
    """
    groups: dict[str, list[int]] = {}
    for robot in range(options.hil_robots, options.robots):
        groups.setdefault(str(options.profile(robot).source), []).append(robot)
    return [
        NodeSpec(
            "hil_bringup",
            "robot_description",
            "robot_descriptions" if len(groups) == 1 else f"robot_descriptions_{index}",
            "hil_bringup.description_node:DescriptionNode",
            "",
            {"robot": source, "prefixes": [f"robot_{robot}/" for robot in robots]},
        )
        for index, (source, robots) in enumerate(groups.items())
    ]


def live_view(options: GraphOptions) -> NodeSpec:
    """The live view's node (``live``): the scene and the graph's topics over Foxglove WebSocket."""
    return NodeSpec(
        "hil_bringup",
        "live_view",
        "live_view",
        "hil_bringup.live_view_node:LiveViewNode",
        "",
        {"host": options.live_host, "port": options.live_port},
    )


#: The two sides of a distributed run (world.launch.py, robot.launch.py, hil_side).
SIDES = ("world", "robot")


def describe_side(
    options: GraphOptions, side: str, *, robot: int = 0
) -> tuple[list[NodeSpec], list[ProcessSpec]]:
    """One side of a run split across machines that share a ROS domain.

    ``world``: the simulator (with ``radio`` its radio model), the clock of the run, the
    descriptions of the robots without a chain (:func:`descriptions`), and with ``live``
    the live view.
    ``robot``: HIL robot ``robot``'s chain (MCU, bridge, loop, description, radio
    module) and its fault proxies; it talks to the world over DDS only (signals, radio,
    /clock), so it can run on another machine.

    Raises:
        HilBringupError: an unknown side, or a robot that is not a HIL robot of the run.
    """
    if side not in SIDES:
        raise HilBringupError(f"side = {side!r} is not one of {', '.join(SIDES)}")
    if not 0 <= robot < options.hil_robots:
        raise HilBringupError(f"robot = {robot!r}: the run's HIL robots are 0..{options.hil_robots - 1}")
    nodes, processes = describe(options)
    if side == "world":
        return [n for n in nodes if n.robot is None], []
    faults = [p for p in processes if p.faults is None or p.faults.robot == robot]
    return [n for n in nodes if n.robot == robot], faults


def chain(options: GraphOptions, robot: int) -> list[NodeSpec]:
    """HIL robot ``robot``'s nodes: simulated MCU (if any), signal bridge, control loop, description.

    Each takes the robot's profile (``robot``: its robot.yaml) and derives what it needs
    from it: the MCU its firmware, coupling and serial ports (or the devices it drives),
    the bridge its device set, the description its URDF. The control loop (brain
    control_loop) gets the robot's geometry and its command UART's baud rate; with
    brain none there is none, and the command link is the user's program's.
    """
    ns, links = options.robot_namespace(robot), options.links(robot)
    profile = options.profile(robot)
    source = str(profile.source)
    brain = options.brain_of(robot)
    nodes = []
    mcu = MCU_NODES.get(options.mcu)
    if mcu is not None:
        module = {
            "virtual_mcu": "virtual_mcu_node:VirtualMcuNode",
            "simavr_mcu": "simavr_mcu_node:SimavrMcuNode",
        }
        extra = reached(options, mcu)
        if options.radio:
            extra["radio_port"] = links.radio
        if mcu == "simavr_mcu":
            extra["auto_reset"] = profile.auto_reset if brain == "none" else options.auto_reset
            extra["uart_ports"] = [f"{uart}:{link}" for uart, link in links.uarts.items()]
            extra["soft_uart_ports"] = [
                f"{port.rx}:{port.tx}:{port.baud}:{link}"
                for port, link in zip(profile.soft_serial, links.soft_uarts, strict=True)
            ]
            extra["trace_file"] = options.trace_path(robot)
        nodes.append(
            _spec(
                "hil_mcu",
                mcu,
                mcu,
                f"hil_mcu.{module[mcu]}",
                ns,
                command_port=links.command,
                signal_port=links.signal,
                robot=source,
                **extra,
            )
        )
    nodes.append(
        _spec(
            "hil_bridge",
            "signal_bridge",
            "signal_bridge",
            "hil_bridge.signal_bridge_node:SignalBridgeNode",
            ns,
            port=links.bridge_port,
            baud=options.signal_baud,
            robot=source,
            **reached(options, "signal_bridge"),
        )
    )
    if brain == "control_loop":
        nodes.append(
            _spec(
                "robot_control",
                "control_loop",
                "control_loop",
                "robot_control.control_loop_node:ControlLoopNode",
                ns,
                port=links.loop_port,
                baud=profile.command.baud,
                robot_id=robot,
                robot=source,
                **geometry(profile),
                **reached(options, "control_loop"),
            )
        )
    nodes.append(
        NodeSpec(
            "hil_bringup",
            "robot_description",
            "robot_description",
            "hil_bringup.description_node:DescriptionNode",
            ns,
            {"frame_prefix": f"{ns}/" if ns else "", "robot": source},
        )
    )
    if options.radio:
        nodes.append(
            _spec(
                "hil_bridge",
                "radio_module",
                "radio_module",
                "hil_bridge.radio_module_node:RadioModuleNode",
                ns,
                port=links.radio,
                **reached(options, "radio_module"),
            )
        )
    return [replace(n, robot=robot) for n in nodes]


def geometry(profile: RobotProfile) -> dict[str, float]:
    """The control loop's view of a robot: wheel base and radius, and the wheels' speed at full command.

    The speed is the motor model's no-load wheel speed at full supply (hil_sim's
    :class:`~hil_sim.core.robot_model.RobotModel`), which the loop's DRV scale assumes.
    """
    from hil_sim.core.robot_model import robot_model_from_profile  # noqa: PLC0415 - numpy, not at import

    model = robot_model_from_profile(profile)
    return {
        "wheel_base": model.body.wheel_base,
        "wheel_radius": model.body.wheel_radius,
        "max_wheel_speed": round(model.max_wheel_speed, 6),
    }


def fault_links(options: GraphOptions, robot: int = 0) -> list[FaultLink]:
    """HIL robot ``robot``'s link fault proxies: one per link with ``faults``, none without.

    Each runs at its link's baud rate; the signal link's has a seed of its own (the
    run's + 1), so the two links do not suffer the same faults, and each robot's
    proxies are seeded apart from the others' (``+ 2 * robot``).
    """
    if not options.faults:
        return []
    drop, corrupt, links = options.fault_drop, options.fault_corrupt, options.links(robot)
    seed = options.seed + 2 * robot
    return [
        FaultLink(
            "command",
            links.command,
            links.loop_port,
            FaultModel(drop=drop, corrupt=corrupt, baud=options.profile(robot).command.baud, seed=seed),
            robot,
        ),
        FaultLink(
            "signal",
            links.signal,
            links.bridge_port,
            FaultModel(drop=drop, corrupt=corrupt, baud=options.signal_baud, seed=seed + 1),
            robot,
        ),
    ]


def params_file(nodes: list[NodeSpec]) -> dict[str, Any]:
    """The nodes' parameters as one ROS 2 parameter file (``<namespace>/<name>`` sections)."""
    return {
        (f"/{n.namespace}/{n.name}" if n.namespace else n.name): {ROS_PARAMETERS: n.parameters} for n in nodes
    }
