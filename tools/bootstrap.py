#!/usr/bin/env python3
"""Bootstrap the HIL workspace: system packages, Python venv, ROS 2, colcon build, simavr harness.

Idempotent: every step first checks whether its result is already in place and only
then does work, so a second run with nothing changed installs nothing and takes
about a second. Each step prints one progress line; a failed step names itself,
says why, points at its log and exits non-zero.

Two ways to get ROS 2:

* ``ROS_DISTRO`` set (a ROS 2 install is sourced): use it. The venv is created with
  ``--system-site-packages`` so rclpy and colcon come from the install, and only the
  project's own Python dependencies are pip-installed.
* Otherwise: ROS 2 Jazzy core from PyPI wheels into ``.venv``, the wheels' CMake
  exports fixed for this machine, and a ``tf2_msgs`` overlay built in ``.overlay/``
  when no tf2_msgs is installed.

Only the standard library is used: this runs before the venv exists.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
OVERLAY = ROOT / ".overlay"
OVERLAY_SRC = ROOT / "tools" / "overlay"
WS = ROOT / "ws"
REQUIREMENTS = ROOT / "requirements.txt"
STATE_DIR = VENV / "hil-bootstrap"
LOG_DIR = STATE_DIR / "logs"

#: Bump to force every stamped step to redo its work after a change of this script.
BOOTSTRAP_VERSION = "1"

#: Command or file the workspace needs -> Debian package that provides it.
SYSTEM_NEEDS: dict[str, str] = {
    "cmake": "cmake",
    "g++": "g++",
    "make": "make",
    # the firmware: AVR toolchain (robot_mcu and the generated bridge-board sketches)
    "avr-gcc": "gcc-avr",
    "avr-objcopy": "binutils-avr",
    # ordinary sketches built as the Arduino IDE builds them: its command-line builder,
    # which generates the function prototypes with arduino-ctags (a dependency)
    "arduino-builder": "arduino-builder",
    "arduino-ctags": "arduino-ctags",
    # firmware in the loop: the AVR emulator (its library builds firmware/simavr)
    "simavr": "simavr",
    # Gazebo export: `ign sdf -k` checks every generated SDF with the real SDFormat parser
    "ign": "ignition-tools",
}
#: Debian packages that install no command, by a file they install.
SYSTEM_FILES: dict[str, str] = {
    "/usr/lib/avr/include/avr/io.h": "avr-libc",
    "/usr/share/arduino/hardware/arduino/avr/cores/arduino/Arduino.h": "arduino-core-avr",
    "/usr/include/simavr/sim_avr.h": "libsimavr-dev",
    # the `ign sdf` plugin of SDFormat 12 (it brings libsdformat12-12, the parser)
    "/usr/share/ignition/sdformat12.yaml": "libsdformat-dev",
}

#: colcon run by the venv's interpreter, so ament_python packages get its shebang even
#: when colcon itself comes from a ROS 2 install's system Python.
COLCON_MAIN = "import sys; from colcon_core.command import main; sys.exit(main())"

#: Marks a requirements.txt section that a sourced ROS 2 install already provides.
ROS_SECTION_MARK = "[ros]"

#: Where the ROS wheels' exported CMake targets point on the machine that built them.
WHEEL_BUILD_PYTHON_INCLUDE = "/opt/python/cp311-cp311/include/python3.11"
WHEEL_BUILD_NUMPY_INCLUDE = "/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include"

#: Caches and build outputs that never decide whether colcon must run again.
FINGERPRINT_SKIP_DIRS = {
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    "build",
    "install",
    "log",
}
#: Files whose content (not only their presence) changes what colcon builds. With
#: --symlink-install, edits of Python modules, launch files and YAML need no rebuild.
BUILD_INPUT_NAMES = {"package.xml", "setup.py", "setup.cfg", "CMakeLists.txt"}
BUILD_INPUT_SUFFIXES = {".msg", ".srv", ".action", ".cmake"}


class BootstrapError(Exception):
    """A bootstrap step failed; the message says why and what to do."""


class Step:
    """Progress reporting for one numbered bootstrap step.

    A quick step prints one line; a step with details prints its title, the details
    and then its outcome, so the last line of every step says what it did.
    """

    total = 0
    changed = 0

    def __init__(self, index: int, title: str) -> None:
        self.index = index
        self.title = title
        self.start = time.monotonic()
        self.open_line = True
        print(f"[{index}/{Step.total}] {title} ...", end="", flush=True)

    def detail(self, text: str) -> None:
        if self.open_line:
            print(flush=True)
            self.open_line = False
        print(f"      {text}", flush=True)

    def done(self, outcome: str, *, changed: bool) -> None:
        if changed:
            Step.changed += 1
        took = f"({time.monotonic() - self.start:.1f} s)"
        if self.open_line:
            print(f" {outcome} {took}", flush=True)
        else:
            print(f"[{self.index}/{Step.total}] {self.title}: {outcome} {took}", flush=True)
        self.open_line = False

    def failed(self, reason: str) -> None:
        if self.open_line:
            print(flush=True)
        print(f"[{self.index}/{Step.total}] {self.title}: FAILED\n    {reason}", file=sys.stderr, flush=True)


def sha256_of(parts: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
        digest.update(b"\0")
    return digest.hexdigest()


def read_stamp(name: str) -> str | None:
    path = STATE_DIR / f"{name}.stamp"
    return path.read_text().strip() if path.is_file() else None


def write_stamp(name: str, value: str) -> None:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    (STATE_DIR / f"{name}.stamp").write_text(value + "\n")


def run_logged(
    cmd: list[str] | str,
    *,
    log_name: str,
    env: dict[str, str] | None = None,
    cwd: Path = ROOT,
    show: Callable[[str], str | None] = lambda line: line,
    step: Step | None = None,
) -> None:
    """Run a command, stream the lines ``show`` selects, keep the full output in a log.

    Raises:
        BootstrapError: the command exited non-zero; the message holds its last lines.
    """
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    log_path = LOG_DIR / f"{log_name}.log"
    shell = isinstance(cmd, str)
    printable = cmd if shell else shlex.join(cmd)
    tail: deque[str] = deque(maxlen=25)
    with log_path.open("w") as log:
        log.write(f"$ {printable}\n")
        with subprocess.Popen(
            cmd,
            shell=shell,
            executable="/bin/bash" if shell else None,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        ) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                log.write(line)
                tail.append(line.rstrip())
                shown = show(line.rstrip())
                if shown is not None:
                    if step is not None:
                        step.detail(shown)
                    else:
                        print(f"      {shown}", flush=True)
            code = proc.wait()
    if code != 0:
        raise BootstrapError(
            f"`{printable}` exited with status {code}; full log: {log_path}\n"
            + "\n".join(f"    {t}" for t in tail)
        )


def venv_python() -> Path:
    return VENV / "bin" / "python"


def use_system_ros() -> bool:
    """True when a real ROS 2 install is sourced (not this repo's wheel environment)."""
    return bool(os.environ.get("ROS_DISTRO")) and not os.environ.get("HIL_ROS_FROM_WHEELS")


def base_env() -> dict[str, str]:
    """Environment for build commands: the venv first on PATH, ROS prefixes set."""
    env = dict(os.environ)
    env["VIRTUAL_ENV"] = str(VENV)
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONHOME", None)
    if not use_system_ros():
        # The wheels install share/<pkg>/cmake and share/ament_index into the venv
        # prefix; without AMENT_PREFIX_PATH rosidl fails with "No 'rosidl_typesupport_c'
        # found" (ROS2_ON_PIP.md).
        for var in ("AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH"):
            env[var] = str(VENV)
    return env


# ---------------------------------------------------------------------------- steps


def step_system(step: Step) -> None:
    """Check compilers (host, AVR), the Arduino core, CMake and Python headers; apt-get what is missing."""
    missing = sorted(
        {pkg for cmd, pkg in SYSTEM_NEEDS.items() if shutil.which(cmd) is None}
        | {pkg for path, pkg in SYSTEM_FILES.items() if not Path(path).is_file()}
    )
    include = Path(sysconfig.get_paths()["include"])
    if not (include / "Python.h").is_file():
        missing.append(f"python{sys.version_info.major}.{sys.version_info.minor}-dev")
    if importlib.util.find_spec("ensurepip") is None or importlib.util.find_spec("venv") is None:
        missing.append(f"python{sys.version_info.major}.{sys.version_info.minor}-venv")
    if not missing:
        step.done("all present", changed=False)
        return
    apt = ["apt-get", "install", "-y", "--no-install-recommends", *missing]
    if os.geteuid() == 0:
        prefix: list[str] = []
    elif (
        shutil.which("sudo")
        and subprocess.run(["sudo", "-n", "true"], capture_output=True, check=False).returncode == 0
    ):
        prefix = ["sudo", "-n"]
    else:
        raise BootstrapError(
            f"missing Debian packages {', '.join(missing)} and no root or password-less sudo;\n"
            f"    run: sudo apt-get update && sudo {shlex.join(apt)}"
        )
    step.detail(f"installing {', '.join(missing)} with apt-get")
    run_logged([*prefix, "apt-get", "update"], log_name="apt-update", show=lambda _: None, step=step)
    run_logged(
        [*prefix, *apt],
        log_name="apt-install",
        show=lambda line: line if line.startswith("Setting up") else None,
        step=step,
    )
    step.done(f"installed {', '.join(missing)}", changed=True)


def step_venv(step: Step) -> None:
    """Create .venv with this interpreter unless a working one is there."""
    want = f"{sys.version_info.major}.{sys.version_info.minor}"
    if not use_system_ros() and want != "3.11":
        raise BootstrapError(
            f"the ROS 2 Jazzy wheels are built for CPython 3.11, this is Python {want} "
            f"({sys.executable}); run with a 3.11 interpreter (PYTHON=python3.11 make test) "
            "or source a ROS 2 install first"
        )
    system_site = use_system_ros()
    if venv_python().exists():
        probe = subprocess.run(
            [str(venv_python()), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            env={**base_env(), "_ROS_WHEELS_BOOTSTRAP_COMPLETE": "1"},
            check=False,
        )
        cfg = (VENV / "pyvenv.cfg").read_text() if (VENV / "pyvenv.cfg").is_file() else ""
        has_system_site = "include-system-site-packages = true" in cfg
        if probe.returncode == 0 and probe.stdout.strip() == want and has_system_site == system_site:
            step.done(f"{VENV.relative_to(ROOT)} ready (Python {want})", changed=False)
            return
        step.detail("existing .venv is broken or of another kind; recreating it")
        shutil.rmtree(VENV)
    cmd = [sys.executable, "-m", "venv", str(VENV)]
    if system_site:
        cmd.append("--system-site-packages")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BootstrapError(f"`{shlex.join(cmd)}` failed:\n{proc.stdout}{proc.stderr}")
    step.done(f"created {VENV.relative_to(ROOT)} with {sys.executable}", changed=True)


def requirement_lines() -> list[str]:
    """The pinned requirement lines to install, without the [ros] sections under a ROS install."""
    lines = []
    skipping = False
    for raw in REQUIREMENTS.read_text().splitlines():
        if raw.startswith("# ---"):
            skipping = use_system_ros() and ROS_SECTION_MARK in raw
            continue
        line = raw.split("#", 1)[0].strip()
        if line and not skipping:
            lines.append(line)
    return lines


def step_python_packages(step: Step) -> None:
    """pip-install requirements.txt (filtered when ROS comes from an install)."""
    lines = requirement_lines()
    stamp = sha256_of([BOOTSTRAP_VERSION.encode(), *(line.encode() for line in lines)])
    if read_stamp("requirements") == stamp and pins_satisfied(lines):
        step.done(f"{len(lines)} pinned packages already installed", changed=False)
        return
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    req_file = STATE_DIR / "requirements.effective.txt"
    req_file.write_text("\n".join(lines) + "\n")
    step.detail(f"pip install of {len(lines)} pinned packages (log: {LOG_DIR / 'pip.log'})")
    run_logged(
        [str(venv_python()), "-m", "pip", "install", "--progress-bar", "off", "-r", str(req_file)],
        log_name="pip",
        env={**base_env(), "_ROS_WHEELS_BOOTSTRAP_COMPLETE": "1"},
        show=pip_progress,
        step=step,
    )
    write_stamp("requirements", stamp)
    step.done(f"installed {len(lines)} pinned packages", changed=True)


def pip_progress(line: str) -> str | None:
    """Condense pip's output to one line per requested package and the outcome."""
    if line.startswith("Collecting") and "(from -r" in line:
        return line.split(" (from", 1)[0]
    if line.startswith("Installing collected packages"):
        return f"installing {line.count(',') + 1} packages (resolved with their dependencies) ..."
    if line.startswith("Successfully installed"):
        return f"successfully installed {len(line.split()) - 2} packages"
    if line.startswith("ERROR"):
        return line
    return None


def pins_satisfied(lines: list[str]) -> bool:
    """Ask the venv whether every ``name==version`` pin that applies is installed at that version."""
    code = (
        "import json, sys\n"
        "from importlib.metadata import version, PackageNotFoundError\n"
        "from packaging.requirements import Requirement\n"
        "def ok(line):\n"
        "    req = Requirement(line)\n"
        "    if req.marker is not None and not req.marker.evaluate():\n"
        "        return True\n"
        "    try:\n"
        "        return req.specifier.contains(version(req.name), prereleases=True)\n"
        "    except PackageNotFoundError:\n"
        "        return False\n"
        "sys.exit(0 if all(ok(line) for line in json.loads(sys.argv[1])) else 1)\n"
    )
    probe = subprocess.run(
        [str(venv_python()), "-c", code, json.dumps(lines)],
        env={**base_env(), "_ROS_WHEELS_BOOTSTRAP_COMPLETE": "1"},
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


def step_cmake_exports(step: Step) -> None:
    """Point the wheels' CMake exports at this machine's Python and numpy headers.

    The exported targets name include folders of the machine that built the wheels,
    and CMake refuses to generate while they do not exist (ROS2_ON_PIP.md). Rewriting
    them inside the venv needs no root, unlike symlinks under /opt.
    """
    if use_system_ros():
        step.done("not needed with a ROS 2 install", changed=False)
        return
    share = VENV / "share"
    stale = [p for p in share.glob("*/cmake/*.cmake") if WHEEL_BUILD_PYTHON_INCLUDE in p.read_text()]
    stale += [
        p
        for p in share.glob("*/cmake/*.cmake")
        if p not in stale and WHEEL_BUILD_NUMPY_INCLUDE in p.read_text()
    ]
    if not stale:
        step.done("already point at this machine", changed=False)
        return
    probe = subprocess.run(
        [
            str(venv_python()),
            "-c",
            "import sysconfig, numpy; print(sysconfig.get_paths()['include']); print(numpy.get_include())",
        ],
        capture_output=True,
        text=True,
        env={**base_env(), "_ROS_WHEELS_BOOTSTRAP_COMPLETE": "1"},
        check=False,
    )
    if probe.returncode != 0:
        raise BootstrapError(f"cannot locate the Python/numpy include folders in the venv:\n{probe.stderr}")
    py_include, np_include = probe.stdout.split()
    for path in stale:
        text = path.read_text()
        text = text.replace(WHEEL_BUILD_NUMPY_INCLUDE, np_include)
        text = text.replace(WHEEL_BUILD_PYTHON_INCLUDE, py_include)
        path.write_text(text)
    step.detail(f"{WHEEL_BUILD_PYTHON_INCLUDE} -> {py_include}")
    step.detail(f"{WHEEL_BUILD_NUMPY_INCLUDE} -> {np_include}")
    step.done(f"rewrote include folders in {len(stale)} CMake export files", changed=True)


def tf2_msgs_installed(prefixes: Iterable[str]) -> bool:
    marker = Path("share", "ament_index", "resource_index", "packages", "tf2_msgs")
    return any((Path(p) / marker).is_file() for p in prefixes if p)


def source_fingerprint(root: Path) -> str:
    """Hash of the file list under ``root`` and the content of its build inputs."""
    parts: list[bytes] = [BOOTSTRAP_VERSION.encode()]
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if d not in FINGERPRINT_SKIP_DIRS and not d.endswith(".egg-info")
        )
        for name in sorted(filenames):
            if name.endswith(".pyc"):
                continue
            path = Path(dirpath) / name
            parts.append(str(path.relative_to(root)).encode())
            if name in BUILD_INPUT_NAMES or path.suffix in BUILD_INPUT_SUFFIXES:
                parts.append(path.read_bytes())
    return sha256_of(parts)


def colcon_build(
    *,
    base: Path,
    build_base: Path,
    install_base: Path,
    log_name: str,
    extra: list[str],
    source_first: list[Path],
    step: Step,
) -> None:
    sources = "".join(f"source {shlex.quote(str(p))} && " for p in source_first if p.is_file())
    build_base.parent.mkdir(parents=True, exist_ok=True)
    cmd = (
        f"{sources}{shlex.quote(str(venv_python()))} -c {shlex.quote(COLCON_MAIN)} "
        f"--log-base {shlex.quote(str(build_base.parent / 'log'))} build "
        f"--base-paths {shlex.quote(str(base))} --build-base {shlex.quote(str(build_base))} "
        f"--install-base {shlex.quote(str(install_base))} --event-handlers console_direct- "
        f"{' '.join(extra)} "
        f"--cmake-args -DBUILD_TESTING=OFF -DPython3_EXECUTABLE={shlex.quote(str(venv_python()))}"
    )
    run_logged(
        cmd,
        log_name=log_name,
        env=base_env(),
        cwd=build_base.parent,
        show=lambda line: line if line.startswith(("Starting", "Finished", "Failed", "Summary")) else None,
        step=step,
    )


def step_tf2_overlay(step: Step) -> None:
    """Build tf2_msgs from its one-line definition when no install provides it."""
    prefixes = os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)
    if not use_system_ros():
        prefixes = [str(VENV)]
    if tf2_msgs_installed(prefixes):
        step.done("tf2_msgs provided by the ROS 2 install", changed=False)
        return
    stamp = source_fingerprint(OVERLAY_SRC)
    install = OVERLAY / "install"
    if read_stamp("overlay") == stamp and tf2_msgs_installed([str(install / "tf2_msgs")]):
        step.done(f"overlay {OVERLAY.relative_to(ROOT)} up to date", changed=False)
        return
    step.detail(f"no tf2_msgs installed: building it into {install.relative_to(ROOT)}")
    colcon_build(
        base=OVERLAY_SRC,
        build_base=OVERLAY / "build",
        install_base=install,
        log_name="colcon-overlay",
        extra=[],
        source_first=[],
        step=step,
    )
    write_stamp("overlay", stamp)
    step.done("built tf2_msgs overlay", changed=True)


def drop_dangling_links(*folders: Path) -> int:
    """Remove the symlinks under ``folders`` whose target is gone; return how many.

    A file deleted from the sources leaves its symlink in a symlink install's build/ and
    install/, and setuptools then fails to copy it ("doesn't exist or not a regular file").
    """
    dropped = 0
    for folder in folders:
        for path in folder.rglob("*") if folder.is_dir() else ():
            if path.is_symlink() and not path.exists():
                path.unlink()
                dropped += 1
    return dropped


def step_workspace(step: Step) -> None:
    """colcon build of ws/ (symlink install, so Python edits need no rebuild)."""
    stamp = sha256_of([source_fingerprint(WS / "src").encode(), str(use_system_ros()).encode()])
    if read_stamp("workspace") == stamp and (WS / "install" / "local_setup.bash").is_file():
        step.done("ws/install up to date", changed=False)
        return
    drop_dangling_links(WS / "build", WS / "install")
    colcon_build(
        base=WS / "src",
        build_base=WS / "build",
        install_base=WS / "install",
        log_name="colcon-ws",
        extra=["--symlink-install"],
        source_first=[OVERLAY / "install" / "local_setup.bash"],
        step=step,
    )
    write_stamp("workspace", stamp)
    step.done("built ws/ into ws/install", changed=True)


def step_simavr_harness(step: Step) -> None:
    """make in firmware/simavr: hil_simavr, the firmware-in-the-loop harness on libsimavr."""
    folder = ROOT / "firmware" / "simavr"
    binary = folder / "build" / "hil_simavr"
    before = binary.stat().st_mtime_ns if binary.is_file() else None
    result = subprocess.run(["make", "-s", "-C", str(folder)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BootstrapError(f"make -C {folder} failed:\n{result.stdout}{result.stderr}")
    changed = before != binary.stat().st_mtime_ns
    step.done(f"{binary.relative_to(ROOT)} {'built' if changed else 'up to date'}", changed=changed)


STEPS: list[tuple[str, Callable[[Step], None]]] = [
    (
        "system packages (compilers, AVR toolchain, Arduino core, simavr, SDFormat, CMake, Python headers)",
        step_system,
    ),
    ("Python virtual environment", step_venv),
    ("Python packages (requirements.txt)", step_python_packages),
    ("CMake exports of the ROS 2 wheels", step_cmake_exports),
    ("tf2_msgs", step_tf2_overlay),
    ("colcon build of ws/", step_workspace),
    ("firmware-in-the-loop harness (firmware/simavr)", step_simavr_harness),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.parse_args(argv)
    start = time.monotonic()
    source = (
        f"ROS 2 {os.environ['ROS_DISTRO']} install" if use_system_ros() else "ROS 2 Jazzy wheels from PyPI"
    )
    print(f"bootstrap: {ROOT} with {source}", flush=True)
    Step.total = len(STEPS)
    for index, (title, func) in enumerate(STEPS, start=1):
        step = Step(index, title)
        try:
            func(step)
        except (BootstrapError, OSError, subprocess.SubprocessError) as exc:
            step.failed(str(exc))
            return 1
    took = time.monotonic() - start
    print(
        f"bootstrap: done, {Step.changed} of {Step.total} steps changed something ({took:.1f} s)", flush=True
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
