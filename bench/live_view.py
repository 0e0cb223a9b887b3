"""What the live view (``--live``) costs a lockstep run: its RTF with and without it.

The one-process runner (``hil_sim_runner --rtf 0``, boards demo, virtual MCU) over
``--seconds`` simulated, four ways, interleaved and repeated (the median of each):

* plain: no live view;
* live, nobody watching: the server up, every topic advertised, nothing subscribed;
* live, the scene watched: a Foxglove WebSocket client (a process of its own, as the
  app is) subscribed to ``/hil/scene``;
* live, a 3D panel's worth: the scene, ``/tf``, ``/tf_static``, ``/odom`` and
  ``/robot_description``.

Targets: watching the scene costs at most 10 % of the plain RTF per CPU second (which
another process on the machine disturbs less than the wall clock), and the live view's
own work (its threads' CPU and the simulator's scene building, per simulated second)
is at most 5 % of a plain run's CPU: the steadiest figure on a shared machine. Also:
scenes per wall second the client received (``scene_max_rate`` caps them at 10).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _benchlib import emit, private_ros_domain, progress

NAME = "live_view"
SCENE = ["/hil/scene"]
PANEL = ["/hil/scene", "/tf", "/tf_static", "/odom", "/robot_description"]


def client(url: str, topics: list[str]) -> None:
    """Subscribe to ``topics`` and read every frame until stdin closes; print counts as JSON."""
    import select  # noqa: PLC0415 - the client process only

    from websockets.sync.client import connect  # noqa: PLC0415

    from hil_bringup.core.live import SUBPROTOCOL  # noqa: PLC0415

    counts: dict[str, int] = {}
    with connect(url, subprotocols=[SUBPROTOCOL], max_size=None) as ws:  # type: ignore[list-item]
        ids: dict[int, str] = {}
        subscribed = False
        arrivals: dict[str, list[float]] = {}
        while not select.select([sys.stdin], [], [], 0)[0]:
            try:
                frame = ws.recv(timeout=0.2)
            except TimeoutError:
                continue
            if isinstance(frame, str):
                message = json.loads(frame)
                if message["op"] == "advertise" and not subscribed:
                    channels = {c["topic"]: c["id"] for c in message["channels"]}
                    wanted = [t for t in topics if t in channels]
                    if len(wanted) == len(topics):
                        ids = dict(enumerate(wanted, 1))
                        subscriptions = [{"id": n, "channelId": channels[t]} for n, t in ids.items()]
                        ws.send(json.dumps({"op": "subscribe", "subscriptions": subscriptions}))
                        subscribed = True
            elif frame[0] == 1:
                topic = ids[int.from_bytes(frame[1:5], "little")]
                if not counts:
                    print("first", flush=True)  # the runner's timing starts now
                counts[topic] = counts.get(topic, 0) + 1
                arrivals.setdefault(topic, []).append(time.monotonic())
        # Per second from each topic's second message to its last: the first gap may be
        # a pace's start-up burst, not its rate.
        rates = {
            topic: (len(times) - 2) / (times[-1] - times[1]) if len(times) > 2 else 0.0
            for topic, times in arrivals.items()
        }
        print(json.dumps({"counts": counts, "rates": rates}), flush=True)


def thread_cpu(threads: list[int]) -> float:
    """CPU seconds (user + system) the threads ``threads`` (native ids) of this process used so far."""
    ticks = 0
    for tid in threads:
        fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def live_threads(runner: Any) -> list[int]:
    """The live view's threads: its executor's and the WebSocket server's (tokio workers)."""
    found = [t.native_id for t in runner._spin_threads if t.name == "live-executor" and t.native_id]
    for task in Path("/proc/self/task").iterdir():
        if (task / "comm").read_text().strip().startswith("tokio"):
            found.append(int(task.name))
    return found


def timed_run(
    seconds: float, *, live: bool, watch: list[str] | None
) -> tuple[tuple[float, float], dict[str, Any]]:
    """Lockstep RTF over ``seconds`` simulated, per wall s and per CPU s of this process.

    Timed once the client (if any) has its first message; the live view's threads are
    in this process, so its CPU counts. With ``live``, also the CPU the live view's
    threads and the simulator's scene building took, in ms per simulated second.
    """
    from hil_bringup.core.graph import GraphOptions  # noqa: PLC0415
    from hil_bringup.graph_runner import GraphRunner  # noqa: PLC0415

    runner = GraphRunner(GraphOptions(rtf=0.0, behaviour="boards", live=live, live_port=0))
    scene_s = [0.0]
    build = runner.sim.publish_scene

    def publish_scene(*args: Any) -> None:
        start = time.thread_time()  # CPU: another process taking the core does not count
        build(*args)
        scene_s[0] += time.thread_time() - start

    runner.sim.publish_scene = publish_scene  # type: ignore[method-assign]
    runner.start()
    watcher = None
    try:
        for _ in range(20):
            runner.step()
        if watch is not None:
            assert runner.live_url is not None
            command = [sys.executable, __file__, "--client", runner.live_url, *watch]
            watcher = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert watcher.stdout is not None
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # step until the client hears something
                for _ in range(20):
                    runner.step()
                if select_line(watcher.stdout) == "first":
                    break
            else:
                raise RuntimeError("the client heard nothing in 30 s")
        threads = live_threads(runner) if live else []
        start_sim, start, cpu = runner.sim.sim.time, time.perf_counter(), time.process_time()
        live_cpu, scene_s[0] = thread_cpu(threads), 0.0
        while runner.sim.sim.time - start_sim < seconds:
            runner.step()
        simulated = runner.sim.sim.time - start_sim
        rtf = simulated / (time.perf_counter() - start), simulated / (time.process_time() - cpu)
        costs = {
            "live_threads_ms_per_sim_s": (thread_cpu(threads) - live_cpu) / simulated * 1e3,
            "scene_ms_per_sim_s": scene_s[0] / simulated * 1e3,
            "process_cpu_ms_per_sim_s": 1e3 / rtf[1],
        }
    finally:
        received: dict[str, Any] = {}
        if watcher is not None:
            out, _ = watcher.communicate("stop\n", timeout=30)
            received = json.loads(out.strip().splitlines()[-1])
        runner.stop()
    return rtf, {**received, **costs}


