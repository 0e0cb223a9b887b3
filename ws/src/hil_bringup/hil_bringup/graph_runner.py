"""The HIL graph in one process: the same node classes, parameters and ptys as the launch.

Two ways to run it:

* real time (``rtf`` > 0): every node's own thread runs as in separate processes (the
  control loop and the bridge keep their deadline threads), and one executor thread
  serves the ROS callbacks;
* lockstep (``rtf`` = 0): no node thread runs; one driver steps them in simulated
  time, in a fixed order, every signal period: simulated MCU (virtual, or the
  firmware in simavr advanced by the period's cycles), radio modules, fault proxies,
  signal bridge, simulator, then the control loop frames that are due with the ROS
  callbacks they take. The links are still the real ptys. A run is then the same for
  the same seed and inputs, and as fast as the machine allows.

Every node (and fault proxy) is driven through one interface,
:class:`hil_common.core.stepping.Stepped`: ``start``/``stop`` in real time,
``follow(clock)`` then ``advance_to(t)`` in lockstep. Nothing else of a node is called
to run it. The nodes' ROS clocks are set as one (:class:`hil_common.node_runtime.SharedClock`):
from one ``/clock`` subscription in real time, by call every period in lockstep.

In both, the parts of a HIL chain exchange by call through their ports
(:mod:`hil_common.core.ports`) instead of the topics between them: the bridge's pins
to the simulator's robot port and its sensor values back, joint states to the robot
description, radio lines both ways, the loop's inputs to the recorder. The topics
are still published when someone subscribes. In one process that halves the
callbacks the executor has to serve, and in lockstep it is what makes runs repeat
(DDS delivery order varies).

A part that dies ends the run rather than freezing it: :meth:`GraphRunner.failure`
names a node whose thread failed (a firmware harness that died among them) or an
executor thread that ended, and in lockstep :meth:`GraphRunner.step` raises
:class:`~hil_bringup.errors.HilBringupError` naming the part that raised.

Nodes are built from :func:`hil_bringup.core.graph.describe`, like the launch files.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import rclpy
import yaml
from rclpy.executors import Executor, ShutdownException, SingleThreadedExecutor, TimeoutException
from rclpy.node import Node
from rclpy.subscription import Subscription
from rclpy.task import Future

from hil_bridge.core.fault_proxy import FaultProxy
from hil_bridge.core.lockstep_io import Handover
from hil_bridge.core.pty_link import PtyPair
from hil_bridge.core.serial_link import SerialLink
from hil_bridge.radio_module_node import RadioModuleNode
from hil_bridge.signal_bridge_node import SignalBridgeNode
from hil_bringup.core.graph import (
    MCU_NODES,
    ROS_PARAMETERS,
    GraphOptions,
    NodeSpec,
    check_params_file,
    describe,
    graph_remaps,
    node_key,
)
from hil_bringup.core.link_faults import make_proxy
from hil_bringup.core.serial_port import SerialPort
from hil_bringup.description_node import DescriptionNode
from hil_bringup.errors import HilBringupError
from hil_bringup.recorder_node import RecorderNode
from hil_common.core.cpu_latency import CpuLatencyHold
from hil_common.core.leftovers import OwnedDir, owned_dir
from hil_common.core.shutdown import deferred_signals
from hil_common.core.stepping import RunningTime, Stepped
from hil_common.node_runtime import SharedClock, can_take, take
from hil_mcu.simavr_mcu_node import SimavrMcuNode
from hil_mcu.virtual_mcu_node import VirtualMcuNode
from hil_sim.core.build import world_path
from hil_sim.sim_node import SimNode
from robot_control.control_loop_node import ControlLoopNode

#: A bound on the callbacks one lockstep period serves, so a flood cannot stall it.
_MAX_CALLBACKS_PER_STEP = 1000
#: Lockstep: the executor is polled at least this often (simulated s) even with no input.
_FULL_SERVE_PERIOD_S = 1.0
#: Stopping a recorded lockstep run: wait until DDS has been quiet this long (at most the max), s.
_DRAIN_QUIET_S = 0.2
_DRAIN_MAX_S = 3.0
#: Nodes with no input for the lockstep driver to serve (see GraphRunner._executor_for).
_SERVED_ELSEWHERE = frozenset(MCU_NODES.values()) | {"signal_bridge", "robot_description", "radio_module"}
#: Options that describe this machine's run rather than the experiment (not kept in bags).
RUN_LOCAL = (
    "link_dir",
    "command_port",
    "signal_port",
    "uart_link",
    "record",
    "live",
    "live_port",
    "live_host",
    "cpu_latency",
)
#: Name prefix of a run's private pty folder in the user's runtime folder (runtime_dir).
LINK_DIR_PREFIX = "hil-links-"
#: Name prefix of a run's private folder of node parameter files (runtime_dir).
PARAMS_DIR_PREFIX = "hil-params-"
#: Real time: how long start() waits for the first /clock before starting the nodes, wall s.
_CLOCK_WAIT_S = 5.0


@dataclass
class Chain:
    """One HIL robot's nodes in the runner: simulated MCU (None with a real one), bridge, loop."""

    robot: int
    mcu: VirtualMcuNode | SimavrMcuNode | None
    bridge: SignalBridgeNode
    #: Its control loop; None with brain none (the command UART is the user's program's).
    loop: ControlLoopNode | None
    description: DescriptionNode
    #: Its radio module (a run with ``radio``).
    radio: RadioModuleNode | None = None
    #: Its link fault proxies (``faults``): the command link's, then the signal link's.
    proxies: list[FaultProxy] = field(default_factory=list)
    #: Lockstep, brain none: the command UART's user end (the scenario's, the plugin's).
    serial: SerialPort | None = None
    #: Lockstep, firmware in simavr: the profile's other UARTs' user ends, by UART number.
    uarts: dict[int, SerialPort] = field(default_factory=dict)
    #: Lockstep, firmware in simavr: what the run's links write to its ptys, handed over
    #: before each step, by the harness's name of the pty ("signal", "uart0", ...).
    handovers: dict[str, Handover] = field(default_factory=dict)

    def ports(self) -> list[SerialPort]:
        """Every serial port the runner is the user's end of: the command UART's, then the others."""
        return ([self.serial] if self.serial is not None else []) + list(self.uarts.values())


