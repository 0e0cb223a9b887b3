"""Publish every hil_msgs sample on ``hil_test/<Type>`` until interrupted.

Run as a separate process by the cross-process message test. It republishes every
50 ms so the subscriber needs no start-up ordering; it exits on SIGINT/SIGTERM.
"""

from __future__ import annotations

import signal
import sys

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from support.msg_samples import SAMPLES


class SamplePublisher(Node):
    """Publishes one sample of each message type, repeatedly."""

    def __init__(self) -> None:
        super().__init__("hil_msgs_sample_publisher")
        self._out = []
        for name, factory in SAMPLES.items():
            sample = factory()
            self._out.append((self.create_publisher(type(sample), f"hil_test/{name}", 10), sample))
        self.create_timer(0.05, self.on_timer)

    def on_timer(self) -> None:
        for publisher, sample in self._out:
            publisher.publish(sample)


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    rclpy.init()
    try:
        rclpy.spin(SamplePublisher())
    except (KeyboardInterrupt, ExternalShutdownException, SystemExit):
        pass
    finally:
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
