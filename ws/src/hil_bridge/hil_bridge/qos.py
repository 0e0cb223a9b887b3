"""The QoS profiles of every HIL topic, chosen in this one place.

Sensors and telemetry are streams where only the newest sample matters, so they use
the ROS sensor-data profile (best effort, shallow queue). State a late joiner must
still get (``robot_description``, world layout) is latched with transient-local
durability. Commands and link traffic are reliable so a STOP is never dropped.
"""

from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
    qos_profile_sensor_data,
)

#: Sensor readings, telemetry and signal streams: newest sample wins.
SENSOR: QoSProfile = qos_profile_sensor_data

#: Commands (``cmd_vel``, ``robotCommand``) and status: reliable, short queue.
COMMAND: QoSProfile = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=10,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)

#: Late-joiner state (``robot_description``, static world markers): latched.
LATCHED: QoSProfile = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
