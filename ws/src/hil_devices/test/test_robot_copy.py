"""``hil_robot new``'s copy: every shipped robot makes a self-contained robot folder of a new name."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hil_devices.core.profile import PROFILE_FILE, load_profile, shipped_robots
from hil_devices.core.robot_copy import copy_robot
from hil_devices.errors import HilDevicesError

ROBOTS = Path(__file__).resolve().parents[2] / "hil_robots" / "robots"


#: The rest of a small robot's profile: its body and two motor drivers.
BODY_AND_DEVICES = """\
body: {wheel_radius: 0.033, track: 0.14, mass: 0.8, footprint: {radius: 0.09}}
devices:
  - {name: motor_left, type: l298n, pins: {ena: 5, in1: 7, in2: 8}, params: {wheel: left}}
  - {name: motor_right, type: l298n, pins: {ena: 6, in1: 12, in2: 13}, params: {wheel: right}}
"""


def comments(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.lstrip().startswith("#")]


@pytest.mark.parametrize("robot", sorted(p.parent.name for p in ROBOTS.glob(f"*/{PROFILE_FILE}")))
def test_every_shipped_robot_makes_a_folder_that_loads_under_the_new_name(robot: str, tmp_path: Path) -> None:
    source = ROBOTS / robot
    before = sorted(p.relative_to(source) for p in source.rglob("*") if "build" not in p.parts)
    made = copy_robot(robot, tmp_path / "my_robot")
    assert made.folder == tmp_path / "my_robot"
    profile = load_profile(made.folder)
    assert profile.name == "my_robot" == made.profile.name
    assert profile.board == load_profile(robot).board
    assert len(profile.devices) == len(load_profile(robot).devices)
    # The sketch is the folder's own, named after the robot as the IDE names it.
    assert profile.firmware.sketch == (made.folder / "firmware" / "my_robot").resolve()
    assert (profile.firmware.sketch / "my_robot.ino").is_file()
    assert not list(made.folder.rglob("build"))
    for library in profile.firmware.libraries:
        assert library.is_dir()
    # Each scenario runs this robot; its comments and the profile's stay.
    assert made.scenarios and all(yaml.safe_load(s.read_text())["robot"] == ".." for s in made.scenarios)
    for scenario in made.scenarios:
        assert comments(scenario) == comments(source / "scenarios" / scenario.name)
    assert comments(made.folder / PROFILE_FILE) == comments(source / PROFILE_FILE)
    readme = (made.folder / "README.md").read_text()
    assert "hil_robot check ." in readme and "hil_scenario run scenarios" in readme
    # The source is left as it was.
    assert sorted(p.relative_to(source) for p in source.rglob("*") if "build" not in p.parts) == before
    assert robot in shipped_robots()


def test_a_sketch_and_library_outside_the_folder_are_copied_and_named_absolute(tmp_path: Path) -> None:
    (tmp_path / "sketches" / "drive").mkdir(parents=True)
    (tmp_path / "sketches" / "drive" / "drive.ino").write_text("void setup() {}\nvoid loop() {}\n")
    (tmp_path / "sketches" / "drive" / "motors.ino").write_text("void motors() {}\n")
    (tmp_path / "libs" / "Blink").mkdir(parents=True)
    (tmp_path / "robot").mkdir()
    (tmp_path / "robot" / PROFILE_FILE).write_text(
        "# no name: the folder names it\n"
        "board: uno\n"
        "firmware:\n"
        "  sketch: ../sketches/drive  # outside the folder\n"
        "  libraries: [../libs]\n"
        "serial:\n"
        "  - {uart: 0, baud: 9600, role: command}\n"
        "brain: none\n" + BODY_AND_DEVICES
    )
    made = copy_robot(tmp_path / "robot", tmp_path / "mine" / "rover")
    text = (made.folder / PROFILE_FILE).read_text()
    assert text.startswith("# no name: the folder names it\nname: rover\nboard: uno\n")
    assert "  sketch: firmware/rover  # outside the folder\n" in text
    assert f"  libraries: [{(tmp_path / 'libs').resolve()}]\n" in text
    assert sorted(p.name for p in (made.folder / "firmware" / "rover").iterdir()) == [
        "motors.ino",
        "rover.ino",
    ]
    assert (tmp_path / "sketches" / "drive" / "drive.ino").is_file()  # copied, not moved
    assert made.scenarios == ()


def test_a_copy_of_the_same_name_keeps_its_sketch_where_it_is(tmp_path: Path) -> None:
    made = copy_robot("rab_style", tmp_path / "rab_style")
    tabs = sorted(p.name for p in (made.folder / "firmware" / "rab_style").glob("*.ino"))
    assert tabs == ["encoders.ino", "motors.ino", "pid.ino", "rab_style.ino"]
    assert made.profile.firmware.sketch == (made.folder / "firmware" / "rab_style").resolve()


def test_a_profile_inside_its_sketch_folder_gets_a_sketch_folder_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "rover").mkdir()
    (tmp_path / "rover" / "rover.ino").write_text('#include "pins.h"\nvoid setup() {}\nvoid loop() {}\n')
    (tmp_path / "rover" / "pins.h").write_text("#define LED 13\n")
    (tmp_path / "rover" / PROFILE_FILE).write_text(
        "board: uno\nfirmware: {sketch: .}\nserial: [{uart: 0, baud: 9600, role: command}]\n"
        "brain: none\n" + BODY_AND_DEVICES
    )
    made = copy_robot(tmp_path / "rover", tmp_path / "buggy")
    assert sorted(p.name for p in made.folder.iterdir()) == ["README.md", "firmware", PROFILE_FILE]
    assert sorted(p.name for p in (made.folder / "firmware" / "buggy").iterdir()) == ["buggy.ino", "pins.h"]
    assert "firmware: {sketch: firmware/buggy}" in (made.folder / PROFILE_FILE).read_text()


def test_only_the_firmware_values_change_even_where_a_path_reads_like_a_key(tmp_path: Path) -> None:
    (tmp_path / "r" / "firmware").mkdir(parents=True)
    (tmp_path / "r" / "firmware" / "firmware.ino").write_text("void setup() {}\nvoid loop() {}\n")
    text = (
        "# the sketch is in firmware\nboard: uno\nfirmware: {sketch: firmware}  # firmware\n"
        "serial: [{uart: 0, baud: 9600, role: command}]\nbrain: none\n" + BODY_AND_DEVICES
    )
    (tmp_path / "r" / PROFILE_FILE).write_text(text)
    made = copy_robot(tmp_path / "r", tmp_path / "bot")
    expected = text.replace("board: uno\n", "name: bot\nboard: uno\n").replace(
        "{sketch: firmware}", "{sketch: firmware/bot}"
    )
    assert (made.folder / PROFILE_FILE).read_text() == expected  # the comments as they were
    assert sorted(p.name for p in (made.folder / "firmware" / "bot").iterdir()) == ["bot.ino"]


def small_robot(folder: Path, scenario: str) -> Path:
    """A robot folder with its sketch in ``firmware/`` and one scenario of the text ``scenario``."""
    (folder / "firmware" / "r").mkdir(parents=True)
    (folder / "firmware" / "r" / "r.ino").write_text("void setup() {}\nvoid loop() {}\n")
    (folder / PROFILE_FILE).write_text(
        "board: uno\nfirmware: {sketch: firmware/r}\n"
        "serial: [{uart: 0, baud: 9600, role: command}]\nbrain: none\n" + BODY_AND_DEVICES
    )
    (folder / "scenarios").mkdir()
    (folder / "scenarios" / "drive.yaml").write_text(scenario)
    return folder


@pytest.mark.parametrize(
    ("written", "copied"),
    [
        ("robot: demo  # the shipped one\nduration: 5\n", "robot: ..  # the shipped one\nduration: 5\n"),
        ("robot: 'demo'\nduration: 5\n", "robot: ..\nduration: 5\n"),
        ("robot:\nduration: 5\n", "robot: ..\nduration: 5\n"),
        ("robot: |\n  demo\nduration: 5\n", "robot: ..\nduration: 5\n"),
        ("# drive ahead\nduration: 5\n", "# drive ahead\nrobot: ..\nduration: 5\n"),
        ("duration: 5\nrobot: demo\n", "duration: 5\nrobot: ..\n"),
    ],
)
def test_a_scenario_runs_the_copy_and_keeps_the_rest_of_its_text(
    tmp_path: Path, written: str, copied: str
) -> None:
    made = copy_robot(small_robot(tmp_path / "r", written), tmp_path / "bot")
    assert [s.read_text() for s in made.scenarios] == [copied]


def test_a_scenario_that_is_not_yaml_is_named_and_nothing_is_left(tmp_path: Path) -> None:
    source = small_robot(tmp_path / "r", "robot: [demo\n")
    with pytest.raises(HilDevicesError) as raised:
        copy_robot(source, tmp_path / "bot")
    assert f"{source / 'scenarios' / 'drive.yaml'}: cannot read scenario: invalid YAML" in str(raised.value)
    assert not (tmp_path / "bot").exists()


@pytest.mark.parametrize(
    ("source", "target", "message"),
    [
        ("rab_style", "my-robot", "'my-robot' is not a robot name (letters, digits, _"),
        ("rab_style", "2fast", "'2fast' is not a robot name"),
        ("rab_style", "taken", "taken: already exists (hil_robot new makes a new folder)"),
        ("atlantis", "my_robot", "robot 'atlantis': no such file or folder, nor a shipped robot (shipped: "),
        ("{tmp}/empty", "my_robot", "empty: no robot.yaml in this folder (not a robot folder)"),
    ],
)
def test_a_copy_that_cannot_be_made_names_why_and_leaves_nothing(
    tmp_path: Path, source: str, target: str, message: str
) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "empty").mkdir()
    with pytest.raises(HilDevicesError) as raised:
        copy_robot(source.format(tmp=tmp_path), tmp_path / target)
    assert message in str(raised.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "taken"]
    assert not list((tmp_path / "taken").iterdir())


def test_a_sketch_with_a_tab_of_the_new_name_is_refused_rather_than_overwritten(tmp_path: Path) -> None:
    sketch = tmp_path / "robot" / "firmware" / "robot"
    sketch.mkdir(parents=True)
    (sketch / "robot.ino").write_text("void setup() {}\nvoid loop() {}\n")
    (sketch / "tiny.ino").write_text("// a tab of its own\n")
    (tmp_path / "robot" / PROFILE_FILE).write_text(
        "board: uno\nfirmware: {sketch: firmware/robot}\n"
        "serial: [{uart: 0, baud: 9600, role: command}]\nbrain: none\n" + BODY_AND_DEVICES
    )
    with pytest.raises(HilDevicesError) as raised:
        copy_robot(tmp_path / "robot", tmp_path / "tiny")
    assert f"{sketch / 'tiny.ino'}: the sketch has a tab of the new robot's name" in str(raised.value)
    assert not (tmp_path / "tiny").exists()
    assert (sketch / "tiny.ino").read_text() == "// a tab of its own\n"
