"""Behaviours: turn what the MCU reports in TL2 into a body twist.

They read sensors only from telemetry, never from simulator ground truth, so they
run unchanged against a real robot. Each is a small class with ``update(sensors,
now) -> (linear m/s, angular rad/s)`` and ``reset()``, selected by name with
``AUTO <name>`` on robotCommand.
"""

from __future__ import annotations

from robot_control.core.behaviours.base import Behaviour, Sensors
from robot_control.core.behaviours.boards import BoardsBehaviour
from robot_control.core.behaviours.light import LightBehaviour, PhotoresistorResponse
from robot_control.core.behaviours.swarm import SwarmBehaviour

__all__ = [
    "BEHAVIOURS",
    "Behaviour",
    "BoardsBehaviour",
    "LightBehaviour",
    "PhotoresistorResponse",
    "Sensors",
    "SwarmBehaviour",
]

#: Behaviour names accepted by ``AUTO <name>``.
BEHAVIOURS = ("boards", "light", "swarm")