class _InputTaker:
    """Takes the messages waiting on a few subscriptions and runs their callbacks.

    What an executor does after its wait, without the wait: an executor rebuilds its
    wait set from every entity of its nodes on each poll, and even a bare rcl wait on
    two subscriptions cost over 100 us, which every lockstep frame paid to learn that
    no cmd_vel had come; a take from an empty subscription costs a few
    (:func:`hil_common.node_runtime.take`). rclpy has no public "take"; if its internals
    are not what this expects, :meth:`take` returns None and the caller polls the
    executor as before.
    """

    def __init__(self, subscriptions: list[Subscription]) -> None:
        self._subscriptions = subscriptions
        self.usable = all(can_take(s) for s in subscriptions)

    def take(self, limit: int) -> int | None:
        """Run the callback of every waiting message (at most ``limit``); None if it cannot."""
        if not self.usable:
            return None
        taken = 0
        for subscription in self._subscriptions:
            while taken < limit:
                message = take(subscription)
                if message is None:
                    break
                subscription.callback(message)
                taken += 1
        return taken


class _Parameters:
    """Each node's parameters as launch_ros gives them: a parameter file, then the user's.

    A node gets ``--params-file <its own>`` and, with ``params_file``, ``--params-file
    <the user's>`` after it, so rcl applies the user's file (its wildcards and
    namespaces too) over the graph's parameters, as under ``ros2 launch``. The files
    are in a private folder of the run's (``leftovers.owned_dir``).
    """

    def __init__(self, user: str) -> None:
        if user:
            check_params_file(user)
        self.user = str(Path(user).resolve()) if user else ""
        self._folder: OwnedDir | None = None

    def arguments(self, key: str, values: dict[str, Any]) -> list[str]:
        """The ``cli_args`` giving node ``key`` (``robot_1/control_loop``) ``values``."""
        if self._folder is None:
            self._folder = owned_dir(PARAMS_DIR_PREFIX)
        path = self._folder.path / f"{key.replace('/', '__')}.yaml"
        path.write_text(yaml.safe_dump({"/**": {ROS_PARAMETERS: values}}))
        files = [str(path), *([self.user] if self.user else [])]
        return ["--ros-args", *(arg for file in files for arg in ("--params-file", file))]

    def remove(self) -> None:
        """Remove the files (again: nothing)."""
        if self._folder is not None:
            self._folder.remove()


def _build(spec: NodeSpec, context: rclpy.Context, parameters: _Parameters, options: GraphOptions) -> Node:
    """Node ``spec`` by its name, in the run's ``namespace``, the graph-wide topics remapped into it."""
    module_name, class_name = spec.module.split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    remaps = [f"__node:={spec.name}", *(f"{old}:={new}" for old, new in graph_remaps(options.namespace))]
    node: Node = cls(
        context=context,
        namespace=options.node_namespace(spec.namespace) or None,
        cli_args=[*parameters.arguments(spec.key, spec.parameters), *(a for r in remaps for a in ("-r", r))],
    )
    if not isinstance(node, Stepped):
        node.destroy_node()
        raise HilBringupError(f"{spec.module} is no stepped node (hil_common.core.stepping.Stepped)")
    return node


@dataclass(frozen=True)
class _HarnessCount:
    """The bytes a firmware's harness has taken from a link's pty (``written`` False) or written to it.

    As of its last step; ``link`` is the harness's name of it ("signal", "radio", "uartN":
    :attr:`hil_mcu.core.simavr.SimavrProcess.link_bytes`).
    """

    mcu: SimavrMcuNode
    link: str
    written: bool

    def __call__(self) -> int:
        process = self.mcu.process
        return process.link_bytes.get(self.link, (0, 0))[self.written] if process is not None else 0


def _hand_over(link: SerialLink, chain: Chain, name: str, pty: PtyPair) -> None:
    """Lockstep: ``link`` reads all the chain's harness writes to ``pty``, the harness all it writes.

    Once per harness: a restarted MCU's harness is paired anew.
    """
    assert isinstance(chain.mcu, SimavrMcuNode)
    written = _HarnessCount(chain.mcu, name, written=True)
    if link.owed is None or link.owed.written != written:
        link.owe(written)
        taken = _HarnessCount(chain.mcu, name, written=False)
        chain.handovers[name] = Handover(lambda: link.bytes_out, taken, pty.master_fd)


