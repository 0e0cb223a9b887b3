"""The QoS profiles of every HIL topic, chosen in this one place (REP-2003).

* Every publisher uses the system default, reliable (:data:`PUBLISHER`), so any
  subscriber connects: a reliable subscriber (``create_subscription(..., 10)``, what
  ``ros2 topic echo`` and most user code ask for) gets nothing from a best-effort
  publisher, while a best-effort subscriber takes from a reliable one.
* Subscribers of streams (sensors, telemetry, signals, odometry) choose the
  sensor-data profile (:data:`SENSOR`: best effort, shallow queue, newest wins).
* Commands (``cmd_vel``, ``robotCommand``) are subscribed reliably (:data:`COMMAND`)
  so a STOP is never dropped.
* State a late joiner must still get (``robot_description``, world markers) is
  latched: transient local (:data:`LATCHED`), publisher and subscriber alike.
"""

from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
    qos_profile_sensor_data,
)

#: Every publisher of a stream, a command or a status: the system default (reliable, keep last 10).
PUBLISHER: QoSProfile = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=10,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)

#: Subscribers of sensor readings, telemetry and signal streams: newest sample wins.
SENSOR: QoSProfile = qos_profile_sensor_data

#: Subscribers (and publishers) of commands (``cmd_vel``, ``robotCommand``) and status: reliable.
COMMAND: QoSProfile = PUBLISHER

#: Late-joiner state (``robot_description``, static world markers): latched.
LATCHED: QoSProfile = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
