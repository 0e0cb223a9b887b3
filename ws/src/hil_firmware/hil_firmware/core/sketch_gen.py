"""Generate the bridge-board sketch of a device set and its wiring (the HIL thesis' generator).

The bridge board is an Arduino between the MCU under test and the PC: it reads the
pins the MCU drives (INPUT signals), sends them to the simulator as signal frames
every 5 ms, and drives the pins the MCU reads (OUTPUT signals) from the frames the
simulator sends back. The generated sketch has, in order:

* macros: fast pin access (``PINx``/``PORTx`` bit operations, no digitalRead);
* declarations: signal ids, frame sizes, pin and signal variables;
* handler code (devices with special timing, from templates) and helper functions:
  reading inputs (PWM inputs are sampled every loop and reported as their duty),
  converting frames (the ``hil_protocol`` library's codec, plain or checked),
  writing outputs (digital levels, analogWrite for PWM/ANALOG outputs);
* interrupts: the pin-change interrupts handlers asked for, and a send flag set every
  5 ms from Timer0's compare-match B interrupt (Timer0 keeps running millis() and the
  PWM of pins 5 and 6; its 1.024 ms period is accumulated, so the mean period is
  exactly 5 ms with at most 1.024 ms of jitter);
* ``setup()`` and ``loop()``: read inputs, take frames, write outputs, send when flagged.

Handler templates (``config/handlers/<name>.tmpl``) have sections ``##INCLUDES##``,
``##PINS##``, ``##DECLARATIONS##``, ``##SETUP##``, ``##LOOP##``, ``##FUNCTIONS##``,
``##UPDATE##`` (run when a frame brought new values) and ``##PCINT <pin>##`` (run by
the pin-change interrupt when that pin changes; the generator writes one ISR per
vector, so handlers can share one). ``%name%`` is made unique per device instance;
``%pin.PORT%``, ``%pin.PIN%``, ``%pin.DDR%``, ``%pin.BIT%``, ``%pin.PCINTE%``,
``%pin.PCMSK%``, ``%pin.PCINT%`` and ``%pin.NUMBER%`` resolve from the wiring, and
``%signal.VALUE%`` is the variable holding the signal's physical value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hil_bridge.core.signal_protocol import SignalLayout
from hil_devices.core.devices import DeviceInstance, Direction, PinMode, SignalSpec, SignalType
from hil_devices.core.handler_template import PIN_DIRECTIVES, HandlerTemplate, needs_of, template_for
from hil_devices.core.profile import RobotProfile, device_instances
from hil_devices.core.wiring import PINS, Wiring, autowire, check_wiring
from hil_firmware.errors import HilFirmwareError

_PLACEHOLDER = re.compile(r"%([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?%")
SEND_PERIOD_US = 5000
TIMER0_PERIOD_US = 1024  # 64 x 256 cycles at 16 MHz


def profile_sketch_inputs(
    profile: RobotProfile, templates: Mapping[str, HandlerTemplate], *, board: str = "nano"
) -> tuple[list[DeviceInstance], Wiring]:
    """The device set and bridge-board wiring of a robot profile, for :func:`generate_sketch`.

    The bridge board's pins are its own, autowired as ``hil_sketch generate`` does
    (:func:`hil_devices.core.wiring.autowire`): an analog input of the robot's MCU is
    fed from a PWM pin of the bridge board through an RC filter, so the two boards'
    pin numbers differ. ``hil_robot show`` lists which goes to which.

    Raises:
        HilFirmwareError: a device without a handler template it needs, or no free pin.
    """
    devices = device_instances(profile)
    return devices, autowire(needs_of(devices, templates), board=board)


def _c_number(value: float, kind: SignalType) -> str:
    if kind is SignalType.INTEGER:
        return f"{int(value)}L"
    text = repr(float(value))
    return text if ("." in text or "e" in text) else text + ".0"


class _Writer:
    """Lines of C, with a blank line between blocks."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def block(self, *lines: str) -> None:
        if self.lines and self.lines[-1] != "":
            self.lines.append("")
        self.lines.extend(lines)

    def text(self) -> str:
        return "\n".join(self.lines).rstrip("\n") + "\n"