def _pair(link: SerialLink, pty: PtyPair) -> None:
    """Lockstep: ``link`` and the in-process ``pty`` it opened each read all the other writes."""
    link.owe(lambda: pty.bytes_written)
    pty.owe(lambda: link.bytes_out)


def recorded_options(options: GraphOptions) -> dict[str, Any]:
    """The options a bag keeps of its run, for a replay (not :data:`RUN_LOCAL`).

    Files by absolute path, as a replay may start in another folder; the name of one
    of hil_sim's worlds stays a name.
    """
    run = {k: v for k, v in asdict(options).items() if k not in RUN_LOCAL}
    if run["world"] and world_path(run["world"]) == Path(run["world"]):
        run["world"] = str(Path(run["world"]).resolve())
    run["firmware"] = run["firmware"] and str(Path(run["firmware"]).resolve())
    run["params_file"] = run["params_file"] and str(Path(run["params_file"]).resolve())
    return run


class GraphRunner:
    """The nodes of one run in this process, and the ptys between them."""

    #: The run's hold on the CPUs' wake-up latency (``cpu_latency``), from start() to stop().
    cpu_latency: CpuLatencyHold | None = None

    def __init__(self, options: GraphOptions, *, extra_nodes: list[Node] | None = None) -> None:
        self._parameters = _Parameters(options.params_file)  # checks it before anything is made
        self.lockstep = options.rtf == 0
        self._link_dir: OwnedDir | None = None
        if not options.command_port and options.link_dir == GraphOptions.link_dir:
            # A private folder for this run's pty links in the user's runtime folder:
            # parallel runs never clash, other users cannot reach it, and a killed run's
            # folder is removed by the next run (leftovers.owned_dir).
            self._link_dir = owned_dir(LINK_DIR_PREFIX)
            options = replace(options, link_dir=str(self._link_dir.path))
        if self.lockstep:
            options = replace(options, use_sim_time=True)
        self.options = options
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        specs, processes = describe(options)
        #: The nodes by full name without the leading slash (``sim``, ``robot_1/control_loop``).
        self.nodes: dict[str, Node] = {}
        self._specs = {spec.key: spec for spec in specs}
        #: Every link fault proxy of the run (``faults``), robot by robot.
        self.proxies: list[FaultProxy] = []
        try:
            for spec in specs:  # each simulated MCU first: it creates the ptys the others open
                self.nodes[spec.key] = _build(spec, self.context, self._parameters, options)
            self._sim = self._simulator()
            #: The HIL robots' chains, robot 0 first.
            self.chains = [self._chain(robot) for robot in range(options.hil_robots)]
            if options.record:
                recorder = RecorderNode(
                    options.record,
                    context=self.context,
                    cli_args=self._parameters.arguments("recorder", {"use_sim_time": options.use_sim_time}),
                )
                recorder.run_options = recorded_options(options)
                # Operator inputs as the loop took them, not as a second DDS reader got
                # them (recorder_node): what a replay needs to repeat the run.
                for loop in self.loops:
                    recorder.record_by_call([loop.cmd_vel_topic, loop.command_topic])
                    loop.inputs_taken.connect(recorder.record)
                self.nodes["recorder"] = recorder
            for process in processes:
                if process.faults is not None:
                    owner = self.chains[process.faults.robot]
                    proxy = make_proxy(process.faults, owner.bridge.layout, checked=options.checked)
                    owner.proxies.append(proxy)
                    self.proxies.append(proxy)
        except BaseException:
            for proxy in self.proxies:
                proxy.stop()
            self._destroy()
            raise
        # Single-threaded executors: the nodes' own threads do the timing-critical work,
        # and a MultiThreadedExecutor's dispatch overhead alone cost a third of a core
        # and starved them of the GIL (real-time RTF 0.65 instead of 0.99). The
        # simulator gets one of its own: rclpy rebuilds the wait set on every wake and
        # checks each waitable against a list of them, so the two QoS event handlers of
        # each of its publishers (1000 publishers for 100 robots) made every wake of a
        # shared executor cost tens of milliseconds, a whole core in all. Alone, the
        # simulator's executor wakes only for its services.
        self.executor: Executor = SingleThreadedExecutor(context=self.context)
        self.sim_executor: Executor = SingleThreadedExecutor(context=self.context)
        # The live view (``live``) has one of its own, spun in lockstep too: what it
        # forwards to the apps never waits for a lockstep period, nor a period for it.
        self.live_executor: Executor | None = (
            SingleThreadedExecutor(context=self.context) if "live_view" in self.nodes else None
        )
        for node in self.nodes.values():
            self._executor_for(node).add_node(node)
        self._extra_nodes = list(extra_nodes or [])
        for node in self._extra_nodes:
            self.executor.add_node(node)
        self._spin_threads: list[threading.Thread] = []
        #: Lockstep: called with the simulated time where the loop takes operator input,
        #: before its frames (a replay feeds the recorded inputs here).
        self.input_feeds: list[Callable[[float], None]] = []
        #: Lockstep: takes the loop's input (None: poll the executor every frame).
        self._inputs: _InputTaker | None = None
        #: Lockstep: the serve schedule (on its own time, running on across a world
        #: reset); whether the firmwares in simavr run the next period's step already
        #: (``step(ahead=True)``).
        self._next_full_serve, self._serve_time, self._mcus_ahead = 0.0, RunningTime(), False
        #: The nodes' ROS clocks, set as one: from one /clock subscription (real time, when
        #: the nodes are on use_sim_time) or by step() (lockstep).
        self._clocks = SharedClock()
        self._stopping = threading.Event()
        #: Why the run cannot go on, naming the part (see failure()); None while all run.
        self._failure: str | None = None
        #: Lockstep: the part step() is stepping now (None: the caller's input feeds).
        self._stepping: object = None
        #: Done when stop() begins: the spin threads' executors return at once (a plain
        #: wake() only makes rclpy wait again, up to its timeout).
        self._stop_spinning = Future()
        self._started = False

    # --- the nodes by role ------------------------------------------------------------------

    def _key(self, robot: int, name: str) -> str:
        return node_key(self.options.robot_namespace(robot), name)

    def _node(self, robot: int, name: str) -> Node | None:
        return self.nodes.get(self._key(robot, name))

    def _simulator(self) -> SimNode:
        sim = self.nodes.get("sim")
        if not isinstance(sim, SimNode):
            raise HilBringupError("the graph has no simulator node 'sim'")
        return sim

    def _chain(self, robot: int) -> Chain:
        mcu = self._node(robot, MCU_NODES.get(self.options.mcu, ""))
        bridge, loop = self._node(robot, "signal_bridge"), self._node(robot, "control_loop")
        description, radio = self._node(robot, "robot_description"), self._node(robot, "radio_module")
        if not (
            (mcu is None or isinstance(mcu, (VirtualMcuNode, SimavrMcuNode)))
            and isinstance(bridge, SignalBridgeNode)
            and (loop is None or isinstance(loop, ControlLoopNode))
            and isinstance(description, DescriptionNode)
            and (radio is None or isinstance(radio, RadioModuleNode))
        ):
            raise HilBringupError(f"robot {robot}'s chain is not the graph's (hil_bringup.core.graph.chain)")
        return Chain(robot, mcu, bridge, loop, description, radio)

    @property
    def sim(self) -> SimNode:
        """The simulator node."""
        return self._sim

    def _stepped(self) -> list[Stepped]:
        """Every node of the run as the stepped part it is (checked when it was built)."""
        return [node for node in self.nodes.values() if isinstance(node, Stepped)]

    @property
    def loop(self) -> ControlLoopNode:
        """Robot 0's control loop node.

        Raises:
            HilBringupError: robot 0 has none (brain none).
        """
        loop = self.chains[0].loop
        if loop is None:
            raise HilBringupError("robot 0 has no control loop (brain none: its UART is your program's)")
        return loop

    @property
    def loops(self) -> list[ControlLoopNode]:
        """The HIL robots' control loops (those with brain control_loop), robot by robot."""
        return [each.loop for each in self.chains if each.loop is not None]

    @property
    def serial(self) -> SerialPort | None:
        """Lockstep, brain none: robot 0's command UART as your program's end of it (None otherwise)."""
        return self.chains[0].serial

    def serial_ports(self, robot: int = 0) -> dict[int, SerialPort]:
        """Lockstep: a HIL robot's serial ports by UART number (the command UART's with brain none).

        The firmware in simavr: every UART of the robot's profile that reaches a pty;
        the virtual MCU: its command UART (brain none).
        """
        chain = self.chains[robot]
        ports = dict(chain.uarts)
        if chain.serial is not None:
            ports[self.options.profile(robot).command.uart] = chain.serial
        return dict(sorted(ports.items()))

    @property
    def bridge(self) -> SignalBridgeNode:
        """Robot 0's signal bridge node."""
        return self.chains[0].bridge

    @property
    def live_url(self) -> str | None:
        """Where the live view serves the run (``live``), None without one."""
        node = self.nodes.get("live_view")
        return getattr(node, "url", None)

    @property
    def mcu(self) -> VirtualMcuNode | SimavrMcuNode | None:
        """Robot 0's simulated MCU: virtual or firmware in simavr (None with a real MCU)."""
        return self.chains[0].mcu

    # --- running ------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the nodes' threads (real time) or prepare the lockstep driver."""
        if self.options.cpu_latency == "on" or (self.options.cpu_latency == "auto" and self.lockstep):
            self.cpu_latency = CpuLatencyHold()
        # In one process the bridge and the simulator exchange by call instead of the
        # 200 Hz hil/signals topics: half the callbacks of the whole graph, and in
        # lockstep the only way to be deterministic (DDS delivery order varies).
        for each in self.chains:
            self._connect(each)
        self._connect_descriptions()
        if self.lockstep:
            self._prepare_lockstep()
        else:
            self._share_sim_clock()
        # ROS callbacks (cmd_vel, robotCommand, services, recording, /clock) run in these
        # threads; everything they touch is guarded by the nodes' locks. In lockstep
        # the graph's callbacks run in step() instead; the simulator's services (reset,
        # teleport, parameters) still come in on its own thread, under its lock.
        executors = {"sim-executor": self.sim_executor}
        if not self.lockstep:
            executors["executor"] = self.executor
        if self.live_executor is not None:
            executors["live-executor"] = self.live_executor
        for name, executor in executors.items():
            thread = threading.Thread(target=self._spin, args=(executor,), name=name, daemon=True)
            thread.start()
            self._spin_threads.append(thread)
        if not self.lockstep:
            for proxy in self.proxies:
                proxy.start()
            self.sim.start()
            self._await_sim_clock()
            for part in self._stepped():
                if part is not self.sim:
                    part.start()
        self._started = True

    def _share_sim_clock(self) -> None:
        """Real time: the nodes on ``use_sim_time`` follow /clock through one subscription.

        rclpy gives each node a /clock subscription of its own: one callback per node
        every simulator period (200 Hz) on the one executor thread. Here one
        subscription, on robot 0's loop (a node never taken out of the run), sets every
        follower's clock (:class:`~hil_common.node_runtime.SharedClock`).
        """
        leader = self._clock_leader()
        if not leader.get_parameter("use_sim_time").value:
            return
        for node in self.nodes.values():
            if node is not self.sim and node.get_parameter("use_sim_time").value:
                self._clocks.take(node)
        self._clocks.subscribe(leader)

    def _clock_leader(self) -> Node:
        """The node whose /clock subscription every follower shares: robot 0's loop, else its bridge.

        Both stay for the whole run (an MCU can be taken away and come back).
        """
        chain = self.chains[0]
        return chain.loop if chain.loop is not None else chain.bridge

    def _await_sim_clock(self) -> None:
        """Real time: start the nodes' threads once /clock has reached them (at most a few s).

        A node on ``use_sim_time`` reads 0 until the first /clock; its clock watch
        (``clock_timeout``) would count a start slower than that as a stalled world.
        """
        if not self._clocks.subscribed:
            return
        clock = self._clock_leader().get_clock()
        deadline = time.monotonic() + _CLOCK_WAIT_S
        while clock.now().nanoseconds == 0 and time.monotonic() < deadline and self.failure() is None:
            time.sleep(0.005)

    def _simulated_time(self) -> float:
        """The simulated clock every part of a lockstep run follows (the world's time)."""
        return self._sim.sim.time

    def _prepare_lockstep(self) -> None:
        """Every part on the simulated clock (timers, silence, backoffs), ROS clocks by call, ptys paired."""
        for part in [*self._stepped(), *self.proxies]:
            part.follow(self._simulated_time)
        for each in self.chains:
            if each.loop is None:
                self._open_serial(each)
            self._open_uarts(each)
            if isinstance(each.mcu, VirtualMcuNode):
                each.mcu.replugged.connect(self._owe_reads)  # new ptys after a replug
        for node in self.nodes.values():
            if node is not self.sim:
                self._clocks.take(node)
        self._clocks.set(self._simulated_time())
        self._owe_reads()
        if not self._extra_nodes and "recorder" not in self.nodes:
            # With a recorder or extra nodes the executor has more to serve: poll it.
            self._inputs = _InputTaker([sub for loop in self.loops for sub in loop.subscriptions])

    def _open_serial(self, chain: Chain) -> None:
        """Lockstep, brain none: the command UART's user end, paired with the MCU's side."""
        if chain.serial is not None:
            chain.serial.close()
            chain.serial = None
        mcu = chain.mcu
        if mcu is None:
            return
        baud = self.options.profile(chain.robot).command.baud
        pty = mcu.command
        if isinstance(mcu, VirtualMcuNode):
            chain.serial = SerialPort(
                pty.user_end(), path=pty.path, baud=baud, mcu_written=lambda: pty.bytes_written
            )
            port = chain.serial
            pty.owe(lambda: port.sent)  # the virtual MCU's reads wait for the port's bytes
            return
        uart = f"uart{mcu.command_uart}"
        chain.serial = SerialPort(
            pty.user_end(),
            path=pty.path,
            baud=baud,
            mcu_written=_HarnessCount(mcu, uart, written=True),
            mcu_read=_HarnessCount(mcu, uart, written=False),
            mcu_fd=pty.master_fd,
        )

    def _open_uarts(self, chain: Chain) -> None:
        """Lockstep, firmware in simavr: the user ends of the profile's other UARTs (aux), paired.

        Each is the pty's own user side, as the command UART's (:meth:`_open_serial`), with
        the harness's byte counts of that UART.
        """
        for port in chain.uarts.values():
            port.close()
        chain.uarts = {}
        mcu = chain.mcu
        if not isinstance(mcu, SimavrMcuNode):
            return
        bauds = {port.uart: port.baud for port in self.options.profile(chain.robot).serial}
        for number, pty in mcu.uarts.items():
            chain.uarts[number] = SerialPort(
                pty.user_end(),
                path=pty.path,
                baud=bauds.get(number, 0),
                mcu_written=_HarnessCount(mcu, f"uart{number}", written=True),
                mcu_read=_HarnessCount(mcu, f"uart{number}", written=False),
                mcu_fd=pty.master_fd,
            )

    @staticmethod
    def _close_serials(chain: Chain) -> None:
        """Close a chain's serial ports (the command UART's and the others)."""
        for port in chain.ports():
            port.close()
        chain.serial = None
        chain.uarts = {}

    def _connect(self, chain: Chain) -> None:
        """A chain's bridge, description and radio module exchange with the simulator by call."""
        port = self.sim.robot_ports[chain.robot]
        chain.bridge.pins.connect(port.pins)
        port.sensor_values.connect(chain.bridge.sensor_values)
        self.sim.joint_states[chain.robot].connect(chain.description.joint_states[0])
        if chain.radio is not None:
            chain.radio.to_air.connect(port.radio_in)
            port.radio_out.connect(chain.radio.from_air)

    def _connect_descriptions(self) -> None:
        """The robots without a chain: their descriptions take joint states by call too."""
        for spec in self._specs.values():
            description = self.nodes[spec.key]
            if spec.robot is None and isinstance(description, DescriptionNode):
                for prefix, port in zip(spec.parameters["prefixes"], description.joint_states, strict=True):
                    robot = int(prefix.removeprefix("robot_").rstrip("/"))
                    self.sim.joint_states[robot].connect(port)

    def _executor_for(self, node: Node) -> Executor:
        """The simulator's executor, or the graph's (served by step() in lockstep).

        In lockstep the driver serves only the nodes that take input (the loop's
        cmd_vel and robotCommand, the recorder): each poll of an executor rebuilds its
        wait set, entity by entity. The MCU, the bridge and the description (joint
        states by call) have nothing but parameter services, which the simulator's
        executor thread serves when asked.
        """
        served_elsewhere = node.get_name() in _SERVED_ELSEWHERE or isinstance(node, DescriptionNode)
        if node is self.nodes.get("sim") or (self.lockstep and served_elsewhere):
            return self.sim_executor
        if self.live_executor is not None and node is self.nodes.get("live_view"):
            return self.live_executor
        return self.executor

    def _spin(self, executor: Executor) -> None:
        try:
            executor.spin_until_future_complete(self._stop_spinning)  # stop() completes it
        except Exception as exc:
            if not self.context.ok() or self._stopping.is_set():
                return  # the run is stopping, or a failed node shut the context down
            self._failure = self._failure or (
                f"the {threading.current_thread().name} thread stopped: {type(exc).__name__}: {exc}"
            )

    def failure(self) -> str | None:
        """Why the run cannot go on, naming the part; None while every part runs.

        A node whose thread failed (``node_thread`` keeps its exception as the node's
        ``failure``: the simavr node's when its harness dies), an executor thread that
        ended, or in lockstep what :meth:`step` raised. The run's nodes stop working
        then (a failed node thread shuts the run's ROS context down), so the caller
        ends the run.
        """
        if self._failure is None:
            for key, node in self.nodes.items():
                exc = getattr(node, "failure", None)
                if exc is not None:
                    self._failure = f"{key} failed: {exc}"
                    break
        return self._failure

    def _failed(self, part: object, exc: Exception) -> HilBringupError:
        """Lockstep: the run's failure, naming ``part`` (a node, a proxy, a text), as an error to raise."""
        name = part if isinstance(part, str) else next((k for k, n in self.nodes.items() if n is part), "")
        name = name or getattr(part, "name", "") or type(part).__name__
        self._failure = self._failure or f"{name} failed: {exc}"
        return HilBringupError(self._failure)

    def step(self, *, ahead: bool = False) -> None:
        """Lockstep: one signal period of the whole graph, in a fixed order.

        ``ahead``: the firmwares in simavr begin the next period's step beside this
        period's physics when nothing after the bridges writes to them in this period (no
        control-loop frame due), so the harnesses and this process work at once. The
        caller promises to change nothing the firmwares read before its next
        :meth:`step` (writing to their UARTs, resetting or unplugging them); looking at
        the run is fine. What the run does is the same as without ``ahead``, bit for
        bit; a run of virtual MCUs steps as without it.

        Raises:
            HilBringupError: a part of the graph raised (a firmware harness that died),
                naming it; also what :meth:`failure` returns from then on. What the
                ``input_feeds`` raise comes out as it is.
        """
        if not self.lockstep:
            raise HilBringupError("step() is for lockstep runs (rtf 0)")
        try:
            self._step(ahead=ahead)
        except Exception as exc:
            if self._stepping is None:
                raise
            raise self._failed(self._stepping, exc) from exc

    def _step(self, *, ahead: bool) -> None:
        sim, chains = self.sim, self.chains
        now = sim.sim.time
        if self._mcus_ahead:
            self._mcus_ahead = False
        else:
            self._start_mcus(now)
        self._finish_mcus(now)
        for each in chains:
            if each.radio is not None:
                self._stepping = each.radio
                each.radio.advance_to(now)
        for proxy in self.proxies:
            self._stepping = proxy
            proxy.advance_to(now)
        for each in chains:
            self._stepping = each.bridge
            each.bridge.advance_to(now)  # its pins reach the simulator through its port
        # The next period's firmware steps read what the MCUs' ptys hold now, and only a
        # loop's frame (or the callbacks served with it) writes to them before they begin.
        end = sim.period_end
        if ahead and not self._serving_due(end, self._serve_time.peek(end)) and self._all_in_simavr():
            self._start_mcus(end)
            self._mcus_ahead = True
        self._stepping = sim
        sim.advance_to(now + sim.period)  # and the sensor values reach the bridges
        # A world reset the simulator's service thread did meanwhile ends the period
        # elsewhere; the firmwares run on to ``end`` on their own time (RunningTime).
        now = sim.sim.time
        self._clocks.set(now)
        loops, served = self.loops, self._serve_time.at(now)
        if self._serving_due(now, served):
            # Callbacks run here, in the driver, just before the loop's frame: the loop and
            # the recorder then take a cmd_vel at a simulated time that does not depend on
            # DDS, which is what lets a replay reproduce the run. The loop acts on input
            # only in its frames, so once per frame (30 Hz) is as good as every period; an
            # executor poll rebuilds its whole wait set and cost most of a period.
            self._stepping = None  # the caller's own code: its errors come out as they are
            for feed in self.input_feeds:
                feed(now)
            # The loop's input by take; the whole executor once per simulated second for
            # everything else it serves (parameter services), and always when recording.
            self._stepping = "the ROS callbacks"
            taken = self._inputs.take(_MAX_CALLBACKS_PER_STEP) if self._inputs is not None else None
            if taken is None or served >= self._next_full_serve:
                self._next_full_serve = served + _FULL_SERVE_PERIOD_S
                self._serve_callbacks()
        for loop in loops:
            self._stepping = loop
            loop.advance_to(now)
        self._stepping = None

    def _serving_due(self, t: float, served: float) -> bool:
        """Lockstep: whether the period ending at simulated time ``t`` serves input (a frame is due).

        Each loop's frames and the serve schedule are on their own running time
        (:class:`RunningTime`; ``served``: ``t`` on the schedule's), so a world reset
        that takes ``t`` back to 0 leaves them due.
        """
        loops = self.loops
        return any(loop.frame_due(t) for loop in loops) or (not loops and served >= self._next_full_serve)

    def _finish_ahead(self) -> None:
        """Lockstep: the firmware steps begun ahead (``step(ahead=True)``) done now, if there are.

        The next :meth:`step` then begins them again to the same time, which costs the
        harnesses nothing (they are there already).
        """
        if self._mcus_ahead:
            self._mcus_ahead = False
            self._finish_mcus(self.sim.sim.time)

    def _all_in_simavr(self) -> bool:
        """Whether every robot's MCU of the run is a firmware in simavr (and there is one)."""
        mcus = [each.mcu for each in self.chains if each.mcu is not None]
        return bool(mcus) and all(isinstance(mcu, SimavrMcuNode) for mcu in mcus)

    def _start_mcus(self, now: float) -> None:
        """Lockstep: the user's UART bytes to each simulated MCU; those in simavr set running to ``now``.

        The firmwares in simavr run their steps side by side (each harness is its own
        process, and none reads another's output within a step); the virtual MCUs step
        in :meth:`_finish_mcus`, in turn.
        """
        for each in self.chains:
            if each.mcu is not None:
                self._stepping = each.mcu
                for port in each.ports():
                    port.deliver()
                if isinstance(each.mcu, SimavrMcuNode):
                    for handover in each.handovers.values():
                        handover.wait()  # what the run wrote to it is there to read
                    each.mcu.start_advance(now)

    def _finish_mcus(self, now: float) -> None:
        """Lockstep: every simulated MCU's step to ``now`` done, the user's UART bytes after it."""
        for each in self.chains:
            if each.mcu is not None:
                self._stepping = each.mcu
                if isinstance(each.mcu, SimavrMcuNode):
                    each.mcu.finish_advance()
                else:
                    each.mcu.advance_to(now)
                for port in each.ports():
                    port.collect()

    def _owe_reads(self) -> None:
        """Lockstep: every pty read here takes all its peer in this process has written.

        Each pty of the run whose both ends are here (the virtual MCU's, the fault
        proxies') and that is not paired yet (new after a replug or an MCU restart) is
        paired with the link that opened it, by path: each end learns how many bytes the
        other wrote (``owe``), and a read waits, bounded, for the ones the kernel has not
        passed on yet (``hil_bridge.core.lockstep_io``). The firmware in simavr reads and
        writes its ptys in the harness process, which counts the bytes in its answer to
        each step: a link that opened one of them is owed what the harness wrote, and
        what the link wrote is handed over before each step (:meth:`_hand_over`; the
        UARTs' user ends are paired in :meth:`_open_serial` and :meth:`_open_uarts`).
        """
        masters = [proxy.pty for proxy in self.proxies]
        harness_ptys: dict[str, tuple[Chain, str, PtyPair]] = {}
        for each in self.chains:
            if isinstance(each.mcu, VirtualMcuNode):
                masters += [each.mcu.command, each.mcu.signal]
                if each.mcu.radio is not None:
                    masters.append(each.mcu.radio)
            elif isinstance(each.mcu, SimavrMcuNode):
                harness_ptys |= {pty.path: (each, name, pty) for name, pty in each.mcu.harness_ptys().items()}
        by_path = {pty.path: pty for pty in masters}
        for link in self._links():
            pty = by_path.get(link.port)
            if pty is not None and pty.owed is None:
                _pair(link, pty)
            if link.port in harness_ptys:
                _hand_over(link, *harness_ptys[link.port])

    def _links(self) -> list[SerialLink]:
        """Every serial link the run's nodes and proxies open (loops, bridges, radio modules)."""
        links = [each.bridge.link for each in self.chains] + [loop.link for loop in self.loops]
        links += [each.radio.link for each in self.chains if each.radio is not None]
        return links + [proxy.upstream for proxy in self.proxies]

    def _serve_callbacks(self) -> int:
        """Run the callbacks that are ready now (at most a bound); returns how many ran."""
        for served in range(_MAX_CALLBACKS_PER_STEP):
            try:
                handler, _, _ = self.executor.wait_for_ready_callbacks(timeout_sec=0.0)
            except (TimeoutException, ShutdownException):
                return served
            handler()
            error = handler.exception()
            if error is not None:
                raise error
        return _MAX_CALLBACKS_PER_STEP

    def kill_mcu(self, *, robot: int = 0) -> None:
        """Take a robot's simulated MCU away, as if its USB cable were pulled (ptys hang up)."""
        self._finish_ahead()
        chain = self.chains[robot]
        if chain.mcu is None:
            raise HilBringupError(f"robot {robot} has no simulated MCU in this run")
        chain.mcu = None
        self._close_serials(chain)
        self._remove(self._key(robot, MCU_NODES[self.options.mcu]))

    def restart_mcu(self, *, robot: int = 0) -> None:
        """A new simulated MCU for a robot at the same ports (a reset MCU coming back)."""
        self._finish_ahead()
        chain = self.chains[robot]
        if chain.mcu is not None:
            raise HilBringupError(f"robot {robot}'s simulated MCU is still running")
        key = self._key(robot, MCU_NODES.get(self.options.mcu, ""))
        spec = self._specs.get(key)
        if spec is None:
            raise HilBringupError(f"robot {robot} has no simulated MCU in this run")
        mcu = _build(spec, self.context, self._parameters, self.options)
        if not isinstance(mcu, (VirtualMcuNode, SimavrMcuNode)):
            mcu.destroy_node()
            raise HilBringupError(f"{key} is no simulated MCU")
        self.nodes = {key: mcu, **self.nodes}
        chain.mcu = mcu
        self._executor_for(mcu).add_node(mcu)
        if self.lockstep:
            mcu.follow(self._simulated_time)
            self._clocks.take(mcu)
            self._clocks.set(self._simulated_time())
            if isinstance(mcu, VirtualMcuNode):
                mcu.replugged.connect(self._owe_reads)
            if chain.loop is None:
                self._open_serial(chain)
            self._open_uarts(chain)
            self._owe_reads()
        else:
            if self._clocks.subscribed:
                self._clocks.take(mcu)
            if self._started:
                mcu.start()

    def kill_radio(self, *, robot: int = 0) -> None:
        """Take a robot's radio module away: its MCU hears no more RST, the radio is lost."""
        chain = self.chains[robot]
        if chain.radio is None:
            raise HilBringupError(f"robot {robot} has no radio module in this run")
        self.sim.robot_ports[robot].radio_out.disconnect(chain.radio.from_air)
        chain.radio = None
        self._remove(self._key(robot, "radio_module"))

    def _remove(self, key: str) -> None:
        """Stop node ``key`` and take it out of the run (its executor, the clocks set by call)."""
        node = self.nodes.pop(key)
        if isinstance(node, Stepped):
            node.stop()
        self._executor_for(node).remove_node(node)
        self._clocks.release(node)
        node.destroy_node()

    def stop(self) -> None:
        """Stop every thread, close every port, remove the run's pty links (again: nothing).

        A SIGINT/SIGTERM during it cannot leave it half done (``deferred_signals``).
        """
        if self._stopping.is_set():
            return
        with deferred_signals():
            with contextlib.suppress(Exception):
                self._finish_ahead()  # the firmwares' step begun ahead ends as it would have
            self._drain_recording()
            # The executors first: no callback then runs into a node being stopped (a
            # message for a closed bag). The spin threads leave once the future is done;
            # shutting an executor down under a running spin raises inside rclpy instead.
            self._stopping.set()
            self._stop_spinning.set_result(None)
            for thread in self._spin_threads:
                thread.join(timeout=5.0)
            for part in self._stepped():
                part.stop()  # each copes with a thread never started
            for proxy in self.proxies:
                proxy.stop()
            for each in self.chains:
                self._close_serials(each)
            self.executor.shutdown(timeout_sec=2.0)
            self.sim_executor.shutdown(timeout_sec=2.0)
            if self.live_executor is not None:
                self.live_executor.shutdown(timeout_sec=2.0)
            self._destroy()
            if self.cpu_latency is not None:
                self.cpu_latency.release()

    def _drain_recording(self) -> None:
        """Lockstep: hand the recorder what DDS still has in flight before the bag closes.

        A lockstep run outpaces DDS delivery: without this the last second or two of
        simulated time never reached the bag.
        """
        if not (self.lockstep and self._started and "recorder" in self.nodes):
            return
        start = quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < _DRAIN_QUIET_S and time.monotonic() - start < _DRAIN_MAX_S:
            if self._serve_callbacks():
                quiet_since = time.monotonic()
            else:
                time.sleep(0.005)

    def _destroy(self) -> None:
        for node in self.nodes.values():
            node.destroy_node()
        self.nodes = {}
        rclpy.try_shutdown(context=self.context)
        self._parameters.remove()
        if self._link_dir is not None:
            self._link_dir.remove()
