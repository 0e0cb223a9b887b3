"""``sim``: the simulated world and robots, stepped in a thread of their own.

With ``rtf`` 1 the simulation keeps pace with the wall clock (2 = twice as fast);
with ``rtf`` 0 it runs as fast as it can and other nodes follow it through ``/clock``
(``use_sim_time``). Every ``1/signal_rate`` of simulated time it applies the MCU pins
last received on ``hil/signals/to_sim`` and publishes the sensor signals on
``hil/signals/from_sim``; at ``publish_rate`` the ground truth (``odom``, ``tf``,
``joint_states``) and the sensors (``range/ultrasonic``, ``range/ir``,
``light/front|left|back|right``, ``mag``). ``world/markers`` shows walls, boxes, boards (standing or
fallen), the light and each robot's LED. With several robots every per-robot topic
is under ``robot_<i>/``. Services: ``reset_world`` (std_srvs/Trigger) and ``teleport``
(hil_msgs/TeleportRobot). Topics nobody subscribes to are not built at all, which
keeps large swarms cheap.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import TransformStamped, Twist
from nav_msgs.msg import Odometry
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Illuminance, JointState, MagneticField, Range
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from hil_bridge import qos
from hil_bridge.core.defaults import device_library
from hil_bridge.core.loop_timing import DeadlineScheduler
from hil_bridge.core.param_spec import ParamSpec, ParamValues
from hil_bridge.core.radio_protocol import RadioReceive, RadioSend, RadioStatus, decode_radio, encode_radio
from hil_bridge.errors import HilBridgeError
from hil_bridge.node_runtime import diagnostic_array, node_thread, run_node
from hil_bridge.parameters import declare_parameters
from hil_msgs.msg import Signal, SignalArray, WireChunk
from hil_msgs.srv import TeleportRobot
from hil_sim.core.build import build_simulation, world_path
from hil_sim.core.cmd_drive import twist_pins
from hil_sim.core.physics import BACKENDS
from hil_sim.core.radio import Radio, RadioConfig
from hil_sim.core.signals import PinState, sensor_signals
from hil_sim.core.simulation import LEFT, RIGHT, Simulation
from hil_sim.core.world import Pose
from hil_sim.errors import HilSimError

NODE_NAME = "sim"
#: Wall seconds between GIL hand-overs of a free-running (rtf 0) simulator.
YIELD_EVERY_S = 0.001
#: Wall seconds a paced simulator may fall behind and still catch up.
CATCH_UP_S = 0.25
#: Wall seconds between looks at which per-robot topics have subscribers.
SUBSCRIBER_REFRESH_S = 0.5
#: The four photoresistors in mount order (RobotParams.light_mounts). Topic name tokens
#: cannot start with a digit, so ``light/<side>`` rather than ``light/0``.
LIGHT_SIDES = ("front", "left", "back", "right")

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
        "physics",
        "native",
        "Physics backend: native (2-D numpy engine, fast) or mujoco (3-D, boards topple).",
        choices=BACKENDS,
    ),
    ParamSpec("urdf", "", "physics mujoco: the robot's URDF; empty: urdf/hil_robot.urdf of hil_bringup."),
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
    ParamSpec("device_configs", [], "Device config files or folders; empty: hil_bridge's library."),
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
#: Simulated seconds between RST lines of an unchanged radio (DESIGN.md "Radio link": at least 1 s).
RADIO_STATUS_PERIOD_S = 0.5


def stamp_of(seconds: float) -> Time:
    """A ROS time stamp for simulated seconds."""
    whole = math.floor(seconds)
    return Time(sec=int(whole), nanosec=round((seconds - whole) * 1e9) % 1_000_000_000)


def yaw_quaternion(yaw: float) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a rotation about z."""
    return (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))


