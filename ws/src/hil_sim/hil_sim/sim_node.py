"""``sim``: the simulated world and robots, stepped in a thread of their own.

With ``rtf`` 1 the simulation keeps pace with the wall clock (2 = twice as fast);
with ``rtf`` 0 it runs as fast as it can and other nodes follow it through ``/clock``
(``use_sim_time``). Every ``1/signal_rate`` of simulated time it applies the MCU pins
last received on ``hil/signals/to_sim`` (:mod:`hil_sim.core.mcu_port`: pins in, the
silence rule, signals out) and publishes the sensor signals on
``hil/signals/from_sim``; at ``publish_rate`` the ground truth (``odom``, ``tf``,
``joint_states``) and every device's topic (:mod:`hil_sim.sim_topics`: ``range/<name>``,
``light/<name>``, ``mag/<name>``, ``imu/<name>``...). ``world/markers`` shows walls,
boxes, boards (standing or fallen), the floor's markings, the light and each robot's
LED. ``hil/scene`` is the live scene (:mod:`hil_sim.core.scene`: the world, the robots,
their rangers' beams, their paths, the MCU's pins), every ``scene_period`` of
simulated time and at most ``scene_max_rate`` times a wall second, while someone
subscribes (a live view, a recorder). With several robots every per-robot topic is
under ``robot_<i>/``. Services: ``reset_world`` (std_srvs/Trigger) and ``teleport``
(hil_msgs/TeleportRobot). In one process each HIL robot's MCU end is also a
:class:`RobotPort` (pins in, sensor values and radio lines out, by call), each robot's
joint states go by call to its description while ``/tf`` is watched
(:attr:`SimNode.joint_states`), and the node is a :class:`~hil_common.core.stepping.Stepped` part: its own
thread in real time (:meth:`SimNode.start`), stepped in lockstep
(:meth:`SimNode.advance_to`). Each robot is its robot profile's model (``robot``: one
profile per robot, the last for the rest;
:func:`hil_sim.core.robot_model.robot_model_from_profile`), the demo robot without one,
unless the process that builds the node gives other models (:attr:`SimNode.models`).
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import TransformStamped, Twist
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from hil_bridge.core.signal_exchange import NamedValues
from hil_common import qos
from hil_common.core.loop_timing import DeadlineScheduler, RateLimit
from hil_common.core.param_spec import ParamSpec, ParamValues
from hil_common.core.ports import InPort, OutPort
from hil_common.core.stepping import SimulatedClock
from hil_common.errors import HilError
from hil_common.node_runtime import diagnostic_array, node_thread, run_node
from hil_common.parameters import declare_parameters
from hil_devices.core.defaults import device_library
from hil_devices.core.devices import DeviceConfig
from hil_devices.core.profile import for_robot, load_profile, robot_entries
from hil_msgs.msg import Signal, SignalArray
from hil_msgs.srv import TeleportRobot
from hil_sim.core.build import build_simulation, world_path
from hil_sim.core.cmd_drive import CmdVelDrive
from hil_sim.core.mcu_port import McuPort
from hil_sim.core.physics import BACKENDS
from hil_sim.core.radio import Radio
from hil_sim.core.robot_model import RobotModel, demo_robot, robot_model_from_profile
from hil_sim.core.scene import Trails
from hil_sim.core.simulation import Simulation
from hil_sim.core.user_inputs import Request, UserInputs
from hil_sim.core.world import Pose
from hil_sim.errors import HilSimError
from hil_sim.sim_inputs import SetTopics
from hil_sim.sim_markers import SCENE_TOPIC, SceneMarkers, WorldMarkers
from hil_sim.sim_radio import SimRadio
from hil_sim.sim_topics import RobotTopics, stamp_of, yaw_quaternion

NODE_NAME = "sim"
#: Wall seconds between GIL hand-overs of a free-running (rtf 0) simulator.
YIELD_EVERY_S = 0.001
#: Wall seconds a paced simulator may fall behind and still catch up.
CATCH_UP_S = 0.25
#: Wall seconds between looks at which per-robot topics have subscribers.
SUBSCRIBER_REFRESH_S = 0.5
#: Wall seconds at least between the live scenes that carry the unchanged world, when the
#: scene is paced for a viewer (``scene_max_rate``): the world is most of a scene's cost.
SCENE_WORLD_GAP_S = 1.0

PARAMETERS = (
    ParamSpec("robots", 1, "Number of robots (one vectorised world).", min=1, max=1000),
    ParamSpec(
        "hil_robots",
        1,
        "Robots 0..hil_robots-1 take their motor pins from an MCU (hil/signals/to_sim); "
        "the others follow robot_<i>/cmd_vel as an ideal open-loop motor controller would.",
        min=0,
        max=1000,
    ),
    ParamSpec(
        "cmd_vel_timeout",
        0.5,
        "Seconds without cmd_vel before a robot without an MCU stops (simulated time).",
        min=0.01,
        max=60.0,
    ),
    ParamSpec("world", "", "World YAML file; empty: worlds/demo.yaml of hil_sim."),
    ParamSpec(
        "robot",
        "",
        "The robots' profiles (a shipped robot's name, a robot folder or its robot.yaml), comma-separated,"
        " one per robot, the last for the rest; each robot is its profile's model. Empty: the demo robot.",
    ),
    ParamSpec(
        "physics",
        "native",
        "Physics backend: native (2-D numpy engine, fast) or mujoco (3-D, boards topple).",
        choices=BACKENDS,
    ),
    ParamSpec("urdf", "", "physics mujoco: the robot's URDF; empty: generated from its robot model."),
    ParamSpec(
        "rtf",
        1.0,
        "Real-time factor: 1 keeps pace with the wall clock, 0 runs as fast as possible.",
        min=0.0,
        max=1000.0,
    ),
    ParamSpec("physics_rate", 1000.0, "Physics steps per simulated second.", min=100.0, max=100000.0),
    ParamSpec(
        "sensor_rate",
        50.0,
        "Sensor samples per simulated second (must divide physics_rate).",
        min=1.0,
        max=1000.0,
    ),
    ParamSpec(
        "signal_rate", 200.0, "Signal exchanges with the MCU side per simulated second.", min=1.0, max=1000.0
    ),
    ParamSpec(
        "publish_rate", 50.0, "Ground truth and sensor topics per simulated second.", min=0.1, max=1000.0
    ),
    ParamSpec("marker_period", 0.5, "Seconds of simulated time between world/markers.", min=0.01, max=60.0),
    ParamSpec(
        "scene_period",
        0.1,
        "Seconds of simulated time between live scenes on hil/scene (published only while someone "
        "subscribes); the world's walls, boxes and boards go with every marker_period's.",
        min=0.01,
        max=60.0,
    ),
    ParamSpec(
        "scene_max_rate",
        10.0,
        "Most live scenes per wall second, so a fast lockstep run is not slowed by its viewer; "
        "0: no limit (a recording keeps every scene_period).",
        min=0.0,
        max=1000.0,
    ),
    ParamSpec(
        "seed", 0, "Seed of every sensor's noise (runs with one seed are identical).", min=0, max=2**31 - 1
    ),
    ParamSpec(
        "robot_spacing",
        0.4,
        "Grid spacing (m) of several robots around the world's start.",
        min=0.0,
        max=10.0,
    ),
    ParamSpec("publish_clock", True, "Publish /clock with the simulated time."),
    ParamSpec(
        "pin_timeout",
        0.1,
        "Seconds without MCU pins before its motors coast (a dead MCU's outputs float); "
        "counted on the MCU's clock: wall time, simulated time in a lockstep run.",
        min=0.001,
        max=60.0,
    ),
    ParamSpec("device_configs", [], "Device config files or folders; empty: hil_devices' library."),
    ParamSpec(
        "radio",
        False,
        "A radio between the robots (hil_sim.core.radio): each HIL robot's radio module sends on "
        "robot_<i>/hil/radio/tx and hears on robot_<i>/hil/radio/rx.",
    ),
    ParamSpec("radio_step", 0.02, "Radio time step, s.", min=0.001, max=1.0),
    ParamSpec("radio_loss", 0.04, "Probability that a copy in range is lost.", min=0.0, max=1.0),
    ParamSpec(
        "radio_switch_steps",
        2,
        "Radio steps a module needs to switch between send and receive.",
        min=0,
        max=100,
    ),
    ParamSpec("radio_range", 3.0, "Radio range, m.", min=0.01, max=1000.0),
)


def simulation(params: ParamValues, models: RobotModel | list[RobotModel] | None = None) -> Simulation:
    """The simulation the node's parameters describe (``hil_scenario check`` builds it too).

    Args:
        params: the node's parameters.
        models: the robots' models (one for all, or one per robot); None: the demo robot.

    Raises:
        HilSimError: the world, the robots or the physics cannot be built (named).
    """
    robots, hil_robots = params.as_int("robots"), params.as_int("hil_robots")
    if hil_robots > robots:
        raise HilSimError(f"hil_robots = {hil_robots} is more than robots = {robots}")
    library = device_library(params.as_strings("device_configs"))
    chosen = models if models is not None else profile_models(params.as_str("robot"), robots, library)
    urdf = params.as_str("urdf")
    if urdf:
        each = [chosen] * robots if isinstance(chosen, RobotModel) else chosen
        # One replaced model per model given: robots of one model stay one group.
        replaced = {id(model): dataclasses.replace(model, urdf=urdf) for model in each}
        chosen = [replaced[id(model)] for model in each]
    return build_simulation(
        world_path(params.as_str("world")),
        models=chosen,
        robots=robots,
        spacing=params.as_float("robot_spacing") if robots > 1 else 0.0,
        physics_rate=params.as_float("physics_rate"),
        sensor_rate=params.as_float("sensor_rate"),
        seed=params.as_int("seed"),
        physics=params.as_str("physics"),
    )


def profile_models(text: str, robots: int, library: Mapping[str, DeviceConfig]) -> list[RobotModel]:
    """Each robot's model, from the profiles ``text`` names (one per robot, the last for the rest).

    Robots of one profile share one model (one group of the simulation); empty
    ``text``: the demo robot for all.

    Raises:
        HilError: a profile that does not load, or that the simulator refuses; names it.
    """
    entries = robot_entries(text)
    if not entries:
        return [demo_robot(library)] * robots
    models = {entry: robot_model_from_profile(load_profile(entry, library=library)) for entry in entries}
    return [models[for_robot(entries, robot)] for robot in range(robots)]


@dataclass
class RobotPort:
    """One HIL robot's MCU end in the simulator, by call (the one-process runner).

    Unconnected, the same goes over ROS: pins on ``hil/signals/to_sim``, sensor values on
    ``hil/signals/from_sim``, radio lines on ``hil/radio/tx`` and ``hil/radio/rx``.
    """

    #: The MCU's pins as ``(device, signal, value)`` (the bridge's newest frame).
    pins: InPort[[NamedValues]]
    #: The MCU's sensor signals, each time they change (a sensor sample, a switch, an encoder).
    sensor_values: OutPort[[NamedValues]] = field(default_factory=OutPort)
    #: RTX line bodies from the robot's radio module (no radio: dropped).
    radio_in: InPort[[str]] = field(default_factory=lambda: InPort(lambda _body: None))
    #: RRX and RST line bodies for the robot's radio module.
    radio_out: OutPort[[str]] = field(default_factory=OutPort)


class SimNode(Node):
    """The simulator: one world, N robots, a stepping thread, ROS topics and services."""

    #: The robots' models the next SimNode simulates (None: the demo robot); set by
    #: whoever builds the node in its own process before it does.
    models: RobotModel | list[RobotModel] | None = None

    def __init__(self, **node_options: Any) -> None:
        super().__init__(NODE_NAME, **node_options)
        params = declare_parameters(self, PARAMETERS)
        world = world_path(params.as_str("world"))
        self.robots = params.as_int("robots")
        self.hil_robots = params.as_int("hil_robots")
        self.sim: Simulation = simulation(params, self.models)
        self.rtf = params.as_float("rtf")
        self.chunk = max(1, round(params.as_float("physics_rate") / params.as_float("signal_rate")))
        self.publish_every = max(1, round(params.as_float("physics_rate") / params.as_float("publish_rate")))
        self.marker_every = max(1, round(params.as_float("physics_rate") * params.as_float("marker_period")))
        self.scene_every = max(1, round(params.as_float("physics_rate") * params.as_float("scene_period")))
        #: The live scene's pace on the wall clock (scene_max_rate; 0: none).
        self._scene_pace = RateLimit(params.as_float("scene_max_rate"))
        self._next_world_wall = 0.0
        #: Whether the next scene takes the world along (the first one, then every marker_period).
        self._scene_world = True
        self._scene_boards_down = 0
        self._scene_markers = SceneMarkers()
        self._world_markers = WorldMarkers()
        #: The robots' paths, for the live scene.
        self.trails = Trails(self.robots)
        self.publish_clock = params.as_bool("publish_clock")
        #: The clock the MCU runs on, on which its silence is measured: the wall clock
        #: (pins arrive at wall pace whatever the rtf), simulated time in lockstep.
        self.pin_clock: SimulatedClock = time.monotonic
        self.port = McuPort(
            self.sim, self.hil_robots, pin_timeout=params.as_float("pin_timeout"), now=self.pin_clock()
        )
        self.cmd_vel = CmdVelDrive(self.sim, timeout=params.as_float("cmd_vel_timeout"))
        self.lock = threading.Lock()
        #: What users set on the devices, taken at the start of each period.
        self.user_inputs = UserInputs()

        prefixes = [""] if self.robots == 1 else [f"robot_{i}/" for i in range(self.robots)]
        self.topics = [
            RobotTopics(self, prefix, self.sim.devices_of(robot)[0], qos_events=self.robots == 1)
            for robot, prefix in enumerate(prefixes)
        ]
        self._next_refresh = 0.0
        self._to_sim = {
            index: self.create_subscription(
                SignalArray,
                f"{prefix}hil/signals/to_sim",
                lambda m, i=index: self.on_to_sim(i, m),
                qos.SENSOR,
            )
            for index, prefix in enumerate(prefixes[: self.hil_robots])
        }
        #: Robots without an MCU follow their cmd_vel.
        self._cmd_vel = [
            self.create_subscription(
                Twist, f"{prefixes[index]}cmd_vel", lambda m, i=index: self.on_cmd_vel(i, m), qos.COMMAND
            )
            for index in range(self.hil_robots, self.robots)
        ]
        #: Per robot: (sample, switches and encoders) of the sensor values last sent by call.
        self._outputs_given: dict[int, tuple[int, bytes]] = {}
        self.set_topics = SetTopics(
            self,
            prefixes,
            [
                [(name, self.sim.devices_of(robot)[0].where[name][0].KIND) for name in self._users(robot)]
                for robot in range(self.robots)
            ],
            self.set_device,
        )
        self._radio = (
            SimRadio(self, self.sim, params, prefixes, hil_robots=self.hil_robots, lock=self.lock)
            if params.as_bool("radio")
            else None
        )
        #: Each HIL robot's MCU end by call (the one-process runner connects them).
        self.robot_ports = [self._robot_port(robot) for robot in range(self.hil_robots)]
        #: Per robot: its joint states by call, as they are published, while somebody
        #: listens to /tf (the one-process runner's robot descriptions, for their transforms).
        self.joint_states: list[OutPort[[JointState]]] = [OutPort() for _ in range(self.robots)]
        self.tf = self.create_publisher(TFMessage, "/tf", qos.PUBLISHER)
        # Absolute, as /tf: a graph's namespace leaves the one clock of the domain where it is.
        self.clock = self.create_publisher(Clock, "/clock", qos.PUBLISHER)
        self._clock_listened = self._tf_listened = False
        self.markers = self.create_publisher(MarkerArray, "world/markers", qos.LATCHED)
        self.scene = self.create_publisher(MarkerArray, SCENE_TOPIC, qos.PUBLISHER)
        self._scene_listened = False
        self.diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", qos.PUBLISHER)
        self.create_service(Trigger, "reset_world", self.on_reset)
        self.create_service(TeleportRobot, "teleport", self.on_teleport)
        self._warned: set[str] = set()
        self._stop = threading.Event()
        self._thread = node_thread(self, self.step_forever, name="sim-step", stopping=self._stop)
        self.achieved_rtf = 0.0
        self.scheduler: DeadlineScheduler | None = None
        models = ", ".join(sorted({model.name for model in self.sim.models}))
        self.get_logger().info(
            f"{self.robots} robot(s) ({models}), world {world}, rtf {self.rtf:g}, "
            f"{params.as_float('physics_rate'):g} Hz {self.sim.backend} physics, seed {params.as_int('seed')}"
        )

    # --- lifecycle ------------------------------------------------------------------

    def start(self) -> None:
        """Real time: start the stepping thread (paced by ``rtf``, or as fast as it goes)."""
        self._thread.start()

    def stop(self) -> None:
        """Stop stepping."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    def follow(self, clock: SimulatedClock) -> None:
        """Lockstep: MCU silence is measured on ``clock`` (the simulated time every part shares)."""
        with self.lock:
            self.pin_clock = clock
            self.port.restart(clock())

    @property
    def period(self) -> float:
        """Simulated seconds of one signal period (the physics steps between two exchanges)."""
        return self.chunk * self.sim.dt

    @property
    def period_end(self) -> float:
        """Lockstep: the simulated time at the end of the next period, as the world will read it."""
        return (self.sim.steps + self.chunk) * self.sim.dt

    def advance_to(self, t: float) -> None:
        """Lockstep: whole signal periods until simulated time ``t`` (one :meth:`_one_period` each)."""
        half = 0.5 * self.period
        while self.sim.time + half < t:
            self._one_period()

    def _robot_port(self, robot: int) -> RobotPort:
        port = RobotPort(
            pins=InPort(
                lambda signals: self.set_pins(robot, signals), on_connect=lambda: self._pins_by_call(robot)
            )
        )
        if self._radio is not None:
            port.radio_in = InPort(
                lambda body: self.radio_send(robot, body), on_connect=lambda: self._radio_by_call(robot)
            )
            self._radio.to_module[robot] = port.radio_out
        return port

    def _pins_by_call(self, robot: int) -> None:
        """Robot ``robot``'s pins come by call: its to_sim subscription goes.

        A late DDS copy must not overwrite newer pins; the topics are still published
        for anyone else who subscribes.
        """
        self._outputs_given.pop(robot, None)
        subscription = self._to_sim.pop(robot, None)
        if subscription is not None:
            self.destroy_subscription(subscription)

    def _radio_by_call(self, robot: int) -> None:
        if self._radio is not None:
            self._radio.by_call(robot)

    # --- the MCU side -----------------------------------------------------------------

    @property
    def pins_received(self) -> int:
        """hil/signals/to_sim messages (and direct pin calls) taken."""
        return sum(self.port.received)

    def on_to_sim(self, robot: int, message: SignalArray) -> None:
        """Take a robot's MCU pins."""
        if robot < len(self.robot_ports) and self.robot_ports[robot].pins.connected:
            return  # its pins come by call (the one-process runner)
        self.set_pins(robot, [(s.device, s.name, s.value) for s in message.signals])

    def set_pins(self, robot: int, signals: NamedValues) -> None:
        """Take a robot's MCU pins (its :class:`RobotPort`'s intake)."""
        with self.lock:
            unknown, back = self.port.take(robot, signals, now=self.pin_clock())
        if back:
            self.get_logger().info(f"robot {robot}: MCU pins back")
        for name in unknown:
            if name not in self._warned:
                self._warned.add(name)
                self.get_logger().warning(
                    f"hil/signals/to_sim: {name} is not a pin of the robot model; ignored"
                )

    def _give_outputs(self) -> None:
        """Each connected robot's sensor signals, when they differ from what it was last sent.

        They change only with a sensor sample or a switch or encoder: building and taking
        them every period was a few percent of a lockstep period.
        """
        sim = self.sim
        refreshed = False
        for robot, port in enumerate(self.robot_ports):
            if not port.sensor_values.connected:
                continue
            if not refreshed:
                sim.refresh()
                refreshed = True
            devices, row = sim.devices_of(robot)
            given = (sim.samples, devices.live_key(row))
            if self._outputs_given.get(robot) == given:
                continue
            self._outputs_given[robot] = given
            port.sensor_values.send(self.port.outputs(robot))

    # --- what users set -----------------------------------------------------------------

    def _users(self, robot: int) -> list[str]:
        return self.sim.devices_of(robot)[0].users()

    def set_device(
        self,
        robot: int,
        device: str,
        value: float | dict[str, float],
        *,
        seconds: float | None = None,
        signal: str = "",
    ) -> None:
        """A user sets robot ``robot``'s ``device`` from the start of the next period (any thread).

        A button, an analog input, an IR remote's key press, or a sensor's ``signal``
        held at ``value`` (:meth:`hil_sim.core.simulation.Simulation.setting`); with
        ``seconds``, let go that long after (:mod:`hil_sim.core.user_inputs`).

        Raises:
            HilSimError: no such robot, device or signal, a value it does not take, or
                ``seconds`` not positive.
        """
        if seconds is not None and not seconds > 0:
            raise HilSimError(f"{device}: for = {seconds!r} s must be positive")
        with self.lock:
            setting = self.sim.setting(robot, device, value, signal=signal)
        self.user_inputs.request(Request(robot, setting, seconds))

    # --- robots without an MCU, the radio -----------------------------------------------

    def on_cmd_vel(self, robot: int, message: Twist) -> None:
        """A robot without an MCU: its wheels for the twist."""
        with self.lock:
            self.cmd_vel.command(robot, message.linear.x, message.angular.z)

    @property
    def radio(self) -> Radio | None:
        """The radio between the robots (parameter ``radio``), if any."""
        return self._radio.radio if self._radio is not None else None

    @property
    def radio_errors(self) -> int:
        """RTX bodies from the radio modules that did not parse or could not be queued."""
        return self._radio.errors if self._radio is not None else 0

    def radio_send(self, robot: int, body: str) -> None:
        """An RTX line body from robot ``robot``'s radio module: onto its radio's queue."""
        if self._radio is not None:
            self._radio.send(robot, body)

    # --- services -----------------------------------------------------------------------

    def on_reset(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        """Robots to their starts, boards up, time to zero."""
        del request
        with self.lock:
            self.sim.reset()
            self.user_inputs.reset()
            self.trails.reset()
            self._scene_world = True
        response.success = True
        response.message = f"world reset: {self.robots} robot(s) at their starts, all boards standing"
        return response

    def on_teleport(
        self, request: TeleportRobot.Request, response: TeleportRobot.Response
    ) -> TeleportRobot.Response:
        """Place a robot."""
        try:
            with self.lock:
                self.sim.teleport(int(request.robot), Pose(request.x, request.y, request.yaw))
        except HilSimError as exc:
            response.success, response.message = False, str(exc)
            return response
        response.success = True
        response.message = f"robot {request.robot} at ({request.x:g}, {request.y:g}, {request.yaw:g})"
        return response

    # --- stepping -----------------------------------------------------------------------

    def step_forever(self) -> None:
        """Step the world: paced by ``rtf``, or as fast as possible."""
        sim = self.sim
        period = self.chunk * sim.dt / self.rtf if self.rtf > 0 else None
        # Late periods are caught up, not skipped (a skip is simulated time lost), unless
        # the simulator is more than CATCH_UP_S behind: then the machine is too slow.
        scheduler = DeadlineScheduler(period, catch_up=max(1, round(CATCH_UP_S / period))) if period else None
        self.scheduler = scheduler
        window_wall, window_sim = time.monotonic(), sim.time
        next_report = window_wall + 1.0
        yielded = window_wall
        while not self._stop.is_set():
            if scheduler is not None:
                scheduler.wait()
            self._one_period()
            now = time.monotonic()
            if scheduler is None and now - yielded >= YIELD_EVERY_S:
                # Free-running never sleeps: hand the GIL over now and then, or the
                # executor thread waits for it in 5 ms slices and pins arrive late.
                # Every period would cost a quarter of the speed.
                time.sleep(0)
                yielded = now
            if now >= next_report:
                self.achieved_rtf = (sim.time - window_sim) / (now - window_wall)
                window_wall, window_sim, next_report = now, sim.time, now + 1.0
                self.publish_diagnostics()

    def _one_period(self) -> None:
        """One signal period: the latest pins, the physics, what is due published, sensor values on."""
        with self.lock:
            self.user_inputs.apply(self.sim)
            self.cmd_vel.expire()
            for robot in self.port.check_silence(self.pin_clock()):
                self.get_logger().warning(
                    f"robot {robot}: no MCU pins for {self.port.pin_timeout:g} s, motors coast"
                )
            self.port.flush()
            self.sim.step(self.chunk)
            if self._radio is not None:
                self._radio.step()
            self.publish_step()
            self._give_outputs()

    # --- publishing ---------------------------------------------------------------------

    def publish_step(self) -> None:
        """Everything due at the current simulated time."""
        sim = self.sim
        now = time.monotonic()
        if now >= self._next_refresh:
            # Asking DDS about subscribers costs microseconds per publisher; for 100
            # robots every 5 ms that was the simulator's largest cost. Twice a second
            # is soon enough for a new subscriber.
            self._next_refresh = now + SUBSCRIBER_REFRESH_S
            for topics in self.topics:
                topics.refresh()
            # In lockstep the runner sets its nodes' clocks by call, so /clock and tf
            # usually have nobody to go to; every period that was a third of the publishing.
            self._clock_listened = self.clock.get_subscription_count() > 0
            self._tf_listened = self.tf.get_subscription_count() > 0
            self._scene_listened = self.scene.get_subscription_count() > 0
        clock_due = self.publish_clock and self._clock_listened
        signals_due = [robot for robot, topics in enumerate(self.topics) if topics.listened(topics.from_sim)]
        state_due = sim.steps % self.publish_every < self.chunk
        markers_due = sim.steps % self.marker_every < self.chunk
        trail_due = sim.steps % self.scene_every < self.chunk
        if trail_due:
            self.trails.sample(sim.time, sim.x, sim.y)
        self._scene_world = self._scene_world or markers_due
        scene_due = self._scene_listened and trail_due and self._scene_pace.allow(now)
        if not (clock_due or signals_due or state_due or markers_due or scene_due):
            return  # in lockstep most periods: a stamp alone cost a few microseconds
        stamp = stamp_of(sim.time)
        if clock_due:
            self.clock.publish(Clock(clock=stamp))
        for robot in signals_due:
            message = SignalArray(
                signals=[Signal(device=d, name=n, value=v) for d, n, v in self.port.outputs(robot)]
            )
            message.header.stamp = stamp
            self.topics[robot].from_sim.publish(message)
        if state_due:
            self.publish_state(stamp)
        if markers_due:
            self.markers.publish(self._world_markers.message(sim, stamp))
        if scene_due:
            self.publish_scene(stamp, now)

    def publish_scene(self, stamp: Time, now: float) -> None:
        """The live scene on ``hil/scene``; the world goes with it when due (every marker_period)."""
        down = self.sim.geometry.boards_down
        # The world when it changed (a board fell) and every marker_period, for whoever
        # joins later; paced for a viewer, at most once a SCENE_WORLD_GAP_S of wall time.
        changed = down != self._scene_boards_down
        world = changed or (self._scene_world and now >= self._next_world_wall)
        message = self._scene_markers.message(
            self.sim, self.trails, stamp, hil_robots=self.hil_robots, world=world
        )
        self.scene.publish(message)
        self._scene_boards_down = down
        if world:
            self._scene_world = False
            self._next_world_wall = now + (SCENE_WORLD_GAP_S if self._scene_pace.rate else 0.0)

    def publish_state(self, stamp: Time) -> None:
        """Ground truth and sensors of every robot."""
        sim = self.sim
        transforms = []
        for robot, topics in enumerate(self.topics):
            x, y, yaw = float(sim.x[robot]), float(sim.y[robot]), float(sim.yaw[robot])
            qx, qy, qz, qw = yaw_quaternion(yaw)
            if self._tf_listened:
                transform = TransformStamped()
                transform.header.stamp, transform.header.frame_id = stamp, "odom"
                transform.child_frame_id = topics.frame("base_link")
                transform.transform.translation.x, transform.transform.translation.y = x, y
                rotation = transform.transform.rotation
                rotation.x, rotation.y, rotation.z, rotation.w = qx, qy, qz, qw
                transforms.append(transform)
            if topics.listened(topics.odom):
                odom = Odometry()
                odom.header.stamp, odom.header.frame_id = stamp, "odom"
                odom.child_frame_id = topics.frame("base_link")
                odom.pose.pose.position.x, odom.pose.pose.position.y = x, y
                orientation = odom.pose.pose.orientation
                orientation.x, orientation.y, orientation.z, orientation.w = qx, qy, qz, qw
                odom.twist.twist.linear.x = float(sim.v[robot])
                odom.twist.twist.angular.z = float(sim.w[robot])
                topics.odom.publish(odom)
            # By call only for transforms (the descriptions'), so only while /tf is watched.
            by_call = self._tf_listened and self.joint_states[robot].connected
            if topics.listened(topics.joints) or by_call:
                joints = topics.joint_states(sim, robot, stamp)
                if topics.listened(topics.joints):
                    topics.joints.publish(joints)
                if by_call:
                    self.joint_states[robot].send(joints)
            topics.publish_devices(sim.devices_of(robot)[1], stamp)
        if self._tf_listened:
            self.tf.publish(TFMessage(transforms=transforms))

    def publish_diagnostics(self) -> None:
        """RTF, time and boards down."""
        sim = self.sim
        values = {
            "rtf_target": f"{self.rtf:g}",
            "rtf_achieved": f"{self.achieved_rtf:.3f}",
            "sim_time_s": f"{sim.time:.3f}",
            "steps": sim.steps,
            "robots": sim.count,
            "physics": sim.backend,
            "boards_down": sim.geometry.boards_down,
        }
        if self.scheduler is not None:
            # Periods dropped after falling more than CATCH_UP_S behind: lost sim time.
            values["periods_skipped"] = self.scheduler.skipped
        level = DiagnosticStatus.OK
        message = f"RTF {self.achieved_rtf:.2f}"
        if self.rtf > 0 and self.achieved_rtf < 0.9 * self.rtf:
            level, message = (
                DiagnosticStatus.WARN,
                f"RTF {self.achieved_rtf:.2f} below the asked {self.rtf:g}",
            )
        array = diagnostic_array(
            self,
            name="simulation",
            level=level,
            message=message,
            values=values,
            stamp=stamp_of(sim.time),  # the simulator's own time is the clock of the run
        )
        self.diagnostics.publish(array)


def main(args: list[str] | None = None) -> int:
    """Run the simulator until shut down; exit 2 on a bad configuration."""
    return run_node(SimNode, name=NODE_NAME, config_errors=(HilError,), args=args)


if __name__ == "__main__":
    sys.exit(main())
