"""Every option of a HIL run, declared once, and the surfaces made from that declaration.

A run's options are the fields of :class:`hil_bringup.core.graph.GraphOptions`; each is
declared with :func:`option`: its default (which gives its type), a description, its
choices or range, the node parameters it sets (``reaches``) and the surfaces that
take it:

* ``launch``: a launch argument of every launch file (``name:=value``);
* ``cli``: a command-line option of ``hil_sim_runner`` and ``hil_side`` (``--name``);
* ``scenario``: a top-level key of a scenario file;
* ``marker``: a keyword of the pytest plugin's ``hil`` marker.

Everything a surface needs (launch argument declarations, argparse options, the
scenario's keys, the marker's keywords, the parsing of launch strings) comes from
here, and ``test_options.py`` checks that each surface offers exactly what it should.
Checks that span several options (``hil_robots`` at most ``robots``) stay in
``GraphOptions.__post_init__``; the per-option ones (type, choices, range) are
:func:`check`'s, the same for every surface. This module imports neither rclpy nor
launch (launch files read it).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from hil_bringup.errors import HilBringupError

#: The surfaces an option can appear on.
SURFACES = frozenset({"launch", "cli", "scenario", "marker"})
_SPEC = "hil_option"

Value = bool | int | float | str
T = TypeVar("T", bool, int, float, str)


@dataclass(frozen=True)
class OptionSpec:
    """What :func:`option` declares about one run option."""

    description: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    #: Node parameters (``node.parameter``) the option's value is passed to unchanged.
    reaches: tuple[str, ...] = ()
    #: The surfaces that take it (:data:`SURFACES`).
    surfaces: frozenset[str] = SURFACES
    #: Other spellings a surface accepts, and the value each stands for (``"": "manual"``).
    aliases: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: A shorter help text for the command line (default: the description).
    unit: str = ""


@dataclass(frozen=True)
class Option:
    """One declared option: its name, default, type and :class:`OptionSpec`."""

    name: str
    default: Value
    spec: OptionSpec

    @property
    def kind(self) -> type:
        """The value's type: bool, int, float or str."""
        return type(self.default)

    @property
    def flag(self) -> str:
        """The command-line spelling (``--hil-robots``)."""
        return "--" + self.name.replace("_", "-")

    def launch_default(self) -> str:
        """The default as a launch argument's text."""
        return to_text(self.default)

    def text_choices(self) -> list[str] | None:
        """The choices as launch argument texts (booleans: true, false), or None."""
        if self.kind is bool:
            return ["true", "false"]
        return list(self.spec.choices) or None

    def help(self) -> str:
        """The description, with the range and the default, for ``--help``."""
        extra = []
        if self.spec.minimum is not None or self.spec.maximum is not None:
            low = "" if self.spec.minimum is None else _number(self.spec.minimum)
            high = "" if self.spec.maximum is None else _number(self.spec.maximum)
            extra.append(f"{low}..{high}{(' ' + self.spec.unit) if self.spec.unit else ''}")
        if self.kind is not bool:
            extra.append(f"default {self.default!r}")
        return self.spec.description.replace("%", "%%") + (f" ({'; '.join(extra)})" if extra else "")


def option(
    default: T,
    description: str,
    *,
    choices: Iterable[str] = (),
    minimum: float | None = None,
    maximum: float | None = None,
    unit: str = "",
    reaches: Iterable[str] = (),
    surfaces: Iterable[str] = SURFACES,
    aliases: Mapping[str, str] | None = None,
) -> T:
    """A dataclass field declaring a run option (see the module's text).

    Raises:
        HilBringupError: a surface that does not exist, or a default its own spec refuses.
    """
    surfaces = frozenset(surfaces)
    unknown = sorted(surfaces - SURFACES)
    if unknown:
        raise HilBringupError(f"option surfaces {unknown} are not among {sorted(SURFACES)}")
    spec = OptionSpec(
        description=description,
        choices=tuple(choices),
        minimum=minimum,
        maximum=maximum,
        unit=unit,
        reaches=tuple(reaches),
        surfaces=surfaces,
        aliases=dict(aliases or {}),
    )
    check(Option("(default)", default, spec), default)
    field: T = dataclasses.field(default=default, metadata={_SPEC: spec})
    return field


def options_of(cls: type) -> dict[str, Option]:
    """The options a dataclass declares with :func:`option`, in field order."""
    found = {}
    for f in dataclasses.fields(cls):
        spec = f.metadata.get(_SPEC)
        if spec is not None:
            found[f.name] = Option(f.name, f.default, spec)  # type: ignore[arg-type]
    return found


def on(cls: type, surface: str) -> dict[str, Option]:
    """The options of ``cls`` that ``surface`` takes."""
    return {name: o for name, o in options_of(cls).items() if surface in o.spec.surfaces}