@dataclass(frozen=True)
class _Signal:
    """A signal of the link as the sketch handles it."""

    device: str
    spec: SignalSpec
    id: int
    pin: int | None  # None: served by the device's handler

    @property
    def var(self) -> str:
        return f"{self.device}_{self.spec.name}"

    @property
    def integer(self) -> bool:
        return self.spec.type is SignalType.INTEGER

    def to_raw(self, value: str) -> str:
        lo, hi = _c_number(self.spec.min, self.spec.type), _c_number(self.spec.max, self.spec.type)
        if self.integer:
            return f"hil_int_to_raw({value}, {lo}, {hi}, HIL_CHECKED)"
        return f"hil_float_to_raw({value}, {lo}, {hi}, HIL_CHECKED)"

    def from_raw(self, raw: str) -> str:
        lo, hi = _c_number(self.spec.min, self.spec.type), _c_number(self.spec.max, self.spec.type)
        if self.integer:
            return f"hil_raw_to_int({raw}, {lo}, {hi}, HIL_CHECKED)"
        return f"hil_raw_to_float({raw}, {lo}, {hi})"


def _pin_value(pin: int, directive: str) -> str:
    info = PINS[pin]
    return {
        "PORT": f"PORT{info.port}",
        "PIN": f"PIN{info.port}",
        "DDR": f"DDR{info.port}",
        "BIT": str(info.bit),
        "PCINTE": f"PCIE{info.pcint_group}",
        "PCMSK": f"PCMSK{info.pcint_group}",
        "PCINT": f"PCINT{info.pcint}",
        "NUMBER": str(pin),
    }[directive]


def _expand(code: str, device: DeviceInstance, wiring: Wiring, signals: Mapping[str, _Signal]) -> str:
    def replace(match: re.Match[str]) -> str:
        name, directive = match.groups()
        if directive is None:
            return f"{device.name}_{name}"
        if directive == "VALUE":
            if name not in signals:
                raise HilFirmwareError(
                    f"{device.name}: template uses %{name}.VALUE%, the device has no signal {name}"
                )
            return signals[name].var
        key = f"{device.name}.{name}"
        if directive not in PIN_DIRECTIVES or key not in wiring.pins:
            raise HilFirmwareError(
                f"{device.name}: template placeholder {match.group(0)} resolves to nothing"
            )
        return _pin_value(wiring.pins[key], directive)

    return _PLACEHOLDER.sub(replace, code)


def _indent(code: str, spaces: int = 4) -> list[str]:
    return [(" " * spaces + line) if line.strip() else "" for line in code.splitlines()]


_PORT_OF_GROUP = {0: "B", 1: "C", 2: "D"}


