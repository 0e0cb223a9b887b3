"""``hil_teleop``: drive the robot from the keyboard (for machines without teleop_twist_keyboard).

Publishes the twist on ``cmd_vel`` ten times a second (so the control loop's cmd_vel
watchdog stays fed), sends STOP/GO/AUTO/MANUAL on ``robotCommand``, and with
``--heartbeat`` acts as the operator station's heartbeat (``HBB,<t>`` every 0.5 s).
Keys: see ``hil_teleop --help``.
"""

from __future__ import annotations

import argparse
import select
import sys
import termios
import time
import tty

import rclpy
from geometry_msgs.msg import Twist
from std_msgs.msg import String

from hil_bringup.core.teleop import HELP, Teleop
from hil_common import qos


def main(argv: list[str] | None = None) -> int:
    """Read keys until q or Ctrl-C; leave the robot stopped."""
    parser = argparse.ArgumentParser(
        prog="hil_teleop",
        description=__doc__ + "\n" + HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--heartbeat", action="store_true", help="send the station heartbeat too")
    parser.add_argument("--namespace", default="", help="robot namespace, e.g. robot_0")
    args = parser.parse_args(argv)
    if not sys.stdin.isatty():
        print("hil_teleop: needs a terminal (stdin is not a tty)", file=sys.stderr)
        return 2
    rclpy.init()
    node = rclpy.create_node("hil_teleop", namespace=args.namespace or None)
    cmd_vel = node.create_publisher(Twist, "cmd_vel", qos.PUBLISHER)
    command = node.create_publisher(String, "robotCommand", qos.PUBLISHER)
    teleop = Teleop()
    saved = termios.tcgetattr(sys.stdin)
    print(HELP, flush=True)
    next_heartbeat = time.monotonic()
    try:
        tty.setcbreak(sys.stdin.fileno())
        while rclpy.ok():
            readable, _, _ = select.select([sys.stdin], [], [], 0.1)
            if readable:
                action = teleop.key(sys.stdin.read(1))
                if action == "quit":
                    break
                if action is not None:
                    command.publish(String(data=action))
                print(
                    f"\rlinear {teleop.linear:+.2f} m/s  angular {teleop.angular:+.2f} rad/s   ",
                    end="",
                    flush=True,
                )
            twist = Twist()
            twist.linear.x, twist.angular.z = teleop.linear, teleop.angular
            cmd_vel.publish(twist)
            if args.heartbeat and time.monotonic() >= next_heartbeat:
                next_heartbeat += 0.5
                command.publish(String(data=f"HBB,{time.time():.6f}"))
    except KeyboardInterrupt:
        pass
    finally:
        cmd_vel.publish(Twist())
        termios.tcsetattr(sys.stdin, termios.TCSADRAIN, saved)
        node.destroy_node()
        rclpy.try_shutdown()
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