def to_text(value: Value) -> str:
    """A value as a launch argument or parameter-file text (booleans: true, false)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def check(opt: Option, value: Any) -> Any:
    """``value`` as ``opt`` takes it: its type (ints accepted for floats), choice, range.

    Returns the value (an alias replaced by what it stands for).

    Raises:
        HilBringupError: naming the option, what was given and what it takes
            (``mcu = 'arduino' is not one of virtual, simavr, serial``).
    """
    value, problem = judge(opt, value)
    if problem is not None:
        raise HilBringupError(f"{opt.name} = {problem}")
    return value


def judge(opt: Option, value: Any) -> tuple[Any, str | None]:
    """``value`` as ``opt`` takes it, and what is wrong with it (None: nothing).

    The problem starts with the value as given (``'arduino' is not one of ...``), for a
    caller that names the option its own way (a scenario: file and field).
    """
    try:
        return _checked(opt, value), None
    except _RefusedError as refused:
        return value, str(refused)


class _RefusedError(Exception):
    """What is wrong with a value (caught in :func:`judge`)."""


def _checked(opt: Option, value: Any) -> Any:
    spec, kind = opt.spec, opt.kind
    if kind is str and isinstance(value, str) and value in spec.aliases:
        value = spec.aliases[value]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if type(value) is not kind:
        raise _RefusedError(f"{value!r}: expected {_kind_text(kind)}")
    if spec.choices and value not in spec.choices:
        alias = "".join(f", {a!r} (= {v})" for a, v in spec.aliases.items())
        raise _RefusedError(f"{value!r} is not one of {', '.join(spec.choices)}{alias}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
        if not math.isfinite(number):
            raise _RefusedError(f"{value!r}: expected a finite number")
        if spec.minimum is not None and number < spec.minimum:
            raise _RefusedError(f"{value!r} is below its minimum {_number(spec.minimum)}")
        if spec.maximum is not None and number > spec.maximum:
            raise _RefusedError(f"{value!r} is above its maximum {_number(spec.maximum)}")
    return value


def _number(value: float) -> str:
    """A bound as people write it: 2147483647, 0.5, 1e-06."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


def _kind_text(kind: type) -> str:
    return {bool: "true or false", int: "an integer", float: "a number", str: "a text"}[kind]


def parse_text(opt: Option, text: str) -> Any:
    """A launch argument's (or any text surface's) value, parsed and checked.

    Raises:
        HilBringupError: naming the option (``launch argument rtf:='fast' is not a number``).
    """
    kind = opt.kind
    value: Value
    try:
        if kind is bool:
            lowered = text.strip().lower()
            if lowered not in ("true", "false"):
                raise ValueError
            value = lowered == "true"
        elif kind is int:
            value = int(text)
        elif kind is float:
            value = float(text)
        else:
            value = text
    except ValueError:
        raise HilBringupError(f"{opt.name}:={text!r} is not {_kind_text(kind)}") from None
    return check(opt, value)


def values(cls: type, texts: Mapping[str, str], *, surface: str = "launch") -> dict[str, Value]:
    """The options of ``surface`` parsed from their texts (launch arguments)."""
    return {name: parse_text(opt, texts[name]) for name, opt in on(cls, surface).items() if name in texts}


def add_arguments(
    parser: argparse.ArgumentParser, cls: type, *, surface: str = "cli", unset: Iterable[str] = ()
) -> None:
    """An argparse option per option of ``surface`` (``--hil-robots``), defaults from the declaration.

    Booleans that default to false are flags (``--radio``); every value is parsed and
    checked as :func:`parse_text` does. Options in ``unset`` default to None, so a caller
    can tell whether they were given; :func:`from_namespace` fills in their defaults.
    """
    unset = set(unset)
    for opt in on(cls, surface).values():
        if opt.kind is bool:
            action = "store_true" if not opt.default else argparse.BooleanOptionalAction
            parser.add_argument(opt.flag, action=action, default=opt.default, help=opt.help())
        else:
            parser.add_argument(
                opt.flag,
                type=_argparse_type(opt),
                default=None if opt.name in unset else opt.default,
                choices=None,  # checked (aliases included) by _argparse_type
                metavar=("{" + ",".join(opt.spec.choices) + "}") if opt.spec.choices else None,
                help=opt.help(),
            )


def _argparse_type(opt: Option) -> Any:
    def convert(text: str) -> Any:
        try:
            return parse_text(opt, text)
        except HilBringupError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = opt.kind.__name__  # argparse names the type in its messages
    return convert


def from_namespace(cls: type, namespace: argparse.Namespace, *, surface: str = "cli") -> dict[str, Value]:
    """The options of ``surface`` as :func:`add_arguments` left them in ``namespace`` (None: the default)."""
    found = {}
    for name, opt in on(cls, surface).items():
        value = getattr(namespace, name)
        found[name] = opt.default if value is None else value
    return found