class RobotTopics:
    """Publishers and reusable messages of one robot."""

    def __init__(self, node: Node, prefix: str, *, qos_events: bool = True) -> None:
        """Create the robot's publishers.

        Args:
            node: the simulator node.
            prefix: the robot's namespace (``robot_3/``), or empty for a single robot.
            qos_events: keep rclpy's per-publisher QoS event handlers (incompatible QoS
                or type warnings). A swarm drops them: rclpy rebuilds its wait set on
                every executor wake and checks each handler against a list of them, so
                2000 handlers (100 robots) cost tens of milliseconds per wake. The
                subscriber side still warns about an incompatible QoS.
        """
        events = None if qos_events else PublisherEventCallbacks(use_default_callbacks=False)

        def publisher(kind: Any, name: str) -> Any:
            return node.create_publisher(kind, f"{prefix}{name}", qos.PUBLISHER, event_callbacks=events)

        self.prefix = prefix
        self.odom = publisher(Odometry, "odom")
        self.joints = publisher(JointState, "joint_states")
        self.ultrasonic = publisher(Range, "range/ultrasonic")
        self.ir = publisher(Range, "range/ir")
        self.light = [publisher(Illuminance, f"light/{side}") for side in LIGHT_SIDES]
        self.mag = publisher(MagneticField, "mag")
        self.from_sim = publisher(SignalArray, "hil/signals/from_sim")
        self._listened: dict[int, bool] = {}

    def refresh(self) -> None:
        """Look up again which of this robot's topics have subscribers."""
        publishers = [self.odom, self.joints, self.ultrasonic, self.ir, *self.light, self.mag, self.from_sim]
        self._listened = {id(p): p.get_subscription_count() > 0 for p in publishers}

    def listened(self, publisher: Any) -> bool:
        """Whether ``publisher`` had subscribers at the last :meth:`refresh`."""
        return self._listened.get(id(publisher), False)

    def frame(self, name: str) -> str:
        """A frame of this robot (``robot_3/base_link``)."""
        return f"{self.prefix}{name}"


def simulation(params: ParamValues) -> Simulation:
    """The simulation the node's parameters describe (``hil_scenario check`` builds it too).

    Raises:
        HilSimError: the world, the robots or the physics cannot be built (named).
    """
    robots, hil_robots = params.as_int("robots"), params.as_int("hil_robots")
    if hil_robots > robots:
        raise HilSimError(f"hil_robots = {hil_robots} is more than robots = {robots}")
    return build_simulation(
        world_path(params.as_str("world")),
        library=device_library(params.as_strings("device_configs")),
        robots=robots,
        spacing=params.as_float("robot_spacing") if robots > 1 else 0.0,
        physics_rate=params.as_float("physics_rate"),
        sensor_rate=params.as_float("sensor_rate"),
        seed=params.as_int("seed"),
        physics=params.as_str("physics"),
        urdf=params.as_str("urdf") or None,
    )


