"""``hil_step``: a motor step test through ``cmd_vel``, against the simulation or the real robot.

Speaks only ROS topics, so it runs unchanged against any graph that has a control
loop (``make sim``, ``sim.launch.py`` with any MCU, ``hardware.launch.py``): it sends
the ``cmd_vel`` twist that the control loop turns into the motor commands
``--left``/``--right`` (DRV units), records both wheel speeds from ``joint_states``
and the commands the MCU reports in telemetry (TL1), fits gain, time constant and
dead time of a first-order model to each wheel and compares them with the DC motor
model's expectation (:mod:`hil_testing.core.step_test`). It writes ``step.json`` and
``step.png`` and exits 0 if both are within ``--tolerance`` of the model, 1 if not.

Time is the stamps of ``joint_states``: simulated time against the simulator,
whatever its pace. ``cmd_vel`` goes out with every ``joint_states`` sample (50 Hz),
zero while the wheels settle, then the step for ``--duration`` seconds, then zero.
The control loop must be in MANUAL (``robotCommand`` ``MANUAL``), and the drive
geometry options must match its parameters.

    hil_step --left 150 --right 150 --duration 2 --output-dir /tmp/step
    hil_step --ros-args -r joint_states:=/robot_0/joint_states -r cmd_vel:=/robot_0/cmd_vel
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rclpy.node import Node
from sensor_msgs.msg import JointState

from hil_common import qos
from hil_common.core.param_spec import ParamSpec
from hil_common.errors import HilError
from hil_common.parameters import declare_parameters
from hil_msgs.msg import Telemetry
from hil_testing.core.step_test import StepPlan, StepResult, StepRun, write_step_report
from hil_testing.errors import HilTestingError
from hil_testing.tool_runtime import Driver, tool_main
from robot_control.core.kinematics import DriveGeometry

NODE_NAME = "hil_step"

PARAMETERS = (
    ParamSpec("left", 150, "Left motor command of the step (DRV units).", min=-32767, max=32767),
    ParamSpec("right", 150, "Right motor command of the step (DRV units).", min=-32767, max=32767),
    ParamSpec("settle", 1.0, "Seconds at zero command before the step.", min=0.05, max=600.0),
    ParamSpec("duration", 2.0, "Seconds the step is held.", min=0.1, max=600.0),
    ParamSpec(
        "tolerance",
        0.2,
        "Largest relative difference of gain and time constant from the model.",
        min=0.0,
        max=10.0,
    ),
    ParamSpec("left_joint", "left_wheel_joint", "joint_states name of the left wheel."),
    ParamSpec("right_joint", "right_wheel_joint", "joint_states name of the right wheel."),
    ParamSpec("wheel_base", 0.14, "Distance between the wheels, m (the control loop's).", min=0.01, max=10.0),
    ParamSpec("wheel_radius", 0.033, "Wheel radius, m (the control loop's).", min=0.001, max=2.0),
    ParamSpec(
        "max_wheel_speed",
        20.8,
        "Wheel speed at full command, rad/s (the control loop's).",
        min=0.01,
        max=10000.0,
    ),
    ParamSpec("max_command", 255, "Largest motor command (the control loop's).", min=1, max=32767),
    ParamSpec(
        "timeout",
        10.0,
        "Wall seconds without joint_states (or a cmd_vel subscriber) before the test gives up.",
        min=0.1,
        max=3600.0,
    ),
    ParamSpec("output_dir", "", "Folder of step.json and step.png; empty: runs/hil_step-<time>."),
)


class StepNode(Node):
    """Steps the motors through cmd_vel and records the wheels' response from joint_states."""

    def __init__(self, **node_options: Any) -> None:
        super().__init__(NODE_NAME, **node_options)
        params = declare_parameters(self, PARAMETERS)
        geometry = DriveGeometry(
            wheel_base=params.as_float("wheel_base"),
            wheel_radius=params.as_float("wheel_radius"),
            max_wheel_speed=params.as_float("max_wheel_speed"),
            max_command=params.as_int("max_command"),
        )
        self.plan = StepPlan(
            left=params.as_int("left"),
            right=params.as_int("right"),
            settle=params.as_float("settle"),
            duration=params.as_float("duration"),
            geometry=geometry,
        )
        self.run = StepRun(self.plan)
        self.tolerance = params.as_float("tolerance")
        self.joints = (params.as_str("left_joint"), params.as_str("right_joint"))
        self.output_dir = params.as_str("output_dir")
        self.error: str | None = None
        self.result: StepResult | None = None
        #: Called once the test is done (the console script shuts its context down there).
        self.on_done: Callable[[], None] | None = None
        self.driver = Driver(self, source="joint_states", patience=params.as_float("timeout"))
        self.create_subscription(JointState, "joint_states", self.on_joint_states, qos.SENSOR)
        self.create_subscription(Telemetry, "telemetry", self.on_telemetry, qos.SENSOR)
        self.create_timer(0.5, self.check_quiet)
        linear, angular = self.plan.twist
        self.get_logger().info(
            f"step to left {self.plan.left}, right {self.plan.right} (cmd_vel {linear:.3f} m/s, "
            f"{angular:.3f} rad/s) for {self.plan.duration:g} s after {self.plan.settle:g} s at rest"
        )

    @property
    def finished(self) -> bool:
        """The step is over and fitted (or could not be: see ``error``)."""
        return self.result is not None

    @property
    def passed(self) -> bool:
        """Both wheels within the tolerance of the motor model."""
        return self.result is not None and self.result.passed

    def on_joint_states(self, message: JointState) -> None:
        """One sample of both wheels: record it and command what the test says now."""
        if self.finished or self.error is not None or not self.driver.ready():
            return
        try:
            left, right = (message.velocity[message.name.index(joint)] for joint in self.joints)
        except (ValueError, IndexError):
            self._fail(
                f"joint_states has no velocity of {self.joints[0]!r} and {self.joints[1]!r}: "
                f"{list(message.name)}"
            )
            return
        t = message.header.stamp.sec + message.header.stamp.nanosec * 1e-9
        self.publish(*self.run.sample(t, left, right))
        if self.run.finished:
            self.publish(0.0, 0.0)
            try:
                self.result = self.run.result(tolerance=self.tolerance)
            except HilError as exc:
                self._fail(str(exc))
                return
            self._done()

    def on_telemetry(self, message: Telemetry) -> None:
        """TL1: the motor commands as the MCU has them.

        Timed by the latest joint_states sample, not by its own stamp: the loop stamps on
        its clock, which is the wall clock while the simulator stamps simulated time.
        """
        if message.list_id == "TL1" and self.run.times:
            self.run.telemetry(
                self.run.times[-1], dict(zip(message.field_names, message.values, strict=False))
            )

    def check_quiet(self) -> None:
        """Give up when joint_states is silent, or nobody takes cmd_vel, for ``timeout`` wall s."""
        if self.finished or self.error is not None:
            return
        reason = self.driver.silence()
        if reason is not None:
            self._fail(reason)

    def publish(self, linear: float, angular: float) -> None:
        """Send a twist on cmd_vel."""
        self.driver.publish(linear, angular)

    def _fail(self, text: str) -> None:
        self.error = text
        self.publish(0.0, 0.0)
        self._done()

    def _done(self) -> None:
        if self.on_done is not None:
            self.on_done()

    def write_report(self, folder: Path) -> list[Path]:
        """``step.json`` and ``step.png``."""
        if self.result is None:
            raise HilTestingError("hil_step: no result to report")
        return list(write_step_report(self.result, folder))

    def summary(self) -> str:
        """Fits against the model, per wheel."""
        if self.result is None:
            return self.error or "not finished"
        lines = [
            f"{name}: gain {w.fit.gain:.4f} (model {w.model.gain:.4f}, {w.gain_error:+.1%}), "
            f"tau {w.fit.tau * 1e3:.0f} ms (model {w.model.tau * 1e3:.0f} ms, {w.tau_error:+.1%}), "
            f"dead time {w.fit.dead_time * 1e3:.0f} ms"
            for name, w in self.result.wheels.items()
        ]
        verdict = "within" if self.passed else "NOT within"
        return "; ".join(lines) + f": {verdict} {self.tolerance:.0%} of the motor model"

    def start(self) -> None:
        """Nothing to start: the test runs from the joint_states callbacks."""

    def stop(self) -> None:
        """Leave the robot commanded to a stop (if the context is still up)."""
        if self.context.ok():
            self.publish(0.0, 0.0)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one step test; exit 0 if within tolerance, 1 if not, 2 on a bad configuration."""

    def make(**options: Any) -> StepNode:
        node = StepNode(**options)
        node.on_done = node.context.try_shutdown
        return node

    return tool_main(argv, prog=NODE_NAME, description=__doc__ or "", parameters=PARAMETERS, make=make)


if __name__ == "__main__":
    sys.exit(main())
