"""The lockstep runner's pty reads: every byte the in-process peer wrote, also after a replug."""

from __future__ import annotations

import time

import pytest
from geometry_msgs.msg import Twist
from std_srvs.srv import Trigger

from hil_bridge.core.serial_link import LinkState
from hil_bringup.core.graph import GraphOptions
from hil_bringup.errors import HilBringupError
from hil_bringup.graph_runner import GraphRunner


@pytest.mark.ros
def test_lockstep_reads_are_paired_again_after_an_unplug_and_replug() -> None:
    runner = GraphRunner(GraphOptions(rtf=0.0, mcu="virtual", behaviour="boards"))
    runner.start()
    try:
        mcu = runner.mcu
        assert mcu is not None
        for _ in range(2):
            for _ in range(100):
                runner.step()
            mcu.unplug()  # type: ignore[union-attr]
            for _ in range(10):
                runner.step()
            mcu.plug()  # type: ignore[union-attr]
            deadline = time.monotonic() + 30.0  # a wall-clock bound in case the reopen never comes
            while runner.loop.link.state is not LinkState.OPEN and time.monotonic() < deadline:
                runner.step()
        for _ in range(200):  # traffic on the new ptys
            runner.step()
        ends = [runner.loop.link, runner.bridge.link, mcu.command, mcu.signal]  # type: ignore[union-attr]
        assert all(end.owed is not None for end in ends)
        # A new pty counted against everything written to the old one would give up
        # waiting (a short read) on every replug.
        assert [end.owed.short_reads for end in ends if end.owed] == [0, 0, 0, 0]
        assert runner.loop.link.generation == 3  # opened, and reopened after each replug
    finally:
        runner.stop()


@pytest.mark.ros
def test_the_bridge_takes_each_frame_of_the_firmware_in_simavr_in_its_period_also_after_a_restart() -> None:
    """The harness counts its bytes: reads wait for its, its steps for the run's; paired anew on a restart."""
    runner = GraphRunner(GraphOptions(rtf=0.0, mcu="simavr", behaviour="boards"))
    runner.start()
    try:
        for _ in range(20):
            runner.step()
        first, handovers = runner.bridge.link.owed, dict(runner.chains[0].handovers)
        assert sorted(handovers) == ["signal", "uart0"]  # the bridge's frames, the loop's lines
        received = runner.bridge.exchange.frames_received
        for _ in range(100):
            runner.step()
        assert runner.bridge.exchange.frames_received - received == 100  # one frame a period
        runner.kill_mcu()
        for _ in range(10):
            runner.step()
        runner.restart_mcu()
        deadline = time.monotonic() + 30.0  # a wall-clock bound in case the reopen never comes
        while runner.bridge.link.state is not LinkState.OPEN and time.monotonic() < deadline:
            runner.step()
        for _ in range(20):
            runner.step()
        received = runner.bridge.exchange.frames_received
        for _ in range(100):
            runner.step()
        assert runner.bridge.exchange.frames_received - received == 100
        owed = runner.bridge.link.owed
        assert first is not None and owed is not None and owed is not first  # the new harness's counts
        assert (first.short_reads, owed.short_reads) == (0, 0)
        now = runner.chains[0].handovers
        assert sorted(now) == ["signal", "uart0"] and not set(now.values()) & set(handovers.values())
        assert [h.short_waits for h in [*handovers.values(), *now.values()]] == [0, 0, 0, 0]
    finally:
        runner.stop()


@pytest.mark.ros
def test_the_radio_module_reads_every_byte_the_firmware_in_simavr_sent() -> None:
    runner = GraphRunner(GraphOptions(rtf=0.0, mcu="simavr", radio=True, brain="none", world="empty"))
    runner.start()
    try:
        port, chain = runner.serial, runner.chains[0]
        assert port is not None and chain.radio is not None and chain.mcu is not None
        while runner.sim.sim.time < 1.5:  # past the bootloader's wait
            runner.step()
        reads = []
        for packet in range(20):
            port.write(b"RTX,*,HELLO%d\n" % packet)  # the MCU relays it to the radio module
            for _ in range(10):
                runner.step()
            process = chain.mcu.process
            assert process is not None
            # The module reads every 20 ms: each read takes all the harness wrote by then.
            reads.append((chain.radio.link.bytes_in, process.link_bytes["radio"][1]))
        assert all(read == written for read, written in reads[1:]), reads
        assert chain.radio.link.bytes_in > 20 * len(b"HELLO0")
        owed = chain.radio.link.owed
        assert owed is not None and owed.short_reads == 0
    finally:
        runner.stop()