class SimNode(Node):
    """The simulator: one world, N robots, a stepping thread, ROS topics and services."""

    def __init__(self, **node_options: Any) -> None:
        super().__init__(NODE_NAME, **node_options)
        params = declare_parameters(self, PARAMETERS)
        world = world_path(params.as_str("world"))
        self.robots = params.as_int("robots")
        self.hil_robots = params.as_int("hil_robots")
        self.cmd_vel_timeout = params.as_float("cmd_vel_timeout")
        self.sim: Simulation = simulation(params)
        self.rtf = params.as_float("rtf")
        self.chunk = max(1, round(params.as_float("physics_rate") / params.as_float("signal_rate")))
        self.publish_every = max(1, round(params.as_float("physics_rate") / params.as_float("publish_rate")))
        self.marker_every = max(1, round(params.as_float("physics_rate") * params.as_float("marker_period")))
        self.publish_clock = params.as_bool("publish_clock")
        self.pins = PinState.zeros(self.robots)
        self._pins_dirty = False
        self.pin_timeout = params.as_float("pin_timeout")
        #: The clock the MCU runs on, on which its silence is measured: the wall clock
        #: (pins arrive at wall pace whatever the rtf), simulated time in lockstep.
        self.pin_clock: Callable[[], float] = time.monotonic
        self._pins_at = [self.pin_clock()] * self.robots
        self._coasting = [False] * self.robots
        #: hil/signals/to_sim messages taken.
        self.pins_received = 0
        self.lock = threading.Lock()

        prefixes = [""] if self.robots == 1 else [f"robot_{i}/" for i in range(self.robots)]
        self.topics = [RobotTopics(self, prefix, qos_events=self.robots == 1) for prefix in prefixes]
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
        #: Robots without an MCU: their cmd_vel subscriptions and when each last came.
        self._cmd_vel = [
            self.create_subscription(
                Twist, f"{prefixes[index]}cmd_vel", lambda m, i=index: self.on_cmd_vel(i, m), qos.COMMAND
            )
            for index in range(self.hil_robots, self.robots)
        ]
        #: Robots driving on a cmd_vel: when it came (they stop cmd_vel_timeout after it).
        self._cmd_vel_at: dict[int, float] = {}
        #: Per HIL robot: called after a signal period with its sensor signals when they
        #: changed (the one-process runner hands them to the bridge without DDS). A
        #: callback that returns names it does not know is called every period.
        self.on_outputs: dict[int, Callable[[list[tuple[str, str, float]]], object]] = {}
        #: Per robot: (sample, bumpers) of the signals last handed to on_outputs.
        self._outputs_given: dict[int, tuple[int, bool, bool]] = {}
        #: Per robot: called with its joint states as they are published (the one-process
        #: runner's robot descriptions take them without DDS).
        self.on_joint_states: dict[int, Callable[[JointState], None]] = {}
        self.radio: Radio | None = None
        #: RTX bodies from the radio modules that did not parse or could not be queued.
        self.radio_errors = 0
        #: Per HIL robot: called with each RRX/RST line body for its radio module (the
        #: one-process runner's modules take them without DDS).
        self.on_radio: dict[int, Callable[[str], None]] = {}
        if params.as_bool("radio"):
            self._init_radio(params, prefixes)
        self.tf = self.create_publisher(TFMessage, "tf", qos.PUBLISHER)
        self.clock = self.create_publisher(Clock, "clock", qos.PUBLISHER)
        self._clock_listened = self._tf_listened = False
        self.markers = self.create_publisher(MarkerArray, "world/markers", qos.LATCHED)
        self.diagnostics = self.create_publisher(DiagnosticArray, "diagnostics", qos.PUBLISHER)
        self.create_service(Trigger, "reset_world", self.on_reset)
        self.create_service(TeleportRobot, "teleport", self.on_teleport)
        self._warned: set[str] = set()
        self._stop = threading.Event()
        self._thread = node_thread(self, self.step_forever, name="sim-step", stopping=self._stop)
        self.achieved_rtf = 0.0
        self.scheduler: DeadlineScheduler | None = None
        self.get_logger().info(
            f"{self.robots} robot(s), world {world}, rtf {self.rtf:g}, "
            f"{params.as_float('physics_rate'):g} Hz {self.sim.backend} physics, seed {params.as_int('seed')}"
        )

    # --- lifecycle ------------------------------------------------------------------

    def start(self) -> None:
        """Start the stepping thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop stepping."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    # --- callbacks --------------------------------------------------------------------

    def on_to_sim(self, robot: int, message: SignalArray) -> None:
        """Take a robot's MCU pins."""
        if robot in self.on_outputs:
            return  # its pins come by set_pins() (the one-process runner)
        unknown = self.pins.update(robot, [(s.device, s.name, s.value) for s in message.signals])
        self.pins_received += 1
        with self.lock:
            self._pins_taken(robot)
        for name in unknown:
            if name not in self._warned:
                self._warned.add(name)
                self.get_logger().warning(
                    f"hil/signals/to_sim: {name} is not a pin of the robot model; ignored"
                )

    def _init_radio(self, params: Any, prefixes: list[str]) -> None:
        config = RadioConfig(
            step=params.as_float("radio_step"),
            switch_steps=params.as_int("radio_switch_steps"),
            loss=params.as_float("radio_loss"),
            max_range=params.as_float("radio_range"),
        )
        self.radio = Radio(config, self.robots, seed=params.as_int("seed"))
        self._radio_rx = [
            self.create_publisher(WireChunk, f"{prefix}hil/radio/rx", qos.PUBLISHER) for prefix in prefixes
        ]
        self._radio_tx = {
            robot: self.create_subscription(
                WireChunk,
                f"{prefixes[robot]}hil/radio/tx",
                lambda m, i=robot: self.radio_send(i, bytes(m.data).decode("ascii", "replace")),
                qos.COMMAND,
            )
            for robot in range(self.hil_robots)
        }
        self._radio_status: list[RadioStatus | None] = [None] * self.hil_robots
        self._radio_status_at = [-math.inf] * self.hil_robots

    def radio_send(self, robot: int, body: str) -> None:
        """An RTX line body from robot ``robot``'s radio module: onto its radio's queue."""
        if self.radio is None:
            return
        try:
            message = decode_radio(body)
            if not isinstance(message, RadioSend):
                raise HilBridgeError(f"id: {body[:3]!r} is not RTX")
            with self.lock:
                self.radio.send(robot, message.payload, message.dst)
        except (HilBridgeError, HilSimError) as exc:
            self.radio_errors += 1
            if "radio" not in self._warned:
                self._warned.add("radio")
                self.get_logger().warning(f"robot {robot}'s radio module: {exc} (counted; warned once)")

    def _step_radio(self) -> None:
        """Radio steps up to now: deliveries as RRX, each HIL robot's state as RST."""
        radio, sim = self.radio, self.sim
        assert radio is not None
        if sim.time + 1e-9 < radio.now:
            return
        positions = np.stack([sim.x, sim.y], axis=1)
        for delivery in radio.step(sim.time, positions):
            if delivery.dst < self.hil_robots:
                line = RadioReceive(delivery.src, round(delivery.rssi), delivery.payload)
                self._to_radio_module(delivery.dst, encode_radio(line))
        for robot in range(self.hil_robots):
            status = radio.status(robot)
            if (
                status != self._radio_status[robot]
                or sim.time - self._radio_status_at[robot] >= RADIO_STATUS_PERIOD_S
            ):
                self._radio_status[robot], self._radio_status_at[robot] = status, sim.time
                self._to_radio_module(robot, encode_radio(status))

    def _to_radio_module(self, robot: int, body: str) -> None:
        direct = self.on_radio.get(robot)
        if direct is not None:
            direct(body)
            return
        chunk = WireChunk(link="radio", direction="rx", data=body.encode("ascii"))
        chunk.header.stamp = stamp_of(self.sim.time)
        self._radio_rx[robot].publish(chunk)

    def attach_radio_directly(self, robot: int, deliver: Callable[[str], None]) -> None:
        """Robot ``robot``'s radio module in this process: lines by call, RTX by :meth:`radio_send`."""
        self.on_radio[robot] = deliver
        subscription = self._radio_tx.pop(robot, None) if self.radio is not None else None
        if subscription is not None:
            self.destroy_subscription(subscription)

    def on_cmd_vel(self, robot: int, message: Twist) -> None:
        """A robot without an MCU: motor pins for the twist."""
        pins = twist_pins(
            message.linear.x,
            message.angular.z,
            wheel_radius=self.sim.robot.wheel_radius,
            wheel_base=self.sim.robot.wheel_base,
            motor=self.sim.robot.motor,
        )
        with self.lock:
            self.pins.motors[robot] = pins
            self._pins_dirty = True
            self._cmd_vel_at[robot] = self.sim.time

    def on_reset(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        """Robots to their starts, boards up, time to zero."""
        del request
        with self.lock:
            self.sim.reset()
            self.pins.apply(self.sim)
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
            self.advance()
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

    def advance(self, *, publish: bool = True) -> None:
        """One signal period: apply the latest pins, step the physics, publish what is due.

        Args:
            publish: False when the caller publishes the new state itself with
                :meth:`publish_now` (the lockstep runner, at a point of its period
                where that hides a pty's latency).
        """
        with self.lock:
            self._coast_silent_robots()
            if self._pins_dirty:
                self._pins_dirty = False
                self.pins.apply(self.sim)
            self.sim.step(self.chunk)
            if self.radio is not None:
                self._step_radio()
            if publish:
                self.publish_step()
            if self.on_outputs:
                self._give_outputs()

    def _give_outputs(self) -> None:
        """Each attached robot's sensor signals, when they differ from what it was last given.

        They change only with a sensor sample or a bumper switch: building and taking
        them every period was a few percent of a lockstep period.
        """
        sim = self.sim
        bumpers = sim.bumpers
        for robot, on_outputs in self.on_outputs.items():
            given = (sim.samples, bool(bumpers[robot, LEFT]), bool(bumpers[robot, RIGHT]))
            if self._outputs_given.get(robot) == given:
                continue
            unknown = on_outputs(sensor_signals(sim, robot))
            if unknown:
                self._outputs_given.pop(robot, None)  # it counts them: it hears every period
            else:
                self._outputs_given[robot] = given

    def attach_directly(
        self, on_outputs: Callable[[list[tuple[str, str, float]]], object], robot: int = 0
    ) -> None:
        """Exchange with an in-process bridge for ``robot``: pins by :meth:`set_pins`, outputs by call.

        Its to_sim subscription goes (a late DDS copy must not overwrite newer pins);
        the topics are still published for anyone else who subscribes.
        """
        self.on_outputs[robot] = on_outputs
        self._outputs_given.pop(robot, None)
        subscription = self._to_sim.pop(robot, None)
        if subscription is not None:
            self.destroy_subscription(subscription)

    def use_clock(self, clock: Callable[[], float]) -> None:
        """Measure MCU silence on ``clock`` (lockstep: the simulated time everything shares)."""
        with self.lock:
            self.pin_clock = clock
            self._pins_at = [clock()] * self.robots

    def set_pins(self, robot: int, signals: list[tuple[str, str, float]]) -> None:
        """Take a robot's MCU pins directly (the in-process runner's shortcut)."""
        with self.lock:
            self.pins.update(robot, signals)
            self._pins_taken(robot)

    def _pins_taken(self, robot: int) -> None:
        # Pins rarely change between frames; the driver model is recomputed only when they do.
        if self.pins.changed:
            self.pins.changed = False
            self._pins_dirty = True
        self._pins_at[robot] = self.pin_clock()
        if self._coasting[robot]:
            self._coasting[robot] = False
            self.get_logger().info(f"robot {robot}: MCU pins back")

    def _coast_silent_robots(self) -> None:
        """Motors of robots whose MCU (or cmd_vel) has gone quiet coast: the driver lets go."""
        for robot, at in list(self._cmd_vel_at.items()):
            if self.sim.time - at > self.cmd_vel_timeout:
                del self._cmd_vel_at[robot]
                self.pins.motors[robot] = 0.0
                self._pins_dirty = True
        now = self.pin_clock()
        for robot in range(self.hil_robots):
            silent = now - self._pins_at[robot] > self.pin_timeout and self.pins.motors[robot].any()
            if silent and not self._coasting[robot]:
                self._coasting[robot] = True
                self.pins.motors[robot] = 0.0
                self._pins_dirty = True
                self.get_logger().warning(
                    f"robot {robot}: no MCU pins for {self.pin_timeout:g} s, motors coast"
                )

    def publish_now(self) -> None:
        """:meth:`publish_step` under the simulator's lock (for a caller outside it)."""
        with self.lock:
            self.publish_step()

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
        clock_due = self.publish_clock and self._clock_listened
        signals_due = [robot for robot, topics in enumerate(self.topics) if topics.listened(topics.from_sim)]
        state_due = sim.steps % self.publish_every < self.chunk
        markers_due = sim.steps % self.marker_every < self.chunk
        if not (clock_due or signals_due or state_due or markers_due):
            return  # in lockstep most periods: a stamp alone cost a few microseconds
        stamp = stamp_of(sim.time)
        if clock_due:
            self.clock.publish(Clock(clock=stamp))
        for robot in signals_due:
            message = SignalArray(
                signals=[Signal(device=d, name=n, value=v) for d, n, v in sensor_signals(sim, robot)]
            )
            message.header.stamp = stamp
            self.topics[robot].from_sim.publish(message)
        if state_due:
            self.publish_state(stamp)
        if markers_due:
            self.markers.publish(self.marker_array(stamp))

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
            direct = self.on_joint_states.get(robot)
            if topics.listened(topics.joints) or direct is not None:
                joints = JointState(name=["left_wheel_joint", "right_wheel_joint"])
                joints.header.stamp = stamp
                joints.position = [float(a) for a in sim.wheel_angle[robot]]
                gear = sim.robot.motor.gear_ratio
                joints.velocity = [float(s) / gear for s in sim.motors.speed[robot]]
                # Electromagnetic torque at the wheel (N m): what the motor does, not friction.
                kt = sim.robot.motor.kt
                joints.effort = [float(i) * kt * gear for i in sim.motors.current[robot]]
                if topics.listened(topics.joints):
                    topics.joints.publish(joints)
                if direct is not None:
                    direct(joints)
            self.publish_sensors(robot, topics, stamp)
        if self._tf_listened:
            self.tf.publish(TFMessage(transforms=transforms))

    def publish_sensors(self, robot: int, topics: RobotTopics, stamp: Time) -> None:
        """The sensor topics of one robot, from its last sample."""
        readings = self.sim.readings
        for publisher, frame, kind, fov, low, high, value in (
            (
                topics.ultrasonic,
                "ultrasonic_link",
                Range.ULTRASOUND,
                math.radians(30),
                0.02,
                2.0,
                readings.ultrasonic_cm[robot] / 100,
            ),
            (
                topics.ir,
                "ir_link",
                Range.INFRARED,
                math.radians(6),
                0.15,
                1.5,
                float(self.sim.ir.distance(readings.ir_voltage[robot])) / 100,
            ),
        ):
            if topics.listened(publisher):
                message = Range(
                    radiation_type=kind, field_of_view=fov, min_range=low, max_range=high, range=float(value)
                )
                message.header.stamp, message.header.frame_id = stamp, topics.frame(frame)
                publisher.publish(message)
        for k, publisher in enumerate(topics.light):
            if topics.listened(publisher):
                light = Illuminance(illuminance=float(readings.light[robot, k]))
                light.header.stamp, light.header.frame_id = (
                    stamp,
                    topics.frame(f"light_{LIGHT_SIDES[k]}_link"),
                )
                publisher.publish(light)
        if topics.listened(topics.mag):
            field = MagneticField()
            field.header.stamp, field.header.frame_id = stamp, topics.frame("mag_link")
            bx, by, bz = (float(v) for v in readings.magnetic_field[robot])
            field.magnetic_field.x, field.magnetic_field.y, field.magnetic_field.z = bx, by, bz
            topics.mag.publish(field)

    def marker_array(self, stamp: Time) -> MarkerArray:
        """Walls, boxes, boards, light and LEDs as rviz markers in the odom frame."""
        sim, world = self.sim, self.sim.world
        markers: list[Marker] = []

        def add(
            kind: int,
            ns: str,
            pose: tuple[float, float, float, float],
            scale: tuple[float, float, float],
            color: tuple[float, float, float, float],
        ) -> None:
            marker = Marker(type=kind, ns=ns, id=len(markers), action=Marker.ADD)
            marker.header.stamp, marker.header.frame_id = stamp, "odom"
            x, y, z, yaw = pose
            marker.pose.position.x, marker.pose.position.y, marker.pose.position.z = x, y, z
            qx, qy, qz, qw = yaw_quaternion(yaw)
            marker.pose.orientation.x, marker.pose.orientation.y = qx, qy
            marker.pose.orientation.z, marker.pose.orientation.w = qz, qw
            marker.scale.x, marker.scale.y, marker.scale.z = scale
            marker.color.r, marker.color.g, marker.color.b, marker.color.a = color
            markers.append(marker)

        grey, wall_h = (0.6, 0.6, 0.6, 1.0), 0.2
        half_w, half_h = world.width / 2, world.height / 2
        for x, y, sx, sy in (
            (0, half_h, world.width, 0.02),
            (0, -half_h, world.width, 0.02),
            (half_w, 0, 0.02, world.height),
            (-half_w, 0, 0.02, world.height),
        ):
            add(Marker.CUBE, "walls", (x, y, wall_h / 2, 0.0), (sx, sy, wall_h), grey)
        for box in world.boxes:
            add(
                Marker.CUBE,
                "boxes",
                (box.x, box.y, 0.1, box.yaw),
                (box.width, box.depth, 0.2),
                (0.5, 0.4, 0.3, 1.0),
            )
        for board, standing in zip(world.boards, sim.geometry.standing, strict=True):
            if standing:
                add(
                    Marker.CUBE,
                    "boards",
                    (board.x, board.y, board.height / 2, board.yaw),
                    (board.thickness, board.width, board.height),
                    (0.9, 0.7, 0.2, 1.0),
                )
            else:  # lying flat, fallen away from the centre of the ring
                dx, dy = -math.cos(board.yaw) * board.height / 2, -math.sin(board.yaw) * board.height / 2
                add(
                    Marker.CUBE,
                    "boards",
                    (board.x + dx, board.y + dy, board.thickness / 2, board.yaw),
                    (board.height, board.width, board.thickness),
                    (0.5, 0.35, 0.1, 1.0),
                )
        add(
            Marker.SPHERE,
            "light",
            (world.light.x, world.light.y, 0.3, 0.0),
            (0.1, 0.1, 0.1),
            (1.0, 1.0, 0.3, 1.0),
        )
        for robot in range(sim.count):
            on = sim.led[robot] > 0.5
            add(
                Marker.SPHERE,
                "leds",
                (float(sim.x[robot]), float(sim.y[robot]), 0.12, 0.0),
                (0.03, 0.03, 0.03),
                (0.1, 1.0, 0.1, 1.0) if on else (0.1, 0.25, 0.1, 1.0),
            )
        return MarkerArray(markers=markers)

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
    return run_node(SimNode, name=NODE_NAME, config_errors=(HilSimError, HilBridgeError), args=args)


if __name__ == "__main__":
    sys.exit(main())
