"""Every HIL executable stops cleanly on SIGINT or SIGTERM, whenever the signal lands.

The console scripts run as real processes on real ptys. A signal lands at a seeded
random moment: during start-up (from when the process catches the signals, see
``/proc/<pid>/status``: tens of milliseconds after exec, the interpreter's own start;
the entries install the handlers before the heavy imports), while it runs, right after
its peer died, or twice, microseconds apart. Each must exit with status 0 within
EXIT_TARGET_S (asserted with the generous EXIT_BOUND_S) and print no traceback;
control_loop's last line on an open port is ``DRV0,0``. A hil_sim_runner killed with
SIGKILL leaves nothing behind once the next run has started (its pty folder, its
Fast DDS segments in /dev/shm).
"""

from __future__ import annotations

import os
import random
import re
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hil_bridge.core.defaults import telemetry_schema
from hil_bridge.core.line_protocol import Drive, LineDecoder, LineEncoder, Telemetry
from hil_bridge.core.pty_link import PtyPair
from hil_bringup.graph_runner import LINK_DIR_PREFIX
from hil_common.core.leftovers import MIN_AGE_S, owner_pid
from hil_common.core.runtime_dir import runtime_root
from hil_common.core.shutdown import ShutdownSignals

#: Seed of every random moment (each test draws from its own stream of it).
SEED = 15_3
#: The rule (DESIGN.md, "Timing and failure rules") and what is asserted.
EXIT_TARGET_S, EXIT_BOUND_S = 2.0, 5.0
#: A process must catch the signals and be running within these (a loaded machine).
HANDLERS_TIMEOUT_S, READY_TIMEOUT_S = 20.0, 60.0
STOP_SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}
SCHEMA = telemetry_schema("")
#: What the MCU peer sends every 50 ms: nothing within range, so AUTO boards spins
#: (the loop drives with non-zero commands until it is stopped).
TL2 = Telemetry("TL2", SCHEMA.lists["TL2"], (300.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 90.0))


class Peer:
    """The far end of a node's serial port: drains what the node writes; as an MCU, sends TL2."""

    def __init__(self, link: Path, *, telemetry: bool) -> None:
        self.pty = PtyPair(link)
        self.telemetry = telemetry
        self.received = bytearray()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"peer:{link.name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        line = LineEncoder().encode(TL2)
        next_line = time.monotonic()
        while not self._stop.is_set():
            select.select([self.pty.master_fd], [], [], 0.02)
            self._drain()
            if self.telemetry and time.monotonic() >= next_line:
                next_line += 0.05
                self.pty.write(line)

    def _drain(self) -> None:
        with self._lock:
            self.received += self.pty.read()

    def messages(self) -> list[object]:
        """What the node wrote so far, decoded."""
        with self._lock:
            data = bytes(self.received)
        return list(LineDecoder(schema=SCHEMA).feed(data))

    def close(self) -> None:
        """Stop answering, take the last bytes, hang the port up (the peer dies); again: nothing."""
        if self.pty.closed:
            return
        self._stop.set()
        self._thread.join(timeout=5.0)
        self._drain()
        self.pty.close()


@dataclass(frozen=True)
class Exe:
    """An executable, how to start it, and what it prints once it runs."""

    command: Callable[[Path, dict[str, Any]], list[str]]
    ready: str
    #: The pty link its peer serves (in the test's folder), if it has one.
    peer: str = ""
    #: Seconds after the handlers are in within which a start-up signal lands.
    start_up_s: float = 0.6


def _ros(*params: str) -> list[str]:
    return ["--ros-args", *(arg for p in params for arg in ("-p", p))]