@pytest.mark.ros
@pytest.mark.parametrize("faults", [False, True])
def test_the_bridge_exchanges_every_period_also_after_a_world_reset(faults: bool) -> None:
    """A reset takes simulated time back to 0; the bridge's exchanges count from there.

    With ``faults`` the frames pass a fault proxy (dropping nothing here), whose bytes in
    flight stay due a wire time after they came in, not at their old simulated time.
    """
    options = GraphOptions(rtf=0.0, behaviour="boards", faults=faults, fault_drop=0.0, fault_corrupt=0.0)
    runner = GraphRunner(options)
    runner.start()
    try:
        for _ in range(200):
            runner.step()
        runner.sim.on_reset(Trigger.Request(), Trigger.Response())
        assert runner.sim.sim.time == 0.0
        exchange = runner.bridge.exchange
        sent, received = exchange.frames_sent, exchange.frames_received
        for _ in range(100):
            runner.step()
        assert exchange.frames_sent - sent == 100
        assert exchange.frames_received - received >= 99  # the one in flight may come a period late
    finally:
        runner.stop()


@pytest.mark.ros
def test_a_link_down_at_a_world_reset_reopens_on_its_backoff_not_at_its_old_simulated_deadline() -> None:
    runner = GraphRunner(GraphOptions(rtf=0.0, behaviour="boards"))
    runner.start()
    try:
        mcu = runner.mcu
        assert mcu is not None
        for _ in range(2000):  # 10 s
            runner.step()
        mcu.unplug()  # type: ignore[union-attr]
        for _ in range(10):
            runner.step()
        assert runner.loop.link.state is not LinkState.OPEN
        runner.sim.on_reset(Trigger.Request(), Trigger.Response())
        mcu.plug()  # type: ignore[union-attr]
        periods = 0
        while runner.loop.link.state is not LinkState.OPEN and periods < 1000:
            runner.step()
            periods += 1
        # The backoff is at most 2 s (400 periods); on the old deadline it took 10 s more.
        assert periods <= 400, periods
    finally:
        runner.stop()


@pytest.mark.ros
@pytest.mark.parametrize("mcu", ["virtual", "simavr"])
def test_the_robot_drives_again_after_a_world_reset(mcu: str) -> None:
    """The loop's, the MCU's and the radio's own time runs on when a reset takes the world's back to 0."""
    runner = GraphRunner(GraphOptions(rtf=0.0, mcu=mcu, behaviour="boards", radio=mcu == "virtual"))
    runner.start()
    try:
        while runner.sim.sim.time < 4.0:  # past the 3 s the check below runs after the reset
            runner.step()
        runner.sim.on_reset(Trigger.Request(), Trigger.Response())
        sim = runner.sim.sim
        start_yaw = sim.yaw.copy()
        while sim.time < 3.0:
            runner.step()
        assert abs(sim.yaw - start_yaw)[0] > 0.5  # the star search's scan, begun anew
    finally:
        runner.stop()


@pytest.mark.ros
def test_input_feeds_run_again_in_the_first_frames_after_a_world_reset() -> None:
    """The loop's frames and the serve schedule are on their own time: a reset does not pause them."""
    runner = GraphRunner(GraphOptions(rtf=0.0, behaviour="boards"))
    fed: list[float] = []
    runner.input_feeds.append(fed.append)
    runner.start()
    try:
        while runner.sim.sim.time < 2.0:
            runner.step()
        runner.sim.on_reset(Trigger.Request(), Trigger.Response())
        before = len(fed)
        for _ in range(40):  # 0.2 s: six frames at 30 Hz
            runner.step()
        assert len(fed) - before >= 5, fed[before:]
        assert all(t <= 0.2 + 1e-9 for t in fed[before:])  # at the world's time, from 0 again
    finally:
        runner.stop()


def _watch_ahead(runner: GraphRunner) -> list[bool]:
    """For each step robot 0's firmware in simavr begins from now on: whether it began
    before the world's period ran (ahead)."""
    mcu, world = runner.mcu, runner.sim.sim
    assert mcu is not None
    starts: list[bool] = []
    inner = mcu.start_advance  # type: ignore[union-attr]

    def start_advance(t: float) -> None:
        starts.append(t > world.time + 1e-9)
        inner(t)

    mcu.start_advance = start_advance  # type: ignore[union-attr]
    return starts


@pytest.mark.ros
def test_a_firmware_in_simavr_stepped_ahead_runs_beside_the_physics_between_frames_and_stops() -> None:
    runner = GraphRunner(GraphOptions(rtf=0.0, mcu="simavr", behaviour="boards"))
    runner.start()
    try:
        mcu = runner.mcu
        starts = _watch_ahead(runner)
        for _ in range(400):
            runner.step(ahead=True)
        for _ in range(10):  # one period at a time again: the step begun ahead is finished first
            runner.step()
        ahead = sum(starts)
        # A frame of the loop (30 Hz: one period in 6 or 7) writes to the MCU after the
        # bridge: its next step waits for it; the others begin ahead.
        assert 300 <= ahead <= 360, ahead
        runner.step(ahead=True)
        process = mcu.process  # type: ignore[union-attr]
    finally:
        runner.stop()
    assert process is not None and process.process.poll() is not None


