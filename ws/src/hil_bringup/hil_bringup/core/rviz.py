"""The rviz2 configuration of a run, made from the shipped one for the run's robots.

``rviz/hil.rviz`` is the configuration of one robot in no namespace (``/robot_description``,
``/odom``, ``/range/<name>``). With several robots each robot's topics are under
``robot_<i>/`` and its frames prefixed ``robot_<i>/`` on the one ``/tf``, and a
``namespace`` puts every topic under it: :func:`rviz_config` keeps the shipped world
displays (grid, TF, world markers) and gives each robot its own robot model (its
description topic, its ``TF Prefix``), odometry and a range display per ranger of its
profile, so ``rviz:=true`` shows every robot of any run. The launch files write it to
the run's link folder (:func:`write_rviz_config`).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from hil_bringup.core.graph import GraphOptions, namespace_tokens
from hil_common.core.paths import share_dir

#: The displays each robot gets one of (by class), the rest are the world's.
ROBOT_DISPLAYS = ("rviz_default_plugins/RobotModel", "rviz_default_plugins/Odometry")
RANGE = "rviz_default_plugins/Range"
#: The shipped Range display whose look a ranger's takes, by its beam (else the IR one's).
RANGE_LOOK = {"ultrasonic": "Ultrasonic"}
#: The file name of a run's configuration in its link folder.
RVIZ_FILE = "hil.rviz"


def shipped_config() -> dict[str, Any]:
    """The shipped configuration (``share/hil_bringup/rviz/hil.rviz``)."""
    data: dict[str, Any] = yaml.safe_load((share_dir("hil_bringup") / "rviz" / RVIZ_FILE).read_text())
    return data


def rangers(options: GraphOptions, robot: int) -> list[tuple[str, str]]:
    """Robot ``robot``'s range sensors: (topic relative to its namespace, beam)."""
    from hil_sim.core.robot_model import robot_model_from_profile  # noqa: PLC0415 - numpy, not at import

    model = robot_model_from_profile(options.profile(robot))
    return [
        (d.topic or f"range/{d.name}", str(d.params.get("beam", "")))
        for d in model.devices
        if d.kind == "ranger"
    ]


def _topic(display: dict[str, Any]) -> dict[str, Any] | None:
    """A display's topic property (``Topic`` or ``Description Topic``), if it has one."""
    found = display.get("Topic", display.get("Description Topic"))
    return found if isinstance(found, dict) else None


def rviz_config(options: GraphOptions, template: dict[str, Any] | None = None) -> dict[str, Any]:
    """The run's rviz2 configuration: the world's displays, then each robot's (see the module).

    Args:
        options: the run.
        template: the configuration to start from; None: :func:`shipped_config`.
    """
    config = copy.deepcopy(template if template is not None else shipped_config())
    displays: list[dict[str, Any]] = config["Visualization Manager"]["Displays"]
    graph = "".join(f"/{t}" for t in namespace_tokens(options.namespace))
    world = [d for d in displays if d["Class"] not in (*ROBOT_DISPLAYS, RANGE)]
    per_robot = [d for d in displays if d["Class"] in ROBOT_DISPLAYS]
    looks = {d["Name"]: d for d in displays if d["Class"] == RANGE}
    for display in world:
        topic = _topic(display)
        if topic is not None:
            topic["Value"] = graph + topic["Value"]
    robots: list[dict[str, Any]] = []
    for robot in range(options.robots):
        ns = options.robot_namespace(robot)
        prefix = f"{graph}/{ns}" if ns else graph
        label = f"{ns} " if ns else ""
        for shipped in per_robot:
            display = copy.deepcopy(shipped)
            display["Name"] = label + display["Name"]
            topic = _topic(display)
            if topic is not None:
                topic["Value"] = prefix + topic["Value"]
            if display["Class"] == "rviz_default_plugins/RobotModel" and ns:
                display["TF Prefix"] = ns
            robots.append(display)
        for name, beam in rangers(options, robot):
            look = looks.get(RANGE_LOOK.get(beam, "IR")) or next(iter(looks.values()), None)
            if look is None:
                break
            display = copy.deepcopy(look)
            display["Name"] = f"{label}{name}"
            display["Topic"]["Value"] = f"{prefix}/{name}"
            robots.append(display)
    config["Visualization Manager"]["Displays"] = world + robots
    return config


def write_rviz_config(options: GraphOptions, folder: str | Path) -> Path:
    """Write the run's configuration (:func:`rviz_config`) to ``folder``/hil.rviz; its path."""
    path = Path(folder) / RVIZ_FILE
    path.write_text(yaml.safe_dump(rviz_config(options), sort_keys=False))
    return path
