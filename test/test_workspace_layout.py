"""The workspace keeps the shape DESIGN.md gives it, and pure cores stay pure."""

from __future__ import annotations

import ast
import importlib
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "ws" / "src"
PYTHON_PACKAGES = [
    "hil_common",
    "hil_devices",
    "hil_bridge",
    "hil_firmware",
    "hil_platform",
    "hil_mcu",
    "hil_sim",
    "hil_gazebo",
    "robot_control",
    "hil_bringup",
    "hil_testing",
]
#: Data only (ament_python without a Python package): the shipped robots.
DATA_PACKAGES = ["hil_robots"]
ALL_PACKAGES = ["hil_msgs", *PYTHON_PACKAGES, *DATA_PACKAGES]
#: Modules a pure core must never reach, directly or through project modules.
ROS_RUNTIME = ("rclpy", "launch", "launch_ros")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$")


def test_repository_has_the_design_layout() -> None:
    for path in ["firmware", "test", "bench", "README.md", "Makefile", ".ci/run", "requirements.txt"]:
        assert (ROOT / path).exists(), f"missing {path}"
    assert sorted(p.name for p in SRC.iterdir() if p.is_dir()) == sorted(ALL_PACKAGES)


@pytest.mark.parametrize("package", ALL_PACKAGES)
def test_package_xml_is_format_3_with_valid_maintainer(package: str) -> None:
    root = ET.parse(SRC / package / "package.xml").getroot()
    assert root.get("format") == "3"
    assert root.findtext("name") == package
    maintainers = root.findall("maintainer")
    assert maintainers, f"{package}: no maintainer"
    for maintainer in maintainers:
        # ament refuses a package.xml whose maintainer e-mail is not an address.
        assert EMAIL.match(maintainer.get("email", "")), f"{package}: bad maintainer e-mail"


def test_hil_msgs_is_an_interface_package() -> None:
    root = ET.parse(SRC / "hil_msgs" / "package.xml").getroot()
    assert root.findtext("export/build_type") == "ament_cmake"
    assert root.findtext("member_of_group") == "rosidl_interface_packages"


@pytest.mark.parametrize("package", PYTHON_PACKAGES)
def test_python_package_has_ament_python_shape(package: str) -> None:
    pkg = SRC / package
    root = ET.parse(pkg / "package.xml").getroot()
    assert root.findtext("export/build_type") == "ament_python"
    for path in ["setup.py", "setup.cfg", f"resource/{package}", f"{package}/__init__.py"]:
        assert (pkg / path).is_file(), f"{package}: missing {path}"
    assert (pkg / package / "core" / "__init__.py").is_file(), f"{package}: no pure core subpackage"
    assert f"script_dir=$base/lib/{package}" in (pkg / "setup.cfg").read_text()


@pytest.mark.parametrize("package", PYTHON_PACKAGES)
def test_package_has_exactly_one_exception_class(package: str) -> None:
    tree = ast.parse((SRC / package / package / "errors.py").read_text())
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    assert len(classes) == 1, f"{package}/errors.py: {[c.name for c in classes]}"


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level:
            package = ".".join(_module_name(path).split(".")[: -node.level])
            found.add(f"{package}.{node.module}" if node.module else package)
    return found


def _module_name(path: Path) -> str:
    package_root = next(p for p in path.parents if p.parent == SRC)
    parts = list(path.relative_to(package_root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = [*parts[:-1], "__init__"]
    return ".".join(parts)


def _module_file(module: str) -> Path | None:
    top = module.split(".", maxsplit=1)[0]
    if top not in PYTHON_PACKAGES:
        return None
    base = SRC / top / Path(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _reachable_ros_imports(start: Path) -> list[str]:
    """ROS runtime modules reachable from ``start`` through project imports."""
    seen: set[Path] = set()
    todo = [start]
    bad: list[str] = []
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for module in _imports(path):
            if module.split(".")[0] in ROS_RUNTIME:
                bad.append(f"{path.relative_to(SRC)} imports {module}")
            target = _module_file(module)
            if target is not None:
                todo.append(target)
    return bad


CORE_MODULES = sorted(
    [*SRC.glob("*/*/core/**/*.py"), *SRC.glob("*/*/errors.py")],
)


@pytest.mark.parametrize("module", CORE_MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_pure_core_never_imports_rclpy(module: Path) -> None:
    assert _reachable_ros_imports(module) == []


ENTRY_POINT = re.compile(r'"(?P<script>[\w-]+) = (?P<module>[\w.]+):(?P<func>\w+)"')


@pytest.mark.parametrize("package", PYTHON_PACKAGES)
def test_console_scripts_resolve_to_callables(package: str) -> None:
    for match in ENTRY_POINT.finditer((SRC / package / "setup.py").read_text()):
        module = importlib.import_module(match["module"])
        assert callable(getattr(module, match["func"], None)), f"{match['script']}: no {match['func']}()"


#: Files that cite DESIGN.md's sections by name (``DESIGN.md "Run modes"``).
CITING = ("ws/src", "firmware", "test", "tools", "bench", "README.md")


def test_every_design_section_a_file_cites_exists() -> None:
    lines = (ROOT / "DESIGN.md").read_text().splitlines()
    headings = {line.lstrip("#").strip() for line in lines if line.startswith("#")}
    cited: dict[str, list[str]] = {}
    for top in CITING:
        base = ROOT / top
        for path in [base] if base.is_file() else base.rglob("*"):
            skipped = "build" in path.relative_to(ROOT).parts or path.suffix in {".elf", ".png"}
            if skipped or not path.is_file():
                continue
            try:
                text = path.read_text()
            except UnicodeDecodeError:
                continue
            for name in re.findall(r'DESIGN(?:\.md)?,? "([^"]+)"', text):
                cited.setdefault(" ".join(name.split()), []).append(str(path.relative_to(ROOT)))
    missing = {name: files for name, files in cited.items() if name not in headings}
    assert not missing, f"DESIGN.md has no such sections: {missing}"
