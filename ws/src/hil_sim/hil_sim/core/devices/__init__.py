"""Device model kinds of the world simulator, one file each, in ONE table.

Adding a kind is its file (a :class:`~hil_sim.core.devices.base.DeviceModel` subclass)
and one line in :data:`KINDS`. :func:`kind` looks one up by name.
"""

from __future__ import annotations

from hil_sim.core.devices.base import DeviceModel, Param
from hil_sim.core.devices.bumper import Bumper
from hil_sim.core.devices.compass import Compass
from hil_sim.core.devices.cr_servo import CrServo
from hil_sim.core.devices.drv8833 import Drv8833
from hil_sim.core.devices.encoder import Encoder
from hil_sim.core.devices.imu import Imu
from hil_sim.core.devices.l298n import L298n
from hil_sim.core.devices.l9110s import L9110s
from hil_sim.core.devices.led import Led
from hil_sim.core.devices.light import Light
from hil_sim.core.devices.line import LineSensor
from hil_sim.core.devices.pwm_dir import PwmDir
from hil_sim.core.devices.ranger import Ranger
from hil_sim.core.devices.servo import Servo
from hil_sim.core.devices.tb6612fng import Tb6612fng
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
    )
}

__all__ = ["KINDS", "DeviceModel", "Param", "kind"]


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
