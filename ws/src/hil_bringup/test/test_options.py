"""Every run option is declared once; the launch arguments, both command lines, the scenario
keys and the pytest marker are made from that declaration and agree with it."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from hil_bringup import hil_side, hil_sim_runner
from hil_bringup.core.graph import GraphOptions, describe, launch_arguments, package_defaults, reached
from hil_bringup.core.options import SURFACES, check, on, options_of, parse_text, values
from hil_bringup.errors import HilBringupError
from hil_common.errors import HilError
from hil_testing import pytest_plugin
from hil_testing.core import scenario

REPO = Path(__file__).resolve().parents[4]
OPTIONS = options_of(GraphOptions)
#: Node name -> the package whose config/<package>.yaml declares its parameters.
NODE_PACKAGES = {
    "sim": "hil_sim",
    "virtual_mcu": "hil_mcu",
    "simavr_mcu": "hil_mcu",
    "signal_bridge": "hil_bridge",
    "radio_module": "hil_bridge",
    "control_loop": "robot_control",
}


def _flags(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.dest: a for a in parser._actions if a.option_strings}


def test_every_option_is_declared_with_a_description_and_known_surfaces() -> None:
    assert set(OPTIONS) == set(GraphOptions.__dataclass_fields__)
    for name, opt in OPTIONS.items():
        assert len(opt.spec.description) > 20, name
        assert opt.spec.surfaces <= SURFACES, name
        assert check(opt, opt.default) == opt.default, name


def test_the_launch_arguments_are_the_launch_options_plus_rviz() -> None:
    arguments = launch_arguments()
    assert list(arguments) == [*on(GraphOptions, "launch"), "rviz"]
    for name, opt in on(GraphOptions, "launch").items():
        default, description, choices = arguments[name]
        assert parse_text(opt, default) == opt.default, name
        assert description == opt.spec.description
        if opt.kind is bool:
            assert choices == ["true", "false"]
        else:
            assert choices == (list(opt.spec.choices) or None), name


@pytest.mark.parametrize("module", [hil_sim_runner, hil_side], ids=["hil_sim_runner", "hil_side"])
def test_both_command_lines_take_every_cli_option_with_its_default(module: object) -> None:
    flags = _flags(module.build_parser())  # type: ignore[attr-defined]
    for name, opt in on(GraphOptions, "cli").items():
        assert name in flags, f"{name} missing"
        assert opt.flag in flags[name].option_strings
        if name not in ("fault_drop", "fault_corrupt"):  # unset: they imply --faults when given
            assert flags[name].default == opt.default, name
    not_cli = set(OPTIONS) - set(on(GraphOptions, "cli"))
    assert not not_cli & set(flags), f"options that are not cli options: {not_cli & set(flags)}"


def test_scenario_keys_are_the_scenario_options_and_its_own() -> None:
    assert tuple(on(GraphOptions, "scenario")) == scenario.RUN_KEYS
    assert set(scenario.RUN_KEYS) <= set(scenario._TOP_KEYS)


def test_the_marker_takes_the_marker_options_and_start(tmp_path: Path) -> None:
    for name, opt in on(GraphOptions, "marker").items():
        value = opt.default if name != "world" else ""
        options, _ = pytest_plugin.session_options({name: value}, base=tmp_path)
        assert getattr(options, name) == (value if name != "behaviour" else value or "manual")
    with pytest.raises(HilError, match=r"unknown option\(s\) \['rtf'\]"):
        pytest_plugin.session_options({"rtf": 1.0}, base=tmp_path)


def test_every_reached_parameter_is_one_the_node_declares() -> None:
    for name, opt in OPTIONS.items():
        for target in opt.spec.reaches:
            node, parameter = target.split(".", 1)
            assert parameter in package_defaults(NODE_PACKAGES[node], node), f"{name} -> {target}"


@pytest.mark.parametrize("mcu", ["virtual", "simavr"])
def test_the_nodes_get_what_the_options_reach(mcu: str) -> None:
    options = GraphOptions(mcu=mcu, checked=True, seed=7, behaviour="light", robots=3)
    nodes, _ = describe(options)
    for node in nodes:
        for parameter, value in reached(options, node.name).items():
            assert node.parameters[parameter] == value, f"{node.key}.{parameter}"
    loop = next(n for n in nodes if n.name == "control_loop")
    assert loop.parameters["behaviour"] == "light"


@pytest.mark.parametrize("spelling", ["manual", ""])
def test_manual_is_a_typeable_choice_everywhere(spelling: str, tmp_path: Path) -> None:
    assert GraphOptions(behaviour=spelling).behaviour == "manual"
    assert values(GraphOptions, {"behaviour": spelling})["behaviour"] == "manual"
    assert hil_sim_runner.parse(["--behaviour", spelling]).behaviour == "manual"
    assert hil_side.parse(["robot", "--behaviour", spelling]).behaviour == "manual"
    assert "manual" in launch_arguments()["behaviour"][2]  # type: ignore[operator]
    file = tmp_path / "s.yaml"
    checks = "assertions: [{no_failsafe: {reasons: [mcu]}}]"
    file.write_text(f"duration: 1\nbehaviour: '{spelling}'\nworld: empty\n{checks}\n")
    assert scenario.load_scenario(file).behaviour == "manual"
    options, _ = pytest_plugin.session_options({"behaviour": spelling}, base=tmp_path)
    assert options.behaviour == "manual"


def test_swarm_is_a_behaviour_of_every_surface() -> None:
    assert "swarm" in launch_arguments()["behaviour"][2]  # type: ignore[operator]
    assert hil_sim_runner.parse(["--behaviour", "swarm"]).behaviour == "swarm"
    assert hil_side.parse(["robot", "--behaviour", "swarm"]).behaviour == "swarm"


@pytest.mark.parametrize(
    ("texts", "words"),
    [
        ({"rtf": "fast"}, "rtf:='fast' is not a number"),
        ({"robots": "1.5"}, "robots:='1.5' is not an integer"),
        ({"radio": "yes"}, "radio:='yes' is not true or false"),
        ({"behaviour": "dance"}, "behaviour = 'dance' is not one of manual, boards, light, swarm"),
        ({"robots": "0"}, "robots = 0 is below its minimum 1"),
        ({"fault_drop": "2"}, "fault_drop = 2.0 is above its maximum 1"),
        ({"seed": "-1"}, "seed = -1 is below its minimum 0"),
    ],
)
def test_bad_launch_texts_are_refused_naming_the_option(texts: dict[str, str], words: str) -> None:
    with pytest.raises(HilBringupError, match=re.escape(words)):
        values(GraphOptions, texts)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--robots", "0"], "robots = 0 is below its minimum 1"),
        (["--behaviour", "dance"], "behaviour = 'dance' is not one of"),
        (["--rtf", "nan"], "rtf = nan: expected a finite number"),
        (["--physics", "ode"], "physics = 'ode' is not one of native, mujoco"),
    ],
)
def test_bad_command_line_values_exit_2_naming_the_option(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        hil_sim_runner.parse(argv)
    assert exited.value.code == 2
    assert words in capsys.readouterr().err


def test_design_lists_every_launch_argument() -> None:
    design = (REPO / "DESIGN.md").read_text()
    section = design[design.index("Launch arguments") :][:3000]
    missing = [name for name in launch_arguments() if f"`{name}`" not in section]
    assert not missing, f"DESIGN.md's launch arguments lack {missing}"
