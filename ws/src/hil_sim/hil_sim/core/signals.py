"""Between the simulation and the signal link: pin signals in, sensor signals out.

The demo robot's device set (``hil_bridge/config/demo_robot_devices.yaml``) names the
signals: the MCU drives ``motor_left``/``motor_right`` (enable, a, b) and ``led``
(active); the simulator drives ``bumper_left``/``bumper_right`` (pressed),
``ultrasonic`` (distance, cm), ``ir`` (voltage, V), ``light_0..3`` (reading, ADC
counts; front, left, back, right) and ``compass`` (heading, deg). A device set with
other names needs its own mapping here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hil_sim.core.simulation import LEFT, RIGHT, Simulation

Array = npt.NDArray[np.float64]

#: (device, signal) of the MCU's outputs the simulation consumes.
MOTOR_PINS = {
    ("motor_left", "enable"): (LEFT, 0),
    ("motor_left", "a"): (LEFT, 1),
    ("motor_left", "b"): (LEFT, 2),
    ("motor_right", "enable"): (RIGHT, 0),
    ("motor_right", "a"): (RIGHT, 1),
    ("motor_right", "b"): (RIGHT, 2),
}
LED = ("led", "active")


@dataclass
class PinState:
    """The MCU output pins of every robot: (N, 2, 3) motor enable/a/b, (N,) LED."""

    motors: Array
    led: Array
    #: Set when :meth:`update` changed a value; whoever applies the pins clears it.
    changed: bool = True

    @classmethod
    def zeros(cls, robots: int) -> PinState:
        """All pins low."""
        return cls(np.zeros((robots, 2, 3)), np.zeros(robots))

    def update(self, robot: int, signals: list[tuple[str, str, float]]) -> list[str]:
        """Take one robot's INPUT signals; returns the names that are not pins."""
        unknown = []
        for device, name, value in signals:
            where = MOTOR_PINS.get((device, name))
            if where is not None:
                if self.motors[robot, where[0], where[1]] != value:
                    self.motors[robot, where[0], where[1]] = value
                    self.changed = True
            elif (device, name) == LED:
                if self.led[robot] != value:
                    self.led[robot] = value
                    self.changed = True
            else:
                unknown.append(f"{device}.{name}")
        return unknown

    def apply(self, simulation: Simulation) -> None:
        """Drive the simulation's motors and LEDs from these pins."""
        simulation.set_pins(self.motors[..., 0], self.motors[..., 1], self.motors[..., 2])
        simulation.led[:] = self.led


def sensor_signals(simulation: Simulation, robot: int) -> list[tuple[str, str, float]]:
    """The OUTPUT signals (what the MCU's pins see) of one robot, from its last sample."""
    readings = simulation.readings
    bumpers = simulation.bumpers[robot]
    signals = [
        ("bumper_left", "pressed", float(bumpers[LEFT])),
        ("bumper_right", "pressed", float(bumpers[RIGHT])),
        ("ultrasonic", "distance", float(readings.ultrasonic_cm[robot])),
        ("ir", "voltage", float(readings.ir_voltage[robot])),
    ]
    signals += [(f"light_{k}", "reading", float(readings.light[robot, k])) for k in range(4)]
    signals.append(("compass", "heading", float(readings.heading_deg[robot])))
    return signals
