"""A test-side rclpy node that records topics and publishes, spinning in a thread.

Each probe has its own rclpy context, so tests never share global ROS state, and
``close()`` shuts it down completely. The ROS domain comes from the environment the
root conftest sets (private ROS_DOMAIN_ID, localhost discovery).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile


class RosProbe:
    """Subscribe, record, publish and wait, from test code."""

    def __init__(self, name: str = "test_probe") -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._lock = threading.Lock()
        self._records: dict[str, list[Any]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while not self._stop.is_set() and self.context.ok():
            self.executor.spin_once(timeout_sec=0.05)

    def record(self, msg_type: Any, topic: str, qos: QoSProfile | int = 10) -> None:
        """Keep every message arriving on ``topic``."""
        self._records.setdefault(topic, [])

        def keep(message: Any) -> None:
            with self._lock:
                self._records[topic].append(message)

        self.node.create_subscription(msg_type, topic, keep, qos)

    def messages(self, topic: str) -> list[Any]:
        """A copy of what arrived on ``topic`` so far."""
        with self._lock:
            return list(self._records[topic])

    def latest(self, topic: str) -> Any | None:
        """The newest message on ``topic``, or None."""
        with self._lock:
            records = self._records[topic]
            return records[-1] if records else None

    def clear(self, topic: str) -> None:
        """Forget what arrived on ``topic``."""
        with self._lock:
            self._records[topic].clear()

    def publisher(self, msg_type: Any, topic: str, qos: QoSProfile | int = 10) -> Any:
        """A publisher on ``topic``."""
        return self.node.create_publisher(msg_type, topic, qos)

    @staticmethod
    def wait_for(condition: Callable[[], Any], *, timeout: float = 10.0, what: str = "condition") -> Any:
        """Poll ``condition`` until it is truthy; fail the test after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            result = condition()
            if result:
                return result
            time.sleep(0.01)
        raise AssertionError(f"{what}: not met within {timeout:g} s")

    def close(self) -> None:
        """Stop spinning and shut the context down."""
        self._stop.set()
        self._thread.join(timeout=2.0)
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