class _Sketch:
    """The parts of one bridge-board sketch, each written by one method."""

    def __init__(
        self,
        devices: Sequence[DeviceInstance],
        wiring: Wiring,
        templates: Mapping[str, HandlerTemplate],
        *,
        name: str,
    ) -> None:
        check_wiring(needs_of(devices, templates), wiring)
        self.name = name
        self.wiring = wiring
        handled = {d.name for d in devices if d.config.handler is not None}
        self.signals = [
            _Signal(
                s.device,
                s.spec,
                s.id,
                None if s.device in handled else wiring.pins[f"{s.device}.{s.spec.name}"],
            )
            for s in SignalLayout(devices).slots
        ]
        self.inputs = [s for s in self.signals if s.spec.direction is Direction.INPUT]
        self.outputs = [s for s in self.signals if s.spec.direction is Direction.OUTPUT]
        if not self.signals:
            raise HilFirmwareError(f"{name}: the device set has no signals")
        self.by_device: dict[str, dict[str, _Signal]] = {}
        for sig in self.signals:
            self.by_device.setdefault(sig.device, {})[sig.spec.name] = sig
        self.handlers = [(d, template_for(d, templates)) for d in devices if d.config.handler is not None]
        self.sampled = [x for x in self.inputs if x.pin is not None and x.spec.mode is PinMode.PWM]
        self.counted = [x for x in self.inputs if x.pin is not None and x.spec.mode is PinMode.INTERRUPT]
        self.vectors: dict[int, list[tuple[DeviceInstance, str, str]]] = {}
        for device, template in self.handlers:
            for pin_name, code in template.pcint.items():
                group = PINS[wiring.pins[f"{device.name}.{pin_name}"]].pcint_group
                self.vectors.setdefault(group, []).append((device, pin_name, code))

    def expand(self, device: DeviceInstance, code: str) -> str:
        return _expand(code, device, self.wiring, self.by_device[device.name])

    def section(self, section: str, *, indent: int = 4) -> list[str]:
        """A template section of every handler, expanded and labelled."""
        lines: list[str] = []
        for device, template in self.handlers:
            code = template.sections.get(section)
            if code:
                lines += [f"{' ' * indent}/* {device.name} */", *_indent(self.expand(device, code), indent)]
        return lines

    def header(self, w: _Writer, *, checked: bool, baud: int, source: str) -> None:
        w.block(
            f"/* {self.name}: the bridge board of a HIL signal link.",
            f" * Generated by hil_sketch{source}; do not edit.",
            " *",
            f" * {len(self.inputs)} INPUT signals (read from the MCU under test, sent every 5 ms) and",
            f" * {len(self.outputs)} OUTPUT signals (from the simulator, driven onto pins), "
            f"{'checked' if checked else 'plain'} frames at {baud} baud.",
            " * Needs the hil_protocol library (firmware/libraries/hil_protocol).",
            " */",
        )
        includes = ["#include <hil_signal.h>"]
        for _, template in self.handlers:
            for line in template.sections.get("INCLUDES", "").splitlines():
                if line.strip() and line.strip() not in includes:
                    includes.append(line.strip())
        w.block(*includes)

    def macros(self, w: _Writer) -> None:
        w.block("/* --- macros: fast pin access ----------------------------------------------- */")
        for sig in self.signals:
            if sig.pin is None:
                continue
            info, macro = PINS[sig.pin], sig.var.upper()
            if sig.spec.direction is Direction.INPUT:
                w.lines.append(
                    f"#define {macro}_READ() ((PIN{info.port} >> {info.bit}) & 1) /* pin {info.name} */"
                )
            elif sig.spec.mode is PinMode.DIGITAL:
                w.lines.append(
                    f"#define {macro}_WRITE(level) do {{ if (level) PORT{info.port} |= _BV({info.bit}); "
                    f"else PORT{info.port} &= (uint8_t)~_BV({info.bit}); }} while (0) /* pin {info.name} */"
                )

    def declarations(self, w: _Writer, *, checked: bool, baud: int) -> None:
        input_ids = ", ".join(str(x.id) for x in self.inputs)
        output_ids = ", ".join(str(x.id) for x in self.outputs)
        w.block(
            "/* --- declarations ------------------------------------------------------------- */",
            f"#define HIL_CHECKED {int(checked)}",
            f"#define HIL_BAUD {baud}UL",
        )
        if self.inputs:
            w.lines += [
                f"#define INPUT_COUNT {len(self.inputs)}",
                f"static const uint8_t input_ids[INPUT_COUNT] = {{{input_ids}}};",
                "static int16_t input_raw[INPUT_COUNT];",
                "static uint8_t frame_out[HIL_FRAME_SIZE(INPUT_COUNT, HIL_CHECKED)];",
                "static hil_frame_encoder encoder;",
                "static volatile uint8_t send_flag;",
                "static uint16_t send_clock_us; /* Timer0 periods accumulated toward the next send */",
            ]
        if self.outputs:
            w.lines += [
                f"#define OUTPUT_COUNT {len(self.outputs)}",
                f"static const uint8_t output_ids[OUTPUT_COUNT] = {{{output_ids}}};",
                "static int16_t output_raw[OUTPUT_COUNT];",
                "static uint8_t frame_in[HIL_FRAME_SIZE(OUTPUT_COUNT, HIL_CHECKED)];",
                "static hil_frame_decoder decoder;",
            ]
        w.block("/* The physical value of every signal. */")
        for sig in self.signals:
            kind = "long" if sig.integer else "double"
            default = _c_number(sig.spec.default, sig.spec.type)
            w.lines.append(f"static {kind} {sig.var} = {default}; /* {sig.spec.mode.value} */")
        if self.sampled:
            w.block("/* PWM inputs: loop samples, and how many were high, since the last frame. */")
            w.lines += [f"static uint16_t {x.var}_samples, {x.var}_high;" for x in self.sampled]
        if self.counted:
            w.block("/* INTERRUPT inputs: rising edges since the last frame. */")
            w.lines += [f"static volatile uint16_t {x.var}_edges;" for x in self.counted]
        for device, template in self.handlers:
            code = template.sections.get("DECLARATIONS")
            if code:
                w.block(
                    f"/* {device.name} ({template.name} handler) */", *self.expand(device, code).splitlines()
                )

    def handler_functions(self, w: _Writer) -> None:
        w.block("/* --- handler functions ----------------------------------------------------------- */")
        for device, template in self.handlers:
            code = template.sections.get("FUNCTIONS")
            if code:
                w.block(*self.expand(device, code).splitlines())
        for sig in self.counted:
            w.block(f"static void {sig.var}_edge(void) {{ {sig.var}_edges++; }}")

    def read_inputs(self, w: _Writer) -> None:
        w.block("/* --- helpers ------------------------------------------------------------------------- */")
        w.block("/* Sample the pins the MCU drives (every loop). */", "static void read_inputs(void) {")
        for sig in self.inputs:
            if sig.pin is None or sig.spec.mode is PinMode.INTERRUPT:
                continue
            lo, hi = _c_number(sig.spec.min, sig.spec.type), _c_number(sig.spec.max, sig.spec.type)
            if sig.spec.mode is PinMode.PWM:
                w.lines += [f"    {sig.var}_samples++;", f"    {sig.var}_high += {sig.var.upper()}_READ();"]
            elif sig.spec.mode is PinMode.ANALOG:
                adc = f"analogRead({sig.pin})"
                span = _c_number(sig.spec.max - sig.spec.min, sig.spec.type)
                value = (
                    f"hil_rounding_map({adc}, 0, 1023, {lo}, {hi})"
                    if sig.integer
                    else f"{lo} + {adc} * ({span} / 1023.0)"
                )
                w.lines.append(f"    {sig.var} = {value};")
            else:
                w.lines.append(f"    {sig.var} = {sig.var.upper()}_READ() ? {hi} : {lo};")
        w.lines.append("}")

    def send_frame(self, w: _Writer) -> None:
        if not self.inputs:
            return
        w.block("/* The INPUT signals as one frame to the simulator. */", "static void send_frame(void) {")
        w.lines.append("    uint16_t size;")
        for sig in self.sampled:
            lo, hi = _c_number(sig.spec.min, sig.spec.type), _c_number(sig.spec.max, sig.spec.type)
            duty = (
                f"hil_rounding_map({sig.var}_high, 0, {sig.var}_samples, {lo}, {hi})"
                if sig.integer
                else f"{lo} + ({hi} - {lo}) * {sig.var}_high / {sig.var}_samples"
            )
            w.lines += [
                f"    if ({sig.var}_samples > 0) {{",
                f"        {sig.var} = {duty};",
                f"        {sig.var}_samples = {sig.var}_high = 0;",
                "    }",
            ]
        for sig in self.counted:
            w.lines += [
                "    noInterrupts();",
                f"    {sig.var} = {sig.var}_edges;",
                f"    {sig.var}_edges = 0;",
            ]
            w.lines.append("    interrupts();")
        w.lines += [f"    input_raw[{i}] = {x.to_raw(x.var)};" for i, x in enumerate(self.inputs)]
        w.lines += [
            "    size = hil_frame_encode(&encoder, input_ids, input_raw, INPUT_COUNT, frame_out);",
            "    Serial.write(frame_out, size);",
            "}",
        ]

    def take_frame(self, w: _Writer) -> None:
        w.block("/* Handlers take new OUTPUT values (after each frame, and the defaults at start). */")
        w.lines += ["static void update_handlers(void) {", *self.section("UPDATE"), "}"]
        if not self.outputs:
            return
        w.block("/* A frame from the simulator: the new OUTPUT values. */", "static void take_frame(void) {")
        w.lines += [f"    {x.var} = {x.from_raw(f'output_raw[{i}]')};" for i, x in enumerate(self.outputs)]
        w.lines += ["    update_handlers();", "}"]

    def write_outputs(self, w: _Writer) -> None:
        w.block(
            "/* Drive the pins the MCU reads from the OUTPUT values. */", "static void write_outputs(void) {"
        )
        for sig in self.outputs:
            if sig.pin is None:
                continue
            lo, hi = _c_number(sig.spec.min, sig.spec.type), _c_number(sig.spec.max, sig.spec.type)
            if sig.spec.mode in (PinMode.PWM, PinMode.ANALOG):
                duty = (
                    f"(int)hil_rounding_map({sig.var}, {lo}, {hi}, 0, 255)"
                    if sig.integer
                    else f"(int)(({sig.var} - {lo}) * (255.0 / ({hi} - {lo})) + 0.5)"
                )
                w.lines.append(f"    analogWrite({sig.pin}, {duty});")
            else:
                w.lines.append(f"    {sig.var.upper()}_WRITE({sig.var} * 2 > {lo} + {hi});")
        w.lines.append("}")

    def interrupts(self, w: _Writer) -> None:
        w.block("/* --- interrupts ---------------------------------------------------------------------- */")
        if self.inputs:
            w.block(
                "/* Once per Timer0 period (1.024 ms); every 5 ms on average, the send flag. */",
                "ISR(TIMER0_COMPB_vect) {",
                f"    send_clock_us += {TIMER0_PERIOD_US};",
                f"    if (send_clock_us >= {SEND_PERIOD_US}) {{",
                f"        send_clock_us -= {SEND_PERIOD_US};",
                "        send_flag = 1;",
                "    }",
                "}",
            )
        for group, users in sorted(self.vectors.items()):
            w.block(f"static uint8_t pcint{group}_last;")
            w.block(f"ISR(PCINT{group}_vect) {{", f"    uint8_t now = PIN{_PORT_OF_GROUP[group]};")
            w.lines += [f"    uint8_t changed = now ^ pcint{group}_last;", f"    pcint{group}_last = now;"]
            for device, pin_name, code in users:
                bit = PINS[self.wiring.pins[f"{device.name}.{pin_name}"]].bit
                w.lines.append(f"    if (changed & _BV({bit})) {{ /* {device.name}.{pin_name} */")
                w.lines += [*_indent(self.expand(device, code), 8), "    }"]
            w.lines.append("}")

    def setup_and_loop(self, w: _Writer) -> None:
        w.block(
            "/* --- setup and loop -------------------------------------------------------------------- */"
        )
        w.block("void setup() {", "    Serial.begin(HIL_BAUD);")
        for sig in self.signals:
            if sig.pin is not None:
                mode = "INPUT" if sig.spec.direction is Direction.INPUT else "OUTPUT"
                w.lines.append(f"    pinMode({sig.pin}, {mode}); /* {sig.device}.{sig.spec.name} */")
        for sig in self.counted:
            w.lines.append(f"    attachInterrupt(digitalPinToInterrupt({sig.pin}), {sig.var}_edge, RISING);")
        w.lines += [f"    pcint{group}_last = PIN{_PORT_OF_GROUP[group]};" for group in sorted(self.vectors)]
        w.lines += self.section("SETUP")
        if self.outputs:
            w.lines.append(
                "    hil_frame_decoder_init(&decoder, output_ids, OUTPUT_COUNT, HIL_CHECKED, frame_in);"
            )
        w.lines += [
            "    update_handlers(); /* the defaults, until the simulator sends values */",
            "    write_outputs();",
        ]
        if self.inputs:
            w.lines += [
                "    hil_frame_encoder_init(&encoder, HIL_CHECKED);",
                "    TIMSK0 |= _BV(OCIE0B); /* the 5 ms send flag */",
            ]
        w.lines.append("}")
        w.block("void loop() {", "    read_inputs();")
        if self.outputs:
            w.lines += [
                "    while (Serial.available() > 0) {",
                "        if (hil_frame_feed(&decoder, (uint8_t)Serial.read(), output_raw)) {",
                "            take_frame();",
                "            write_outputs();",
                "        }",
                "    }",
            ]
        w.lines += self.section("LOOP")
        if self.inputs:
            w.lines += ["    if (send_flag) {", "        send_flag = 0;", "        send_frame();", "    }"]
        w.lines.append("}")


