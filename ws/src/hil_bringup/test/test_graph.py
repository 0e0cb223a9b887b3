"""The graph description: what the launch files and the runner both start."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hil_bringup.core.graph import (
    GRAPH_TOPICS,
    GraphOptions,
    describe,
    describe_side,
    graph_remaps,
    params_file,
    prepare_link_folder,
    run_link_dir,
    user_ports,
    your_program,
)
from hil_bringup.errors import HilBringupError
from hil_common.core.runtime_dir import runtime_root
from support.unsafe_folders import MAIN_KINDS, Make

PACKAGE = Path(__file__).resolve().parents[1]


def test_simulated_run_has_the_whole_loop_with_ports_that_meet() -> None:
    nodes, processes = describe(GraphOptions())
    by_name = {n.name: n for n in nodes}
    assert set(by_name) == {"virtual_mcu", "signal_bridge", "sim", "control_loop", "robot_description"}
    assert by_name["control_loop"].parameters["port"] == by_name["virtual_mcu"].parameters["command_port"]
    assert by_name["signal_bridge"].parameters["port"] == by_name["virtual_mcu"].parameters["signal_port"]
    assert by_name["control_loop"].parameters["behaviour"] == "boards"
    assert processes == []


def test_parameters_start_from_each_package_yaml() -> None:
    nodes, _ = describe(GraphOptions(rtf=0.0, seed=7))
    sim = next(n for n in nodes if n.name == "sim")
    assert sim.parameters["rtf"] == 0.0 and sim.parameters["seed"] == 7
    assert sim.parameters["physics_rate"] == 1000.0  # from hil_sim.yaml


def test_faults_put_a_proxy_on_each_link_between_its_user_and_the_mcu() -> None:
    options = GraphOptions(faults=True, fault_drop=0.01, fault_corrupt=0.02, seed=7)
    nodes, processes = describe(options)
    by_name = {n.name: n for n in nodes}
    mcu = by_name["virtual_mcu"].parameters
    command, signal = processes
    assert {command.executable, signal.executable} == {"hil_link_proxy"}
    for proxy, upstream, user in (
        (command, mcu["command_port"], by_name["control_loop"].parameters["port"]),
        (signal, mcu["signal_port"], by_name["signal_bridge"].parameters["port"]),
    ):
        args = proxy.arguments
        assert args[args.index("--upstream") + 1] == upstream
        assert args[args.index("--link") + 1] == user != upstream
        assert (args[args.index("--drop") + 1], args[args.index("--corrupt") + 1]) == ("0.01", "0.02")
        assert proxy.faults is not None and proxy.faults.arguments() == args  # the runner's proxy too
    assert command.arguments[command.arguments.index("--baud") + 1] == str(options.profile(0).command.baud)
    assert signal.arguments[signal.arguments.index("--baud") + 1] == str(options.signal_baud)
    assert command.faults is not None and signal.faults is not None
    assert command.faults.model.seed != signal.faults.model.seed  # not the same faults on both


def test_live_adds_the_live_view_to_the_world_side_and_a_recording_keeps_every_scene() -> None:
    nodes, _ = describe(GraphOptions(live=True, live_port=9000, live_host="0.0.0.0"))
    (view,) = (n for n in nodes if n.name == "live_view")
    assert (view.package, view.executable, view.namespace, view.robot) == (
        "hil_bringup",
        "live_view",
        "",
        None,
    )
    assert view.parameters == {"host": "0.0.0.0", "port": 9000, "use_sim_time": True}
    world, _ = describe_side(GraphOptions(live=True), "world")
    robot, _ = describe_side(GraphOptions(live=True), "robot")
    assert "live_view" in {n.name for n in world} and "live_view" not in {n.name for n in robot}
    assert "live_view" not in {n.name for n in describe(GraphOptions())[0]}
    # The simulator paces its scene by the wall clock for a viewer, not for a recording.
    sim = {o: next(n for n in describe(GraphOptions(record=o))[0] if n.name == "sim") for o in ("", "/tmp/b")}
    assert sim[""].parameters["scene_max_rate"] > 0 and sim["/tmp/b"].parameters["scene_max_rate"] == 0.0


def test_without_faults_the_rates_change_nothing() -> None:
    plain = describe(GraphOptions())
    assert describe(GraphOptions(fault_drop=0.5, fault_corrupt=0.5)) == plain


def test_several_robots_put_the_hil_chain_under_robot_0() -> None:
    nodes, _ = describe(GraphOptions(robots=3))
    assert {n.namespace for n in nodes if n.robot is not None} == {"robot_0"}
    assert "/robot_0/control_loop" in params_file(nodes)


@pytest.mark.parametrize(
    ("robot", "groups"),
    [
        ("demo", {"robot_descriptions": ["robot_1/", "robot_2/"]}),
        (
            "demo,demo,rab_style",
            {"robot_descriptions_0": ["robot_1/"], "robot_descriptions_1": ["robot_2/"]},
        ),
    ],
)
def test_the_robots_without_a_chain_get_their_frames_from_a_description_per_profile(
    robot: str, groups: dict[str, list[str]]
) -> None:
    options = GraphOptions(robot=robot, robots=3)
    nodes, _ = describe(options)
    found = {n.name: n for n in nodes if n.executable == "robot_description" and n.robot is None}
    assert {name: n.parameters["prefixes"] for name, n in found.items()} == groups
    assert all(n.namespace == "" for n in found.values())  # their topics under each prefix
    assert describe_side(options, "world")[0][1:] == list(found.values())  # the world side's


def test_one_robot_has_no_description_beside_its_chains() -> None:
    nodes, _ = describe(GraphOptions(robots=2, hil_robots=2))
    assert [n.key for n in nodes if n.executable == "robot_description"] == [
        "robot_0/robot_description",
        "robot_1/robot_description",
    ]


@pytest.mark.parametrize(
    ("namespace", "node", "remaps"),
    [
        ("", "robot_1", []),
        (
            "team_a",
            "team_a/robot_1",
            [
                ("/tf", "/team_a/tf"),
                ("/tf_static", "/team_a/tf_static"),
                ("/diagnostics", "/team_a/diagnostics"),
            ],
        ),
        (
            "/lab/team_a/",
            "lab/team_a/robot_1",
            [
                ("/tf", "/lab/team_a/tf"),
                ("/tf_static", "/lab/team_a/tf_static"),
                ("/diagnostics", "/lab/team_a/diagnostics"),
            ],
        ),
    ],
)
def test_a_namespace_takes_every_node_and_the_graph_wide_topics_but_not_the_clock(
    namespace: str, node: str, remaps: list[tuple[str, str]]
) -> None:
    options = GraphOptions(robots=2, namespace=namespace)
    assert options.node_namespace("robot_1") == node
    assert graph_remaps(options.namespace) == remaps
    assert "/clock" not in GRAPH_TOPICS
    assert options.link_folder == run_link_dir(namespace=namespace)


@pytest.mark.parametrize("namespace", ["team-a", "1team", "team a", "a//b-c"])
def test_a_namespace_that_is_not_a_ros_name_is_refused_naming_it(namespace: str) -> None:
    with pytest.raises(HilBringupError, match="namespace"):
        GraphOptions(namespace=namespace)


def test_each_hil_robot_gets_its_own_chain_in_its_namespace_with_links_of_its_own() -> None:
    options = GraphOptions(robots=5, hil_robots=3, faults=True, link_dir="/tmp/hil-test-links")
    nodes, processes = describe(options)
    sim = next(n for n in nodes if n.name == "sim")
    assert (sim.parameters["robots"], sim.parameters["hil_robots"]) == (5, 3)
    chains = {}
    for node in nodes:
        if node.robot is not None:
            assert node.namespace == f"robot_{node.robot}"
            chains.setdefault(node.robot, {})[node.name] = node.parameters
    assert sorted(chains) == [0, 1, 2]
    ports = set()
    for robot, chain in chains.items():
        links = options.links(robot)
        assert chain["virtual_mcu"]["command_port"] == links.command
        assert links.command.startswith(f"/tmp/hil-test-links/robot_{robot}/")
        assert chain["control_loop"]["port"] == links.loop_port != links.command  # through its proxy
        assert chain["robot_description"]["frame_prefix"] == f"robot_{robot}/"
        ports |= {links.command, links.signal, links.loop_port, links.bridge_port}
    assert len(ports) == 12  # nobody shares a pty
    assert len(processes) == 6 and len({p.name for p in processes}) == 6
    seeds = {p.faults.model.seed for p in processes if p.faults is not None}
    assert len(seeds) == 6  # each link of each robot suffers faults of its own


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"robots": 2, "hil_robots": 3}, "hil_robots"),
        ({"robots": 2, "hil_robots": 0}, "hil_robots"),
        ({"robots": 2, "hil_robots": 2, "command_port": "/dev/ttyUSB0"}, "command_port"),
    ],
)
def test_bad_hil_robot_counts_are_errors_naming_the_option(options: dict[str, object], named: str) -> None:
    with pytest.raises(HilBringupError, match=named):
        GraphOptions(**options)  # type: ignore[arg-type]


def test_sim_time_goes_to_every_node_but_the_simulator_that_makes_it() -> None:
    nodes, _ = describe(GraphOptions(use_sim_time=True))
    following = {n.name: n.parameters["use_sim_time"] for n in nodes if "use_sim_time" in n.parameters}
    assert following.pop("sim", False) is False
    assert following and all(following.values()), following


def test_runs_in_other_domains_or_namespaces_get_other_link_folders() -> None:
    folders = {
        run_link_dir(domain_id="0"),
        run_link_dir(domain_id="5"),
        run_link_dir(namespace="/team_a", domain_id="5"),
        run_link_dir(namespace="/team_b/arm", domain_id="5"),
    }
    assert len(folders) == 4
    root = runtime_root()
    assert run_link_dir(namespace="/team_b/arm/", domain_id="5") == f"{root}/domain5/team_b/arm"
    assert run_link_dir(domain_id="") == f"{root}/domain0"  # unset: the default domain


def test_link_folders_are_in_the_users_own_runtime_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    xdg = tmp_path / "run-user"
    xdg.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    monkeypatch.setenv("ROS_DOMAIN_ID", "5")
    assert run_link_dir(namespace="/team_a") == f"{xdg}/hil/domain5/team_a"
    options = GraphOptions()
    assert options.link_folder == f"{xdg}/hil/domain5"
    assert not (xdg / "hil").exists()  # describing a run makes nothing
    assert prepare_link_folder(options) == xdg / "hil" / "domain5"
    for folder in (xdg / "hil", xdg / "hil" / "domain5"):
        assert folder.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("make", MAIN_KINDS)
def test_a_link_dir_another_user_could_change_is_refused_naming_it(tmp_path: Path, make: Make) -> None:
    folder, words = make(tmp_path)
    with pytest.raises(HilBringupError) as refused:
        prepare_link_folder(GraphOptions(link_dir=str(folder)))
    assert str(refused.value).startswith(f"link_dir {folder}: folder ")
    for word in words:
        assert word in str(refused.value)


def test_default_link_folder_follows_ros_domain_id_and_holds_every_link(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ROS_DOMAIN_ID", "17")
    options = GraphOptions(faults=True)
    assert options.link_folder == str(runtime_root() / "domain17")
    nodes, _ = describe(options)
    mcu = next(n for n in nodes if n.name == "virtual_mcu")
    loop = next(n for n in nodes if n.name == "control_loop")
    for port in (mcu.parameters["command_port"], mcu.parameters["signal_port"], loop.parameters["port"]):
        assert Path(port).parent == runtime_root() / "domain17", port
    assert GraphOptions(link_dir="/run/mine").command_link == "/run/mine/mcu_command"


@pytest.mark.parametrize(
    ("namespace", "domain_id", "message"),
    [("", "abc", "ROS_DOMAIN_ID"), ("/team a", "0", "team a"), ("/../etc", "0", r"'\.\.'")],
)
def test_bad_link_folder_inputs_are_refused_by_name(namespace: str, domain_id: str, message: str) -> None:
    with pytest.raises(HilBringupError, match=message):
        run_link_dir(namespace=namespace, domain_id=domain_id)


def test_hardware_run_has_no_virtual_mcu_and_uses_the_devices() -> None:
    nodes, _ = describe(GraphOptions(mcu="serial", command_port="/dev/ttyACM0", signal_port="/dev/ttyUSB0"))
    assert "virtual_mcu" not in {n.name for n in nodes}
    assert next(n for n in nodes if n.name == "control_loop").parameters["port"] == "/dev/ttyACM0"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"robots": 0}, "robots"),
        ({"rtf": -1.0}, "rtf"),
        ({"mcu": "qemu"}, "mcu"),
        ({"behaviour": "dance"}, "behaviour"),
        ({"mcu": "serial"}, "command_port"),
        ({"fault_drop": 1.5}, "fault_drop"),
        ({"fault_corrupt": -0.1}, "fault_corrupt"),
        ({"fault_drop": float("nan")}, "fault_drop"),
        ({"trace_pins": "D9"}, "trace_pins needs mcu = simavr"),
        ({"trace_limit_mb": 0.0}, "trace_limit_mb"),
    ],
)
def test_bad_options_are_refused_by_name(options: dict[str, object], message: str) -> None:
    with pytest.raises(HilBringupError, match=message):
        GraphOptions(**options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "files"),
    [
        ({}, ["pins.vcd"]),
        ({"trace_file": "/runs/a/t.vcd"}, ["/runs/a/t.vcd"]),
        (
            {"trace_file": "/runs/a/t.vcd", "robots": 2, "hil_robots": 2},
            ["/runs/a/t_robot_0.vcd", "/runs/a/t_robot_1.vcd"],
        ),
    ],
)
def test_each_firmware_writes_its_pin_trace_to_a_file_of_its_own(
    options: dict[str, object], files: list[str]
) -> None:
    nodes, _ = describe(GraphOptions(mcu="simavr", trace_pins="motor_left", **options))  # type: ignore[arg-type]
    mcus = [n for n in nodes if n.name == "simavr_mcu"]
    assert [n.parameters["trace_file"] for n in mcus] == files
    assert {n.parameters["trace_pins"] for n in mcus} == {"motor_left"}


def test_launch_files_are_one_flat_launch_description() -> None:
    for name in ("sim.launch.py", "hardware.launch.py"):
        source = (PACKAGE / "launch" / name).read_text()
        assert source.count("LaunchDescription(") == 1, name
        assert "graph_actions" in source, name


@pytest.mark.parametrize("rtf", [float("nan"), float("inf"), -1.0])
def test_a_pace_that_is_not_a_finite_number_at_least_zero_is_refused(rtf: float) -> None:
    with pytest.raises(HilBringupError, match="rtf"):
        GraphOptions(rtf=rtf)


def test_the_two_sides_of_a_distributed_run_split_the_graph_between_them() -> None:
    options = GraphOptions(robots=4, hil_robots=3, radio=True, faults=True, use_sim_time=True)
    nodes, processes = describe(options)
    world, none = describe_side(options, "world")
    assert [n.name for n in world] == ["sim", "robot_descriptions"] and none == []  # robot 3's
    assert world[0].parameters["radio"] is True
    sides = [describe_side(options, "robot", robot=i) for i in range(3)]
    for robot, (chain_nodes, proxies) in enumerate(sides):
        assert {n.robot for n in chain_nodes} == {robot}
        assert "radio_module" in {n.name for n in chain_nodes}
        assert {p.faults.robot for p in proxies if p.faults is not None} == {robot}
    # Together the sides are the whole graph, each node and proxy exactly once.
    assert sorted(n.key for n in world + [n for c, _ in sides for n in c]) == sorted(n.key for n in nodes)
    assert sorted(p.name for _, ps in sides for p in ps) == sorted(p.name for p in processes)


@pytest.mark.parametrize(("side", "robot", "named"), [("moon", 0, "side"), ("robot", 3, "robot")])
def test_a_side_that_is_not_in_the_run_is_an_error(side: str, robot: int, named: str) -> None:
    with pytest.raises(HilBringupError, match=f"^{named} = "):
        describe_side(GraphOptions(robots=4, hil_robots=3), side, robot=robot)


# --- robot profiles and brains ---------------------------------------------------------------


def test_every_chain_node_takes_its_robots_profile_and_robots_past_the_list_take_the_last() -> None:
    options = GraphOptions(robot="demo,rab_style", robots=3, hil_robots=3, mcu="simavr")
    nodes, _ = describe(options)
    sim = next(n for n in nodes if n.name == "sim")
    assert sim.parameters["robot"] == "demo,rab_style"
    sources = {n.key: n.parameters.get("robot") for n in nodes if n.robot is not None}
    for robot, name in ((0, "demo"), (1, "rab_style"), (2, "rab_style")):
        keys = [key for key in sources if key.startswith(f"robot_{robot}/")]
        assert keys and all(sources[key] == str(options.profile(robot).source) for key in keys), robot
        assert options.profile(robot).name == name
    loops = [n.key for n in nodes if n.name == "control_loop"]
    assert loops == ["robot_0/control_loop"]  # rab_style's brain is none: its UART is your program's
    assert [robot for robot, _, baud in user_ports(options)] == [1, 2]
    assert {baud for _, _, baud in user_ports(options)} == {57600}


def test_the_control_loop_gets_the_profiles_geometry_and_baud_rate() -> None:
    nodes, _ = describe(GraphOptions(robot="rab_style", brain="control_loop"))
    loop = next(n for n in nodes if n.name == "control_loop").parameters
    assert (loop["baud"], loop["wheel_base"], loop["wheel_radius"]) == (57600, 0.14, 0.033)
    assert 20.0 < loop["max_wheel_speed"] < 21.5  # the default TT gearmotor at 6 V, 1:48


def test_brain_none_leaves_the_firmwares_uart_at_uart_link_and_the_profile_says_what_an_open_does(
    tmp_path: Path,
) -> None:
    link = str(tmp_path / "my_uart")
    options = GraphOptions(robot="demo", brain="none", mcu="simavr", uart_link=link)
    nodes, _ = describe(options)
    by_name = {n.name: n for n in nodes}
    assert "control_loop" not in by_name
    assert by_name["simavr_mcu"].parameters["command_port"] == link
    assert by_name["simavr_mcu"].parameters["auto_reset"] is True  # the demo's Nano resets on DTR
    assert user_ports(options) == [(0, link, 38400)]
    assert your_program(link, 38400) == f"your program: open {link} (38400 baud)"
    looped = {n.name: n for n in describe(GraphOptions(robot="demo", mcu="simavr"))[0]}
    assert looped["simavr_mcu"].parameters["auto_reset"] is False  # the control loop's open: no reset


def test_a_robot_folder_is_taken_by_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = GraphOptions(robot="rab_style").profile().folder
    monkeypatch.chdir(shipped.parent)
    options = GraphOptions(robot="rab_style/robot.yaml,./line_follower")
    entries = options.robot.split(",")
    assert all(Path(entry).is_absolute() and entry.endswith("/robot.yaml") for entry in entries)
    assert [p.name for p in options.profiles] == ["rab_style", "line_follower"]
    monkeypatch.chdir(tmp_path)  # every node of the run, wherever it starts, reads the same files
    assert [p.name for p in GraphOptions(robot=options.robot).profiles] == ["rab_style", "line_follower"]


def test_a_profiles_other_uarts_reach_ptys_beside_the_command_link(tmp_path: Path) -> None:
    robot = tmp_path / "mega_bt"
    shutil.copytree(GraphOptions(robot="rab_style").profile().folder, robot)
    text = (robot / "robot.yaml").read_text().replace("board: uno", "board: mega2560")
    text = text.replace(
        "  - {uart: 0, baud: 57600, role: command}",
        "  - {uart: 0, baud: 57600, role: command}\n  - {uart: 1, baud: 9600, role: aux}",
    )
    (robot / "robot.yaml").write_text(text)
    options = GraphOptions(robot=str(robot), mcu="simavr", link_dir=str(tmp_path / "links"))
    mcu = next(n for n in describe(options)[0] if n.name == "simavr_mcu").parameters
    assert mcu["uart_ports"] == [f"1:{tmp_path / 'links' / 'uart1'}"]
    assert mcu["command_port"] == str(tmp_path / "links" / "mcu_command")


def test_a_profiles_software_serial_links_reach_ptys_with_their_pins(tmp_path: Path) -> None:
    options = GraphOptions(robot="bluetooth_car", mcu="simavr", link_dir=str(tmp_path / "links"))
    mcu = next(n for n in describe(options)[0] if n.name == "simavr_mcu").parameters
    assert mcu["soft_uart_ports"] == [f"2:3:9600:{tmp_path / 'links' / 'soft0'}"]
    assert options.links(0).soft_uarts == (str(tmp_path / "links" / "soft0"),)
