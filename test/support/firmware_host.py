"""The firmware's protocol module and behaviour core built for the host, behind ctypes.

``firmware/libraries/hil_protocol`` (line and signal codecs) and
``firmware/robot_mcu/mcu_core.c`` (the MCU's behaviour) are plain C, so the host's gcc
builds them, with ``firmware/test/host_shim.c`` as the flat entry points, into one
shared library. Tests then run the same conformance vectors and property tests
against them as against the Python codecs and the virtual MCU.

The library is cached in the user's runtime folder (``firmware-host``: a folder only
they can change, as code loaded from it runs in the test process) by a hash of its
sources and flags.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hil_common.core.runtime_dir import runtime_dir

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"
LIBRARY_SRC = FIRMWARE / "libraries" / "hil_protocol" / "src"
SOURCES = [
    FIRMWARE / "test" / "host_shim.c",
    FIRMWARE / "robot_mcu" / "mcu_core.c",
    *sorted(LIBRARY_SRC.glob("*.c")),
]
HEADERS = [*sorted(LIBRARY_SRC.glob("*.h")), FIRMWARE / "robot_mcu" / "mcu_core.h"]
# The firmware builds strict (warnings are errors) for the AVR too; the host build is as strict.
CFLAGS = ["-std=c99", "-O1", "-g", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror", "-pedantic"]

#: hil_drop_reason order (= hil_bridge DropReason order).
DROP_REASONS = (
    "too_long",
    "not_ascii",
    "empty",
    "unknown_id",
    "unknown_list",
    "bad_field",
    "bad_arity",
    "bad_check",
    "duplicate",
)
MCU_COUNTERS = (
    "drv_accepted",
    "drv_rejected.out_of_range",
    "drv_rejected.stopped",
    "drv_rejected.heartbeat_lost",
    "arm_ignored",
    "hbb_echoed",
    "commands_unknown",
    "unexpected",
    "errors_sent",
    "telemetry_sent",
    "watchdog_trips",
    "unsendable",
    "out_overflow",
)
#: shim_mcu_radio_counters order; the names are the virtual MCU's ``counters()`` keys.
RADIO_COUNTERS = (
    "radio_tx",
    "radio_tx_dropped",
    "radio_tx_overflow",
    "radio_rx",
    "radio_status",
    "radio_rx_overflow",
    "radio_unexpected",
    "radio_losses",
    "radio_lost",
    *(f"radio_dropped.{reason}" for reason in DROP_REASONS),
)
#: TL2 fields in mcu_core.h order (telemetry.yaml); distances and headings in tenths.
TL2_FIELDS = (
    "ultrasonic_cm",
    "ir_adc",
    "light_0",
    "light_1",
    "light_2",
    "light_3",
    "bumper_left",
    "bumper_right",
    "heading_deg",
)


class HostBuildError(Exception):
    """The host compiler refused the firmware sources."""


class HostInitError(ValueError):
    """A firmware init function refused its arguments (returned 0)."""


def build(out_dir: Path) -> Path:
    """Compile the shared library into ``out_dir`` (or reuse the one built from the same sources)."""
    digest = hashlib.sha256()
    for path in [*SOURCES, *HEADERS]:
        digest.update(path.read_bytes())
    digest.update(" ".join(CFLAGS).encode())
    target = out_dir / f"libhilfw-{digest.hexdigest()[:16]}.so"
    if target.exists():
        return target
    out_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    result = subprocess.run(
        ["gcc", *CFLAGS, f"-I{LIBRARY_SRC}", *map(str, SOURCES), "-o", str(partial), "-lm"],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise HostBuildError(f"gcc failed on the firmware sources:\n{result.stderr}")
    partial.replace(target)  # atomic: parallel sessions never load a half-written file
    return target


#: libsimavr's headers; probes on it are built only where they are installed.
SIMAVR_INCLUDE = Path("/usr/include/simavr")


def simavr_probe(source: Path) -> Path:
    """A probe program on libsimavr (``firmware/test/*_probe.c``), built by the host compiler.

    Cached in the user's runtime folder (a program another user could swap would run
    here) by a hash of its source.
    """
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    target = runtime_dir("firmware-host") / f"{source.stem}-{digest}"
    if not target.exists():
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        command = ["gcc", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{SIMAVR_INCLUDE}"]
        result = subprocess.run(
            [*command, str(source), "-o", str(partial), "-lsimavr", "-lm"],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise HostBuildError(f"gcc failed on {source}:\n{result.stderr}")
        partial.replace(target)  # atomic: parallel sessions never run a half-written file
    return target


@functools.cache
def library() -> ctypes.CDLL:
    """The built library with its function signatures declared."""
    lib = ctypes.CDLL(str(build(runtime_dir("firmware-host"))))
    c_void, c_int, c_u8p = ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_uint8)
    signatures: dict[str, tuple[object, list[object]]] = {
        "shim_line_new": (c_void, [c_int, ctypes.c_char_p, c_u8p, c_int]),
        "shim_free": (None, [c_void]),
        "shim_line_feed": (c_int, [c_void, c_u8p, c_int, ctypes.c_char_p, c_int, ctypes.POINTER(c_int)]),
        "shim_line_stats": (None, [c_void, ctypes.POINTER(ctypes.c_uint32)]),
        "shim_line_finish": (c_int, [c_int, c_int, ctypes.c_char_p, c_int, ctypes.c_char_p]),
        "shim_format_fixed": (c_int, [ctypes.c_int32, c_int, ctypes.c_char_p]),
        "shim_frames_new": (c_void, [c_u8p, c_int, c_int, ctypes.POINTER(c_int)]),
        "shim_frame_encode_n": (c_int, [c_int, c_int, c_int, c_u8p]),
        "shim_frames_encode": (c_int, [c_void, ctypes.POINTER(ctypes.c_int16), c_u8p]),
        "shim_frames_feed": (c_int, [c_void, c_u8p, c_int, ctypes.POINTER(ctypes.c_int16), c_int]),
        "shim_frames_stats": (None, [c_void, ctypes.POINTER(ctypes.c_uint32)]),
        "shim_mcu_new": (c_void, [c_int, ctypes.c_uint32]),
        "shim_mcu_feed": (None, [c_void, c_u8p, c_int, ctypes.c_uint32]),
        "shim_mcu_tick": (None, [c_void, ctypes.c_uint32]),
        "shim_mcu_take": (c_int, [c_void, ctypes.c_char_p, c_int]),
        "shim_mcu_set_tl2": (None, [c_void, c_int, ctypes.c_int32]),
        "shim_mcu_set_watchdog": (None, [c_void, ctypes.c_uint32]),
        "shim_mcu_state": (None, [c_void, ctypes.POINTER(ctypes.c_int32)]),
        "shim_mcu_counters": (None, [c_void, ctypes.POINTER(ctypes.c_uint32)]),
        "shim_mcu_enable_duty": (ctypes.c_uint16, [ctypes.c_int16, ctypes.c_uint16]),
        "shim_line_relay": (c_int, [c_void, ctypes.c_char_p, c_int]),
        "shim_mcu_radio_begin": (None, [c_void, ctypes.c_uint32]),
        "shim_mcu_radio_feed": (None, [c_void, c_u8p, c_int, ctypes.c_uint32]),
        "shim_mcu_radio_take": (c_int, [c_void, ctypes.c_char_p, c_int]),
        "shim_mcu_radio_counters": (None, [c_void, ctypes.POINTER(ctypes.c_uint32)]),
        "hil_crc16": (ctypes.c_uint16, [c_u8p, ctypes.c_size_t]),
        "hil_arduino_map": (ctypes.c_int32, [ctypes.c_int32] * 5),
        "hil_rounding_map": (ctypes.c_int32, [ctypes.c_int32] * 5),
        "hil_int_to_raw": (ctypes.c_int16, [ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_uint8]),
        "hil_raw_to_int": (ctypes.c_int32, [ctypes.c_int16, ctypes.c_int32, ctypes.c_int32, ctypes.c_uint8]),
        "hil_float_to_raw": (
            ctypes.c_int16,
            [ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_uint8],
        ),
        "hil_raw_to_float": (ctypes.c_double, [ctypes.c_int16, ctypes.c_double, ctypes.c_double]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib


def _bytes(data: bytes) -> ctypes.Array[ctypes.c_uint8]:
    return (ctypes.c_uint8 * max(len(data), 1)).from_buffer_copy(data or b"\0")


@dataclass(frozen=True)
class HostMessage:
    """A message the C decoder produced: its type (``DRV``, ``TL1``...) and payload text."""

    type: str
    text: str

    @property
    def numbers(self) -> tuple[float, ...]:
        """Numeric fields (DRV, ARM, TLn)."""
        return tuple(float(v) for v in self.text.split(","))


def _records(text: bytes) -> list[HostMessage]:
    out = []
    pos = 0
    while pos < len(text):
        kind, _, rest = text[pos:].partition(b":")
        length_text, _, _ = rest.partition(b":")
        start = pos + len(kind) + 1 + len(length_text) + 1
        length = int(length_text)
        out.append(HostMessage(kind.decode(), text[start : start + length].decode("ascii")))
        pos = start + length
    return out


class HostLineDecoder:
    """The firmware's line decoder (``hil_line.c``)."""

    def __init__(
        self,
        *,
        checked: bool = False,
        schema: dict[str, int] | None = None,
        relay_ids: tuple[str, ...] = (),
    ) -> None:
        lists = schema or {}
        ids = "".join(list_id[2] for list_id in lists).encode()
        arity = bytes(lists.values())
        self._lib = library()
        self._handle = self._lib.shim_line_new(int(checked), ids, _bytes(arity), len(lists))
        if not self._handle:
            raise MemoryError("shim_line_new failed")
        if relay_ids and not self._lib.shim_line_relay(
            self._handle, "".join(relay_ids).encode(), len(relay_ids)
        ):
            raise HostInitError(f"shim_line_relay refused {relay_ids}")

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            self._lib.shim_free(self._handle)

    def feed(self, data: bytes) -> list[HostMessage]:
        """Decode the bytes; every message completed by them."""
        out = ctypes.create_string_buffer(4096 + 64 * len(data))
        count = ctypes.c_int(0)
        used = self._lib.shim_line_feed(
            self._handle, _bytes(data), len(data), out, len(out), ctypes.byref(count)
        )
        if used < 0:
            raise RuntimeError("decoded messages overflowed the shim buffer")
        messages = _records(out.raw[:used])
        assert len(messages) == count.value
        return messages

    def stats(self) -> dict[str, int]:
        """``messages``, ``lost``, ``resyncs`` and a count per drop reason."""
        values = (ctypes.c_uint32 * (len(DROP_REASONS) + 3))()
        self._lib.shim_line_stats(self._handle, values)
        return {
            "messages": values[0],
            **dict(zip(DROP_REASONS, values[1:-2], strict=True)),
            "lost": values[-2],
            "resyncs": values[-1],
        }


def line_finish(body: bytes, *, checked: bool = False, seq: int = 0) -> bytes:
    """The line ``hil_line_finish`` makes of ``body`` (b"" when it refuses it)."""
    out = ctypes.create_string_buffer(256)
    length = library().shim_line_finish(int(checked), seq, body, len(body), out)
    return out.raw[:length]


def format_fixed(scaled: int, decimals: int) -> str:
    """``hil_format_fixed``."""
    out = ctypes.create_string_buffer(32)
    length = library().shim_format_fixed(scaled, decimals, out)
    return out.raw[:length].decode()


class HostFrames:
    """The firmware's frame encoder and decoder (``hil_signal.c``) for one list of ids.

    Raises:
        HostInitError: ``hil_frame_decoder_init`` refused the ids (none, more than
            255, 0xFF or one twice).
    """

    def __init__(self, ids: list[int], *, checked: bool = False) -> None:
        self.ids = list(ids)
        self.checked = checked
        self._lib = library()
        ok = ctypes.c_int(0)
        self._handle = self._lib.shim_frames_new(
            _bytes(bytes(i & 0xFF for i in ids)), len(ids), int(checked), ctypes.byref(ok)
        )
        if not ok.value:
            raise HostInitError(f"hil_frame_decoder_init refused {len(ids)} ids")

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            self._lib.shim_free(self._handle)

    def encode(self, raw: list[int]) -> bytes:
        """One frame carrying the codes ``raw``."""
        codes = (ctypes.c_int16 * len(raw))(*raw)
        out = (ctypes.c_uint8 * (4 + 3 * len(raw)))()
        size = self._lib.shim_frames_encode(self._handle, codes, out)
        return bytes(out[:size])

    def feed(self, data: bytes) -> list[tuple[int, ...]]:
        """Decode the bytes; the raw codes of every frame completed by them."""
        most = len(data) // 4 + 1
        raw = (ctypes.c_int16 * (most * len(self.ids)))()
        frames = self._lib.shim_frames_feed(self._handle, _bytes(data), len(data), raw, most)
        n = len(self.ids)
        return [tuple(raw[k * n : (k + 1) * n]) for k in range(frames)]

    def stats(self) -> dict[str, int]:
        """The decoder's counters, named as hil_bridge's FrameStats."""
        values = (ctypes.c_uint32 * 7)()
        self._lib.shim_frames_stats(self._handle, values)
        names = ("frames", "bad_ids", "bad_crc", "duplicates", "lost", "skipped_bytes", "resyncs")
        return dict(zip(names, values, strict=True))


def frame_encode_n(n: int, *, checked: bool = False, seq: int = 0) -> bytes:
    """``hil_frame_encode`` of ``n`` signals, ids and codes 0, 1, 2...; b"" if it refuses."""
    out = (ctypes.c_uint8 * 1024)()
    size = library().shim_frame_encode_n(n, int(checked), seq, out)
    return bytes(out[:size])


class HostMcu:
    """The firmware's behaviour core (``mcu_core.c``) on a millisecond clock the test drives."""

    def __init__(self, *, checked: bool = False, start_ms: int = 0) -> None:
        self._lib = library()
        self._handle = self._lib.shim_mcu_new(int(checked), start_ms)
        self.now_ms = start_ms

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            self._lib.shim_free(self._handle)

    def feed(self, data: bytes, now_ms: int | None = None) -> None:
        """Bytes from the control loop at ``now_ms`` (default: the current time)."""
        self.now_ms = self.now_ms if now_ms is None else now_ms
        self._lib.shim_mcu_feed(self._handle, _bytes(data), len(data), self.now_ms)

    def tick(self, now_ms: int) -> None:
        """Run what is due at ``now_ms``."""
        self.now_ms = now_ms
        self._lib.shim_mcu_tick(self._handle, now_ms)

    def take(self) -> bytes:
        """Everything the MCU queued for the serial port."""
        out = ctypes.create_string_buffer(4096)
        n = self._lib.shim_mcu_take(self._handle, out, len(out))
        return out.raw[:n]

    def set_tl2(self, name: str, value: int) -> None:
        """Set a TL2 field (tenths for ``ultrasonic_cm`` and ``heading_deg``)."""
        self._lib.shim_mcu_set_tl2(self._handle, TL2_FIELDS.index(name), value)

    def set_watchdog(self, milliseconds: int) -> None:
        """Watchdog timeout; 0 disables it (a fault build)."""
        self._lib.shim_mcu_set_watchdog(self._handle, milliseconds)

    def state(self) -> dict[str, int]:
        """Motor commands, LED and flags."""
        values = (ctypes.c_int32 * 5)()
        self._lib.shim_mcu_state(self._handle, values)
        return dict(zip(("left", "right", "led_on", "stopped", "heartbeat_lost"), values, strict=True))

    def enable_duty(self, command: int, full: int) -> int:
        """``mcu_enable_duty``: the L298 enable duty of a signed command."""
        return int(self._lib.shim_mcu_enable_duty(command, full))

    def counters(self) -> dict[str, int]:
        """What the core did, counted."""
        values = (ctypes.c_uint32 * len(MCU_COUNTERS))()
        self._lib.shim_mcu_counters(self._handle, values)
        return dict(zip(MCU_COUNTERS, values, strict=True))

    def radio_begin(self, now_ms: int | None = None) -> None:
        """Give the MCU a radio link (``mcu_radio_begin``)."""
        self._lib.shim_mcu_radio_begin(self._handle, self.now_ms if now_ms is None else now_ms)

    def radio_feed(self, data: bytes, now_ms: int | None = None) -> None:
        """Bytes from the radio module at ``now_ms`` (default: the current time)."""
        self.now_ms = self.now_ms if now_ms is None else now_ms
        self._lib.shim_mcu_radio_feed(self._handle, _bytes(data), len(data), self.now_ms)

    def radio_take(self) -> bytes:
        """Everything the MCU queued for the radio link."""
        out = ctypes.create_string_buffer(256)
        n = self._lib.shim_mcu_radio_take(self._handle, out, len(out))
        return out.raw[:n]

    def radio_counters(self) -> dict[str, int]:
        """The radio relay's counters, named as the virtual MCU's ``counters()`` keys."""
        values = (ctypes.c_uint32 * len(RADIO_COUNTERS))()
        self._lib.shim_mcu_radio_counters(self._handle, values)
        return dict(zip(RADIO_COUNTERS, values, strict=True))
