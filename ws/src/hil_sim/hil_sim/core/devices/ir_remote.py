"""``ir_remote``: key presses of an IR remote, as an NEC receiver on the robot hears them.

Outputs ``address``, ``command`` (bytes) and ``sends`` (presses so far, wrapping at
256): a user's press (a scenario's ``set: {device, value: {address, command}}``, the
``hil/set/<device>`` topic) sets the address and command and counts one more send;
the MCU side sends one NEC frame per send (the simavr harness's ``nec`` kind, from
the change of ``sends``). A press is an event: nothing is let go afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping

from hil_sim.core.devices.base import DeviceModel, IndexArray, finite_number
from hil_sim.errors import HilSimError

#: The two bytes of a press.
FIELDS = ("address", "command")


class IrRemote(DeviceModel):
    """Every IR remote receiver of a group of robots (module docstring)."""

    KIND = "ir_remote"
    OUTPUTS = ("address", "command", "sends")
    USER = True

    @classmethod
    def user_value(cls, value: float | Mapping[str, float]) -> dict[str, float]:
        """``{address, command}``, each a byte (0..255).

        Raises:
            HilSimError: another shape, or a number that is not a byte.
        """
        if not isinstance(value, Mapping) or set(value) != set(FIELDS):
            raise HilSimError(f"an IR remote press is {{address: 0..255, command: 0..255}}, got {value!r}")
        out = {}
        for name in FIELDS:
            number = finite_number(value[name], f"IR remote press: {name}")
            if not (number.is_integer() and 0 <= number <= 255):
                raise HilSimError(f"IR remote press: {name} = {value[name]!r} is not a byte (0..255)")
            out[name] = number
        return out

    def set_value(self, rows: IndexArray, index: int, columns: Mapping[str, float]) -> None:
        """A press: the address and command, one more send."""
        super().set_value(rows, index, columns)
        sends = self.column("sends")
        self.outputs[rows, index, sends] = (self.outputs[rows, index, sends] + 1) % 256

    def let_go(self, rows: IndexArray, index: int) -> None:
        """Nothing: a press is over once sent."""
        del rows, index
