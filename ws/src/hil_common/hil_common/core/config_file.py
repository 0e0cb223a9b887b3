"""Reading config files: UTF-8 text, YAML and JSON, bounded, with errors that name the file.

Every config loader of the workspace (device configs and sets, wiring, telemetry
schemas, parameter files, vectors, worlds) reads through here, so a bad file is a
clear error naming the file and what is wrong, never a traceback:

* not UTF-8: the offset and line of the first bad byte;
* larger than :data:`MAX_BYTES`, nested deeper than :data:`MAX_DEPTH`, or more than
  :data:`MAX_VALUES` values (YAML aliases count every time they are used, so an
  alias bomb stops here instead of in whatever walks it next);
* a mapping key that is not text (YAML reads an unquoted ``1:``, ``yes:`` or ``null:``
  key as a number, a boolean or null; names are text everywhere in our configs);
* a key given twice in one mapping (the lines of both; JSON: the key), which YAML and
  JSON parsers otherwise settle silently by keeping the last;
* an empty file (or one of comments only): every config file here is a mapping;
* an integer wider than 64 bits (no config field holds more, ROS parameters neither).

YAML numbers are read as users write them: besides YAML 1.1's floats (which need a
dot and a signed exponent), the YAML 1.2 forms ``1e300``, ``1e-9``, ``2.5e3`` and
``.5`` are floats, not text, so a range check says what is wrong with them.

The error class is the caller's package's (``error=``), so each package keeps its one
exception class.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from hil_common.errors import HilError

#: Largest config file read (bytes); the biggest shipped config is under 4 KiB, and
#: the pure-Python YAML parser (the C one recurses unchecked) takes seconds per MiB.
MAX_BYTES = 1024 * 1024
#: Deepest nesting of lists and mappings; the shipped configs go 5 deep.
MAX_DEPTH = 32
#: Most values (scalars, lists, mappings) in one file, aliases counted where used.
MAX_VALUES = 200_000
#: Widest integer, in bits besides the sign.
MAX_INT_BITS = 63


_FLOAT_TAG = "tag:yaml.org,2002:float"
#: YAML 1.2 core schema floats (1.5, 1., .5, 1e300, 1.5e-3, .inf, .nan), with YAML 1.1's
#: digit separators; an integer (no dot, no exponent) stays an integer.
_FLOAT = re.compile(
    r"""^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.VERBOSE,
)


class _DuplicateKey(yaml.YAMLError):
    """A mapping of the document gives one key twice."""

    def __init__(self, key: str, first: int, second: int) -> None:
        super().__init__(f"line {second}: duplicate key {key!r:.60} (first on line {first})")


class _Loader(yaml.SafeLoader):
    """PyYAML's pure-Python safe loader with YAML 1.2 floats, refusing duplicate keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """The mapping, once no key of the node itself comes twice (merged ``<<`` keys may)."""
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
                continue
            key = self.construct_object(key_node)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise _DuplicateKey(str(key), seen[key], line)
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


# YAML 1.1's float resolver out (its own dict, not SafeLoader's), the YAML 1.2 one in.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _FLOAT_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(_FLOAT_TAG, _FLOAT, list("-+0123456789."))


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's members, refusing a name given twice."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise ValueError(f"duplicate key {key!r:.60}")
        data[key] = value
    return data


def read_text(path: str | Path, *, what: str, error: type[Exception] = HilError) -> str:
    """The UTF-8 text of a config file of at most :data:`MAX_BYTES`.

    Args:
        path: the file.
        what: what the file is, for the error (``"world"``, ``"device set"``).
        error: the exception class to raise.

    Raises:
        error: unreadable, too large, or not UTF-8; names the file and the bad byte.
    """
    try:
        with Path(path).open("rb") as file:
            data = file.read(MAX_BYTES + 1)
    except OSError as exc:
        raise error(f"{path}: cannot read {what}: {exc.strerror or exc}") from exc
    if len(data) > MAX_BYTES:
        raise error(f"{path}: cannot read {what}: larger than {MAX_BYTES // 1024**2} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(
            f"{path}: cannot read {what}: not UTF-8 text: byte 0x{data[exc.start]:02x} "
            f"at offset {exc.start} (line {line})"
        ) from None


def load_yaml(path: str | Path, *, what: str, error: type[Exception] = HilError) -> Any:
    """Parse a YAML config file (safe loader) and check it against the bounds above.

    Raises:
        error: unreadable, invalid YAML, or out of bounds; names the file (and key).
    """
    text = read_text(path, what=what, error=error)
    try:
        data = yaml.load(text, Loader=_Loader)  # a SafeLoader
    except _DuplicateKey as exc:
        raise error(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise error(f"{path}: cannot read {what}: invalid YAML: {exc}") from exc
    except RecursionError:
        raise error(f"{path}: cannot read {what}: nested more than {MAX_DEPTH} levels deep") from None
    except (ValueError, OverflowError) as exc:  # a scalar the constructor cannot make, e.g. a date
        raise error(f"{path}: cannot read {what}: invalid YAML: {exc}") from exc
    if data is None:
        raise error(f"{path}: empty file, expected a mapping")
    check_values(data, source=f"{path}", error=error)
    return data


def load_json(path: str | Path, *, what: str, error: type[Exception] = HilError) -> Any:
    """Parse a JSON config file and check it against the bounds above.

    Raises:
        error: unreadable, invalid JSON, or out of bounds; names the file (and line or key).
    """
    text = read_text(path, what=what, error=error)
    if not text.strip():
        raise error(f"{path}: empty file, expected a mapping")
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise error(f"{path}: line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}") from exc
    except RecursionError:
        raise error(f"{path}: cannot read {what}: nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # a duplicate key, an integer of more than sys.get_int_max_str_digits() digits
        raise error(f"{path}: cannot read {what}: invalid JSON: {exc}") from exc
    check_values(data, source=f"{path}", error=error)
    return data


def _where(source: str, parts: tuple[str | int, ...]) -> str:
    """``<source>: <dotted key>``, or ``<source>`` at the top level."""
    key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")
    return f"{source}: {key}" if key else source


def check_values(data: Any, *, source: str, error: type[Exception] = HilError) -> None:
    """Check parsed config data: depth, number of values, text keys, integer width.

    Walks iteratively and stops at the first fault, so a deep or aliased structure
    costs at most :data:`MAX_VALUES` steps.

    Raises:
        error: ``<source>: <dotted key>: <what is wrong>``.
    """
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(data, ())]
    count = 0
    while stack:
        value, parts = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise error(
                f"{source}: more than {MAX_VALUES} values (YAML aliases count each time they are used)"
            )
        if len(parts) > MAX_DEPTH:
            raise error(f"{_where(source, parts[:MAX_DEPTH])}: nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise error(f"{_where(source, parts)}: key {key!r:.40} is not text (quote it in YAML)")
                stack.append((item, (*parts, key)))
        elif isinstance(value, list):
            stack.extend((item, (*parts, index)) for index, item in enumerate(value))
        elif isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
            raise error(
                f"{_where(source, parts)}: an integer of {value.bit_length()} bits is too large "
                f"(at most {MAX_INT_BITS + 1})"
            )
