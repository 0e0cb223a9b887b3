"""One fully populated sample of every hil_msgs type, shared by publisher and checker.

Every field holds a non-default value, with the edges of its type where they are
interesting (unsigned 64-bit maximum, signed 32-bit minimum, non-ASCII text), so a
field that is dropped or truncated on the way shows up as a difference.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from builtin_interfaces.msg import Time
from std_msgs.msg import Header

from hil_msgs.msg import LinkStatus, MotorCommand, Signal, SignalArray, Telemetry, WireChunk


def _header(frame: str) -> Header:
    return Header(stamp=Time(sec=1_700_000_000, nanosec=123_456_789), frame_id=frame)


def telemetry() -> Telemetry:
    return Telemetry(
        header=_header("base_link"),
        list_id="TL2",
        field_names=["distance_cm", "ir_volts", "light_0", "bumper_left"],
        values=[187.5, 1.27, 1000.0, 1.0],
        raw="TL2187.5,1.27,1000,1",
    )


def link_status() -> LinkStatus:
    return LinkStatus(
        header=_header(""),
        link="mcu",
        alive=True,
        rtt_last=0.000_312,
        rtt_mean=0.000_287,
        rtt_max=0.0041,
        sent=2**64 - 1,
        received=123_456,
        lost=7,
        since_last_heard=0.0333,
        detail="port closed, reopening in 0.4 s (µs ok)",
    )


def motor_command() -> MotorCommand:
    return MotorCommand(header=_header("base_link"), left=-(2**31), right=2**31 - 1)


def signal() -> Signal:
    return Signal(device="ultrasonic", name="distance", value=-123.25)


def signal_array() -> SignalArray:
    return SignalArray(
        header=_header(""),
        signals=[
            Signal(device="motor_left", name="enable", value=1024.0),
            Signal(device="motor_left", name="a", value=1.0),
            Signal(device="bumper", name="pressed", value=0.0),
        ],
    )


def wire_chunk() -> WireChunk:
    return WireChunk(
        header=_header(""), link="signal", direction="rx", data=bytes([0xFF, 0, 0x7F, 0xFF, 0, 10, 255])
    )


#: Message type name -> factory of its sample. Must cover every type in hil_msgs.
SAMPLES: dict[str, Callable[[], Any]] = {
    "LinkStatus": link_status,
    "MotorCommand": motor_command,
    "Signal": signal,
    "SignalArray": signal_array,
    "Telemetry": telemetry,
    "WireChunk": wire_chunk,
}
