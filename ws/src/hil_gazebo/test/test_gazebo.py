"""The Gazebo export: SDF checked by SDFormat's own parser, its contents, the bridge, the launch graph.

Gazebo itself is not installed here. What is: Debian's SDFormat 12 parser with its
``ign sdf`` command (ignition-tools + libsdformat-dev, from the bootstrap). Every SDF
written is checked with ``ign sdf -k`` (``gz sdf -k`` where Gazebo is installed) and
against the SDFormat 1.9 specification that parser describes (``ign sdf -d``), which
also catches misspelt elements the parser would copy silently.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import math
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml

from hil_bringup.core.gazebo_graph import LAUNCH_ARGUMENTS, gazebo_graph, launch_graph
from hil_bringup.core.graph import GraphOptions, package_defaults
from hil_common.errors import HilError
from hil_gazebo.core.gz_adapter import DRIVES, MODEL_NAME, bridged_topics, scan_specs
from hil_gazebo.core.sdf import check_sdf, export, robot_sdf, sdf_checker, world_sdf
from hil_gazebo.gazebo_tool import main as hil_gazebo
from hil_sim.core.robot_model import demo_robot
from hil_sim.core.urdf import links, load_urdf
from hil_sim.core.world import WALL_HEIGHT, WorldConfig, load_world

SRC = Path(__file__).resolve().parents[2]
URDF = SRC / "hil_sim" / "urdf" / "hil_robot.urdf"
WORLDS = sorted((SRC / "hil_sim" / "worlds").glob("*.yaml"))
ROBOT = demo_robot()

needs_checker = pytest.mark.skipif(
    sdf_checker() is None,
    reason="no SDFormat checker (gz, or ign from ignition-tools + libsdformat-dev): run make bootstrap",
)


@functools.cache
def sdf_spec() -> ET.Element:
    """The SDFormat 1.9 specification as the installed parser describes it."""
    command = sdf_checker()
    assert command is not None
    result = subprocess.run(
        [command[0], "sdf", "-d", "1.9"], capture_output=True, text=True, timeout=60, check=True
    )
    return ET.fromstring(result.stdout)


def undefined_in_spec(path: Path) -> list[str]:
    """Elements and attributes of ``path`` that SDFormat 1.9 does not define (plugins' contents are free)."""
    problems: list[str] = []

    def walk(node: ET.Element, spec: ET.Element, where: str) -> None:
        attributes = {a.get("name") for a in spec.findall("attribute")}
        problems.extend(f"{where}@{name}" for name in node.attrib if name not in attributes)
        if node.tag == "plugin":
            return
        children = {e.get("name"): e for e in spec.findall("element")}
        for child in node:
            if child.tag not in children:
                problems.append(f"{where}/{child.tag}")
            else:
                walk(child, children[child.tag], f"{where}/{child.tag}")

    walk(ET.parse(path).getroot(), sdf_spec(), "sdf")
    return problems


@needs_checker
@pytest.mark.parametrize("drive", DRIVES)
@pytest.mark.parametrize("world", WORLDS, ids=lambda p: p.stem)
def test_every_exported_sdf_is_valid_for_the_sdformat_parser(tmp_path: Path, world: Path, drive: str) -> None:
    files = export(world, tmp_path, drive=drive)
    for path in (files.world_sdf, files.robot_sdf):
        assert check_sdf(path) == "Valid."
        assert undefined_in_spec(path) == [], path.name


@needs_checker
def test_the_checker_refuses_what_sdformat_refuses(tmp_path: Path) -> None:
    files = export("demo", tmp_path)
    broken = files.robot_sdf.read_text().replace("<child>left_wheel</child>", "<child>left_whel</child>", 1)
    files.robot_sdf.write_text(broken)
    with pytest.raises(HilError, match=r"(?s)robot\.sdf: not valid SDF .*left_whel"):
        check_sdf(files.robot_sdf)
    files.world_sdf.write_text(
        files.world_sdf.read_text().replace("<static>true</static>", "<statik>true</statik>", 1)
    )
    assert undefined_in_spec(files.world_sdf) == ["sdf/world/model/statik"]


def parse(text: str) -> ET.Element:
    return ET.fromstring(text)


def floats(text: str | None) -> list[float]:
    return [float(v) for v in (text or "").split()]


def test_world_has_the_arena_the_boards_as_dynamic_bodies_the_light_and_the_physics_step() -> None:
    world = load_world(SRC / "hil_sim" / "worlds" / "demo.yaml")
    root = parse(world_sdf(world, name="hil_demo", physics_rate=500.0, rtf=0.0))
    assert floats(root.findtext("world/physics/max_step_size")) == [0.002]
    assert floats(root.findtext("world/physics/real_time_factor")) == [0.0]
    boards = [m for m in root.iter("model") if m.get("name", "").startswith("board_")]
    assert len(boards) == len(world.boards) == 6
    for model, board in zip(boards, world.boards, strict=True):
        assert model.findtext("static") is None  # dynamic: it can topple
        x, y, z, _, _, yaw = floats(model.findtext("pose"))
        assert (x, y, z) == pytest.approx((board.x, board.y, board.height / 2))
        assert math.remainder(yaw - board.yaw, 2 * math.pi) == pytest.approx(0.0, abs=1e-8)
        assert floats(model.findtext("link/inertial/mass")) == [board.mass]
        assert floats(model.findtext("link/collision/geometry/box/size")) == pytest.approx(
            [board.thickness, board.width, board.height]
        )
    boxes = [m for m in root.iter("model") if m.get("name", "").startswith("box_")]
    assert [m.findtext("static") for m in boxes] == ["true"] * len(world.boxes)
    walls = next(m for m in root.iter("model") if m.get("name") == "walls")
    for collision in walls.iter("collision"):
        x, y, z, *_ = floats(collision.findtext("pose"))
        sx, sy, sz = floats(collision.findtext("geometry/box/size"))
        # The inner faces are the arena's edges, as the native simulator's wall segments.
        inner = abs(x) - sx / 2 if abs(x) > abs(y) else abs(y) - sy / 2
        assert inner == pytest.approx(world.width / 2 if abs(x) > abs(y) else world.height / 2)
        assert (z, sz) == pytest.approx((WALL_HEIGHT / 2, WALL_HEIGHT))
    light = next(e for e in root.iter("light") if e.get("name") == "hil_light")
    assert floats(light.findtext("pose"))[:2] == [world.light.x, world.light.y]
    assert root.findtext("world/spherical_coordinates/world_frame_orientation") == "ENU"


def test_robot_keeps_the_urdfs_mass_and_adds_the_rotors_and_gearbox_to_the_wheels() -> None:
    root = parse(robot_sdf(load_urdf(URDF), source=str(URDF)))
    model = root.find("model")
    assert model is not None and model.get("name") == MODEL_NAME
    names = [link.get("name") for link in model.findall("link")]
    assert names == ["base_link", "left_wheel", "right_wheel"]  # fixed links merged into the body
    masses = [float(link.findtext("inertial/mass") or 0) for link in model.findall("link")]
    assert sum(masses) == pytest.approx(ROBOT.body.mass)
    urdf_wheel = next(link for link in links(load_urdf(URDF)) if link.name == "left_wheel").inertial
    assert urdf_wheel is not None
    rotor = ROBOT.motor.rotor_inertia * ROBOT.motor.gear_ratio**2
    wheel = model.find("link[@name='left_wheel']")
    assert wheel is not None
    assert float(wheel.findtext("inertial/inertia/iyy") or 0) == pytest.approx(urdf_wheel.inertia[3] + rotor)
    ixx, iyy, izz = (float(wheel.findtext(f"inertial/inertia/{k}") or 0) for k in ("ixx", "iyy", "izz"))
    assert ixx + izz >= iyy  # a physical inertia (triangle inequality), or engines refuse it
    for joint in model.findall("joint"):
        assert joint.get("type") == "revolute"  # DART would weld a "continuous" joint
        assert floats(joint.findtext("axis/dynamics/damping")) == pytest.approx(
            [ROBOT.motor.viscous * ROBOT.motor.gear_ratio**2]
        )
        assert floats(joint.findtext("axis/dynamics/friction")) == pytest.approx(
            [ROBOT.motor.coulomb * ROBOT.motor.gear_ratio]
        )
        assert floats(joint.findtext("axis/limit/upper")) == [1e16]
    caster = [c for c in model.iter("collision") if c.findtext("geometry/sphere/radius")]
    assert [floats(c.findtext("surface/friction/ode/mu")) for c in caster] == [[0.002]]


def test_sensors_sit_where_the_simulator_has_them_and_cast_its_cones() -> None:
    root = parse(robot_sdf(load_urdf(URDF), source=str(URDF)))
    sensors = {s.get("name"): s for s in root.iter("sensor")}
    assert set(sensors) == {"ultrasonic", "ir", "bumper", "mag"}
    specs = scan_specs(ROBOT, sensor_rate=50.0)
    for name in ("ultrasonic", "ir"):
        ranger = ROBOT.device(name)
        sensor = sensors[name]
        assert sensor.get("type") == "gpu_lidar"
        x, y, *_ = floats(sensor.findtext("pose"))
        assert (x, y) == pytest.approx((ranger.mount.x, ranger.mount.y))
        horizontal = sensor.find("lidar/scan/horizontal")
        assert horizontal is not None
        assert int(horizontal.findtext("samples") or 0) == ranger.params["rays"]
        low, high = floats(horizontal.findtext("min_angle")), floats(horizontal.findtext("max_angle"))
        half = math.radians(ranger.params["cone_deg"]) / 2
        assert (low[0], high[0]) == pytest.approx((-half, half))
        assert floats(sensor.findtext("lidar/range/max")) == [specs[name].range_max]
    # The bumper's fan clears the robot's own visuals (the highest reaches 0.08 m).
    visual_tops = [
        floats(v.findtext("pose"))[2] + (floats(v.findtext("geometry/box/size")) or [0, 0, 0])[2] / 2
        for v in root.iter("visual")
        if v.find("geometry/box") is not None
    ]
    assert floats(sensors["bumper"].findtext("pose"))[2] > max(visual_tops)
    assert sensors["mag"].find("magnetometer/x") is None  # noise-free: the adapter adds the HMC5883L's


@pytest.mark.parametrize("drive", DRIVES)
def test_bridge_carries_exactly_what_the_robot_and_world_publish_and_subscribe(
    tmp_path: Path, drive: str
) -> None:
    files = export("demo", tmp_path, drive=drive)
    entries = yaml.safe_load(files.bridge_yaml.read_text())
    robot = parse(files.robot_sdf.read_text())
    published = {s.findtext("topic") for s in robot.iter("sensor")}
    for plugin in robot.iter("plugin"):
        published |= {plugin.findtext(tag) for tag in ("topic", "odom_topic") if plugin.findtext(tag)}
        if plugin.get("name") == "gz::sim::systems::ApplyJointForce":
            published.add(f"/model/{MODEL_NAME}/joint/{plugin.findtext('joint_name')}/cmd_force")
    topics = bridged_topics(drive)
    assert len(entries) == len(topics)
    for entry in entries:
        assert set(entry) == {"ros_topic_name", "gz_topic_name", "ros_type_name", "gz_type_name", "direction"}
        if entry["gz_topic_name"] != "/clock":  # gz sim's own
            assert entry["gz_topic_name"] in published, entry
    assert {e["ros_topic_name"] for e in entries} == {t.ros for t in topics.values()}


def test_gazebo_graph_replaces_the_simulator_and_keeps_the_hil_chain(tmp_path: Path) -> None:
    options = GraphOptions(world="demo", seed=4, link_dir=str(tmp_path / "links"))
    nodes, processes = gazebo_graph(options, export_dir=str(tmp_path / "gz"), gui=False, drive="velocity")
    names = [node.name for node in nodes]
    assert "sim" not in names
    assert {"virtual_mcu", "signal_bridge", "control_loop", "robot_description"} <= set(names)
    adapter = next(node for node in nodes if node.name == "gz_adapter")
    assert (adapter.package, adapter.executable) == ("hil_gazebo", "gz_adapter")
    assert set(adapter.parameters) == set(package_defaults("hil_gazebo", "gz_adapter")) | {"use_sim_time"}
    assert (adapter.parameters["drive"], adapter.parameters["seed"]) == ("velocity", 4)
    bridge = next(node for node in nodes if node.package == "ros_gz_bridge")
    assert Path(bridge.parameters["config_file"]).is_file()
    spawn = next(node for node in nodes if node.package == "ros_gz_sim")
    assert (spawn.executable, spawn.parameters["world"], spawn.parameters["name"]) == (
        "create",
        "hil_demo",
        MODEL_NAME,
    )
    gz = processes[0]
    assert (gz.package, gz.executable) == ("", "gz")
    assert gz.arguments == ("sim", "-r", "-s", "--headless-rendering", str(tmp_path / "gz" / "world.sdf"))
    arguments = {"gz_dir": str(tmp_path / "gz2"), "gui": "true", "drive": "torque"}
    _, with_gui = launch_graph(GraphOptions(link_dir=str(tmp_path / "links")), arguments.__getitem__)
    assert with_gui[0].arguments == ("sim", "-r", str(tmp_path / "gz2" / "world.sdf"))


def test_gazebo_graph_exports_into_the_runs_link_folder_by_default(tmp_path: Path) -> None:
    gazebo_graph(GraphOptions(link_dir=str(tmp_path)))
    assert sorted(p.name for p in (tmp_path / "gazebo").iterdir()) == [
        "bridge.yaml",
        "robot.sdf",
        "world.sdf",
    ]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"robots": 2}, "robots = 2: the Gazebo export has one robot"),
        ({"physics": "mujoco"}, "gz sim is the physics"),
        ({"world": "moon"}, "world 'moon': not a file and not one of hil_sim's worlds (demo, empty"),
    ],
)
def test_gazebo_graph_refuses_what_it_cannot_run(
    tmp_path: Path, options: dict[str, object], message: str
) -> None:
    with pytest.raises(HilError, match=message.replace("(", r"\(").replace(")", r"\)")):
        gazebo_graph(GraphOptions(link_dir=str(tmp_path), **options))  # type: ignore[arg-type]


