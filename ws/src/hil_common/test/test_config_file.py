"""Every config loader turns a bad file into an error naming it, never a traceback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hil_common.core.config_file import MAX_BYTES, MAX_DEPTH, MAX_VALUES, load_yaml
from hil_common.core.param_spec import yaml_defaults
from hil_common.errors import HilError
from hil_devices.core.devices import load_device_set
from hil_devices.core.library import load_device_config, load_device_library
from hil_devices.core.telemetry import TelemetrySchema
from hil_devices.core.wiring import load_wiring

CONFIG = Path(__file__).resolve().parents[2] / "hil_devices" / "config"
LIBRARY = load_device_library([CONFIG / "devices"])

#: Loader of each kind of config file, and the name its errors give it.
YAML_LOADERS: dict[str, Callable[[Path], object]] = {
    "device set": lambda path: load_device_set(path, LIBRARY),
    "telemetry schema": TelemetrySchema.from_yaml,
    "wiring": load_wiring,
    "parameter file": lambda path: yaml_defaults(path, "node"),
}
LOADERS: dict[str, tuple[str, Callable[[Path], object]]] = {
    "device config": ("json", load_device_config),
    **{what: ("yaml", loader) for what, loader in YAML_LOADERS.items()},
}

#: An alias bomb: nine references per level, 9**7 values once expanded.
ALIAS_BOMB = "a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
    f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * 9)}]\n" for level in range(1, 8)
)


def load(tmp_path: Path, what: str, content: bytes) -> str:
    """Write ``content`` as a ``what`` file, load it, and return the error's text."""
    extension, loader = LOADERS[what]
    path = tmp_path / f"bad.{extension}"
    path.write_bytes(content)
    with pytest.raises(HilError) as info:
        loader(path)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    return message.removeprefix(f"{path}: ")


@pytest.mark.parametrize("what", LOADERS)
def test_non_utf8_file_is_named_with_the_offset_and_line_of_the_bad_byte(tmp_path: Path, what: str) -> None:
    content = b'{"name":\n "caf\xe9"}' if LOADERS[what][0] == "json" else b"name:\n  caf\xe9: 1\n"
    offset = content.index(b"\xe9")
    assert (
        load(tmp_path, what, content)
        == f"cannot read {what}: not UTF-8 text: byte 0xe9 at offset {offset} (line 2)"
    )


@pytest.mark.parametrize("what", LOADERS)
def test_deeply_nested_file_is_refused(tmp_path: Path, what: str) -> None:
    assert "nested more than" in load(tmp_path, what, b"[" * 100_000 + b"]" * 100_000)


@pytest.mark.parametrize("what", LOADERS)
def test_file_just_past_the_depth_limit_names_where(tmp_path: Path, what: str) -> None:
    depth = MAX_DEPTH + 1
    message = load(tmp_path, what, b'{"a": ' * depth + b"1" + b"}" * depth)
    assert message == "a" + ".a" * (MAX_DEPTH - 1) + f": nested more than {MAX_DEPTH} levels deep"


@pytest.mark.parametrize("what", LOADERS)
def test_a_401_digit_integer_is_refused_naming_its_key(tmp_path: Path, what: str) -> None:
    message = load(tmp_path, what, b'{"name": {"x": [0, ' + b"9" * 401 + b"]}}")
    assert message == "name.x[1]: an integer of 1333 bits is too large (at most 64)"


@pytest.mark.parametrize("what", LOADERS)
def test_a_file_larger_than_the_limit_is_refused(tmp_path: Path, what: str) -> None:
    assert load(tmp_path, what, b" " * (MAX_BYTES + 1)) == f"cannot read {what}: larger than 1 MiB"


@pytest.mark.parametrize("what", LOADERS)
def test_a_folder_is_not_read(tmp_path: Path, what: str) -> None:
    folder = tmp_path / f"bad.{LOADERS[what][0]}"
    folder.mkdir()
    with pytest.raises(HilError, match=f"{folder}: cannot read {what}: Is a directory"):
        LOADERS[what][1](folder)


