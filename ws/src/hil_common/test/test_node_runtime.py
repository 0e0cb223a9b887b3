"""The worker thread every HIL node runs: a failure stops the node, a shutdown does not."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import rclpy
from rclpy.node import Node

from hil_common.node_runtime import node_thread


@pytest.fixture
def node() -> Iterator[Node]:
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("node_runtime_test", context=context)
    try:
        yield node
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def broken() -> None:
    raise ValueError("Subtraction leads to negative time.")


@pytest.mark.ros
def test_thread_failure_is_kept_and_shuts_the_context_down(node: Node) -> None:
    thread = node_thread(node, broken, name="control-loop", stopping=threading.Event())
    assert node.failure is None  # type: ignore[attr-defined]
    thread.start()
    thread.join(timeout=5.0)
    assert isinstance(node.failure, ValueError)  # type: ignore[attr-defined]
    assert not node.context.ok()


@pytest.mark.ros
def test_exception_while_stopping_is_not_a_failure(node: Node) -> None:
    stopping = threading.Event()
    stopping.set()
    thread = node_thread(node, broken, name="control-loop", stopping=stopping)
    thread.start()
    thread.join(timeout=5.0)
    assert node.failure is None  # type: ignore[attr-defined]
    assert node.context.ok()


@pytest.mark.ros
def test_exception_after_the_context_went_down_is_not_a_failure(node: Node) -> None:
    # SIGINT: rclpy's handler shuts the context down before the node's stop() runs.
    node.context.try_shutdown()
    thread = node_thread(node, broken, name="signal-exchange", stopping=threading.Event())
    thread.start()
    thread.join(timeout=5.0)
    assert node.failure is None  # type: ignore[attr-defined]
