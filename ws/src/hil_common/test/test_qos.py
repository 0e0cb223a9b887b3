"""The QoS profiles (REP-2003): publishers reliable, stream subscribers best effort, state latched."""

from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

from hil_common import qos


def test_publishers_are_reliable_so_a_default_qos_subscriber_connects() -> None:
    assert qos.PUBLISHER.reliability == ReliabilityPolicy.RELIABLE
    assert qos.PUBLISHER.durability == DurabilityPolicy.VOLATILE
    assert qos.PUBLISHER.depth == 10


def test_sensor_stream_subscribers_are_best_effort_and_volatile() -> None:
    assert qos.SENSOR.reliability == ReliabilityPolicy.BEST_EFFORT
    assert qos.SENSOR.durability == DurabilityPolicy.VOLATILE


def test_commands_are_reliable_so_stop_is_never_dropped() -> None:
    assert qos.COMMAND.reliability == ReliabilityPolicy.RELIABLE


def test_late_joiner_state_is_latched() -> None:
    assert qos.LATCHED.durability == DurabilityPolicy.TRANSIENT_LOCAL
    assert qos.LATCHED.reliability == ReliabilityPolicy.RELIABLE
    assert qos.LATCHED.depth == 1
