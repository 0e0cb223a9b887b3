"""SIGINT/SIGTERM only note a stop request; console entries install that before any import.

Each case runs in a child interpreter of its own (no rclpy), so the test process's
handlers are never touched.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest


def run_python(code: str, *, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
    )


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_signals_in_a_burst_only_set_the_request_and_wake_a_waiter(signame: str) -> None:
    result = run_python(
        f"""
        import os, select, signal
        from hil_common.core.shutdown import shutdown_signals
        signals = shutdown_signals()
        assert not signals.requested and not signals.wait(0.0)
        for _ in range(50):
            os.kill(os.getpid(), signal.{signame})
        assert signals.wait(5.0), "wait() returns at once once requested"
        assert select.select([signals], [], [], 0.0)[0] == [signals]
        print(signals.requested, signals.signum == signal.{signame}, signals.count >= 1)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", "True"]
    assert "Traceback" not in result.stderr


def test_a_signal_wakes_a_select_on_the_request_at_once() -> None:
    result = run_python(
        """
        import os, signal, threading, time
        from hil_common.core.shutdown import shutdown_signals
        signals = shutdown_signals()
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()
        start = time.monotonic()
        assert signals.wait(30.0)
        print(time.monotonic() - start < 10.0)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


def test_deferred_block_finishes_before_a_keyboard_interrupt() -> None:
    result = run_python(
        """
        import os, signal
        from hil_common.core.shutdown import deferred_signals
        # Python installs this only if SIGINT was not ignored when it started, and a job
        # started in the background by a non-interactive shell (CI) has it ignored.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        steps = []
        try:
            with deferred_signals():
                os.kill(os.getpid(), signal.SIGINT)
                os.kill(os.getpid(), signal.SIGINT)
                steps.append("finished")
        except KeyboardInterrupt:
            steps.append("interrupted after")
        print(",".join(steps), signal.getsignal(signal.SIGINT) is signal.default_int_handler)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["finished,interrupted", "after", "True"]


def test_console_entry_installs_the_handlers_before_it_imports_the_module(tmp_path: Path) -> None:
    (tmp_path / "probe_node.py").write_text(
        textwrap.dedent(
            """
            import signal
            from hil_common.core.shutdown import ShutdownSignals
            HANDLERS = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)]
            AT_IMPORT = [getattr(h, "__func__", None) is ShutdownSignals.note for h in HANDLERS]

            def main():
                print(AT_IMPORT)
                return 7
            """
        )
    )
    result = run_python(
        """
        import sys
        sys.path.insert(0, ".")
        from hil_common.core.shutdown import console_main
        sys.exit(console_main("probe_node")())
        """,
        cwd=tmp_path,
    )
    assert result.returncode == 7, result.stderr
    assert result.stdout.strip() == "[True, True]"


def test_stop_signals_during_interpreter_teardown_do_not_kill_a_process_that_stopped(tmp_path: Path) -> None:
    # A sender keeps signalling from the moment main() returns until the process is
    # gone, so some signals land while the interpreter tears down (where Python puts
    # the default handlers back unless a signal is ignored).
    (tmp_path / "probe_node.py").write_text(
        textwrap.dedent(
            """
            import os, subprocess, sys

            SENDER = (
                "import os, signal, sys, time\\n"
                "pid = int(sys.argv[1])\\n"
                "while os.getppid() == pid:  # until the probe is gone (a zombie takes kills too)\\n"
                "    os.kill(pid, signal.SIGINT); os.kill(pid, signal.SIGTERM); time.sleep(0.0001)\\n"
            )

            def main():
                from hil_common.core.shutdown import shutdown_signals
                subprocess.Popen([sys.executable, "-c", SENDER, str(os.getpid())])
                assert shutdown_signals().wait(30.0), "the sender never started"
                return 0
            """
        )
    )
    result = run_python(
        """
        import sys
        sys.path.insert(0, ".")
        from hil_common.core.shutdown import console_main
        sys.exit(console_main("probe_node")())
        """,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr


#: Executables that run until stopped; each must install the handlers before its imports.
LONG_RUNNING = {
    "control_loop": "robot_control.console:control_loop",
    "signal_bridge": "hil_bridge.console:signal_bridge",
    "hil_link_proxy": "hil_bridge.console:hil_link_proxy",
    "hil_platform_emulator": "hil_platform.console:hil_platform_emulator",
    "motion_platform": "hil_platform.console:motion_platform",
    "sim": "hil_sim.console:sim",
    "virtual_mcu": "hil_mcu.console:virtual_mcu",
    "simavr_mcu": "hil_mcu.console:simavr_mcu",
    "robot_description": "hil_bringup.console:robot_description",
    "recorder": "hil_bringup.console:recorder",
    "hil_sim_runner": "hil_bringup.hil_sim_runner:main",
}


@pytest.mark.parametrize("name", sorted(LONG_RUNNING))
def test_console_script_enters_through_a_signal_safe_entry(name: str) -> None:
    (entry,) = [e for e in entry_points(group="console_scripts") if e.name == name]
    assert entry.value == LONG_RUNNING[name]


def test_sim_runner_module_imports_nothing_heavy_before_its_handlers() -> None:
    # make sim runs it with python -m: its own imports come before main() can run.
    result = run_python(
        """
        import sys
        import hil_bringup.hil_sim_runner
        print(sorted(m for m in ("rclpy", "matplotlib", "hil_bringup.graph_runner") if m in sys.modules))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


#: launch's pattern: signals read from the wakeup fd, and a task whose future is set only
#: at its end (TimerAction); a SIGINT lands while the task runs.
LAUNCH_LIKE = """
import asyncio, os, signal, socket
from hil_common.core.shutdown import leave_to_wakeup_fd
signal.signal(signal.SIGINT, signal.default_int_handler)  # as Python starts (see above)
if {leave}:
    leave_to_wakeup_fd(signal.SIGINT)
reader, writer = socket.socketpair()
reader.setblocking(False)
writer.setblocking(False)
signal.set_wakeup_fd(writer.fileno())
loop = asyncio.new_event_loop()
completed = loop.create_future()

async def timer():
    os.kill(os.getpid(), signal.SIGINT)
    sum(range(1000))  # Python code: where a pending signal's handler runs
    completed.set_result(True)

loop.create_task(timer())
while True:
    try:
        loop.run_until_complete(asyncio.wait_for(asyncio.shield(completed), 2.0))
        break
    except KeyboardInterrupt:
        continue  # as launch's run() does
    except TimeoutError:
        break
print(completed.done(), list(reader.recv(16)) == [signal.SIGINT])
"""


@pytest.mark.parametrize(("leave", "completed"), [(True, "True"), (False, "False")])
def test_a_sigint_left_to_the_wakeup_fd_reaches_it_and_breaks_no_task(leave: bool, completed: str) -> None:
    result = run_python(LAUNCH_LIKE.format(leave=leave))
    assert result.returncode == 0, result.stderr
    # The task ends (with the signal only in the wakeup fd); with Python's handler the
    # KeyboardInterrupt ends it half way and its future is never set: launch's hang.
    assert result.stdout.split() == [completed, "True"]