ROBOT_XML = URDF.read_text()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("<robot ", "<robt "), "not XML"),
        (('name="right_wheel_joint"', 'name="right_wheel_hinge"'), "joint right_wheel_joint: missing"),
        (
            ('<sphere radius="0.013"/>', '<mesh filename="caster.stl"/>'),
            "link caster: visual[0]: geometry: expected one of box",
        ),
        (
            ('<cylinder radius="0.09" length="0.03"/>', '<cylinder radius="-0.09" length="0.03"/>'),
            "link base_link: visual[0]: cylinder radius",
        ),
        (('<mass value="0.07"/>', '<mass value="heavy"/>'), "link left_wheel: inertial: mass value"),
        (('<child link="caster"/>', '<child link="castor"/>'), "joint caster_joint: no link 'castor'"),
    ],
)
def test_a_bad_urdf_is_refused_naming_the_file_and_element(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    assert edit[0] in ROBOT_XML
    bad = tmp_path / "bad_robot.urdf"
    bad.write_text(ROBOT_XML.replace(edit[0], edit[1], 1))
    with pytest.raises(HilError) as caught:
        export("demo", tmp_path / "out", urdf=bad)
    assert str(bad) in str(caught.value)
    assert message in str(caught.value)


def test_a_bad_world_is_refused_naming_the_file_and_key(tmp_path: Path) -> None:
    world = tmp_path / "bent.yaml"
    world.write_text("arena: {width: 4.0, height: 4.0}\nboards:\n  ring: {count: 3, radius: -1}\n")
    with pytest.raises(HilError, match=r"bent\.yaml: boards\.ring\.radius"):
        export(world, tmp_path / "out")
    mjcf = tmp_path / "mjcf.yaml"
    mjcf.write_text("arena: {width: 4.0, height: 4.0}\nmjcf: arena.xml\n")
    (tmp_path / "arena.xml").write_text("<mujoco/>")
    with pytest.raises(HilError, match=r"mjcf\.yaml: mjcf: an MJCF world cannot be exported"):
        export(mjcf, tmp_path / "out")


@needs_checker
def test_hil_gazebo_export_writes_checks_and_exits_2_on_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert hil_gazebo(["export", "--world", "empty", "--out", str(tmp_path), "--check"]) == 0
    out = capsys.readouterr().out
    assert f"{tmp_path / 'world.sdf'}: Valid." in out and f"{tmp_path / 'robot.sdf'}: Valid." in out
    assert hil_gazebo(["export", "--world", "atlantis", "--out", str(tmp_path)]) == 2
    assert "hil_gazebo: world 'atlantis'" in capsys.readouterr().err


MINE = "<sdf version='1.9'><world name='mine'/></sdf>\n"
REFUSED = "exist(s) and hil_gazebo export did not write them; not overwritten"


# fmt: off
#: (files already in --out, extra options, (exit status, words in stderr; {out}: the folder))
EXPORTS = [
    ({}, [], (0, "")),
    ({"world.sdf": MINE}, [], (2, f"{{out}}: world.sdf {REFUSED}")),
    ({"bridge.yaml": "[]\n", "robot.sdf": MINE}, [], (2, f"{{out}}: robot.sdf, bridge.yaml {REFUSED}")),
    ({"world.sdf": MINE}, ["--force"], (0, "")),
    ({"world.sdf": "EXPORT"}, [], (0, "")),  # a file of an earlier export is its own to rewrite
]
# fmt: on


@pytest.mark.parametrize(("existing", "extra", "expected"), EXPORTS)
def test_export_does_not_overwrite_files_it_did_not_write(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    existing: dict[str, str],
    extra: list[str],
    expected: tuple[int, str],
) -> None:
    status, words = expected
    out = tmp_path / "out"
    out.mkdir()
    earlier = export("empty", tmp_path / "earlier")
    for name, text in existing.items():
        (out / name).write_text(earlier.world_sdf.read_text() if text == "EXPORT" else text)
    assert hil_gazebo(["export", "--world", "empty", "--out", str(out), *extra]) == status
    assert words.format(out=out) in capsys.readouterr().err
    for name, text in existing.items():
        if text != "EXPORT":
            assert ((out / name).read_text() == text) == (status == 2), name
    if status == 0:
        assert '<world name="hil_empty"' in (out / "world.sdf").read_text()


def test_world_sdf_refuses_a_bad_rate() -> None:
    with pytest.raises(HilError, match="physics_rate = 0"):
        world_sdf(WorldConfig(), name="w", physics_rate=0.0)
    with pytest.raises(HilError, match="rtf = -1"):
        world_sdf(WorldConfig(), name="w", rtf=-1.0)


LAUNCH_FILE = SRC / "hil_bringup" / "launch" / "gazebo.launch.py"


def test_gazebo_launch_file_is_one_flat_launch_description_with_every_argument_described() -> None:
    source = LAUNCH_FILE.read_text()
    tree = ast.parse(source, filename=str(LAUNCH_FILE))  # syntax, without launch installed
    calls = [n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    assert calls.count("LaunchDescription") == 1
    assert "graph_actions" in source and "launch_graph" in source
    for name, (default, text, choices) in LAUNCH_ARGUMENTS.items():
        assert text.endswith("."), name
        assert choices is None or default in choices, name


def test_gazebo_launch_description_builds_where_launch_ros_is_installed() -> None:
    pytest.importorskip("launch_ros", reason="launch_ros is not installed (ROS 2 from PyPI wheels has none)")
    spec = importlib.util.spec_from_file_location("gazebo_launch", LAUNCH_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    declared = {a.name: a for a in description.entities if hasattr(a, "description") and hasattr(a, "name")}
    assert set(LAUNCH_ARGUMENTS) <= set(declared)
    assert all(a.description for a in declared.values())


def test_exported_sensor_mounts_match_the_simulators() -> None:
    # The URDF is the export's source of the mounts, the robot model the native simulator's.
    root = parse(robot_sdf(load_urdf(URDF), source=str(URDF)))
    sensors = {s.get("name"): floats(s.findtext("pose")) for s in root.iter("sensor")}
    for name in ("ultrasonic", "ir"):
        mount = ROBOT.device(name).mount
        assert sensors[name][:3] == pytest.approx([mount.x, mount.y, mount.z])
    assert np.allclose(sensors["mag"][3:], 0.0)