EXES = {
    "control_loop": Exe(
        lambda d, _: ["control_loop", *_ros(f"port:={d}/cmd", "behaviour:=boards")],
        ready="Hz on",
        peer="cmd",
    ),
    "signal_bridge": Exe(
        lambda d, _: ["signal_bridge", *_ros(f"port:={d}/sig")], ready="signals to the sim", peer="sig"
    ),
    "virtual_mcu": Exe(
        lambda d, _: ["virtual_mcu", *_ros(f"command_port:={d}/cmd", f"signal_port:={d}/sig")],
        ready="command link",
    ),
    "simavr_mcu": Exe(
        lambda d, f: [
            "simavr_mcu",
            *_ros(f"firmware:={f['elf']}", f"command_port:={d}/cmd", f"signal_port:={d}/sig"),
        ],
        ready="in simavr",
    ),
    "sim": Exe(lambda d, _: ["sim"], ready="robot(s)"),
    "recorder": Exe(lambda d, _: ["recorder", *_ros(f"path:={d}/bag")], ready="recording to"),
    "robot_description": Exe(lambda d, _: ["robot_description"], ready="publishing"),
    "hil_sim_runner": Exe(
        lambda d, _: ["hil_sim_runner", "--headless", "--report-dir", f"{d}/report"],
        ready="started in",
        start_up_s=1.5,
    ),
    "hil_link_proxy": Exe(
        lambda d, _: ["hil_link_proxy", "--upstream", f"{d}/up", "--link", f"{d}/faulty", "--report", "0.2"],
        ready="<->",
        peer="up",
        start_up_s=0.3,
    ),
    "motion_platform": Exe(
        lambda d, f: ["motion_platform", *_ros(f"port:={f['platform']}", "host:=127.0.0.1")],
        ready="platform at",
    ),
    "hil_platform_emulator": Exe(
        lambda d, _: ["hil_platform_emulator", "--port", "0"], ready="listening on", start_up_s=0.3
    ),
}


@pytest.fixture(scope="session")
def firmware_elf() -> Path:
    from hil_mcu.core.simavr import FirmwareOptions, build_firmware  # noqa: PLC0415 - only for simavr_mcu

    return build_firmware(FirmwareOptions())


@pytest.fixture
def platform_port() -> Iterator[int]:
    """hil_platform_emulator's serve loop in a thread (motion_platform parks it when stopped)."""
    from hil_platform.core.motion_platform import PlatformStateMachine  # noqa: PLC0415
    from hil_platform.core.udp_link import UdpLink  # noqa: PLC0415
    from hil_platform.platform_emulator import serve  # noqa: PLC0415

    link, stop = UdpLink(("127.0.0.1", 0)), ShutdownSignals()  # never installed: stopped by note()
    thread = threading.Thread(target=serve, args=(link, PlatformStateMachine(), stop), daemon=True)
    thread.start()
    try:
        yield link.local_address[1]
    finally:
        stop.note(signal.SIGTERM)
        thread.join(timeout=5.0)
        link.close()
        stop.close()


@pytest.fixture(scope="module")
def exit_times(request: pytest.FixtureRequest) -> Iterator[dict[str, float]]:
    """Seconds from the (last) signal to the exit, per test; the slowest is reported."""
    times: dict[str, float] = {}
    yield times
    if times:
        worst = max(times, key=times.__getitem__)
        plugins = request.config.pluginmanager
        reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
        if reporter is not None and capture is not None:
            with capture.global_and_fixture_disabled():
                reporter.write_line(
                    f"\ntest_signals: {len(times)} exits, slowest {times[worst]:.3f} s ({worst}), "
                    f"median {sorted(times.values())[len(times) // 2]:.3f} s; target {EXIT_TARGET_S:g} s"
                )


