"""The simulator's ``hil/set/<device>`` topics: what users set on the robots' devices.

One subscription per device of a USER kind (a button, an analog input, an IR remote)
of every robot (``robot_<i>/`` with several), so a teleop-like tool, a test or
``ros2 topic pub`` presses a button, turns a knob or sends an IR remote's key:

| kind | message | value |
|---|---|---|
| ``button`` | std_msgs/Float64 | 1 pressed, 0 released |
| ``analog_input`` | std_msgs/Float64 | the voltage, 0..5 V |
| ``ir_remote`` | std_msgs/UInt32 | one key press: ``address << 8 | command`` (each a byte) |

A message is a request (:mod:`hil_sim.core.user_inputs`): the simulator takes it at
the start of its next period (in a lockstep run at that fixed point), and it holds
until the next one (a button stays pressed until a 0 comes). A message that does not
fit (a button at 0.5, a voltage beyond 5 V, an IR code above 16 bits) is dropped,
counted, and logged once per device. Scenarios and tests set sensors' overrides and
timed holds through :meth:`hil_sim.sim_node.SimNode.set_device` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rclpy.node import Node
from std_msgs.msg import Float64, UInt32

from hil_common import qos
from hil_sim.errors import HilSimError

#: The topic of a device, under the robot's prefix.
SET_TOPIC = "hil/set/{device}"
#: The message type each USER kind takes on its topic.
MESSAGES: Mapping[str, Any] = {"button": Float64, "analog_input": Float64, "ir_remote": UInt32}


def nec_press(code: int) -> dict[str, float]:
    """``address << 8 | command`` as the press's ``{address, command}``.

    Raises:
        HilSimError: more than 16 bits.
    """
    if not 0 <= code <= 0xFFFF:
        raise HilSimError(f"an IR remote code is address << 8 | command (0..65535), got {code}")
    return {"address": float(code >> 8), "command": float(code & 0xFF)}


def message_value(kind: str, message: Any) -> float | dict[str, float]:
    """What a message on a ``kind`` device's topic sets (module docstring's table).

    Raises:
        HilSimError: a code that does not fit.
    """
    if kind == "ir_remote":
        return nec_press(int(message.data))
    return float(message.data)


class SetTopics:
    """The ``hil/set/<device>`` subscriptions of a simulator node (module docstring).

    Args:
        node: the simulator node.
        prefixes: each robot's topic prefix.
        users: each robot's devices of USER kinds, as (name, kind).
        request: takes (robot, device, value) and raises HilSimError on a value that
            does not fit.
    """

    def __init__(
        self,
        node: Node,
        prefixes: list[str],
        users: list[list[tuple[str, str]]],
        request: Callable[[int, str, float | dict[str, float]], None],
    ) -> None:
        self.node = node
        self._request = request
        #: Messages that did not fit, dropped.
        self.refused = 0
        self._warned: set[tuple[int, str]] = set()
        self.subscriptions = [
            node.create_subscription(
                MESSAGES[kind],
                prefix + SET_TOPIC.format(device=name),
                lambda message, robot=robot, name=name, kind=kind: self.on_message(
                    robot, name, kind, message
                ),
                qos.COMMAND,
            )
            for robot, prefix in enumerate(prefixes)
            for name, kind in users[robot]
            if kind in MESSAGES
        ]

    def on_message(self, robot: int, device: str, kind: str, message: Any) -> None:
        """A user's message: a request for the next period, or refused (counted, logged once)."""
        try:
            self._request(robot, device, message_value(kind, message))
        except HilSimError as exc:
            self.refused += 1
            if (robot, device) not in self._warned:
                self._warned.add((robot, device))
                self.node.get_logger().warning(f"{SET_TOPIC.format(device=device)} (robot {robot}): {exc}")
