"""Device model kinds of the world simulator, one file each, in ONE table.

Adding a kind is its file (a :class:`~hil_sim.core.devices.base.DeviceModel` subclass)
and one line in :data:`KINDS`. :func:`kind` looks one up by name.
"""

from __future__ import annotations

import math

from hil_sim.core.devices.analog_input import AnalogInput
from hil_sim.core.devices.base import DeviceModel, Param, resolve_params
from hil_sim.core.devices.bumper import Bumper
from hil_sim.core.devices.button import Button
from hil_sim.core.devices.buzzer import Buzzer
from hil_sim.core.devices.compass import Compass
from hil_sim.core.devices.cr_servo import CrServo
from hil_sim.core.devices.drv8833 import Drv8833
from hil_sim.core.devices.encoder import Encoder
from hil_sim.core.devices.imu import Imu
from hil_sim.core.devices.ir_remote import IrRemote
from hil_sim.core.devices.l298n import L298n
from hil_sim.core.devices.l9110s import L9110s
from hil_sim.core.devices.led import Led
from hil_sim.core.devices.light import Light
from hil_sim.core.devices.line import LineSensor
from hil_sim.core.devices.pwm_dir import PwmDir
from hil_sim.core.devices.ranger import Ranger
from hil_sim.core.devices.rgb_leds import RgbLeds
from hil_sim.core.devices.servo import Servo
from hil_sim.core.devices.tb6612fng import Tb6612fng
from hil_sim.core.robot_model import WHEELS, DeviceSpec, RobotModel
from hil_sim.errors import HilSimError

#: Every model kind by name.
KINDS: dict[str, type[DeviceModel]] = {
    cls.KIND: cls
    for cls in (
        Ranger,
        Bumper,
        Light,
        Compass,
        Encoder,
        LineSensor,
        Imu,
        Servo,
        L298n,
        Tb6612fng,
        Drv8833,
        L9110s,
        PwmDir,
        CrServo,
        Led,
        Button,
        AnalogInput,
        IrRemote,
        Buzzer,
        RgbLeds,
    )
}

__all__ = ["KINDS", "DeviceModel", "Param", "check_model", "kind"]


def kind(name: str) -> type[DeviceModel]:
    """The model kind called ``name``.

    Raises:
        HilSimError: no such kind (listing them).
    """
    try:
        return KINDS[name]
    except KeyError:
        raise HilSimError(
            f"{name!r} is not a device model kind (kinds: {', '.join(sorted(KINDS))})"
        ) from None


def check_model(model: RobotModel) -> None:
    """A model against its kinds (RobotModel's docstring).

    Each kind exists; each device's wheel, ties and parameters; every wheel driven by
    exactly one driver; a mount's servo is a servo.

    Raises:
        HilSimError: naming the robot, the device and the field.
    """
    where = f"robot {model.name}"
    drivers: dict[str, str] = {}
    servos = {spec.name for spec in model.devices if spec.kind == "servo"}
    for index, spec in enumerate(model.devices):
        at = f"{where}: devices[{index}]"
        if _check_device(spec, f"{at} ({spec.name})", servos):
            if spec.wheel in drivers:
                raise HilSimError(
                    f"{at} ({spec.name}): wheel: {spec.wheel} is already driven by {drivers[spec.wheel]}"
                )
            drivers[spec.wheel] = spec.name
    for wheel in WHEELS:
        if wheel not in drivers:
            raise HilSimError(f"{where}: the {wheel} wheel has no motor driver")


def _check_device(spec: DeviceSpec, at: str, servos: set[str]) -> bool:
    """One device's kind, mount, wheel, ties and parameters; whether it drives a wheel."""
    try:
        cls = kind(spec.kind)
    except HilSimError as exc:
        raise HilSimError(f"{at}: kind: {exc}") from None
    if spec.mount.servo and spec.mount.servo not in servos:
        raise HilSimError(f"{at}: mount.servo: {spec.mount.servo!r} is not a servo of this robot")
    if spec.mount.servo and spec.kind == "servo":
        raise HilSimError(f"{at}: mount.servo: a servo rides on the body, not on another servo")
    if cls.WHEEL and spec.wheel not in WHEELS:
        raise HilSimError(f"{at}: wheel: {spec.wheel!r} is not one of {', '.join(WHEELS)}")
    if not cls.WHEEL and spec.wheel:
        raise HilSimError(f"{at}: wheel: a {spec.kind} belongs to no wheel")
    for name, value in spec.ties.items():
        if name not in cls.INPUTS:
            allowed = ", ".join(cls.INPUTS) or "none"
            raise HilSimError(f"{at}: ties.{name}: not an input of kind {spec.kind} (inputs: {allowed})")
        if not math.isfinite(value):
            raise HilSimError(f"{at}: ties.{name}: {value!r} is not a finite number")
    resolve_params(cls, spec, at)
    return cls.DRIVER
