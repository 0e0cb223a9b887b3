"""The run's rviz2 configuration: the shipped one, made for the run's robots and namespace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from hil_bringup.core.graph import GraphOptions
from hil_bringup.core.rviz import rviz_config, shipped_config, write_rviz_config


def topics(config: dict[str, Any]) -> dict[str, str]:
    """Each display's topic by display name (those with one)."""
    found = {}
    for display in config["Visualization Manager"]["Displays"]:
        topic = display.get("Topic", display.get("Description Topic"))
        if topic is not None:
            found[display["Name"]] = topic["Value"]
    return found


def test_one_demo_robot_in_no_namespace_gets_the_shipped_configurations_topics() -> None:
    config = rviz_config(GraphOptions())
    assert sorted(topics(config).values()) == sorted(topics(shipped_config()).values())
    assert "TF Prefix" not in str(config)


@pytest.mark.parametrize(
    ("namespace", "graph"),
    [("", ""), ("team_a", "/team_a")],
)
def test_every_robot_gets_its_model_odometry_and_rangers_under_its_topics(namespace: str, graph: str) -> None:
    config = rviz_config(GraphOptions(robots=2, namespace=namespace))
    found = topics(config)
    assert found["World"] == f"{graph}/world/markers"
    for robot in (0, 1):
        ns = f"{graph}/robot_{robot}"
        assert found[f"robot_{robot} Robot"] == f"{ns}/robot_description"
        assert found[f"robot_{robot} Odometry trail"] == f"{ns}/odom"
        assert found[f"robot_{robot} range/ultrasonic"] == f"{ns}/range/ultrasonic"  # the demo's rangers
        assert found[f"robot_{robot} range/ir"] == f"{ns}/range/ir"
    models = [d for d in config["Visualization Manager"]["Displays"] if d["Class"].endswith("RobotModel")]
    assert [m["TF Prefix"] for m in models] == ["robot_0", "robot_1"]  # its frames on the one /tf
    assert config["Visualization Manager"]["Global Options"]["Fixed Frame"] == "odom"


def test_a_robot_of_another_profile_gets_its_own_rangers() -> None:
    found = topics(rviz_config(GraphOptions(robot="demo,line_follower", robots=2)))
    assert "robot_0 range/ultrasonic" in found
    assert not any(name.startswith("robot_1 range/") for name in found)  # a line follower has none


def test_the_configuration_is_written_as_rviz_reads_it(tmp_path: Path) -> None:
    path = write_rviz_config(GraphOptions(robots=3), tmp_path)
    assert path == tmp_path / "hil.rviz"
    assert yaml.safe_load(path.read_text()) == rviz_config(GraphOptions(robots=3))