def _kill_and_restart_at(periods: int | None) -> tuple[int, tuple[float, ...]]:
    """A simavr run stepped ahead (``periods`` None: until a step begins ahead after 200,
    else in turn for ``periods``), its MCU killed and restarted, run on to 4 s.

    Returns the periods before the kill and what the run did by 4 s.
    """
    runner = GraphRunner(GraphOptions(rtf=0.0, mcu="simavr", behaviour="boards"))
    runner.start()
    try:
        old, world = runner.mcu, runner.sim.sim
        starts = _watch_ahead(runner)
        done = 0
        while done < 200 or (periods is None and not starts[-1]) or (periods and done < periods):
            runner.step(ahead=periods is None)
            done += 1
        process = old.process  # type: ignore[union-attr]
        runner.kill_mcu()
        assert process is not None and process.process.poll() is not None
        runner.restart_mcu()
        while world.time < 4.0:  # the bootloader's wait, then the new firmware's frames
            runner.step(ahead=periods is None)
        exchange = runner.bridge.exchange
        return done, (world.x[0], world.yaw[0], exchange.frames_received, runner.loop.link.bytes_in)
    finally:
        runner.stop()


@pytest.mark.ros
def test_a_firmware_in_simavr_killed_and_restarted_right_after_a_step_ahead_runs_as_stepped_in_turn() -> None:
    """kill_mcu() and restart_mcu() finish the step begun ahead first: the new MCU starts on time."""
    periods, ahead = _kill_and_restart_at(None)
    _, in_turn = _kill_and_restart_at(periods)
    assert ahead == in_turn
    assert ahead[2] > 400  # the new firmware's frames came too


def test_every_hil_robot_runs_on_its_own_loop_and_the_others_follow_cmd_vel() -> None:
    runner = GraphRunner(GraphOptions(rtf=0.0, robots=4, hil_robots=3, behaviour="boards"))
    runner.start()
    try:
        sim = runner.sim.sim
        start_x, start_yaw = sim.x.copy(), sim.yaw.copy()
        cmd = Twist()
        cmd.linear.x = 0.1
        runner.sim.on_cmd_vel(3, cmd)  # the callback of robot_3/cmd_vel
        while sim.time < 3.0:
            runner.step()
        turned = abs(sim.yaw - start_yaw)
        assert all(turned[:3] > 0.5), turned  # each HIL robot's star search begins with a scan
        assert sim.x[3] - start_x[3] > 0.02  # robot 3 drove forward on its cmd_vel ...
        assert turned[3] < 0.05
        assert sim.v[3] == pytest.approx(0.0, abs=1e-3)  # ... and stopped after cmd_vel_timeout
        assert [each.loop.get_namespace() for each in runner.chains] == ["/robot_0", "/robot_1", "/robot_2"]
        ends = [end for each in runner.chains for end in (each.loop.link, each.bridge.link)]
        assert all(end.owed is not None and end.owed.short_reads == 0 for end in ends)
    finally:
        runner.stop()


@pytest.mark.ros
def test_brain_none_gives_the_firmwares_uart_to_the_runners_serial_port() -> None:
    """No control loop: the port's bytes reach the virtual MCU, its answers come back, all counted."""
    runner = GraphRunner(GraphOptions(rtf=0.0, robot="demo", brain="none", world="empty"))
    runner.start()
    try:
        port = runner.serial
        assert port is not None and not runner.loops and port.baud == 38400
        with pytest.raises(HilBringupError, match="robot 0 has no control loop"):
            _ = runner.loop
        port.write(b"HBB,1.5\nDRV200,200\nHBB,2\n")
        runner.step()
        runner.step()
        assert port.read() == b"HBB,1.5\nHBB,2\n"  # echoed in the period that took them
        while runner.sim.sim.time < 1.0:
            runner.step()
            port.write(b"HBB,3\n" if runner.sim.sim.time % 0.5 < 0.005 else b"")
        assert runner.sim.sim.v[0] > 0.05  # DRV drove it
        assert b"TL1200,200" in port.read()  # and it reports its motors, as to a control loop
        mcu = runner.mcu
        assert mcu is not None and mcu.command.owed is not None and mcu.command.owed.short_reads == 0
    finally:
        runner.stop()


@pytest.mark.ros
def test_robots_of_two_profiles_share_one_world() -> None:
    runner = GraphRunner(GraphOptions(rtf=0.0, robot="demo,line_follower", robots=3, hil_robots=2))
    runner.start()
    try:
        sim = runner.sim.sim
        assert [model.name for model in sim.models] == ["demo", "line_follower", "line_follower"]
        assert runner.chains[0].loop is not None and runner.chains[1].loop is None
        assert [d.name for d in runner.chains[1].bridge.layout.devices][-1] == "line_right"
        for _ in range(20):
            runner.step()
    finally:
        runner.stop()
