"""Imports run down the package order, without module cycles; package.xml has them.

The order (DESIGN.md, "Packages"): a package imports only packages of earlier layers.
Every import counts for the order and the cycles, also one inside a function or under
``TYPE_CHECKING``. package.xml must have an ``<exec_depend>`` for every ROS package and
third-party module the package's code imports (outside ``TYPE_CHECKING``): the ROS
package's name, or the module's rosdep key (:data:`ROSDEP_KEYS`).
"""

from __future__ import annotations

import ast
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "ws" / "src"
#: Packages in dependency order: a package imports only packages of earlier layers.
LAYERS = [
    ["hil_msgs", "hil_common"],
    ["hil_devices"],
    ["hil_bridge"],
    ["hil_firmware"],
    ["hil_platform", "hil_mcu", "hil_sim"],
    ["hil_gazebo", "robot_control"],
    ["hil_bringup"],
    ["hil_testing", "hil_robots"],
]
LAYER = {package: index for index, layer in enumerate(LAYERS) for package in layer}
PYTHON_PACKAGES = [p for layer in LAYERS for p in layer if (SRC / p / p).is_dir()]
#: Python module -> rosdep key (rosdistro's rosdep/python.yaml).
ROSDEP_KEYS = {
    "numpy": "python3-numpy",
    "yaml": "python3-yaml",
    "serial": "python3-serial",
    "matplotlib": "python3-matplotlib",
    "rich": "python3-rich",
    "transforms3d": "python3-transforms3d",
    "pytest": "python3-pytest",
    "hypothesis": "python3-hypothesis",
    "mujoco": "python3-mujoco-pip",
    "rosbags": "python3-rosbags-pip",
    "foxglove": "python3-foxglove-sdk-pip",
}
#: ROS packages imported by name besides ``*_msgs``, ``*_srvs`` and ``*_interfaces``.
ROS_PACKAGES = ["ament_index_python", "launch", "launch_ros", "launch_testing", "rclpy", "rosidl_runtime_py"]


def _package_files(package: str) -> list[Path]:
    """The package's code: its Python package and its launch files (not tests, not setup.py)."""
    return sorted([*(SRC / package / package).rglob("*.py"), *(SRC / package).glob("launch/*.py")])


def _module_name(path: Path) -> str | None:
    package_root = next(p for p in path.parents if p.parent == SRC)
    parts = list(path.relative_to(package_root).with_suffix("").parts)
    if parts[0] != package_root.name:
        return None  # a launch file
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    name: path
    for package in PYTHON_PACKAGES
    for path in _package_files(package)
    if (name := _module_name(path))
}


def _imports(path: Path, *, type_checking: bool = True) -> set[str]:
    """Modules ``path`` imports (``from a.b import c``: ``a.b.c`` if that is a module)."""
    tree = ast.parse(path.read_text(), str(path))
    skip: set[int] = set()
    if not type_checking:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
                skip |= {id(n) for child in node.body for n in ast.walk(child)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in MODULES else node.module)
    return found


def test_every_package_has_a_place_in_the_order() -> None:
    packages = {p.name for p in SRC.iterdir() if (p / "package.xml").is_file()}
    assert packages == set(LAYER), f"in ws/src but not in LAYERS: {packages - set(LAYER)}"


@pytest.mark.parametrize("package", PYTHON_PACKAGES)
def test_package_imports_only_lower_packages(package: str) -> None:
    wrong = []
    for path in _package_files(package):
        for module in _imports(path):
            other = module.split(".", maxsplit=1)[0]
            if other in LAYER and other != package and LAYER[other] >= LAYER[package]:
                wrong.append(f"{path.relative_to(SRC)} imports {module} ({other} is not below {package})")
    assert wrong == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), and self-imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_modules_import_each_other_without_cycles() -> None:
    graph = {name: {m for m in _imports(path) if m in MODULES} for name, path in MODULES.items()}
    assert _cycles(graph) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _dependency(module: str) -> str | None:
    name = module.split(".", maxsplit=1)[0]
    if name in sys.stdlib_module_names or name == "__future__":
        return None
    if name in LAYER or name in ROS_PACKAGES or name.endswith(("_msgs", "_srvs", "_interfaces")):
        return name
    return ROSDEP_KEYS.get(name, f"<no rosdep key for {name!r}: add it to ROSDEP_KEYS>")


@pytest.mark.parametrize("package", PYTHON_PACKAGES)
def test_package_xml_declares_every_import(package: str) -> None:
    root = ET.parse(SRC / package / "package.xml").getroot()
    declared = {e.text for tag in ("exec_depend", "depend") for e in root.findall(tag)}
    missing = []
    for path in _package_files(package):
        for module in sorted(_imports(path, type_checking=False)):
            key = _dependency(module)
            if key is not None and key != package and key not in declared:
                missing.append(f"{path.relative_to(SRC)} imports {module}: <exec_depend>{key}</exec_depend>")
    assert missing == []