@pytest.mark.parametrize("what", YAML_LOADERS)
@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"1: a\nb: 2\n", "key 1 is not text (quote it in YAML)"),
        (b"devices:\n  - {name: m, device: led, 3: 4}\n", "devices[0]: key 3 is not text"),
        (b"pins: {yes: 3}\n", "pins: key True is not text"),
        (b"null: 1\n", "key None is not text"),
    ],
)
def test_a_yaml_key_that_is_not_text_is_named(
    tmp_path: Path, what: str, content: bytes, expected: str
) -> None:
    assert load(tmp_path, what, content).startswith(expected)


@pytest.mark.parametrize("what", YAML_LOADERS)
def test_an_alias_bomb_stops_at_the_value_limit(tmp_path: Path, what: str) -> None:
    assert load(tmp_path, what, ALIAS_BOMB.encode()) == (
        f"more than {MAX_VALUES} values (YAML aliases count each time they are used)"
    )


@pytest.mark.parametrize("what", YAML_LOADERS)
def test_a_scalar_yaml_cannot_construct_is_invalid_yaml(tmp_path: Path, what: str) -> None:
    assert load(tmp_path, what, b"when: 2024-13-45\n").startswith(f"cannot read {what}: invalid YAML: ")


def test_json_beyond_pythons_integer_digit_limit_is_invalid_json(tmp_path: Path) -> None:
    message = load(tmp_path, "device config", b'{"name": ' + b"9" * 5000 + b"}")
    assert message.startswith("cannot read device config: invalid JSON: ")


@pytest.mark.parametrize(
    "entry",
    ["{name: m, device: [led]}", "{name: m, device: {led: 1}}", "{name: m, device: 3}"],
    ids=["list", "mapping", "number"],
)
def test_a_device_set_entry_whose_device_is_no_name_is_refused(tmp_path: Path, entry: str) -> None:
    message = load(tmp_path, "device set", f"devices:\n  - {entry}\n".encode())
    assert message.startswith("devices[0] (m): field 'device': ")
    assert message.endswith("is not a device name")


def test_a_shipped_config_passes_the_checks() -> None:
    assert load_yaml(CONFIG / "demo_robot_devices.yaml", what="device set")["devices"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1e300", 1e300),
        ("1e-9", 1e-9),
        ("-2E+3", -2000.0),
        ("1.5e3", 1500.0),
        ("1.0e5", 1e5),
        (".5", 0.5),
        ("-.5e2", -50.0),
        ("1_000.5", 1000.5),
        ("1", 1),
        ("-7", -7),
        ("0x1F", 31),
        ("1e", "1e"),
        ("e5", "e5"),
        ("1.2.3", "1.2.3"),
    ],
)
def test_yaml_numbers_read_as_users_write_them(tmp_path: Path, text: str, value: object) -> None:
    path = tmp_path / "numbers.yaml"
    path.write_text(f"value: {text}\n")
    read = load_yaml(path, what="numbers")["value"]
    assert read == value and type(read) is type(value)


@pytest.mark.parametrize("what", LOADERS)
@pytest.mark.parametrize(
    ("content", "yaml_message", "json_message"),
    [
        (b"", "empty file, expected a mapping", "empty file, expected a mapping"),
        (b" \n\n", "empty file, expected a mapping", "empty file, expected a mapping"),
        (b"# only a comment\n", "empty file, expected a mapping", "line 1 column 1: invalid JSON"),
        (
            b'{"name": 1,\n "other": 2,\n "name": 3}',
            "line 3: duplicate key 'name' (first on line 1)",
            "cannot read {what}: invalid JSON: duplicate key 'name'",
        ),
        (
            b'{"devices": [{"name": "m",\n  "name": "n"}]}',
            "line 2: duplicate key 'name' (first on line 1)",
            "cannot read {what}: invalid JSON: duplicate key 'name'",
        ),
    ],
    ids=["empty", "blank", "comments-only", "duplicate-top-level", "duplicate-nested"],
)
def test_an_empty_file_or_a_duplicate_key_is_refused_naming_it(
    tmp_path: Path, what: str, content: bytes, yaml_message: str, json_message: str
) -> None:
    expected = yaml_message if LOADERS[what][0] == "yaml" else json_message.format(what=what)
    assert load(tmp_path, what, content).startswith(expected)


def test_yaml_merge_keys_may_be_overridden_without_counting_as_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "merge.yaml"
    path.write_text("base: &base {x: 1, y: 2}\nitem:\n  <<: *base\n  x: 3\n")
    assert load_yaml(path, what="merge")["item"] == {"x": 3, "y": 2}