def generate_sketch(
    devices: Sequence[DeviceInstance],
    wiring: Wiring,
    templates: Mapping[str, HandlerTemplate],
    *,
    name: str = "bridge_board",
    checked: bool = False,
    baud: int = 115200,
    source: str = "",
) -> str:
    """The ``.ino`` text of the bridge board for ``devices`` wired as ``wiring``.

    Args:
        devices: the device set of the link.
        wiring: a complete wiring (see :func:`hil_devices.core.wiring.autowire`).
        templates: the handler templates by name.
        name: the sketch's name (its folder's).
        checked: checked frames (the signal bridge's ``checked`` must match).
        baud: serial speed (the signal bridge's ``baud`` must match).
        source: text for the header, naming the files it was made from.

    Raises:
        HilFirmwareError: the wiring does not serve the device set, or a template is
            missing or uses a placeholder that resolves to nothing.
    """
    sketch = _Sketch(devices, wiring, templates, name=name)
    w = _Writer()
    sketch.header(w, checked=checked, baud=baud, source=source)
    sketch.macros(w)
    sketch.declarations(w, checked=checked, baud=baud)
    sketch.handler_functions(w)
    sketch.read_inputs(w)
    sketch.send_frame(w)
    sketch.take_frame(w)
    sketch.write_outputs(w)
    sketch.interrupts(w)
    sketch.setup_and_loop(w)
    return w.text()


def write_sketch(folder: Path, text: str) -> Path:
    """Write ``<folder>/<folder name>.ino`` (an Arduino sketch folder); returns the file."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{folder.name}.ino"
    path.write_text(text)
    return path