def select_line(stream: Any) -> str:
    """A line from ``stream`` if one is ready now, else ''."""
    import select  # noqa: PLC0415

    return stream.readline().strip() if select.select([stream], [], [], 0)[0] else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=30.0, help="simulated seconds per timed run")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each way (interleaved)")
    parser.add_argument("--client", nargs="+", help=argparse.SUPPRESS)  # URL and topics: a client process
    args = parser.parse_args()
    if args.client:
        client(args.client[0], args.client[1:])
        return
    private_ros_domain()
    ways: dict[str, tuple[bool, list[str] | None]] = {
        "plain": (False, None),
        "live_unwatched": (True, None),
        "live_scene": (True, SCENE),
        "live_3d_panel": (True, PANEL),
    }
    rtfs: dict[str, list[float]] = {way: [] for way in ways}
    per_cpu: dict[str, list[float]] = {way: [] for way in ways}
    scene_rates: list[float] = []
    costs: dict[str, list[dict[str, float]]] = {way: [] for way in ways}
    for repeat in range(args.repeats):
        for way, (live, watch) in ways.items():
            (rtf, cpu), received = timed_run(args.seconds, live=live, watch=watch)
            rtfs[way].append(rtf)
            per_cpu[way].append(cpu)
            costs[way].append({k: v for k, v in received.items() if k.endswith("per_sim_s")})
            if way == "live_scene" and received:
                scene_rates.append(received["rates"].get("/hil/scene", 0.0))
            progress(NAME, f"run {repeat + 1}/{args.repeats}: {way} {rtf:.2f}x ({cpu:.2f}x per CPU s)")
    wall = {way: statistics.median(values) for way, values in rtfs.items()}
    cpu = {way: statistics.median(values) for way, values in per_cpu.items()}
    figures: dict[str, Any] = {}
    for way in ways:
        figures[f"{way}_rtf"] = round(wall[way], 2)
        figures[f"{way}_rtf_per_cpu_s"] = round(cpu[way], 2)
    for way in list(ways)[1:]:
        figures[f"{way}_over_plain"] = round(wall[way] / wall["plain"], 3)
        figures[f"{way}_over_plain_per_cpu_s"] = round(cpu[way] / cpu["plain"], 3)
    figures["scenes_per_wall_s"] = round(statistics.median(scene_rates), 1) if scene_rates else None
    # What the live view itself took, in CPU per simulated second, against a plain run's whole
    # process: steadier than either RTF on a machine others share.
    plain_ms = statistics.median(c["process_cpu_ms_per_sim_s"] for c in costs["plain"])
    for way in list(ways)[1:]:
        spent = [c["live_threads_ms_per_sim_s"] + c["scene_ms_per_sim_s"] for c in costs[way]]
        figures[f"{way}_own_cpu_share"] = round(statistics.median(spent) / plain_ms, 3)
    emit(
        NAME,
        figures=figures,
        target={
            "live_scene_over_plain_per_cpu_s": ">= 0.9",
            "live_scene_own_cpu_share": "<= 0.05",
            "scenes_per_wall_s": "<= 10",
        },
        baseline={"plain_runs_rtf": [round(v, 2) for v in rtfs["plain"]]},
        notes=(
            f"boards demo, virtual MCU, rtf 0, {args.seconds:g} s simulated per run, median of "
            f"{args.repeats} interleaved runs each; per CPU s: simulated s per CPU s of the runner's "
            "process, the live view's threads included (steadier than wall time on a shared machine); "
            "own CPU share: the live view's threads (its executor, the WebSocket server) and the "
            "simulator's scene building, CPU per simulated s, over a plain run's process CPU per "
            "simulated s; the client is a process of its own (websockets), subscribed before the "
            "timed part"
        ),
        details={
            "runs": {way: [round(v, 2) for v in values] for way, values in rtfs.items()},
            "costs": {way: [{k: round(v, 2) for k, v in c.items()} for c in cs] for way, cs in costs.items()},
        },
    )


if __name__ == "__main__":
    main()
