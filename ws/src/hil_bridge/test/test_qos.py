"""The QoS profiles: sensor streams best effort, commands reliable, state latched."""

from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

from hil_bridge import qos


def test_sensor_streams_are_best_effort_and_volatile() -> None:
    assert qos.SENSOR.reliability == ReliabilityPolicy.BEST_EFFORT
    assert qos.SENSOR.durability == DurabilityPolicy.VOLATILE


def test_commands_are_reliable_so_stop_is_never_dropped() -> None:
    assert qos.COMMAND.reliability == ReliabilityPolicy.RELIABLE


def test_late_joiner_state_is_latched() -> None:
    assert qos.LATCHED.durability == DurabilityPolicy.TRANSIENT_LOCAL
    assert qos.LATCHED.reliability == ReliabilityPolicy.RELIABLE
    assert qos.LATCHED.depth == 1