def catches_stop_signals(pid: int) -> bool:
    """True once the process has handlers for SIGINT and SIGTERM."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = int(re.search(r"^SigCgt:\s*([0-9a-f]+)", status, re.MULTILINE)[1], 16)  # type: ignore[index]
    return all(caught >> (s - 1) & 1 for s in STOP_SIGNALS.values())


def wait_for(condition: Callable[[], object], *, timeout: float, what: str, proc: Any = None) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"{what}: the process exited first with status {proc.returncode}")
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout:g} s")
        time.sleep(0.002)


@dataclass
class Run:
    """One executable in its own folder, with its peer."""

    name: str
    exe: Exe
    folder: Path
    proc: subprocess.Popen[bytes]
    peer: Peer | None

    @property
    def log(self) -> str:
        return (self.folder / f"{self.name}.log").read_text(errors="replace")

    def wait_handlers(self) -> None:
        wait_for(
            lambda: catches_stop_signals(self.proc.pid),
            timeout=HANDLERS_TIMEOUT_S,
            what=f"{self.name} catches SIGINT and SIGTERM",
            proc=self.proc,
        )

    def wait_running(self) -> None:
        wait_for(lambda: self.exe.ready in self.log, timeout=READY_TIMEOUT_S, what=self.name, proc=self.proc)
        if self.name == "control_loop":
            assert self.peer is not None
            wait_for(
                lambda: any(isinstance(m, Drive) and m != Drive(0, 0) for m in self.peer.messages()),  # type: ignore[union-attr]
                timeout=READY_TIMEOUT_S,
                what="control_loop drives (AUTO boards on the peer's TL2)",
                proc=self.proc,
            )

    def signal(self, *signums: signal.Signals) -> float:
        """Send the signals back to back; returns the seconds until the process exited."""
        for signum in signums:
            os.kill(self.proc.pid, signum)
        sent = time.monotonic()
        try:
            status = self.proc.wait(timeout=EXIT_BOUND_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{self.name} still runs {EXIT_BOUND_S:g} s after {[s.name for s in signums]}")
        took = time.monotonic() - sent
        log = self.log
        assert status == 0, f"{self.name} exited {status} after {[s.name for s in signums]}:\n{log[-3000:]}"
        assert "Traceback" not in log and "KeyboardInterrupt" not in log, log[-3000:]
        return took


@pytest.fixture
def start(tmp_path: Path, spawn: Any, request: pytest.FixtureRequest) -> Iterator[Callable[[str], Run]]:
    peers: list[Peer] = []

    def start(name: str) -> Run:
        exe = EXES[name]
        fixtures = {}
        if name == "simavr_mcu":
            fixtures["elf"] = request.getfixturevalue("firmware_elf")
        if name == "motion_platform":
            fixtures["platform"] = request.getfixturevalue("platform_port")
        peer = None
        if exe.peer:
            peer = Peer(tmp_path / exe.peer, telemetry=name == "control_loop")
            peers.append(peer)
        proc = spawn(exe.command(tmp_path, fixtures), name=name)
        return Run(name, exe, tmp_path, proc, peer)

    yield start
    for peer in peers:
        peer.close()


def rng_for(request: pytest.FixtureRequest) -> random.Random:
    return random.Random(f"{SEED}:{request.node.name}")


def check_last_line_stops_the_motors(run: Run) -> None:
    assert run.peer is not None
    run.peer.close()
    messages = run.peer.messages()
    if messages:  # the port was opened: its last line stops the motors
        assert messages[-1] == Drive(0, 0), f"last lines: {messages[-5:]}"


NAMES = list(EXES)
SIGNALS = list(STOP_SIGNALS)


@pytest.mark.ros
@pytest.mark.parametrize("signame", SIGNALS)
@pytest.mark.parametrize("name", NAMES)
def test_exits_0_on_a_signal_during_start_up(
    name: str, signame: str, start: Callable[[str], Run], request: pytest.FixtureRequest, exit_times: dict
) -> None:
    run = start(name)
    run.wait_handlers()
    time.sleep(rng_for(request).uniform(0.0, run.exe.start_up_s))
    exit_times[request.node.name] = run.signal(STOP_SIGNALS[signame])
    if name == "control_loop":
        check_last_line_stops_the_motors(run)


@pytest.mark.ros
@pytest.mark.parametrize("signame", SIGNALS)
@pytest.mark.parametrize("name", NAMES)
def test_exits_0_on_a_signal_while_running(
    name: str, signame: str, start: Callable[[str], Run], request: pytest.FixtureRequest, exit_times: dict
) -> None:
    run = start(name)
    run.wait_running()
    time.sleep(rng_for(request).uniform(0.0, 0.8))
    exit_times[request.node.name] = run.signal(STOP_SIGNALS[signame])
    if name == "control_loop":
        check_last_line_stops_the_motors(run)
        assert run.peer is not None
        drives = [m for m in run.peer.messages() if isinstance(m, Drive)]
        assert any(d != Drive(0, 0) for d in drives[:-1]), "the DRV0,0 must come from stop()"
    if name == "virtual_mcu":
        assert not (run.folder / "cmd").is_symlink() and not (run.folder / "sig").is_symlink()
    if name == "recorder":
        assert (run.folder / "bag" / "metadata.yaml").is_file(), "the bag was not finished"


@pytest.mark.ros
@pytest.mark.parametrize("name", NAMES)
def test_exits_0_on_two_signals_microseconds_apart(
    name: str, start: Callable[[str], Run], request: pytest.FixtureRequest, exit_times: dict
) -> None:
    rng = rng_for(request)
    pair = (STOP_SIGNALS[rng.choice(SIGNALS)], STOP_SIGNALS[rng.choice(SIGNALS)])
    run = start(name)
    if rng.random() < 0.5:
        run.wait_handlers()
        time.sleep(rng.uniform(0.0, run.exe.start_up_s))
    else:
        run.wait_running()
        time.sleep(rng.uniform(0.0, 0.8))
    exit_times[request.node.name] = run.signal(*pair)
    if name == "control_loop":
        check_last_line_stops_the_motors(run)


@pytest.mark.ros
@pytest.mark.parametrize("name", [name for name, exe in EXES.items() if exe.peer])
def test_exits_0_on_a_signal_right_after_its_peer_died(
    name: str, start: Callable[[str], Run], request: pytest.FixtureRequest, exit_times: dict
) -> None:
    rng = rng_for(request)
    run = start(name)
    run.wait_running()
    time.sleep(rng.uniform(0.0, 0.5))
    assert run.peer is not None
    run.peer.close()
    time.sleep(rng.uniform(0.0, 0.2))
    exit_times[request.node.name] = run.signal(STOP_SIGNALS[rng.choice(SIGNALS)])


def _locked_inodes(pid: int) -> set[int]:
    """Inodes of the files ``pid`` holds a flock on (/proc/locks: ``... FLOCK ... PID MAJ:MIN:INODE``)."""
    inodes = set()
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "FLOCK" in fields and str(pid) in fields:
            inodes.add(int(fields[fields.index(str(pid)) + 1].rsplit(":", 1)[1]))
    return inodes


def _shm_files_of(pid: int) -> list[Path]:
    """The Fast DDS segments (file and lock) that ``pid`` owns."""
    locked = _locked_inodes(pid)
    owned = []
    for path in Path("/dev/shm").glob("fastrtps_*_el"):
        try:
            if path.stat().st_ino in locked and not path.name.startswith("fastrtps_port"):
                owned += [path, path.with_name(path.name[: -len("_el")])]
        except OSError:
            continue
    return owned


@pytest.mark.ros
def test_a_killed_runner_leaves_nothing_behind_once_the_next_run_started(tmp_path: Path, spawn: Any) -> None:
    links = runtime_root()
    killed = spawn(["hil_sim_runner", "--headless", "--report-dir", str(tmp_path / "killed")], name="killed")
    log = tmp_path / "killed.log"
    wait_for(lambda: "started in" in log.read_text(), timeout=READY_TIMEOUT_S, what="first run", proc=killed)
    folders = [d for d in links.glob(f"{LINK_DIR_PREFIX}*") if owner_pid(d) == killed.pid]
    assert len(folders) == 1, (
        f"the run's pty folder (owner {killed.pid}) among {list(links.glob('hil-links-*'))}"
    )
    folder = folders[0]
    segments = _shm_files_of(killed.pid)
    assert segments, "the run has Fast DDS segments in /dev/shm"
    assert any(p.is_symlink() for p in folder.iterdir()), "the run's pty links"
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=10.0)
    assert folder.is_dir() and all(p.exists() for p in segments)  # nobody cleaned up
    # Segments are judged only once MIN_AGE_S old (a newer one may be being made).
    time.sleep(max(0.0, MIN_AGE_S - (time.time() - min(p.stat().st_mtime for p in segments))))
    result = subprocess.run(
        [
            "hil_sim_runner",
            "--headless",
            "--rtf",
            "0",
            "--duration",
            "0.1",
            "--report-dir",
            str(tmp_path / "next"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert not folder.exists(), "the killed run's pty folder"
    assert [p for p in segments if p.exists()] == [], "the killed run's Fast DDS segments"
